//! Unit tests of the split-block filter: every fast path against the plain one, the sizes the
//! readers refuse, and the Parquet hash.

use super::block::BlockMask;
use super::*;
use crate::hash::mix64;

fn hashes(n: usize, salt: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| mix64(i.wrapping_add(salt << 40)))
        .collect()
}

#[test]
fn xxh64_of_nothing_is_the_specs_vector() {
    assert_eq!("".hash_xxh64(), 17_241_709_254_077_376_921);
    assert_eq!(crate::hash::hash_xxh64(b""), 17_241_709_254_077_376_921);
    // Integers hash as their little-endian plain encoding.
    assert_eq!(
        5i64.hash_xxh64(),
        crate::hash::hash_xxh64(&5i64.to_le_bytes())
    );
    assert_eq!((-1i32).hash_xxh64(), crate::hash::hash_xxh64(&[0xff; 4]));
    assert_eq!(
        1.5f64.hash_xxh64(),
        crate::hash::hash_xxh64(&1.5f64.to_le_bytes())
    );
}

#[test]
fn parquet_sizing_is_the_writers_formula() {
    // -8 n / ln(1 - p^(1/8)) bits: 1e6 values at 1 % is 9.58 Mbit = 1.2 MB, rounded up to 2 MiB.
    assert_eq!(parquet_bitset_bytes(1_000_000, 0.01).unwrap(), 2 << 20);
    assert_eq!(parquet_bitset_bytes(0, 0.01).unwrap(), 32);
    assert_eq!(
        parquet_bitset_bytes(u64::MAX, 0.01).unwrap(),
        MAX_BITSET_BYTES
    );
    assert!(parquet_bitset_bytes(10, 1.0).is_err());
    assert!(parquet_bitset_bytes(10, f64::NAN).is_err());
    let f = SplitBlockBloom::with_ndv_fpp(100_000, 0.05).unwrap();
    assert!(f.size_bytes().is_power_of_two());
    assert!(SplitBlockBloom::with_fpr(0, 0.01).is_err());
    assert!(SplitBlockBloom::with_bits_per_key(10, 0.5).is_err());
    assert_eq!(
        SplitBlockBloom::with_bits_per_key(1000, 10.0)
            .unwrap()
            .num_blocks(),
        40
    );
}

#[test]
fn batched_lookups_equal_one_at_a_time_in_and_past_the_cache() {
    // 4 MiB is past the plain loop's bound, so the prefetching loop runs.
    // Probes alternate inserted hashes (every one a "yes") and never-inserted ones, so an
    // answer written to the wrong slot shows; batches shorter than, near and far past the
    // prefetch distance.
    for blocks in [1, 3, 1000, (4 << 20) / BLOCK_BYTES] {
        let mut f = SplitBlockBloom::with_blocks(blocks).unwrap();
        let inserted = hashes(blocks * 6, 1);
        for &h in &inserted {
            f.insert_hash(h);
        }
        let misses = hashes(25_000, 2);
        let all: Vec<u64> = misses
            .iter()
            .zip(inserted.iter().cycle())
            .flat_map(|(&m, &h)| [h, m])
            .collect();
        let view = SplitBlockBloomRef::from_bitset(f.bitset()).unwrap();
        for len in [1, 2, 255, 257, 300, all.len()] {
            let probes = &all[..len];
            let mut out = vec![false; len];
            f.contains_hashes(probes, &mut out).unwrap();
            let one: Vec<bool> = probes.iter().map(|&h| f.contains_hash(h)).collect();
            assert!(one.iter().step_by(2).all(|&b| b));
            assert_eq!(out, one, "{blocks} blocks, {len} probes");
            assert_eq!(
                f.count_contained_hashes(probes),
                one.iter().filter(|&&b| b).count()
            );
            let mut from_view = vec![false; len];
            view.contains_hashes(probes, &mut from_view).unwrap();
            assert_eq!(from_view, one, "{blocks} blocks, {len} probes, viewed");
        }
        let mut out = vec![false; 10];
        assert!(f.contains_hashes(&all[..11], &mut out).is_err());
    }
}

#[test]
fn bulk_inserts_are_bit_identical_to_one_by_one() {
    for blocks in [1, 2, 7, 4096, (8 << 20) / BLOCK_BYTES] {
        // A count that leaves a tail past the tasks' steps of 32 hashes.
        let keys = hashes(100_003, blocks as u64);
        let mut one = SplitBlockBloom::with_blocks(blocks).unwrap();
        keys.iter().for_each(|&h| one.insert_hash(h));
        let mut bulk = SplitBlockBloom::with_blocks(blocks).unwrap();
        bulk.insert_hashes(&keys);
        assert_eq!(bulk, one, "insert_hashes, {blocks} blocks");
        for threads in [2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut par = SplitBlockBloom::with_blocks(blocks).unwrap();
            pool.install(|| par.par_insert_hashes(&keys));
            assert_eq!(
                par, one,
                "par_insert_hashes, {blocks} blocks, {threads} threads"
            );
        }
    }
}

#[test]
fn bitsets_of_bad_sizes_are_refused() {
    for len in [0, 1, 31, 33, 48, MAX_BITSET_BYTES + 32] {
        let bytes = vec![0u8; len];
        assert!(
            matches!(SplitBlockBloom::from_bitset(&bytes), Err(Error::Corrupt(_))),
            "{len}"
        );
        assert!(SplitBlockBloomRef::from_bitset(&bytes).is_err(), "{len}");
    }
    // Any multiple of 32 reads (writers use powers of two; readers need not).
    assert_eq!(
        SplitBlockBloom::from_bitset(&[0; 96]).unwrap().num_blocks(),
        3
    );
    assert!(SplitBlockBloom::with_blocks(0).is_err());
}

#[test]
fn parquet_bytes_round_trip_and_length_mismatches_are_errors() {
    let mut f = SplitBlockBloom::with_ndv_fpp(1_000, 0.01).unwrap();
    for i in 0..1_000i64 {
        f.insert(&i);
    }
    let bytes = f.to_parquet_bytes().unwrap();
    assert_eq!(SplitBlockBloom::from_parquet_bytes(&bytes).unwrap(), f);
    let view = SplitBlockBloomRef::from_parquet_bytes(&bytes).unwrap();
    assert!((0..1_000i64).all(|i| view.contains(&i)));
    assert_eq!(view.count_ones(), f.count_ones());
    assert_eq!(view.estimated_items(), f.estimated_items());
    assert_eq!(view.current_fpr(), f.current_fpr());
    assert!(SplitBlockBloom::from_parquet_bytes(&bytes[..bytes.len() - 1]).is_err());
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(SplitBlockBloom::from_parquet_bytes(&longer).is_err());
    assert!(SplitBlockBloomRef::from_parquet_bytes(&longer).is_err());
    // The linebloom format too, with its checksum.
    let ours = f.to_bytes();
    assert_eq!(SplitBlockBloom::from_bytes(&ours).unwrap(), f);
}

#[test]
fn estimates_follow_the_fill() {
    let mut f = SplitBlockBloom::with_blocks(4096).unwrap();
    assert_eq!(f.estimated_items(), 0.0);
    assert_eq!(f.current_fpr(), 0.0);
    let n = 100_000;
    f.insert_hashes(&hashes(n, 9));
    let est = f.estimated_items();
    assert!(
        (est / n as f64 - 1.0).abs() < 0.02,
        "estimated {est} of {n}"
    );
    let model = f.expected_fpr(n as u64);
    let now = f.current_fpr();
    assert!(
        (now / model - 1.0).abs() < 0.1,
        "current {now}, model {model}"
    );
}

#[test]
fn measured_fpr_matches_the_model() {
    for bits_per_key in [8.0, 12.0, 16.0] {
        let n = 200_000;
        let mut f = SplitBlockBloom::with_bits_per_key(n, bits_per_key).unwrap();
        f.insert_hashes(&hashes(n as usize, 11));
        let probes = hashes(2_000_000, 12);
        let fp = f.count_contained_hashes(&probes) as f64 / probes.len() as f64;
        let model = crate::model::split_block_fpr(f.num_bits() as f64 / n as f64);
        // Fixed keys, so the result never changes; the band is many standard deviations wide.
        assert!(
            (fp / model - 1.0).abs() < 0.08,
            "{bits_per_key}: {fp} vs {model}"
        );
    }
}

/// The keyed batches answer and insert as the one-value paths (XXH64 of the plain encoding),
/// owned and viewed, in cache and past the plain loop, across the 4096-value rounds.
#[test]
fn keyed_batches_match_one_value_at_a_time() {
    let values: Vec<i64> = (0..10_001).map(|i| mix64(i) as i64).collect();
    for blocks in [1000usize, (8 << 20) / BLOCK_BYTES] {
        let mut one = SplitBlockBloom::with_blocks(blocks).unwrap();
        values[..5000].iter().for_each(|v| one.insert(v));
        let mut batch = SplitBlockBloom::with_blocks(blocks).unwrap();
        batch.insert_keys(&values[..5000]);
        assert_eq!(batch, one, "{blocks} blocks");
        let view = SplitBlockBloomRef::from_bitset(one.bitset()).unwrap();
        for len in [0, 1, 64, 65, 4095, 4096, 4097, 10_001] {
            let probe = &values[..len];
            let want: Vec<bool> = probe.iter().map(|v| one.contains(v)).collect();
            let (mut got, mut viewed) = (vec![true; len], vec![false; len]);
            one.contains_keys(probe, &mut got).unwrap();
            view.contains_keys(probe, &mut viewed).unwrap();
            assert_eq!(got, want, "{blocks} blocks, {len} values");
            assert_eq!(viewed, want, "{blocks} blocks, {len} values, viewed");
        }
        assert!(one.contains_keys(&values[..3], &mut [false; 2]).is_err());
        assert!(view.contains_keys(&["a"], &mut []).is_err());
    }
}

/// Every SIMD path the CPU has answers the batched lookups and inserts (one-thread, prefetched
/// and in cache) with the portable bits and answers, owned blocks and bitset bytes alike.
#[test]
fn every_simd_path_answers_and_inserts_as_the_portable_one() {
    use super::batch::{contains_hashes_on, count_contained_on};
    use super::block::Blocks;
    use crate::engine::arch::SimdPath;
    use crate::engine::bulk::{DRAIN, insert_prefetched};
    for (blocks, keys) in [(37usize, 300u64), (100_000, 300_000)] {
        let inserted: Vec<u64> = (0..keys).map(crate::hash::mix64).collect();
        let mut portable = vec![Block::ZERO; blocks];
        for &h in &inserted {
            super::block::set_on(SimdPath::Portable, &mut portable[block_index(h, blocks)], h);
        }
        let probes: Vec<u64> = (0..2 * keys).map(crate::hash::mix64).collect();
        let want: Vec<bool> = probes
            .iter()
            .map(|&h| portable[block_index(h, blocks)].test(BlockMask::for_hash(h)))
            .collect();
        let found = want.iter().filter(|&&y| y).count();
        let bytes: Vec<[u8; 32]> = portable.iter().map(|b| b.to_le_bytes()).collect();
        for path in SimdPath::available() {
            let mut got = vec![false; probes.len()];
            contains_hashes_on(path, &portable, &probes, &mut got);
            assert_eq!(got, want, "{path} {blocks} blocks");
            contains_hashes_on(path, &bytes, &probes, &mut got);
            assert_eq!(got, want, "{path} {blocks} blocks, bytes");
            assert_eq!(count_contained_on(path, &portable, &probes), found);
            assert_eq!(count_contained_on(path, &bytes, &probes), found);
            let mut prefetched = vec![Block::ZERO; blocks];
            insert_prefetched::<_, false>(
                &Blocks(path),
                &mut prefetched,
                0,
                blocks,
                &inserted,
                0,
                DRAIN,
            );
            assert_eq!(prefetched, portable, "{path} {blocks} blocks");
        }
    }
}
