//! The engine's contract: no false negatives on any path, FPR within statistical bounds of the
//! model, every fast path bit-identical to the scalar one, clear errors on bad sizes.

use linebloom::hash::{Key, mix64};
use linebloom::{BlockedBloom, BuildBuffers, Error, model};
use proptest::prelude::*;

/// Pseudo-random, distinct 64-bit hashes: `mix64` is a bijection, so distinct inputs stay
/// distinct; `stream` keeps inserted and probed keys apart.
fn hashes(stream: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| mix64(i ^ (stream << 40))).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_false_negatives_for_byte_keys(
        keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 1..400),
        bits_per_key in 1.0f64..24.0,
        k in 1u32..=16,
        seed in any::<u64>(),
    ) {
        let mut f = BlockedBloom::builder(keys.len()).bits_per_key(bits_per_key).k(k)
            .seed(seed).build().unwrap();
        for key in &keys {
            f.insert(key);
        }
        for key in &keys {
            prop_assert!(f.contains(key));
            prop_assert!(f.contains(key.as_slice()));
        }
    }

    #[test]
    fn no_false_negatives_on_every_path(
        items in 1usize..3000,
        bits_per_key in 1.0f64..20.0,
        k in 1u32..=16,
        stream in any::<u32>(),
    ) {
        let hs = hashes(stream as u64, items);
        let mut scalar = BlockedBloom::builder(items).bits_per_key(bits_per_key).k(k)
            .build().unwrap();
        for &h in &hs {
            scalar.insert_hash(h);
        }
        let mut batched = BlockedBloom::builder(items).bits_per_key(bits_per_key).k(k)
            .build().unwrap();
        batched.insert_hashes(&hs);
        let mut bulk = batched.clone();
        bulk.clear();
        bulk.par_insert_hashes(&hs);
        prop_assert_eq!(scalar.lines(), batched.lines());
        prop_assert_eq!(scalar.lines(), bulk.lines());
        let mut out = vec![false; hs.len()];
        scalar.contains_hashes(&hs, &mut out).unwrap();
        prop_assert!(out.iter().all(|&b| b));
        prop_assert!(hs.iter().all(|&h| scalar.contains_hash(h)));
        prop_assert_eq!(scalar.count_contained_hashes(&hs), hs.len());
    }

    #[test]
    fn batched_lookup_matches_scalar(
        items in 1usize..2000,
        probes in 0usize..500,
        k in 1u32..=16,
    ) {
        let mut f = BlockedBloom::builder(items).bits_per_key(4.0).k(k).build().unwrap();
        f.insert_hashes(&hashes(1, items));
        let probe = hashes(2, probes);
        let mut out = vec![false; probes];
        f.contains_hashes(&probe, &mut out).unwrap();
        for (h, got) in probe.iter().zip(&out) {
            prop_assert_eq!(*got, f.contains_hash(*h));
        }
    }
}

#[test]
fn integer_and_string_keys() {
    let mut f = BlockedBloom::with_fpr(1000, 0.01).unwrap();
    for i in 0..1000u32 {
        f.insert(&i);
        f.insert(&format!("key-{i}"));
    }
    for i in 0..1000u32 {
        assert!(f.contains(&i));
        assert!(f.contains(format!("key-{i}").as_str()));
        assert!(f.contains_hash(i.hash_with_seed(f.seed())));
    }
}

#[test]
fn bulk_insert_is_bit_identical_with_many_threads() {
    // Large enough that the parallel path runs (not the sequential fallback: the input is past
    // 16 Ki hashes and a task's buffer fills several times), on huge-page storage (past
    // 8 MiB), with thread counts that do not divide the line count.
    let hs = hashes(3, 3_000_000);
    let items = 7_000_000;
    let mut sequential = BlockedBloom::with_bits_per_key(items, 10.0).unwrap();
    assert!(sequential.size_bytes() > 8 << 20);
    for &h in &hs {
        sequential.insert_hash(h);
    }
    // The prefetching sequential path (filters past 2 MiB) sets the same bits too.
    let mut batched = BlockedBloom::with_bits_per_key(items, 10.0).unwrap();
    batched.insert_hashes(&hs);
    assert!(batched == sequential);
    for threads in [2, 3, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut bulk = BlockedBloom::with_bits_per_key(items, 10.0).unwrap();
        pool.install(|| bulk.par_insert_hashes(&hs));
        assert!(bulk == sequential, "{threads} threads");
    }
}

/// A batch of several keys per line into a filter past 32 MiB goes, on 4 threads or more,
/// through the partitioned insert (sorted by range of lines first), and on fewer through the
/// prefetching insert or the bulk insert's tasks; every way sets exactly the bits of
/// one-by-one inserts, and so does a batch skewed into a few lines.
#[test]
fn partitioned_bulk_insert_is_bit_identical() {
    let lines = (32 << 20) / 64 + 1000;
    let uniform = hashes(4, 4 * lines + 4321);
    let skewed: Vec<u64> = (0..4 * lines as u64 + 99).map(|i| i % 5000).collect();
    // One line per 512 bits asked for each "key": exactly `lines` lines.
    let empty = || {
        BlockedBloom::builder(lines)
            .bits_per_key(512.0)
            .k(6)
            .build()
            .unwrap()
    };
    for hs in [&uniform, &skewed] {
        let mut want = empty();
        assert_eq!(want.size_bytes(), lines * 64);
        hs.iter().for_each(|&h| want.insert_hash(h));
        let mut batched = empty();
        batched.insert_hashes(hs);
        assert!(batched == want);
        for threads in [1, 2, 4, 5] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut bulk = empty();
            pool.install(|| bulk.par_insert_hashes(hs));
            assert!(bulk == want, "{threads} threads");
            // Partitioned from 2 threads with buffers kept; one set for two builds, the
            // second reusing what the first grew.
            let mut buffers = BuildBuffers::new();
            for build in 0..2 {
                let mut kept = empty();
                pool.install(|| kept.par_insert_hashes_with(hs, &mut buffers));
                assert!(
                    kept == want,
                    "{threads} threads, buffers kept, build {build}"
                );
            }
            // Without the feature `rayon` the library runs on one thread: no partitions.
            let parallel = threads > 1 && cfg!(feature = "rayon");
            assert_eq!(buffers.size_bytes() > 0, parallel, "{threads} threads");
            // The same keys in pieces, through the same buffers.
            let mut filled = empty();
            pool.install(|| {
                let mut fill = filled.par_fill(hs.len(), &mut buffers);
                hs.chunks(300_000).for_each(|piece| fill.push(piece));
            });
            assert!(filled == want, "{threads} threads, in pieces");
        }
    }
}

/// Measured FPR over `probes` never-inserted keys against the model, at several sizes.
/// Bound: 6 standard deviations of a binomial count plus 4 % of the model (the Poisson line-load
/// approximation and the 32-bit in-line hash are worth well under 1 %). A broken mask, a line
/// index that favours some lines, or a wrong k moves the FPR by tens of percent.
#[test]
fn fpr_matches_model() {
    let items = 200_000;
    let probes = 2_000_000;
    let probe = hashes(99, probes);
    for bits_per_key in [6.0, 8.0, 10.0, 12.0, 16.0] {
        let mut f = BlockedBloom::with_bits_per_key(items, bits_per_key).unwrap();
        f.insert_hashes(&hashes(7, items));
        let measured = f.count_contained_hashes(&probe) as f64 / probes as f64;
        let c = f.num_bits() as f64 / items as f64;
        let model = model::blocked_fpr(c, f.k());
        let sigma = (model * (1.0 - model) / probes as f64).sqrt();
        let bound = 6.0 * sigma + 0.04 * model;
        assert!(
            (measured - model).abs() <= bound,
            "c={bits_per_key} k={} measured={measured} model={model} bound={bound}",
            f.k()
        );
        if bits_per_key == 10.0 {
            assert!(
                measured <= 0.0100,
                "10 bits/key must stay at or below 1.00 %: {measured}"
            );
        }
    }
}

#[test]
fn fpr_matches_model_for_every_k() {
    let items = 50_000;
    let probes = 1_000_000;
    let probe = hashes(98, probes);
    for k in 1..=16 {
        let mut f = BlockedBloom::builder(items)
            .bits_per_key(12.0)
            .k(k)
            .build()
            .unwrap();
        f.insert_hashes(&hashes(8, items));
        let measured = f.count_contained_hashes(&probe) as f64 / probes as f64;
        let model = model::blocked_fpr(f.num_bits() as f64 / items as f64, k);
        let sigma = (model * (1.0 - model) / probes as f64).sqrt();
        assert!(
            (measured - model).abs() <= 6.0 * sigma + 0.04 * model,
            "k={k} measured={measured} model={model}"
        );
    }
}

#[test]
fn bad_sizes_are_errors() {
    assert_eq!(BlockedBloom::with_fpr(0, 0.01), Err(Error::ZeroItems));
    for p in [0.0, 1.0, -0.5, 2.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(BlockedBloom::with_fpr(10, p), Err(Error::InvalidFpr(_))),
            "{p}"
        );
    }
    for b in [0.0, 0.5, f64::NAN, f64::INFINITY, -3.0, 1e9] {
        assert!(
            matches!(
                BlockedBloom::with_bits_per_key(10, b),
                Err(Error::InvalidBitsPerKey(_))
            ),
            "{b}"
        );
    }
    for k in [0, 17, 1000] {
        assert!(matches!(
            BlockedBloom::builder(10).k(k).build(),
            Err(Error::InvalidK { .. })
        ));
    }
    assert!(BlockedBloom::with_bits_per_key(usize::MAX, 1000.0).is_err());
    assert!(BlockedBloom::with_lines(0, 6, 0).is_err());
    // An FPR a one-line filter cannot reach is an error, not a hang.
    assert!(BlockedBloom::with_fpr(10, 1e-300).is_err());
    let f = BlockedBloom::with_fpr(10, 0.01).unwrap();
    let mut out = vec![false; 3];
    assert!(f.contains_hashes(&[1, 2], &mut out).is_err());
}

#[test]
fn tiny_filters_work() {
    let mut f = BlockedBloom::with_bits_per_key(1, 1.0).unwrap();
    assert_eq!(f.num_lines(), 1);
    f.insert("only");
    assert!(f.contains("only"));
}

#[test]
fn lines_are_cache_line_aligned() {
    let f = BlockedBloom::with_bits_per_key(100_000, 10.0).unwrap();
    for line in f.lines().iter().take(100) {
        assert_eq!(line as *const _ as usize % 64, 0);
    }
    assert_eq!(f.lines().as_ptr() as usize % 64, 0);
    assert_eq!(f.size_bytes(), f.num_lines() * 64);
}

#[test]
fn default_hashes_follow_the_model() {
    let f = BlockedBloom::with_bits_per_key(1000, 10.0).unwrap();
    assert_eq!(f.k(), model::blocked_optimal_k(10.0));
    assert_eq!(f.k(), 6);
}

#[test]
fn large_filters_on_huge_page_storage_behave_like_small_ones() {
    // 10 MB of lines: past the 8 MiB threshold, so the lines live in a huge-page mapping.
    let items = 8_000_000;
    let hs = hashes(5, 200_000);
    let mut f = BlockedBloom::with_bits_per_key(items, 10.0).unwrap();
    f.par_insert_hashes(&hs);
    assert!(hs.iter().all(|&h| f.contains_hash(h)));
    let copy = f.clone();
    assert!(copy == f);
    let back = BlockedBloom::from_bytes(&f.to_bytes()).unwrap();
    assert!(back == f);
    let mut heap = BlockedBloom::with_bits_per_key(items, 10.0).unwrap();
    for &h in &hs {
        heap.insert_hash(h);
    }
    assert_eq!(heap.lines(), f.lines());
    if cfg!(target_os = "linux") {
        assert!(f.huge_page_bytes().is_some());
    }
}

#[test]
fn prefetching_lookup_matches_scalar_on_a_filter_past_2_mib() {
    // 2.38 MiB of lines: past the 2 MiB below which the batched paths run the plain loop, so
    // the prefetching paths are the ones compared here.
    let items = 2_000_000;
    let mut f = BlockedBloom::with_bits_per_key(items, 10.0).unwrap();
    assert!(f.size_bytes() > 2 << 20);
    f.insert_hashes(&hashes(11, items));
    // A mix of hits and misses, with a length that is not a multiple of the group size.
    let mut probe = hashes(11, 50_003);
    probe.extend(hashes(12, 50_001));
    let mut out = vec![false; probe.len()];
    f.contains_hashes(&probe, &mut out).unwrap();
    for (h, got) in probe.iter().zip(&out) {
        assert_eq!(*got, f.contains_hash(*h));
    }
    let expected = probe.iter().filter(|&&h| f.contains_hash(h)).count();
    assert_eq!(f.count_contained_hashes(&probe), expected);
    assert!(expected >= 50_003);
    // Batches shorter than, equal to and just past the prefetch distance (256).
    for len in [0, 1, 7, 255, 256, 257, 513] {
        let part = &probe[50_003 - len / 2..50_003 - len / 2 + len];
        let mut out = vec![false; len];
        f.contains_hashes(part, &mut out).unwrap();
        let want: Vec<bool> = part.iter().map(|&h| f.contains_hash(h)).collect();
        assert_eq!(out, want, "len {len}");
        assert_eq!(
            f.count_contained_hashes(part),
            want.iter().filter(|&&b| b).count()
        );
        let mut batched = BlockedBloom::with_bits_per_key(items, 10.0).unwrap();
        let mut scalar = batched.clone();
        batched.insert_hashes(part);
        part.iter().for_each(|&h| scalar.insert_hash(h));
        assert_eq!(batched.lines(), scalar.lines(), "len {len}");
    }
}
