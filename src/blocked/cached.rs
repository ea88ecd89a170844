//! The batched lookups of a filter that fits in the cache, hand-written for AVX-512 (k <= 8).
//!
//! In cache a lookup waits on no memory, so its instructions set its speed, and two of LLVM's
//! choices cost us there (measured part by part with `examples/lookup_kernels.rs`): it moves
//! each hash from a general register into the vector unit (`vpbroadcastd zmm, r32`, one per
//! cycle) where the multiply could read it from memory, and it turns the mask-register test
//! into `kortest`, `sete` and a store or `add` where the test's carry flag would do. A batch
//! has its hashes in memory and wants a count or one byte per answer, so here the loop is
//! written out: the multiply reads the hash from memory, and the answer goes from the carry
//! flag straight into an `adc` (counts) or a `setc` to the output (answers). The bits tested
//! are the engine's (`simd::mask_for`, same salts and enable patterns); the tests compare the
//! two paths key by key.
//!
//! Only for k <= 8 (one probe per word; the second bit of k > 8 keeps the portable path) and
//! only in builds with AVX-512 (`cfg(target_feature = "avx512f")`); elsewhere these return
//! `None` and the caller runs its plain loop.

use super::simd::Line;

/// How many of `hashes` may be in `lines` with `k` probes, or `None` when this path does not
/// apply (k > 8, no AVX-512, no lines).
#[inline]
pub(crate) fn count(lines: &[Line], k: u32, hashes: &[u64]) -> Option<usize> {
    imp::count(lines, k, hashes)
}

/// `out[i]` = whether `hashes[i]` may be in `lines`, for slices of equal length; `false` (and
/// nothing written) when this path does not apply.
#[inline]
pub(crate) fn contains(lines: &[Line], k: u32, hashes: &[u64], out: &mut [bool]) -> bool {
    imp::contains(lines, k, hashes, out)
}

#[cfg(all(
    target_arch = "x86_64",
    target_feature = "avx512f",
    target_feature = "bmi2"
))]
mod imp {
    use super::super::line_for;
    use super::super::simd::{SALT_LANES, enable_row, mask_for};
    use super::Line;
    use std::arch::asm;

    /// Hashes per loop iteration (the unrolled copies below).
    const UNROLL: usize = 4;

    /// One key's lookup, its hash at byte offset `$at` from `{i}`; leaves the answer in the
    /// carry flag (set: maybe present). zmm0 holds the salts, zmm1 ones in each 64-bit lane.
    macro_rules! probe {
        ($at:literal) => {
            concat!(
                "mov rdx, [{i} + ",
                $at,
                "]\n",
                "mulx r8, r9, {n}\n",
                "vpmulld zmm2, zmm0, dword ptr [{i} + ",
                $at,
                "]{{1to16}}\n",
                "shr rdx, 29\n",
                "and edx, 0x38\n",
                "shl r8, 6\n",
                "vmovdqa64 zmm3, [{lines} + r8]\n",
                "vpsrlq zmm2, zmm2, 58\n",
                "vpandnd zmm3, zmm3, [{en} + rdx*8]\n",
                "vpsllvq zmm2, zmm1, zmm2\n",
                "vptestnmd k1, zmm3, zmm2\n",
                "kortestw k1, k1\n",
            )
        };
    }

    /// The parts of a call that the loop needs, checked: `None` when the path does not apply.
    struct Setup {
        whole: usize,
        lines: *const Line,
        n: u64,
        en: *const u64,
    }

    fn setup(lines: &[Line], k: u32, len: usize) -> Option<Setup> {
        if !(1..=8).contains(&k) || lines.is_empty() {
            return None;
        }
        Some(Setup {
            whole: len - len % UNROLL,
            lines: lines.as_ptr(),
            n: lines.len() as u64,
            en: enable_row(k).as_ptr(),
        })
    }

    pub(super) fn count(lines: &[Line], k: u32, hashes: &[u64]) -> Option<usize> {
        let s = setup(lines, k, hashes.len())?;
        let mut found: u64 = 0;
        if s.whole > 0 {
            // SAFETY: the loop reads `hashes[..whole]` (whole <= hashes.len(), a multiple of
            // UNROLL, not 0), the 64-byte aligned salts, and for each hash its line
            // `lines[(hash * n) >> 64]` (below n = lines.len(); `Line` is 64-byte aligned, as
            // `vmovdqa64` needs) and 8 words at offset `(hash >> 29) & 0x38` (at most 56) of
            // the 64-word enable row. It writes only the registers it declares and the flags.
            // The instructions need AVX-512F and BMI2, which this module is compiled for.
            unsafe {
                asm!(
                    "vmovdqa64 zmm0, [{salts}]",
                    "mov {one:e}, 1",
                    "vpbroadcastq zmm1, {one}",
                    ".p2align 6",
                    "2:",
                    probe!("0"),
                    "adc {found}, 0",
                    probe!("8"),
                    "adc {found}, 0",
                    probe!("16"),
                    "adc {found}, 0",
                    probe!("24"),
                    "adc {found}, 0",
                    "add {i}, 32",
                    "cmp {i}, {end}",
                    "jne 2b",
                    i = inout(reg) hashes.as_ptr() => _,
                    end = in(reg) hashes.as_ptr().add(s.whole),
                    lines = in(reg) s.lines,
                    n = in(reg) s.n,
                    en = in(reg) s.en,
                    salts = in(reg) SALT_LANES.0.as_ptr(),
                    found = inout(reg) found,
                    one = out(reg) _,
                    out("rdx") _, out("r8") _, out("r9") _,
                    out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("k1") _,
                    options(nostack, readonly),
                );
            }
        }
        let tail = hashes[s.whole..]
            .iter()
            .filter(|&&h| line_for(lines, h).test(mask_for(h, k)))
            .count();
        Some(found as usize + tail)
    }

    pub(super) fn contains(lines: &[Line], k: u32, hashes: &[u64], out: &mut [bool]) -> bool {
        if out.len() != hashes.len() {
            return false;
        }
        let Some(s) = setup(lines, k, hashes.len()) else {
            return false;
        };
        if s.whole > 0 {
            // SAFETY: as in `count`, and the loop writes one byte, 0 or 1 (a valid `bool`), to
            // each of `out[..whole]` (out.len() == hashes.len(), checked above), which this
            // call borrows mutably.
            unsafe {
                asm!(
                    "vmovdqa64 zmm0, [{salts}]",
                    "mov {one:e}, 1",
                    "vpbroadcastq zmm1, {one}",
                    ".p2align 6",
                    "2:",
                    probe!("0"),
                    "setc byte ptr [{out}]",
                    probe!("8"),
                    "setc byte ptr [{out} + 1]",
                    probe!("16"),
                    "setc byte ptr [{out} + 2]",
                    probe!("24"),
                    "setc byte ptr [{out} + 3]",
                    "add {out}, 4",
                    "add {i}, 32",
                    "cmp {i}, {end}",
                    "jne 2b",
                    i = inout(reg) hashes.as_ptr() => _,
                    end = in(reg) hashes.as_ptr().add(s.whole),
                    out = inout(reg) out.as_mut_ptr() => _,
                    lines = in(reg) s.lines,
                    n = in(reg) s.n,
                    en = in(reg) s.en,
                    salts = in(reg) SALT_LANES.0.as_ptr(),
                    one = out(reg) _,
                    out("rdx") _, out("r8") _, out("r9") _,
                    out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("k1") _,
                    options(nostack),
                );
            }
        }
        for (o, &h) in out[s.whole..].iter_mut().zip(&hashes[s.whole..]) {
            *o = line_for(lines, h).test(mask_for(h, k));
        }
        true
    }
}

#[cfg(not(all(
    target_arch = "x86_64",
    target_feature = "avx512f",
    target_feature = "bmi2"
)))]
mod imp {
    use super::Line;

    pub(super) fn count(_: &[Line], _: u32, _: &[u64]) -> Option<usize> {
        None
    }

    pub(super) fn contains(_: &[Line], _: u32, _: &[u64], _: &mut [bool]) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::line_for;
    use super::super::simd::mask_for;
    use super::*;
    use crate::hash::mix64;

    /// Lines of random bits, dense enough that about half of all tests pass.
    fn random_lines(n: usize, seed: u64) -> Vec<Line> {
        (0..n as u64)
            .map(|i| {
                Line(std::array::from_fn(|w| {
                    let x = mix64(seed ^ (i * 16 + w as u64));
                    (x | (x >> 32)) as u32 | mix64(x) as u32
                }))
            })
            .collect()
    }

    #[test]
    fn answers_as_the_portable_test_for_every_k_length_and_line_count() {
        for n in [1usize, 2, 3, 7, 64, 1000] {
            let lines = random_lines(n, n as u64);
            for k in 1..=16u32 {
                for len in [0usize, 1, 3, 4, 5, 8, 31, 1001] {
                    let hashes: Vec<u64> = (0..len as u64)
                        .map(|i| mix64(i ^ (k as u64) << 40))
                        .collect();
                    let want: Vec<bool> = hashes
                        .iter()
                        .map(|&h| line_for(&lines, h).test(mask_for(h, k)))
                        .collect();
                    // Starts `true` everywhere, so a byte the loop skips shows.
                    let mut got = vec![true; len];
                    if contains(&lines, k, &hashes, &mut got) {
                        assert_eq!(got, want, "n {n} k {k} len {len}");
                    }
                    if let Some(found) = count(&lines, k, &hashes) {
                        let expected = want.iter().filter(|&&b| b).count();
                        assert_eq!(found, expected, "n {n} k {k} len {len}");
                    }
                    // The path applies exactly where it should.
                    let applies = cfg!(all(
                        target_arch = "x86_64",
                        target_feature = "avx512f",
                        target_feature = "bmi2"
                    )) && k <= 8;
                    assert_eq!(count(&lines, k, &hashes).is_some(), applies);
                }
            }
        }
    }

    #[test]
    fn extreme_hashes_stay_in_their_lines() {
        let lines = random_lines(5, 9);
        let hashes = [
            0,
            1,
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
            (1 << 63) - 1,
            0x38 << 29,
            !0 << 29,
        ];
        for k in 1..=8 {
            let want: Vec<bool> = hashes
                .iter()
                .map(|&h| line_for(&lines, h).test(mask_for(h, k)))
                .collect();
            let mut got = [false; 8];
            if contains(&lines, k, &hashes, &mut got) {
                assert_eq!(&got[..], &want[..], "k {k}");
            }
        }
    }

    #[test]
    fn mismatched_lengths_and_empty_lines_take_the_portable_path() {
        let lines = random_lines(4, 1);
        let mut out = [false; 3];
        assert!(!contains(&lines, 6, &[1, 2, 3, 4], &mut out));
        assert!(!contains(&[], 6, &[1, 2, 3], &mut out));
        assert_eq!(count(&[], 6, &[1, 2, 3, 4]), None);
    }
}
