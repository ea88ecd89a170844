//! The classic filter's contract, through the public API only: no false negatives on any path
//! and at any size, every fast path (batched, bulk, parallel) bit-identical to the scalar one,
//! measured FPR within statistical bounds of `model::classic_fpr`, clear errors on bad sizes.

use linebloom::hash::{Key, mix64};
use linebloom::{ClassicBloom, Error, model};
use proptest::prelude::*;

/// Pseudo-random, distinct 64-bit hashes: `mix64` is a bijection, so distinct inputs stay
/// distinct; `stream` keeps the hashes of different uses apart.
fn hashes(stream: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| mix64(i ^ (stream << 40))).collect()
}

fn filter(items: usize, bits_per_key: f64, k: u32, seed: u64) -> ClassicBloom {
    ClassicBloom::builder(items)
        .bits_per_key(bits_per_key)
        .k(k)
        .seed(seed)
        .build()
        .unwrap()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn no_false_negatives_for_byte_keys(
        keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..32), 1..300),
        items in 1usize..2000,
        bits_per_key in 1.0f64..32.0,
        k in 1u32..=24,
        seed in any::<u64>(),
    ) {
        let mut f = filter(items, bits_per_key, k, seed);
        for key in &keys {
            f.insert(key);
        }
        for key in &keys {
            prop_assert!(f.contains(key));
            prop_assert!(f.contains(key.as_slice()));
            prop_assert!(f.contains_hash(key.hash_with_seed(seed)));
        }
    }

    #[test]
    fn no_false_negatives_for_integer_keys(
        keys in proptest::collection::vec(any::<u64>(), 1..2000),
        items in 1usize..2000,
        bits_per_key in 1.0f64..32.0,
        k in 1u32..=24,
        seed in any::<u64>(),
    ) {
        let mut f = filter(items, bits_per_key, k, seed);
        for key in &keys {
            f.insert(key);
        }
        prop_assert!(keys.iter().all(|key| f.contains(key)));
        prop_assert!(keys.iter().all(|key| f.contains(&key.to_le_bytes())));
    }

    #[test]
    fn every_insert_and_lookup_path_agrees(
        items in 1usize..2000,
        bits_per_key in 1.0f64..32.0,
        k in 1u32..=24,
        stream in any::<u32>(),
    ) {
        let hs = hashes(u64::from(stream), items);
        let mut scalar = filter(items, bits_per_key, k, 1);
        for &h in &hs {
            scalar.insert_hash(h);
        }
        let mut batched = filter(items, bits_per_key, k, 1);
        batched.insert_hashes(&hs);
        let mut bulk = filter(items, bits_per_key, k, 1);
        pool(2).install(|| bulk.par_insert_hashes(&hs));
        prop_assert_eq!(scalar.words(), batched.words());
        prop_assert_eq!(scalar.words(), bulk.words());
        prop_assert!(hs.iter().all(|&h| scalar.contains_hash(h)));
        let mut out = vec![false; hs.len()];
        scalar.contains_hashes(&hs, &mut out).unwrap();
        prop_assert!(out.iter().all(|&b| b));
    }

    #[test]
    fn batched_lookup_matches_scalar(
        items in 1usize..2000,
        bits_per_key in 1.0f64..16.0,
        k in 1u32..=24,
        probes in 0usize..500,
    ) {
        let mut f = filter(items, bits_per_key, k, 2);
        f.insert_hashes(&hashes(1, items));
        let probe = hashes(2, probes);
        let mut out = vec![false; probes];
        f.contains_hashes(&probe, &mut out).unwrap();
        for (h, got) in probe.iter().zip(&out) {
            prop_assert_eq!(*got, f.contains_hash(*h));
        }
    }
}

/// Bits of the filters the bulk-insert tests use: just past the size below which
/// `par_insert_hashes` runs on the calling thread (32 MiB), so its threads run.
const BULK_BITS: u64 = 64 * (1 << 22) + 13;

#[test]
fn bulk_insert_is_bit_identical_with_many_threads() {
    // 1M hashes into a filter just past the 32 MiB below which `par_insert_hashes` stays on the
    // calling thread, with a partial last chunk and thread counts that do not divide the work.
    let hs = hashes(3, 1_000_003);
    let filter = || ClassicBloom::with_bits(BULK_BITS, 7, 1).unwrap();
    let mut sequential = filter();
    for &h in &hs {
        sequential.insert_hash(h);
    }
    let mut batched = filter();
    batched.insert_hashes(&hs);
    assert!(batched == sequential);
    for threads in [2, 3, 4] {
        let mut bulk = filter();
        pool(threads).install(|| bulk.par_insert_hashes(&hs));
        assert!(bulk == sequential, "{threads} threads");
        // Filling in two rounds gives the same bits as one.
        let mut halves = filter();
        let (a, b) = hs.split_at(400_001);
        pool(threads).install(|| {
            halves.par_insert_hashes(a);
            halves.par_insert_hashes(b);
        });
        assert!(halves == sequential, "{threads} threads, two rounds");
    }
}

#[test]
fn bulk_insert_is_bit_identical_under_contention() {
    // A filter just above the 32 MiB below which `par_insert_hashes` stays on one thread, with
    // 16 probes per key so that threads often write the same words at once, and about half its
    // bits set at the end so that a lost OR would show.
    let bits = BULK_BITS;
    let hs = hashes(4, 11_700_000);
    let mut sequential = ClassicBloom::with_bits(bits, 16, 5).unwrap();
    sequential.insert_hashes(&hs);
    let ones = sequential.count_ones() as f64 / bits as f64;
    assert!((0.4..0.6).contains(&ones), "fill {ones}");
    for threads in [2, 4] {
        let mut bulk = ClassicBloom::with_bits(bits, 16, 5).unwrap();
        pool(threads).install(|| bulk.par_insert_hashes(&hs));
        assert_eq!(bulk.words(), sequential.words(), "{threads} threads");
    }
}

#[test]
fn keys_and_their_hashes_are_the_same_key() {
    let mut f = ClassicBloom::builder(1000)
        .fpr(0.001)
        .seed(77)
        .build()
        .unwrap();
    for i in 0..1000u32 {
        f.insert(&i);
        f.insert(&format!("key-{i}"));
    }
    for i in 0..1000u32 {
        assert!(f.contains(&i));
        assert!(f.contains(format!("key-{i}").as_str()));
        assert!(f.contains_hash(i.hash_with_seed(77)));
        assert!(f.contains_hash(format!("key-{i}").as_str().hash_with_seed(77)));
    }
}

/// Measured FPR of never-inserted keys against `model::classic_fpr` over the grid of bits per
/// key `c` and probes `k`, with `n = 200 000` keys (so `(1 - 1/m)^{kn}` equals `e^{-kn/m}` to
/// well under 0.1 % and one filter's fill varies by less than that).
///
/// Each point probes enough keys to expect about 4 000 false positives (1M to 8M probes). Where
/// it expects at least 400, the bound is two-sided: 5 standard deviations of a binomial count
/// plus 3 % of the model (the double hashing's departure from independent probes is far below
/// that at these sizes). Where the model's FPR is too small to count (c = 32, k = 22 expects 2 in
/// 8M), only an upper bound of the Poisson count is checked. A broken probe sequence, a `reduce`
/// that favours part of the array or a wrong k moves the FPR by tens of percent or more.
#[test]
fn fpr_matches_model() {
    let items = 200_000usize;
    let grid: [(f64, u32); 18] = [
        (2.0, 1),
        (2.0, 2),
        (3.0, 12),
        (4.0, 3),
        (4.0, 24),
        (6.0, 4),
        (8.0, 6),
        (10.0, 7),
        (12.0, 8),
        (16.0, 4),
        (16.0, 11),
        (20.0, 14),
        (24.0, 17),
        (32.0, 1),
        (32.0, 8),
        (32.0, 22),
        (7.5, 5),
        (13.3, 9),
    ];
    for (point, &(c, k)) in grid.iter().enumerate() {
        let seed = 0x5eed_0000 + point as u64;
        let mut f = filter(items, c, k, seed);
        for i in 0..items as u64 {
            f.insert(&i);
        }
        let model = model::classic_fpr(f.num_bits() as f64 / items as f64, k);
        let probes = (4000.0 / model).clamp(1e6, 8e6) as u64;
        let first = items as u64;
        let hits = (first..first + probes).filter(|i| f.contains(i)).count() as f64;
        let expected = model * probes as f64;
        let measured = hits / probes as f64;
        if expected >= 400.0 {
            let sigma = (model * (1.0 - model) / probes as f64).sqrt();
            let bound = 5.0 * sigma + 0.03 * model;
            assert!(
                (measured - model).abs() <= bound,
                "c={c} k={k}: measured {measured} model {model} bound {bound} ({probes} probes)"
            );
        } else {
            let limit = expected + 5.0 * expected.sqrt() + 5.0;
            assert!(
                hits <= limit,
                "c={c} k={k}: {hits} false positives in {probes} probes, model expects {expected}"
            );
        }
        // Shown with `--nocapture`: the numbers behind the README's classic row.
        eprintln!("c={c} k={k}: measured {measured:.3e}, model {model:.3e} ({probes} probes)");
    }
}

#[test]
fn batched_lookup_measures_the_same_fpr() {
    let items = 100_000;
    let mut f = ClassicBloom::with_bits_per_key(items, 8.0).unwrap();
    f.insert_hashes(&hashes(5, items));
    let probe = hashes(6, 1_000_000);
    let mut out = vec![false; probe.len()];
    f.contains_hashes(&probe, &mut out).unwrap();
    let batched = out.iter().filter(|&&b| b).count();
    let scalar = probe.iter().filter(|&&h| f.contains_hash(h)).count();
    assert_eq!(batched, scalar);
    let model = f.expected_fpr(items as u64);
    let measured = batched as f64 / probe.len() as f64;
    assert!(
        (measured - model).abs() < 0.05 * model,
        "{measured} vs {model}"
    );
}

#[test]
fn bad_sizes_are_errors() {
    assert_eq!(ClassicBloom::with_fpr(0, 0.01), Err(Error::ZeroItems));
    assert_eq!(
        ClassicBloom::with_bits_per_key(0, 10.0),
        Err(Error::ZeroItems)
    );
    assert_eq!(ClassicBloom::builder(0).k(3).build(), Err(Error::ZeroItems));
    for p in [0.0, 1.0, f64::NAN, -1.0, 2.0, f64::INFINITY] {
        assert!(
            matches!(ClassicBloom::with_fpr(10, p), Err(Error::InvalidFpr(_))),
            "{p}"
        );
    }
    for b in [f64::NAN, 0.0, 0.5, f64::INFINITY, -3.0, 1e9] {
        assert!(
            matches!(
                ClassicBloom::with_bits_per_key(10, b),
                Err(Error::InvalidBitsPerKey(_))
            ),
            "{b}"
        );
    }
    for k in [0, 65, 1000] {
        let expected = Err(Error::InvalidK { k, min: 1, max: 64 });
        assert_eq!(ClassicBloom::builder(10).k(k).build(), expected);
        assert_eq!(ClassicBloom::with_bits(100, k, 0), expected);
    }
    assert!(ClassicBloom::builder(10).k(64).build().is_ok());
    // Sizes that overflow or cannot be allocated.
    for b in [1.0, 10.0, 1000.0] {
        assert!(
            matches!(
                ClassicBloom::with_bits_per_key(usize::MAX, b),
                Err(Error::TooLarge { .. })
            ),
            "{b}"
        );
    }
    assert!(matches!(
        ClassicBloom::with_fpr(usize::MAX, 0.01),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        ClassicBloom::with_bits(0, 3, 0),
        Err(Error::InvalidParameter {
            name: "num_bits",
            ..
        })
    ));
    assert!(matches!(
        ClassicBloom::with_bits(u64::MAX, 3, 0),
        Err(Error::InvalidParameter {
            name: "num_bits",
            ..
        })
    ));
    // An FPR that would need more bits per key than any filter allows.
    assert!(matches!(
        ClassicBloom::with_fpr(10, 1e-300),
        Err(Error::InvalidBitsPerKey(_))
    ));
    let f = ClassicBloom::with_fpr(10, 0.01).unwrap();
    let mut out = vec![false; 3];
    assert!(matches!(
        f.contains_hashes(&[1, 2], &mut out),
        Err(Error::InvalidParameter {
            name: "output length",
            ..
        })
    ));
    // The messages name the bad value.
    let err = ClassicBloom::builder(10).k(65).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the probe count k must be in [1, 64] (got 65)"
    );
}

#[test]
fn tiny_and_odd_sizes_work() {
    for m in [1u64, 2, 3, 63, 64, 65, 127, 1000, 4097] {
        let mut f = ClassicBloom::with_bits(m, 3, 11).unwrap();
        assert_eq!(f.num_bits(), m);
        assert_eq!(f.size_bytes() as u64, m.div_ceil(64) * 8);
        f.insert("only");
        assert!(f.contains("only"));
        assert!(f.count_ones() >= 1 && f.count_ones() <= 3);
    }
    let mut f = ClassicBloom::with_bits_per_key(1, 1.0).unwrap();
    assert_eq!((f.num_bits(), f.k()), (1, 1));
    f.insert(&7u8);
    assert!(f.contains(&7u8));
    // One bit, now set: everything is a false positive, nothing is a false negative.
    assert!(f.contains("anything"));
    f.clear();
    assert!(!f.contains(&7u8));
}

#[test]
fn sizing_follows_the_model() {
    for (items, p) in [
        (1000usize, 0.1),
        (12_345, 0.01),
        (1_000_000, 0.001),
        (10, 1e-6),
    ] {
        let f = ClassicBloom::with_fpr(items, p).unwrap();
        let c = model::classic_bits_per_key(p).unwrap();
        assert_eq!(f.num_bits(), (items as f64 * c).ceil() as u64);
        assert_eq!(f.k(), model::classic_optimal_k(c));
        // The model's FPR at the built size is the target, to rounding of k.
        let fpr = f.expected_fpr(items as u64);
        assert!(fpr <= p * 1.05 && fpr >= p * 0.95, "{items} {p}: {fpr}");
    }
    let f = ClassicBloom::with_bits_per_key(1000, 10.0).unwrap();
    assert_eq!((f.num_bits(), f.k()), (10_000, 7));
    assert_eq!(f.seed(), linebloom::hash::DEFAULT_SEED);
}
