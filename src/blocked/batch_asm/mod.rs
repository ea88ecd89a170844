//! The batched lookups' loops and the in-cache batched insert's, hand-written for AVX-512.
//!
//! Why assembly and not intrinsics: unless a lookup waits on memory, its instruction count sets
//! its speed, and intrinsics leave instruction selection and register allocation to LLVM,
//! which makes two choices that cost a batch there, whatever the source asks for (taken apart
//! part by part with `examples/lookup_kernels.rs`): it moves each hash from a general register
//! into the vector unit (`vpbroadcastd zmm, r32`, one per cycle) where the multiply could read
//! it from memory, and it turns the mask-register test into `kortest`, `sete` and a store or
//! `add` where the test's carry flag would do. A batch has its hashes in memory and wants a
//! count or one byte per answer, so here the loop is written out: the multiply reads the hash
//! from memory, and the answer goes from the carry flag straight into an `adc` (counts) or a
//! `setc` to the output (answers), four keys per iteration. Batched lookups in cache run faster
//! for it, and level far past the cache, where they wait on memory (`docs/performance.md`,
//! Levers tried).
//!
//! How to see the gain, on a machine with AVX-512: `LINEBLOOM_BENCH_MAX_MIB=2 cargo bench
//! --bench lookup`, whose `scalar` rows run the portable `wide` test key by key (in cache the
//! portable batched loop is that same plain loop) and whose `batched` and `batched_count` rows
//! run these loops; `cargo run --release --features internals --example lookup_kernels` times each of the two
//! changes alone (rows `broadcast from memory` and `carry + adc`) and, for the insert,
//! `crate insert_hash` against `crate insert_hashes`.
//!
//! The portable path stays the reference: the bits tested and set are the engine's
//! (`simd::mask_for`, same salts and enable patterns), and the tests (`tests.rs`) compare the two
//! paths key by key (contains, count and insert; every k, line counts from 1 to past the cache,
//! batch lengths around the unrolling and the prefetch distance, hits and misses, extreme
//! hashes). For filters past the cache the loop also prefetches the line of the key `AHEAD`
//! (256) places ahead, as the portable batched loop does.
//!
//! The batched insert into a filter that fits the cache (`BlockedBloom::insert_hashes` up to
//! 2 MiB) gets the same loop with the first of those fixes: the multiply reads each hash from
//! memory, then the key's mask goes into its line as two 256-bit read-modify-writes, as
//! `Line::set` writes it, faster than a loop of `insert_hash` in cache. Past the cache the
//! inserts prefetch and stay portable.
//!
//! Three probes: k < 8 (one bit in the words the rotation enables), k = 8 (one bit in every
//! word: no enable pattern) and k > 8 (a second bit in some words). Compiled into every x86-64
//! build inside `#[target_feature]` functions and run on the AVX-512 path only
//! (`arch::SimdPath::Avx512`: AVX-512F, AVX-512DQ for `kortestb`, BMI2 for `mulx`); on other
//! paths these say so (`None`, `false`) and the caller runs the loop compiled for its path.

use super::arch::SimdPath;
use super::simd::{Line, Placement, Probes};

/// How many of `hashes` may be in `lines` with `k` probes, or `None` when this path does not
/// apply (another SIMD path or placement, no lines, k outside 1..=16). The loops place bits as
/// [`Placement::Salted`] does; the shifted placement's batched loops are the compiled ones. `ahead`: prefetch each key's line
/// `AHEAD` (256) keys early. `path` must be available.
#[inline]
pub(crate) fn count(
    path: SimdPath,
    lines: &[Line],
    k: Probes,
    hashes: &[u64],
    ahead: bool,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if path == SimdPath::Avx512 && k.placement == Placement::Salted {
        // SAFETY: the AVX-512 path is available only on CPUs with AVX-512F, AVX-512DQ and
        // BMI2, the features `imp` enables.
        return unsafe { imp::count(lines, k.k, hashes, ahead) };
    }
    let _ = (path, lines, k, hashes, ahead);
    None
}

/// Inserts every one of `hashes` into `lines` with `k` probes (the same bits as one by one),
/// or returns `false` (and writes nothing) when this path does not apply.
#[inline]
pub(crate) fn insert(path: SimdPath, lines: &mut [Line], k: Probes, hashes: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if path == SimdPath::Avx512 && k.placement == Placement::Salted {
        // SAFETY: as in `count`.
        return unsafe { imp::insert(lines, k.k, hashes) };
    }
    let _ = (path, lines, k, hashes);
    false
}

/// `out[i]` = whether `hashes[i]` may be in `lines`, for slices of equal length; `false` (and
/// nothing written) when this path does not apply. `ahead` as for [`count`].
#[inline]
pub(crate) fn contains(
    path: SimdPath,
    lines: &[Line],
    k: Probes,
    hashes: &[u64],
    out: &mut [bool],
    ahead: bool,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if path == SimdPath::Avx512 && k.placement == Placement::Salted {
        // SAFETY: as in `count`.
        return unsafe { imp::contains(lines, k.k, hashes, out, ahead) };
    }
    let _ = (path, lines, k, hashes, out, ahead);
    false
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use super::super::simd::mask_for;
    use super::super::simd::tables::{SALT_LANES, enable_row, enable_row_second};
    use super::super::{line_for, line_for_mut};
    use super::Line;
    use crate::engine::lookahead::AHEAD;
    use crate::engine::prefetch::{Level, NEAR, prefetch_to};
    use core::arch::asm;

    /// The portable answer for one key, for the keys after the last whole iteration.
    #[inline(always)]
    fn portable(lines: &[Line], k: u32, hash: u64) -> bool {
        line_for(lines, hash).test(mask_for(hash, k))
    }

    /// Hashes per loop iteration (the unrolled copies below).
    const UNROLL: usize = 4;

    // The prefetches below read the hashes `AHEAD` and `NEAR` places on at byte offsets 2048
    // and 64.
    const _: () = assert!(AHEAD * 8 == 2048 && NEAR * 8 == 64);

    /// The start of every probe: loads the hash at byte offset `$at` from `{i}` into rdx, its
    /// line's index into r8 (the high half of `hash * n`) and the 16 products of its low half
    /// and the salts into zmm2, the multiply reading the hash from memory.
    macro_rules! products {
        ($at:literal) => {
            concat!(
                "mov rdx, [{i} + ",
                $at,
                "]\n",
                "mulx r8, r9, {n}\n",
                "vpmulld zmm2, zmm0, dword ptr [{i} + ",
                $at,
                "]{{1to16}}\n",
            )
        };
    }

    /// rdx = the rotation's offset into the enable rows, `(hash >> 29) & 0x38` words.
    macro_rules! rotation {
        () => {
            "shr rdx, 29\nand edx, 0x38\n"
        };
    }

    /// One key's lookup, its hash at byte offset `$at` from `{i}`; leaves the answer in the
    /// carry flag (set: maybe present). zmm0 holds the salts, zmm1 ones in each 64-bit lane.
    macro_rules! probe {
        ($at:literal) => {
            concat!(
                products!($at),
                rotation!(),
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

    /// `probe` for k = 8: every word holds one probe whatever the rotation, so there is no
    /// enable pattern, and "is each word's bit set" is one `vptestmq` against the line in
    /// memory, all eight set being `kortestb`'s carry.
    macro_rules! probe_every_word {
        ($at:literal) => {
            concat!(
                products!($at),
                "shl r8, 6\n",
                "vpsrlq zmm2, zmm2, 58\n",
                "vpsllvq zmm2, zmm1, zmm2\n",
                "vptestmq k1, zmm2, [{lines} + r8]\n",
                "kortestb k1, k1\n",
                "# {en}\n",
            )
        };
    }

    /// For k > 8, the key's two bits per word: zmm2 a bit in every word (as k = 8), zmm4 a
    /// second one in the words whose lane of `{en2}`'s pattern holds 1, that 1 shifted into
    /// place (a 0 stays 0), at the top 6 bits of each lane's low half (zmm5 holds 63 in each
    /// lane); r8 is the line's byte offset.
    macro_rules! two_bits {
        ($at:literal) => {
            concat!(
                products!($at),
                rotation!(),
                "shl r8, 6\n",
                "vpsrlq zmm4, zmm2, 26\n",
                "vpsrlq zmm2, zmm2, 58\n",
                "vpandq zmm4, zmm4, zmm5\n",
                "vmovdqa64 zmm3, [{en2} + rdx*8]\n",
                "vpsllvq zmm2, zmm1, zmm2\n",
                "vpsllvq zmm4, zmm3, zmm4\n",
            )
        };
    }

    /// `probe` for k > 8 (`two_bits`): the missing bits are `(first | second) & !line` (one
    /// `vpternlogq` with the line from memory), none in a lane setting its bit of k1, all
    /// eight `kortestb`'s carry.
    macro_rules! probe_two_bits {
        ($at:literal) => {
            concat!(
                two_bits!($at),
                "vpternlogq zmm4, zmm2, [{lines} + r8], 0x54\n",
                "vptestnmq k1, zmm4, zmm4\n",
                "kortestb k1, k1\n",
                "# {en}\n",
            )
        };
    }

    /// Prefetches into L2 the line of the hash `AHEAD` places after the one at byte offset
    /// `$at`, and into L1 that of the hash `NEAR` places after it (`engine/prefetch.rs` on why two).
    macro_rules! prefetch_ahead {
        ($at:literal) => {
            concat!(
                "mov rdx, [{i} + ",
                $at,
                " + 2048]\n",
                "mulx r8, r9, {n}\n",
                "shl r8, 6\n",
                "prefetcht1 [{lines} + r8]\n",
                "mov rdx, [{i} + ",
                $at,
                " + 64]\n",
                "mulx r8, r9, {n}\n",
                "shl r8, 6\n",
                "prefetcht0 [{lines} + r8]\n",
            )
        };
    }

    /// No prefetch (filters in cache).
    macro_rules! no_prefetch {
        ($at:literal) => {
            ""
        };
    }

    /// Four keys: for each, `$pre` (a prefetch or nothing), its probe, then the instruction
    /// that takes its answer from the carry flag (one literal per key).
    macro_rules! four_keys {
        ($pre:ident, $probe:ident, $t0:literal, $t1:literal, $t2:literal, $t3:literal) => {
            concat!(
                $pre!("0"),
                $probe!("0"),
                $t0,
                "\n",
                $pre!("8"),
                $probe!("8"),
                $t1,
                "\n",
                $pre!("16"),
                $probe!("16"),
                $t2,
                "\n",
                $pre!("24"),
                $probe!("24"),
                $t3,
                "\n",
            )
        };
    }

    /// Counts into `{found}`.
    macro_rules! counting {
        ($pre:ident, $probe:ident) => {
            four_keys!(
                $pre,
                $probe,
                "adc {found}, 0",
                "adc {found}, 0",
                "adc {found}, 0",
                "adc {found}, 0"
            )
        };
    }

    /// Writes each answer, 0 or 1, to the next byte of `{out}`.
    macro_rules! answering {
        ($pre:ident, $probe:ident) => {
            concat!(
                four_keys!(
                    $pre,
                    $probe,
                    "setc byte ptr [{out}]",
                    "setc byte ptr [{out} + 1]",
                    "setc byte ptr [{out} + 2]",
                    "setc byte ptr [{out} + 3]"
                ),
                "add {out}, 4\n"
            )
        };
    }

    /// One key's mask into zmm2, for the insert with k < 8: the first bit of each word the
    /// rotation enables (the enable pattern ANDed in); r8 is its line's byte offset.
    macro_rules! mask {
        ($at:literal) => {
            concat!(
                products!($at),
                rotation!(),
                "shl r8, 6\n",
                "vpsrlq zmm2, zmm2, 58\n",
                "vpsllvq zmm2, zmm1, zmm2\n",
                "vpandq zmm2, zmm2, [{en} + rdx*8]\n",
            )
        };
    }

    /// `mask` for k = 8: a bit in every word, no enable pattern.
    macro_rules! mask_every_word {
        ($at:literal) => {
            concat!(
                products!($at),
                "shl r8, 6\n",
                "vpsrlq zmm2, zmm2, 58\n",
                "vpsllvq zmm2, zmm1, zmm2\n",
                "# {en}\n",
            )
        };
    }

    /// `mask` for k > 8: both bits of each word (`two_bits`) in zmm2.
    macro_rules! mask_two_bits {
        ($at:literal) => {
            concat!(two_bits!($at), "vporq zmm2, zmm2, zmm4\n", "# {en}\n",)
        };
    }

    /// `line |= zmm2` for the line at byte offset r8, as two 256-bit read-modify-writes (as
    /// `Line::set`).
    macro_rules! set_line {
        () => {
            concat!(
                "vextracti64x4 ymm3, zmm2, 1\n",
                "vpor ymm2, ymm2, [{lines} + r8]\n",
                "vmovdqa [{lines} + r8], ymm2\n",
                "vpor ymm3, ymm3, [{lines} + r8 + 32]\n",
                "vmovdqa [{lines} + r8 + 32], ymm3\n",
            )
        };
    }

    /// Four keys' inserts with the mask `$mask`.
    macro_rules! inserting {
        ($mask:ident) => {
            concat!(
                $mask!("0"),
                set_line!(),
                $mask!("8"),
                set_line!(),
                $mask!("16"),
                set_line!(),
                $mask!("24"),
                set_line!(),
            )
        };
    }

    /// The loop over the hashes from `{i}` to `{end}` (a whole number of iterations, at least
    /// one) with `$body`, over the lines at `$lines` (the plan's, or for inserts a pointer from
    /// the `&mut` slice the plan was made of), with the line count and enable rows of `$plan`.
    /// What every use's SAFETY rests on: the loop reads the hashes from
    /// `{i}` to `{end}` (with the prefetch, also the hash `AHEAD` places past each, which the
    /// caller keeps inside the slice), the 64-byte aligned salts, and for each hash its line
    /// `lines[(hash * n) >> 64]` (below n = lines.len(); `Line` is 64-byte aligned, as
    /// `vmovdqa64` and `vmovdqa` need) and 8 words at offset `(hash >> 29) & 0x38` (at most
    /// 56) of the 64-word enable rows (64-byte aligned, so those 8 words are too); a prefetch
    /// never faults. It writes the registers it declares, the flags and, when answering, one
    /// byte (0 or 1, a valid `bool`) per key to `{out}`, which the caller borrows mutably for
    /// that many keys; when inserting, the 64 bytes of each hash's line, which the caller
    /// borrows mutably with the rest of `lines` (distinct from the hashes it reads, as a `&`
    /// and a `&mut` are). The instructions need AVX-512F and BMI2, which this module is
    /// compiled for.
    macro_rules! batch_loop {
        ($body:expr, $lines:expr, $plan:expr, $($operands:tt)*) => {
            asm!(
                "vmovdqa64 zmm0, [{salts}]",
                "mov {one:e}, 1",
                "vpbroadcastq zmm1, {one}",
                "mov {one:e}, 63",
                "vpbroadcastq zmm5, {one}",
                "# {en2}",
                ".p2align 6",
                "2:",
                $body,
                "add {i}, 32",
                "cmp {i}, {end}",
                "jne 2b",
                $($operands)*
                lines = in(reg) $lines,
                n = in(reg) $plan.n,
                en = in(reg) $plan.en,
                en2 = in(reg) $plan.en2,
                salts = in(reg) SALT_LANES.0.as_ptr(),
                one = out(reg) _,
                out("rdx") _, out("r8") _, out("r9") _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                out("zmm4") _, out("zmm5") _, out("k1") _,
                options(nostack),
            )
        };
    }

    /// A call's pieces, checked: `None` when the path does not apply.
    struct Plan {
        /// Keys of the prefetching loop, `0..ahead` (a multiple of `UNROLL`).
        ahead: usize,
        /// Keys of the plain loop after it, `ahead..plain`; the rest go through Rust.
        plain: usize,
        lines: *const Line,
        n: u64,
        en: *const u64,
        en2: *const u64,
    }

    fn plan(lines: &[Line], k: u32, hashes: &[u64], prefetching: bool) -> Option<Plan> {
        if !(1..=16).contains(&k) || lines.is_empty() {
            return None;
        }
        let len = hashes.len();
        let ahead = if prefetching {
            // The first `AHEAD` lines now, and the first `NEAR` into L1 too; the loop
            // prefetches the others.
            for &h in &hashes[..len.min(AHEAD)] {
                prefetch_to(Level::L2, line_for(lines, h));
            }
            for &h in &hashes[..len.min(NEAR)] {
                prefetch_to(Level::L1, line_for(lines, h));
            }
            let last = len.saturating_sub(AHEAD);
            last - last % UNROLL
        } else {
            0
        };
        Some(Plan {
            ahead,
            plain: ahead + (len - ahead) / UNROLL * UNROLL,
            lines: lines.as_ptr(),
            n: lines.len() as u64,
            en: enable_row(k).as_ptr(),
            en2: enable_row_second(k).as_ptr(),
        })
    }

    /// Runs `$keys!(prefetch, probe, from, to)` over the plan's two ranges, the prefetching
    /// one and the plain one after it, with the probe for `$k`.
    macro_rules! each_range {
        ($keys:ident, $p:expr, $k:expr) => {
            if $p.ahead > 0 {
                match $k {
                    8 => $keys!(prefetch_ahead, probe_every_word, 0, $p.ahead),
                    ..8 => $keys!(prefetch_ahead, probe, 0, $p.ahead),
                    _ => $keys!(prefetch_ahead, probe_two_bits, 0, $p.ahead),
                }
            }
            if $p.plain > $p.ahead {
                match $k {
                    8 => $keys!(no_prefetch, probe_every_word, $p.ahead, $p.plain),
                    ..8 => $keys!(no_prefetch, probe, $p.ahead, $p.plain),
                    _ => $keys!(no_prefetch, probe_two_bits, $p.ahead, $p.plain),
                }
            }
        };
    }

    #[target_feature(enable = "avx512f,avx512dq,avx2,bmi2")]
    pub(super) fn count(lines: &[Line], k: u32, hashes: &[u64], ahead: bool) -> Option<usize> {
        let p = plan(lines, k, hashes, ahead)?;
        let mut found: u64 = 0;
        let at = hashes.as_ptr();
        // Keys `$from..$to` with the prefetch `$pre` and the probe `$probe`.
        macro_rules! count_keys {
            ($pre:ident, $probe:ident, $from:expr, $to:expr) => {
                // SAFETY: see `batch_loop`. The ranges below lie in `hashes`, and the
                // prefetching one ends AHEAD keys before its end (p.ahead <= len - AHEAD).
                unsafe {
                    batch_loop!(
                        counting!($pre, $probe),
                        p.lines,
                        p,
                        i = inout(reg) at.add($from) => _,
                        end = in(reg) at.add($to),
                        found = inout(reg) found,
                    )
                }
            };
        }
        each_range!(count_keys, p, k);
        let tail = hashes[p.plain..]
            .iter()
            .filter(|&&h| portable(lines, k, h))
            .count();
        Some(found as usize + tail)
    }

    #[target_feature(enable = "avx512f,avx512dq,avx2,bmi2")]
    pub(super) fn insert(lines: &mut [Line], k: u32, hashes: &[u64]) -> bool {
        let Some(p) = plan(lines, k, hashes, false) else {
            return false;
        };
        let (at, base) = (hashes.as_ptr(), lines.as_mut_ptr());
        // Keys `0..p.plain` with the mask `$mask`.
        macro_rules! insert_keys {
            ($mask:ident) => {
                // SAFETY: see `batch_loop`. `0..p.plain` lies in `hashes` and is a whole
                // number of iterations, at least one (checked below); `base` is `lines`,
                // borrowed mutably for the call.
                unsafe {
                    batch_loop!(
                        inserting!($mask),
                        base,
                        p,
                        i = inout(reg) at => _,
                        end = in(reg) at.add(p.plain),
                    )
                }
            };
        }
        if p.plain > 0 {
            match k {
                8 => insert_keys!(mask_every_word),
                ..8 => insert_keys!(mask),
                _ => insert_keys!(mask_two_bits),
            }
        }
        for &h in &hashes[p.plain..] {
            if let Some(line) = line_for_mut(lines, h) {
                line.set(mask_for(h, k));
            }
        }
        true
    }

    #[target_feature(enable = "avx512f,avx512dq,avx2,bmi2")]
    pub(super) fn contains(
        lines: &[Line],
        k: u32,
        hashes: &[u64],
        out: &mut [bool],
        ahead: bool,
    ) -> bool {
        if out.len() != hashes.len() {
            return false;
        }
        let Some(p) = plan(lines, k, hashes, ahead) else {
            return false;
        };
        let (at, to) = (hashes.as_ptr(), out.as_mut_ptr());
        // Keys `$from..$to` with the prefetch `$pre` and the probe `$probe`, their answers to
        // the same range of `out`.
        macro_rules! answer_keys {
            ($pre:ident, $probe:ident, $from:expr, $to:expr) => {
                // SAFETY: see `batch_loop`. The ranges below lie in `hashes` and `out` (of the
                // same length, checked above), and the prefetching one ends AHEAD keys before
                // its end (p.ahead <= len - AHEAD).
                unsafe {
                    batch_loop!(
                        answering!($pre, $probe),
                        p.lines,
                        p,
                        i = inout(reg) at.add($from) => _,
                        end = in(reg) at.add($to),
                        out = inout(reg) to.add($from) => _,
                    )
                }
            };
        }
        each_range!(answer_keys, p, k);
        for (o, &h) in out[p.plain..].iter_mut().zip(&hashes[p.plain..]) {
            *o = portable(lines, k, h);
        }
        true
    }
}

#[cfg(test)]
mod tests;
