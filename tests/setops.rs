//! Set operations and fill-based estimates: the union of shards is the filter of all their keys,
//! intersections keep common keys, mismatched filters are refused, and the estimates (items,
//! current FPR) agree with what was inserted and with measurement.

use linebloom::blocked::AlignedBytes;
use linebloom::hash::mix64;
use linebloom::{BlockedBloom, BlockedBloomRef, ClassicBloom, Error, model};

fn hashes(stream: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| mix64(i ^ (stream << 40))).collect()
}

#[test]
fn union_of_shards_is_the_filter_of_all_keys() {
    for k in [1, 6, 12, 16] {
        let keys = hashes(1, 20_000);
        let mut whole = BlockedBloom::with_lines(300, k, 5).unwrap();
        whole.insert_hashes(&keys);
        let mut merged = BlockedBloom::with_lines(300, k, 5).unwrap();
        for shard in keys.chunks(3_000) {
            let mut part = BlockedBloom::with_lines(300, k, 5).unwrap();
            part.insert_hashes(shard);
            merged.union(&part).unwrap();
        }
        assert_eq!(merged, whole, "k={k}");

        let mut c_whole = ClassicBloom::with_bits(150_000, k, 5).unwrap();
        c_whole.insert_hashes(&keys);
        let mut c_merged = ClassicBloom::with_bits(150_000, k, 5).unwrap();
        for shard in keys.chunks(3_000) {
            let mut part = ClassicBloom::with_bits(150_000, k, 5).unwrap();
            part.insert_hashes(shard);
            c_merged.union(&part).unwrap();
        }
        assert_eq!(c_merged, c_whole, "classic k={k}");
    }
}

#[test]
fn intersection_keeps_the_common_keys() {
    let a_keys = hashes(2, 6_000);
    let b_keys = hashes(3, 6_000);
    let common = &a_keys[..2_000];
    let mut a = BlockedBloom::with_lines(200, 7, 1).unwrap();
    let mut b = BlockedBloom::with_lines(200, 7, 1).unwrap();
    a.insert_hashes(&a_keys);
    b.insert_hashes(&b_keys);
    b.insert_hashes(common);
    let before = a.count_ones();
    a.intersect(&b).unwrap();
    assert!(common.iter().all(|&h| a.contains_hash(h)));
    assert!(a.count_ones() < before);
    // Intersecting with itself, or with an empty filter.
    let snapshot = a.clone();
    a.intersect(&snapshot).unwrap();
    assert_eq!(a, snapshot);
    a.intersect(&BlockedBloom::with_lines(200, 7, 1).unwrap())
        .unwrap();
    assert_eq!(a.count_ones(), 0);

    let mut ca = ClassicBloom::with_bits(80_000, 7, 1).unwrap();
    let mut cb = ClassicBloom::with_bits(80_000, 7, 1).unwrap();
    ca.insert_hashes(&a_keys);
    cb.insert_hashes(&b_keys);
    cb.insert_hashes(common);
    ca.intersect(&cb).unwrap();
    assert!(common.iter().all(|&h| ca.contains_hash(h)));
}

#[test]
fn incompatible_filters_are_refused_and_left_alone() {
    let mut a = BlockedBloom::with_lines(10, 7, 1).unwrap();
    a.insert_hash(42);
    let before = a.clone();
    for (other, what) in [
        (BlockedBloom::with_lines(11, 7, 1).unwrap(), "line counts"),
        (
            BlockedBloom::with_lines(10, 6, 1).unwrap(),
            "probes per key",
        ),
        (BlockedBloom::with_lines(10, 7, 2).unwrap(), "seeds"),
    ] {
        for result in [a.union(&other), a.intersect(&other)] {
            match result {
                Err(Error::Incompatible(m)) => assert!(m.contains(what), "{m}"),
                other => panic!("expected Incompatible, got {other:?}"),
            }
        }
        assert_eq!(a, before);
    }
    let mut c = ClassicBloom::with_bits(1000, 7, 1).unwrap();
    let other = ClassicBloom::with_bits(1001, 7, 1).unwrap();
    assert!(matches!(c.union(&other), Err(Error::Incompatible(m)) if m.contains("bit counts")));
    let other = ClassicBloom::with_bits(1000, 7, 9).unwrap();
    assert!(matches!(c.intersect(&other), Err(Error::Incompatible(m)) if m.contains("seeds")));
}

/// Inserts keys until the fill passes each target and checks the estimate there.
#[test]
fn estimated_items_are_within_a_few_percent_below_70_percent_fill() {
    for k in [1, 3, 7, 8, 11, 16] {
        let lines = 2_048; // 1 Mibit
        let mut f = BlockedBloom::with_lines(lines, k, 3).unwrap();
        let m = (lines * 512) as f64;
        let mut inserted = 0u64;
        for target in [0.05f64, 0.2, 0.4, 0.55, 0.7] {
            // Items for this fill by the line-adapted formula, inserted in one go.
            let want = -(m / k as f64) * (1.0 - target).ln();
            let more: Vec<u64> = (inserted..want as u64).map(mix64).collect();
            f.insert_hashes(&more);
            inserted = want as u64;
            let estimate = f.estimated_items();
            let error = (estimate - inserted as f64).abs() / inserted as f64;
            assert!(
                error < 0.03,
                "k={k} fill={:.3} inserted={inserted} estimate={estimate:.0}",
                f.fill_ratio()
            );
        }
    }
    // Classic: Swamidass and Baldi directly.
    let mut c = ClassicBloom::with_bits(1 << 20, 7, 3).unwrap();
    let keys = hashes(5, 100_000);
    c.insert_hashes(&keys);
    let error = (c.estimated_items() - 100_000.0).abs() / 100_000.0;
    assert!(
        error < 0.02,
        "classic estimate {} (fill {:.3})",
        c.estimated_items(),
        c.fill_ratio()
    );
}

#[test]
fn current_fpr_matches_measurement_and_model() {
    for (bits_per_key, k) in [(10.0, 6), (10.0, 7), (16.0, 11), (6.0, 4)] {
        let n = 100_000;
        let mut f = BlockedBloom::builder(n)
            .bits_per_key(bits_per_key)
            .k(k)
            .seed(9)
            .build()
            .unwrap();
        f.insert_hashes(&hashes(7, n));
        let probes = hashes(8, 1_000_000);
        let measured = f.count_contained_hashes(&probes) as f64 / probes.len() as f64;
        let current = f.current_fpr();
        let predicted = model::blocked_fpr(f.num_bits() as f64 / n as f64, k);
        // Binomial noise on ~1e-2..1e-3 over 1e6 probes is 1-3 %; allow 10 %.
        assert!(
            (measured - current).abs() / current < 0.10,
            "c={bits_per_key} k={k}: measured {measured:.5}, current {current:.5}"
        );
        assert!(
            (current - predicted).abs() / predicted < 0.05,
            "c={bits_per_key} k={k}: current {current:.5}, model {predicted:.5}"
        );
    }
    let mut c = ClassicBloom::with_bits(1_000_000, 7, 9).unwrap();
    c.insert_hashes(&hashes(7, 100_000));
    let probes = hashes(8, 1_000_000);
    let measured = probes.iter().filter(|&&h| c.contains_hash(h)).count() as f64 / 1e6;
    let current = c.current_fpr();
    assert!(
        (measured - current).abs() / current < 0.10,
        "classic: measured {measured:.5}, current {current:.5}"
    );
}

#[test]
fn the_view_estimates_like_the_owned_filter() {
    let mut f = BlockedBloom::with_lines(500, 7, 1).unwrap();
    f.insert_hashes(&hashes(1, 20_000));
    let bytes = AlignedBytes::from_slice(&f.to_bytes()).unwrap();
    let view = BlockedBloomRef::from_bytes(&bytes).unwrap();
    assert_eq!(view.fill_ratio(), f.fill_ratio());
    assert_eq!(view.estimated_items(), f.estimated_items());
    assert_eq!(view.current_fpr(), f.current_fpr());
    assert_eq!(view.expected_fpr(20_000), f.expected_fpr(20_000));
}
