use super::*;
use crate::hash::mix64;
use proptest::prelude::*;

#[test]
fn grows_without_losing_a_key_and_reports_new_keys() {
    let mut f = ScalableBlockedBloom::with_fpr(100, 0.01).unwrap();
    let mut new = 0;
    for i in 0..50_000u64 {
        if f.insert_hash(mix64(i)) {
            new += 1;
        }
    }
    assert!((0..50_000u64).all(|i| f.contains_hash(mix64(i))));
    assert_eq!(f.len(), new);
    assert!(new > 49_000, "{new}");
    assert!(f.filters() >= 9);
    assert!(f.capacity() >= f.len());
    // A second insert of any key is not new.
    assert!((0..1_000u64).all(|i| !f.insert_hash(mix64(i))));
}

#[test]
fn filters_follow_growth_and_tightening() {
    let mut f = ScalableBlockedBloom::builder(1_000)
        .fpr(0.02)
        .growth(4.0)
        .tightening(0.5)
        .build()
        .unwrap();
    for i in 0..100_000u64 {
        f.insert_hash(mix64(i));
    }
    let parts: Vec<_> = f.filters.iter().collect();
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p.capacity, 1_000 * 4u64.pow(i as u32));
        assert!((p.fpr - 0.02 * 0.5 * 0.5f64.powi(i as i32)).abs() < 1e-15);
        assert!(p.len <= p.capacity);
    }
    assert!(f.bound_fpr() < 0.02);
}

#[test]
fn the_fpr_stays_under_the_bound_at_every_doubling() {
    // From 1,000 keys to 1,000,000 (1000x): the measured FPR after each doubling, on 100,000
    // never-inserted keys, stays under the target.
    let target = 0.01;
    let mut f = ScalableBlockedBloom::with_fpr(1_000, target).unwrap();
    let mut inserted = 0u64;
    let mut next = 1_000u64;
    while next <= 1_024_000 {
        while inserted < next {
            f.insert_hash(mix64(inserted));
            inserted += 1;
        }
        let probes = 100_000u64;
        let fp = (0..probes)
            .filter(|&i| f.contains_hash(mix64(i | 1 << 50)))
            .count() as f64
            / probes as f64;
        assert!(fp < target, "{inserted} keys: measured {fp}");
        assert!(
            f.current_fpr() < target,
            "{inserted}: model {}",
            f.current_fpr()
        );
        assert!(f.bound_fpr() < target);
        next *= 2;
    }
}

#[test]
fn batched_forms_agree_with_one_at_a_time() {
    let keys: Vec<u64> = (0..20_000).map(mix64).collect();
    let mut a = ScalableBlockedBloom::with_fpr(500, 0.01).unwrap();
    let mut b = a.clone();
    let new = a.insert_hashes(&keys);
    let new_b = keys.iter().filter(|&&h| b.insert_hash(h)).count();
    assert_eq!(new, new_b);
    assert_eq!(a, b);
    let probes: Vec<u64> = (0..30_000).map(|i| mix64(i + 10_000)).collect();
    let mut out = vec![false; probes.len()];
    a.contains_hashes(&probes, &mut out).unwrap();
    for (h, o) in probes.iter().zip(&out) {
        assert_eq!(*o, a.contains_hash(*h));
    }
    assert!(a.contains_hashes(&probes, &mut out[1..]).is_err());
}

#[test]
fn bad_parameters_are_errors() {
    assert!(ScalableBlockedBloom::with_fpr(0, 0.01).is_err());
    assert!(ScalableBlockedBloom::with_fpr(10, 0.0).is_err());
    assert!(ScalableBlockedBloom::with_fpr(10, 1.5).is_err());
    for g in [1.0, 0.5, 100.0, f64::NAN] {
        assert!(
            ScalableBlockedBloom::builder(10)
                .fpr(0.01)
                .growth(g)
                .build()
                .is_err(),
            "{g}"
        );
    }
    for r in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(
            ScalableBlockedBloom::builder(10)
                .fpr(0.01)
                .tightening(r)
                .build()
                .is_err(),
            "{r}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: proptest::test_runner::RngSeed::Fixed(31),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever the keys, the growth and the tightening, every inserted key stays present.
    #[test]
    fn no_inserted_key_is_ever_lost(
        keys in proptest::collection::vec(any::<u64>(), 1..2_000),
        initial in 1u64..50,
        growth in 1.1f64..8.0,
        tightening in 0.05f64..0.95,
    ) {
        let mut f = ScalableBlockedBloom::builder(initial).fpr(0.05)
            .growth(growth)
            .tightening(tightening)
            .build()
            .unwrap();
        for &k in &keys {
            f.insert(&k);
            prop_assert!(f.contains(&k));
        }
        prop_assert!(keys.iter().all(|k| f.contains(k)));
        prop_assert!(f.bound_fpr() <= 0.05);
    }
}
