//! Tests of the AVX-512 loops against the portable path, key by key: answers, counts and
//! inserted bits for every k, many line counts and batch lengths, hits and misses, extreme
//! hashes. On a CPU without the AVX-512 path, and on every other path, they check that every
//! call says so (`None`, `false`) and writes nothing, so the callers run their own loops.

use super::super::line_for;
use super::super::simd::mask_for;
use super::*;
use crate::hash::mix64;

/// The path the loops run on here: AVX-512 where the CPU has it, else the best it has (where
/// every call must decline).
fn best() -> SimdPath {
    *SimdPath::available()
        .last()
        .expect("portable is always available")
}

/// `k` probes of the salted placement, the one these loops place.
fn salted(k: u32) -> Probes {
    Probes::new(k, Placement::Salted)
}

/// Lines of random bits, dense enough that about half of all tests pass.
fn random_lines(n: usize, seed: u64) -> Vec<Line> {
    (0..n as u64)
        .map(|i| {
            Line(core::array::from_fn(|w| {
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
        for (k, ahead) in (1..=16u32).flat_map(|k| [(k, false), (k, true)]) {
            // Batches shorter than, around and past the prefetch distance (256).
            for len in [0usize, 1, 3, 4, 5, 8, 31, 255, 256, 257, 259, 260, 1001] {
                let hashes: Vec<u64> = (0..len as u64)
                    .map(|i| mix64(i ^ (k as u64) << 40))
                    .collect();
                let want: Vec<bool> = hashes
                    .iter()
                    .map(|&h| line_for(&lines, h).test(mask_for(h, k)))
                    .collect();
                // Starts `true` everywhere, so a byte the loop skips shows.
                let mut got = vec![true; len];
                if contains(best(), &lines, salted(k), &hashes, &mut got, ahead) {
                    assert_eq!(got, want, "n {n} k {k} len {len} ahead {ahead}");
                }
                if let Some(found) = count(best(), &lines, salted(k), &hashes, ahead) {
                    let expected = want.iter().filter(|&&b| b).count();
                    assert_eq!(found, expected, "n {n} k {k} len {len} ahead {ahead}");
                }
                // The path applies exactly where it should.
                let applies = best() == SimdPath::Avx512;
                assert_eq!(
                    count(best(), &lines, salted(k), &hashes, ahead).is_some(),
                    applies
                );
            }
        }
    }
}

/// `lines` after inserting `hashes` one at a time with the portable code.
fn inserted_one_by_one(lines: &[Line], k: u32, hashes: &[u64]) -> Vec<Line> {
    let mut want = lines.to_vec();
    for &h in hashes {
        if let Some(line) = super::super::line_for_mut(&mut want, h) {
            line.set(mask_for(h, k));
        }
    }
    want
}

#[test]
fn inserts_set_the_bits_of_one_by_one_inserts() {
    for n in [1usize, 2, 3, 7, 64, 1000] {
        for k in 1..=16u32 {
            // Lines part set (the insert ORs into what is there) and batches of every
            // remainder by four, one line hit many times (n = 1) and few.
            for len in [0usize, 1, 3, 4, 5, 8, 31, 255, 1001] {
                let lines = random_lines(n, n as u64 ^ 77)
                    .iter()
                    .map(|l| Line(l.0.map(|w| w & 0x0f0f_0f0f)))
                    .collect::<Vec<Line>>();
                let hashes: Vec<u64> = (0..len as u64)
                    .map(|i| mix64(i ^ (k as u64) << 44))
                    .collect();
                let want = inserted_one_by_one(&lines, k, &hashes);
                let mut got = lines.clone();
                if insert(best(), &mut got, salted(k), &hashes) {
                    assert_eq!(got, want, "n {n} k {k} len {len}");
                } else {
                    assert_eq!(got, lines, "nothing written when the path does not apply");
                }
                let applies = best() == SimdPath::Avx512;
                assert_eq!(
                    insert(best(), &mut lines.clone(), salted(k), &hashes),
                    applies
                );
            }
        }
    }
    assert!(!insert(best(), &mut [], salted(6), &[1, 2, 3, 4]));
    // The shifted placement runs the compiled loops: every call declines.
    let shifted = Probes::new(6, Placement::Shifted);
    let mut lines = random_lines(3, 1);
    assert!(!insert(best(), &mut lines, shifted, &[1, 2, 3, 4]));
    assert_eq!(count(best(), &lines, shifted, &[1, 2, 3, 4], false), None);
    assert!(!contains(
        best(),
        &lines,
        shifted,
        &[1, 2, 3, 4],
        &mut [false; 4],
        false
    ));
    assert!(!insert(
        best(),
        &mut random_lines(3, 1),
        salted(0),
        &[1, 2, 3, 4]
    ));
}

/// Where the loops compile: a filter filled by the portable one-by-one insert answers the
/// keys it holds (hits) and keys it never saw (misses) through the loops exactly as through
/// the portable test, key by key, with and without prefetching; and the loops' insert of
/// the same keys sets the same bits. Line counts from 1 to past `CACHED_BYTES` (2 MiB).
#[test]
fn filters_of_inserted_keys_answer_as_the_portable_path() {
    if best() != SimdPath::Avx512 {
        return;
    }
    for n in [1usize, 5, 300, 4099, 40_000] {
        for k in 1..=16u32 {
            let keys = n * 4;
            let inserted: Vec<u64> = (0..keys as u64)
                .map(|i| mix64(i ^ (k as u64) << 48))
                .collect();
            let empty = vec![Line::ZERO; n];
            let portable = inserted_one_by_one(&empty, k, &inserted);
            let mut looped = empty.clone();
            assert!(
                insert(best(), &mut looped, salted(k), &inserted),
                "n {n} k {k}"
            );
            assert_eq!(looped, portable, "n {n} k {k}");
            let misses = (0..keys as u64).map(|i| mix64(!i ^ (k as u64) << 52));
            let probe: Vec<u64> = inserted.iter().copied().chain(misses).collect();
            let want: Vec<bool> = probe
                .iter()
                .map(|&h| line_for(&portable, h).test(mask_for(h, k)))
                .collect();
            assert!(
                want[..keys].iter().all(|&b| b),
                "n {n} k {k}: a false negative"
            );
            let found = want.iter().filter(|&&b| b).count();
            for ahead in [false, true] {
                // Both starting values, so that a byte the loop skips shows either way.
                for start in [false, true] {
                    let mut got = vec![start; probe.len()];
                    assert!(contains(
                        best(),
                        &portable,
                        salted(k),
                        &probe,
                        &mut got,
                        ahead
                    ));
                    assert_eq!(got, want, "n {n} k {k} ahead {ahead}");
                }
                assert_eq!(
                    count(best(), &portable, salted(k), &probe, ahead),
                    Some(found)
                );
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
    for k in 1..=16 {
        let want: Vec<bool> = hashes
            .iter()
            .map(|&h| line_for(&lines, h).test(mask_for(h, k)))
            .collect();
        for ahead in [false, true] {
            let mut got = [false; 8];
            if contains(best(), &lines, salted(k), &hashes, &mut got, ahead) {
                assert_eq!(&got[..], &want[..], "k {k}");
            }
        }
        let mut got = lines.clone();
        if insert(best(), &mut got, salted(k), &hashes) {
            assert_eq!(got, inserted_one_by_one(&lines, k, &hashes), "k {k}");
        }
    }
}

#[test]
fn mismatched_lengths_and_empty_lines_take_the_portable_path() {
    let lines = random_lines(4, 1);
    let mut out = [false; 3];
    assert!(!contains(
        best(),
        &lines,
        salted(6),
        &[1, 2, 3, 4],
        &mut out,
        false
    ));
    assert!(!contains(
        best(),
        &[],
        salted(6),
        &[1, 2, 3],
        &mut out,
        true
    ));
    assert_eq!(count(best(), &[], salted(6), &[1, 2, 3, 4], false), None);
}

#[test]
fn every_other_path_declines() {
    let mut lines = random_lines(4, 1);
    let mut out = [false; 4];
    for path in SimdPath::available() {
        if path != SimdPath::Avx512 {
            assert_eq!(count(path, &lines, salted(6), &[1, 2, 3, 4], false), None);
            assert!(!contains(
                path,
                &lines,
                salted(6),
                &[1, 2, 3, 4],
                &mut out,
                false
            ));
            assert!(!insert(path, &mut lines, salted(6), &[1, 2, 3, 4]));
        }
    }
}
