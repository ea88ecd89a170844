//! The cuckoo filter's contract: no false negatives under any mix of inserts and removes of
//! inserted keys, a failed insert loses nothing, the table fills to the load the sizing assumes,
//! FPR within statistical bounds of the model, every fast path equal to the scalar one, clear
//! errors on bad sizes.

use std::collections::HashMap;

use linebloom::hash::{Key, mix64};
use linebloom::{CuckooFilter, Error, Filter, FilterKind, model};
use proptest::prelude::*;

const WIDTHS: [u32; 3] = [8, 12, 16];

/// Pseudo-random, distinct 64-bit hashes: `mix64` is a bijection, so distinct inputs stay
/// distinct; `stream` keeps inserted and probed keys apart.
fn hashes(stream: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| mix64(i ^ (stream << 40))).collect()
}

/// Inserts distinct hashes from `stream` until the first `Err(Full)`; returns the ones that
/// went in, and checks that the failed insert changed nothing: inserts are deterministic, so
/// replaying the successful ones into an empty twin must give the same table.
fn fill_to_failure(filter: &mut CuckooFilter, stream: u64) -> Vec<u64> {
    let mut twin = filter.clone();
    let mut inserted = Vec::new();
    for i in 0.. {
        let h = mix64(i ^ (stream << 40));
        match filter.insert_hash(h) {
            Ok(()) => inserted.push(h),
            Err(e) => {
                assert_eq!(e, Error::Full);
                break;
            }
        }
    }
    for &h in &inserted {
        twin.insert_hash(h).unwrap();
    }
    assert!(*filter == twin, "a failed insert changed the table");
    inserted
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    Remove(u64),
    Contains(u64),
}

fn op(keys: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..keys).prop_map(Op::Insert),
        2 => (0..keys).prop_map(Op::Remove),
        1 => (0..keys * 2).prop_map(Op::Contains),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Inserts, removes (of inserted keys only: see `CuckooFilter::remove`) and lookups against
    /// a multiset: every key the model holds is always found, inserts fail only with `Full` and
    /// then lose nothing, and `len` is the model's size. Tables of 1 to 40 buckets and up to
    /// 48 distinct keys overflow often, and keys repeat, so duplicates and the eviction undo are
    /// exercised on every width.
    #[test]
    fn behaves_like_a_multiset_without_false_negatives(
        buckets in 1usize..40,
        width in prop::sample::select(WIDTHS.to_vec()),
        seed in any::<u64>(),
        keys in 1u64..48,
        ops in prop::collection::vec(op(48), 1..400),
    ) {
        let mut filter = CuckooFilter::with_buckets(buckets, width, seed).unwrap();
        let mut model: HashMap<u64, usize> = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(k) => {
                    let k = k % keys;
                    match filter.insert(&k) {
                        Ok(()) => *model.entry(k).or_default() += 1,
                        Err(e) => {
                            prop_assert_eq!(e, Error::Full);
                            for (&key, &count) in &model {
                                prop_assert!(count == 0 || filter.contains(&key), "lost {}", key);
                            }
                        }
                    }
                }
                Op::Remove(k) => {
                    let k = k % keys;
                    let count = model.entry(k).or_default();
                    if *count > 0 {
                        prop_assert!(filter.remove(&k), "could not remove inserted key {}", k);
                        *count -= 1;
                    }
                }
                Op::Contains(k) => {
                    if model.get(&k).is_some_and(|&c| c > 0) {
                        prop_assert!(filter.contains(&k));
                    }
                }
            }
            prop_assert_eq!(filter.len(), model.values().sum::<usize>());
        }
        for (&key, &count) in &model {
            prop_assert!(count == 0 || filter.contains(&key), "lost {}", key);
            for _ in 0..count {
                prop_assert!(filter.remove(&key));
            }
        }
        prop_assert!(filter.is_empty());
        prop_assert!(filter.table_bytes().iter().all(|&b| b == 0));
    }

    #[test]
    fn batched_lookup_matches_scalar(
        buckets in 1usize..3000,
        width in prop::sample::select(WIDTHS.to_vec()),
        fill in 0.0f64..1.0,
        probes in 0usize..300,
        stream in any::<u32>(),
    ) {
        let mut filter = CuckooFilter::with_buckets(buckets, width, 3).unwrap();
        let target = (fill * filter.capacity() as f64) as usize;
        for h in hashes(u64::from(stream), target) {
            if filter.insert_hash(h).is_err() {
                break;
            }
        }
        // Half inserted keys, half others, in a length that is rarely a multiple of the group.
        let mut probe = hashes(u64::from(stream), probes / 2);
        probe.extend(hashes(u64::from(stream) + 1 + (1 << 24), probes - probes / 2));
        let mut out = vec![false; probe.len()];
        filter.contains_hashes(&probe, &mut out).unwrap();
        for (&h, &got) in probe.iter().zip(&out) {
            prop_assert_eq!(got, filter.contains_hash(h));
        }
    }
}

/// Past 8 MiB the batched lookup prefetches 64 keys ahead instead of in groups: the same
/// answers as one at a time there too, for every width, over a batch shorter than the distance
/// and a long one.
#[test]
fn batched_lookups_past_8_mib_answer_as_one_at_a_time() {
    for width in WIDTHS {
        // Just over 2 Mi buckets: past 8, 12 or 16 MiB of table; a few keys are enough.
        let mut filter = CuckooFilter::with_buckets((1 << 21) + 1000, width, 5).unwrap();
        for h in hashes(1, 50_000) {
            filter.insert_hash(h).unwrap();
        }
        for n in [10, 100_001] {
            let mut probe = hashes(1, n / 2);
            probe.extend(hashes(2, n - n / 2));
            let mut out = vec![false; probe.len()];
            filter.contains_hashes(&probe, &mut out).unwrap();
            for (&h, &got) in probe.iter().zip(&out) {
                assert_eq!(got, filter.contains_hash(h), "width {width}");
            }
            assert!(out[..n / 2].iter().all(|&x| x), "width {width}");
        }
        // Past 8 MiB the table lives in a huge-page mapping (whether the kernel backs it with
        // huge pages is its choice; Linux can always say how many it did).
        if cfg!(target_os = "linux") {
            let huge = filter.huge_page_bytes().unwrap();
            assert!(huge <= filter.size_bytes(), "width {width}: {huge}");
        }
    }
}

/// Fill to the first failure at several sizes: every key that went in is still there, `len`
/// counts exactly those, and the failure comes at a high load. With look-ahead eviction the
/// first failure comes at 96-98 % (fixed seeds, so this never flakes); 95 % is the sizing
/// constructors' target, so falling below it means a sized filter can overflow.
#[test]
fn filling_to_failure_keeps_every_key_and_reaches_high_load() {
    for width in WIDTHS {
        for (buckets, seed) in [(1_000, 1), (4_999, 2), (20_000, 3), (100_003, 4)] {
            let mut filter = CuckooFilter::with_buckets(buckets, width, seed).unwrap();
            let inserted = fill_to_failure(&mut filter, seed);
            assert_eq!(filter.len(), inserted.len());
            assert!(
                inserted.iter().all(|&h| filter.contains_hash(h)),
                "f={width} n={buckets}"
            );
            let load = filter.load_factor();
            println!("f={width} buckets={buckets}: first failure at load {load:.4}");
            assert!(
                load >= 0.95,
                "f={width} buckets={buckets}: first failure at load {load}"
            );
            // Past the first failure some inserts still find room; none loses anything.
            let mut all = inserted;
            for h in hashes(seed + 100, 50) {
                let before = filter.clone();
                match filter.insert_hash(h) {
                    Ok(()) => all.push(h),
                    Err(_) => assert!(filter == before),
                }
            }
            assert_eq!(filter.len(), all.len());
            assert!(all.iter().all(|&h| filter.contains_hash(h)));
        }
    }
}

/// The sizing constructors promise room for `items` at 95 % load.
#[test]
fn sized_filters_hold_their_items() {
    for items in [1, 10, 1_000, 77_777, 300_000] {
        for fpr in [0.03, 0.001, 0.0002] {
            let mut filter = CuckooFilter::with_fpr(items, fpr).unwrap();
            assert_eq!(filter.num_buckets(), (items as f64 / 3.8).ceil() as usize);
            let keys = hashes(items as u64, items);
            for &h in &keys {
                filter.insert_hash(h).unwrap();
            }
            assert!(keys.iter().all(|&h| filter.contains_hash(h)));
        }
    }
}

#[test]
fn a_key_fits_eight_times_and_no_more() {
    for width in WIDTHS {
        let mut filter = CuckooFilter::builder(1000)
            .fingerprint_bits(width)
            .build()
            .unwrap();
        for _ in 0..8 {
            filter.insert("dup").unwrap();
        }
        assert_eq!(filter.insert("dup"), Err(Error::Full));
        assert_eq!(filter.len(), 8);
        // Other keys still go in (and do not evict the copies).
        for i in 0..100u32 {
            filter.insert(&i).unwrap();
        }
        for _ in 0..8 {
            assert!(filter.contains("dup"));
            assert!(filter.remove("dup"));
        }
        assert!(!filter.remove("dup"));
        assert_eq!(filter.len(), 100);
        assert!((0..100u32).all(|i| filter.contains(&i)));
    }
}

#[test]
fn key_and_hash_paths_agree() {
    let mut by_key = CuckooFilter::builder(2_000)
        .fpr(0.001)
        .seed(11)
        .build()
        .unwrap();
    let mut by_hash = by_key.clone();
    for i in 0..1_000u32 {
        let key = format!("key-{i}");
        by_key.insert(&key).unwrap();
        by_hash.insert_hash(key.hash_with_seed(11)).unwrap();
    }
    assert!(by_key == by_hash);
    for i in 0..1_000u32 {
        assert!(by_key.contains(format!("key-{i}").as_str()));
    }
    assert!(by_key.remove("key-5"));
    assert!(by_hash.remove_hash("key-5".hash_with_seed(11)));
    assert!(by_key == by_hash);
    assert!(!CuckooFilter::with_fpr(10, 0.01).unwrap().remove("never"));
}

/// Measured FPR over never-inserted probes against `model::cuckoo_fpr` at the load reached.
/// Bound: 6 standard deviations of the binomial count plus 2 % of the model (the model's
/// `2^-f` against the filter's `1/(2^f - 1)` per slot is worth 0.4 % at f = 8). Testing one
/// bucket instead of two halves the FPR; a biased fingerprint or bucket index moves it by tens
/// of percent.
#[test]
fn fpr_matches_model() {
    let items = 200_000;
    let keys = hashes(7, items);
    for (width, probes) in [(8, 1_000_000), (12, 4_000_000), (16, 16_000_000)] {
        let mut filter = CuckooFilter::builder(items)
            .fingerprint_bits(width)
            .build()
            .unwrap();
        for &h in &keys {
            filter.insert_hash(h).unwrap();
        }
        assert!(filter.load_factor() > 0.94);
        let probe = hashes(99, probes);
        let mut out = vec![false; probes];
        filter.contains_hashes(&probe, &mut out).unwrap();
        let found = out.iter().filter(|&&b| b).count();
        let measured = found as f64 / probes as f64;
        let model = model::cuckoo_fpr(width, 4, filter.load_factor());
        assert!((model - filter.expected_fpr(items as u64)).abs() < 1e-12);
        let sigma = (model * (1.0 - model) / probes as f64).sqrt();
        let bound = 6.0 * sigma + 0.02 * model;
        println!(
            "f={width}: load {:.4}, measured {measured:.3e}, model {model:.3e}",
            filter.load_factor()
        );
        assert!(
            (measured - model).abs() <= bound,
            "f={width} measured={measured} model={model} bound={bound}"
        );
    }
}

#[test]
fn widths_and_sizes_follow_the_spec() {
    // with_fpr: the narrowest width whose FPR at 95 % load meets the target.
    for (fpr, width) in [
        (0.5, 8),
        (0.03, 8),
        (0.029, 12),
        (0.01, 12),
        (0.0019, 12),
        (0.0018, 16),
    ] {
        assert_eq!(
            CuckooFilter::with_fpr(1000, fpr)
                .unwrap()
                .fingerprint_bits(),
            width,
            "{fpr}"
        );
    }
    assert_eq!(
        CuckooFilter::with_fpr(1000, 1.2e-4)
            .unwrap()
            .fingerprint_bits(),
        16
    );
    // with_bits_per_key: the widest f with f / 0.95 <= bits per key.
    for (bpk, width) in [
        (8.0 / 0.95, 8),
        (12.0, 8),
        (12.0 / 0.95, 12),
        (16.8, 12),
        (17.0, 16),
    ] {
        let f = CuckooFilter::with_bits_per_key(10_000, bpk).unwrap();
        assert_eq!(f.fingerprint_bits(), width, "{bpk}");
        assert_eq!(f.num_buckets(), 2632);
        assert_eq!(f.capacity(), 4 * 2632);
    }
    assert_eq!(
        CuckooFilter::with_bits_per_key(10, 1000.0)
            .unwrap()
            .fingerprint_bits(),
        16
    );
    // Honest bits per key: the real table bytes at 95 % load.
    for width in WIDTHS {
        let f = CuckooFilter::builder(1_000_000)
            .fingerprint_bits(width)
            .seed(5)
            .build()
            .unwrap();
        assert_eq!(f.seed(), 5);
        let ideal = width as f64 / 0.95;
        assert!(
            f.bits_per_key() >= ideal && f.bits_per_key() < ideal * 1.0001,
            "{width}"
        );
        assert_eq!(f.table_bytes().len(), f.num_buckets() * width as usize / 2);
        assert!(f.size_bytes() >= f.table_bytes().len());
        assert!(f.is_empty());
        assert_eq!(f.load_factor(), 0.0);
        assert_eq!(f.expected_fpr(0), 0.0);
        let full = model::cuckoo_fpr(width, 4, 0.95);
        let planned = f.expected_fpr((0.95 * f.capacity() as f64) as u64);
        assert!((planned - full).abs() < 1e-6 * full);
    }
    let f = CuckooFilter::with_fpr(10, 0.01).unwrap();
    assert_eq!(f.seed(), linebloom::hash::DEFAULT_SEED);
}

#[test]
fn clear_empties_the_filter() {
    let mut f = CuckooFilter::with_fpr(1000, 0.01).unwrap();
    let empty = f.clone();
    for h in hashes(1, 900) {
        f.insert_hash(h).unwrap();
    }
    assert_eq!(f.len(), 900);
    f.clear();
    assert!(f == empty);
    assert!(f.is_empty());
}

#[test]
fn works_through_the_filter_trait() {
    let mut f: Box<dyn Filter> = Box::new(CuckooFilter::with_fpr(1000, 0.01).unwrap());
    assert_eq!(f.kind(), FilterKind::Cuckoo);
    assert_eq!(f.k(), None);
    let keys = hashes(2, 500);
    for &h in &keys {
        f.insert_hash(h).unwrap();
    }
    let mut out = vec![false; keys.len()];
    f.contains_hashes(&keys, &mut out).unwrap();
    assert!(out.iter().all(|&b| b));
    assert!(keys.iter().all(|&h| f.contains_hash(h)));
    assert!(f.size_bytes() > 0);
    assert!(f.expected_fpr(500) > 0.0);
    assert_eq!(f.seed(), linebloom::hash::DEFAULT_SEED);
}

#[test]
fn bad_parameters_are_errors() {
    assert_eq!(CuckooFilter::with_fpr(0, 0.01), Err(Error::ZeroItems));
    assert_eq!(
        CuckooFilter::with_bits_per_key(0, 12.0),
        Err(Error::ZeroItems)
    );
    assert!(
        CuckooFilter::builder(0)
            .fingerprint_bits(8)
            .build()
            .is_err()
    );
    for p in [0.0, 1.0, -0.5, 2.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(CuckooFilter::with_fpr(10, p), Err(Error::InvalidFpr(_))),
            "{p}"
        );
        assert!(
            CuckooFilter::builder(10)
                .fpr(p)
                .fingerprint_bits(16)
                .build()
                .is_err()
        );
    }
    // Below what 16-bit fingerprints reach: an error that names the limit.
    for p in [1e-9, 1e-4, 1.1e-4] {
        let e = CuckooFilter::with_fpr(10, p).unwrap_err();
        assert!(
            matches!(e, Error::InvalidParameter { name: "fpr", .. }),
            "{p}"
        );
        assert!(e.to_string().contains("1.16e-4"), "{e}");
    }
    for b in [f64::NAN, 0.0, -1.0, f64::INFINITY, 1e9] {
        let e = CuckooFilter::with_bits_per_key(10, b);
        assert!(matches!(e, Err(Error::InvalidBitsPerKey(_))), "{b}");
    }
    for b in [1.0, 3.0, 8.0, 8.42] {
        let e = CuckooFilter::with_bits_per_key(10, b).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidParameter {
                    name: "bits_per_key",
                    ..
                }
            ),
            "{b}"
        );
        assert!(e.to_string().contains("8.421"), "{e}");
    }
    for width in [0, 1, 7, 9, 13, 15, 17, 32, u32::MAX] {
        let e = CuckooFilter::with_buckets(10, width, 0).unwrap_err();
        assert!(matches!(
            e,
            Error::InvalidParameter {
                name: "fingerprint_bits",
                ..
            }
        ));
        assert!(e.to_string().contains(&width.to_string()), "{e}");
        assert!(
            CuckooFilter::builder(10)
                .fingerprint_bits(width)
                .build()
                .is_err()
        );
    }
    assert!(CuckooFilter::with_buckets(0, 8, 0).is_err());
    for width in WIDTHS {
        for buckets in [usize::MAX, usize::MAX / 8, 1 << 62, 1 << 58] {
            assert!(
                CuckooFilter::with_buckets(buckets, width, 0).is_err(),
                "{buckets}"
            );
        }
    }
    assert!(matches!(
        CuckooFilter::with_fpr(usize::MAX, 0.01),
        Err(Error::TooLarge { .. })
    ));
    assert!(CuckooFilter::with_bits_per_key(usize::MAX, 17.0).is_err());
    assert!(
        CuckooFilter::builder(usize::MAX)
            .fingerprint_bits(8)
            .build()
            .is_err()
    );
    let f = CuckooFilter::with_fpr(10, 0.01).unwrap();
    let mut out = vec![false; 3];
    assert!(f.contains_hashes(&[1, 2], &mut out).is_err());
    assert!(f.contains_hashes(&[1, 2, 3, 4], &mut out).is_err());
}

/// Removes of members only (each key at most as often as it was inserted), in random order and
/// interleaved with inserts, at 90 % load on every width: against a shadow multiset, every key
/// still held answers yes, and removing the rest empties the table.
#[test]
fn removing_members_only_loses_no_key() {
    for width in WIDTHS {
        let buckets = 10_000;
        let mut filter = CuckooFilter::with_buckets(buckets, width, 9).unwrap();
        let mut held: HashMap<u64, u32> = HashMap::new();
        // One entry per insert not yet removed: taking a random one removes in random order.
        let mut copies: Vec<u64> = Vec::new();
        let mut fresh = hashes(u64::from(width) + 20, 100_000).into_iter();
        let mut pick = 0u64;
        let target = buckets * 4 * 9 / 10;
        for step in 0..60_000usize {
            // Insert while under the target load (every fourth key twice), else remove.
            if copies.len() < target && step % 4 != 3 {
                let h = fresh.next().unwrap();
                for _ in 0..1 + usize::from(step % 4 == 0) {
                    filter.insert_hash(h).unwrap();
                    *held.entry(h).or_default() += 1;
                    copies.push(h);
                }
            } else {
                pick += 1;
                let i = (mix64(pick) % copies.len() as u64) as usize;
                let h = copies.swap_remove(i);
                *held.get_mut(&h).unwrap() -= 1;
                assert!(
                    filter.remove_hash(h),
                    "width {width}: a held key was refused"
                );
            }
            if step % 5_000 == 0 {
                let lost = held
                    .iter()
                    .filter(|&(&h, &n)| n > 0 && !filter.contains_hash(h))
                    .count();
                assert_eq!(lost, 0, "width {width}, step {step}");
            }
        }
        assert_eq!(filter.len(), copies.len());
        assert!(filter.load_factor() > 0.85, "width {width}");
        println!("width {width}: {pick} removes of members, 0 lost");
        assert!(
            held.iter()
                .all(|(&h, &n)| n == 0 || filter.contains_hash(h))
        );
        for h in copies {
            assert!(filter.remove_hash(h));
        }
        assert!(filter.is_empty());
        assert!(filter.table_bytes().iter().all(|&b| b == 0));
    }
}

/// The hazard `CuckooFilter::remove` documents, measured: a remove of a key never inserted
/// whose fingerprint matches a slot of its buckets (a false positive) is accepted and deletes
/// another key's fingerprint, so inserted keys answer "no".
#[test]
fn non_member_removes_lose_inserted_keys() {
    let n = 100_000;
    let probes = 1_000_000;
    let mut filter = CuckooFilter::builder(n)
        .fingerprint_bits(8)
        .seed(1)
        .build()
        .unwrap();
    let keys = hashes(30, n);
    for &h in &keys {
        filter.insert_hash(h).unwrap();
    }
    let model = filter.expected_fpr(n as u64);
    let accepted = hashes(31, probes)
        .into_iter()
        .filter(|&h| filter.remove_hash(h))
        .count();
    let lost = keys.iter().filter(|&&h| !filter.contains_hash(h)).count();
    println!("model {model}, accepted {accepted}, lost {lost}");
    // Each accepted remove takes one fingerprint out, so the rate falls as removes go on.
    let expected = model * probes as f64;
    assert!(
        accepted as f64 > 0.3 * expected && (accepted as f64) < 1.1 * expected,
        "accepted {accepted}, model {expected}"
    );
    assert_eq!(filter.len(), n - accepted);
    // A lost key is one whose fingerprint was taken; one taken can still read present through
    // another key's matching fingerprint.
    assert!(lost > accepted / 2 && lost <= accepted, "lost {lost}");
}
