//! Unit tests of the classic filter's internals: sizes, the bits past `m`, `from_parts`, the
//! unrolled scalar paths and the direct probes against the plain `DoubleHash` iterator, and
//! the insert groups. The public behaviour is tested in `tests/classic.rs`.

use super::batch::insert_group;
use super::*;
use crate::hash::DEFAULT_SEED;
use crate::hash::mix64;

#[test]
fn sizes_follow_bits_per_key() {
    let f = ClassicBloom::with_bits_per_key(1000, 10.0).unwrap();
    assert_eq!((f.num_bits(), f.k(), f.seed()), (10_000, 7, DEFAULT_SEED));
    assert_eq!(f.size_bytes(), 157 * 8);
    assert_eq!(f.words().len(), 157);
    assert_eq!(f.count_ones(), 0);
    // 1 %: 9.585 bits per key, rounded up to the bit.
    let f = ClassicBloom::with_fpr(1000, 0.01).unwrap();
    assert_eq!((f.num_bits(), f.k()), (9586, 7));
    let f = ClassicBloom::with_bits_per_key(1, 1.0).unwrap();
    assert_eq!((f.num_bits(), f.k(), f.size_bytes()), (1, 1, 8));
}

#[test]
fn bits_stay_below_num_bits() {
    for m in [1u64, 2, 63, 64, 65, 100, 1000] {
        let mut f = ClassicBloom::with_bits(m, 5, 9).unwrap();
        for i in 0..10_000 {
            f.insert_hash(mix64(i));
        }
        let words = f.words();
        assert_eq!(words.len() as u64, m.div_ceil(64));
        let tail = m % 64;
        if tail != 0 {
            assert_eq!(words[words.len() - 1] >> tail, 0, "m = {m}");
        }
        // With 50 000 probes every one of at most 1000 bits is hit.
        assert_eq!(f.count_ones(), m, "m = {m}");
    }
}

#[test]
fn from_parts_round_trips_and_checks() {
    let mut f = ClassicBloom::with_bits(1000, 4, 3).unwrap();
    (0..100).for_each(|i| f.insert_hash(mix64(i)));
    let back = ClassicBloom::from_parts(f.words(), 1000, 4, 3).unwrap();
    assert_eq!(back, f);
    assert!(matches!(
        ClassicBloom::from_parts(f.words(), 1100, 4, 3),
        Err(Error::Corrupt(_))
    ));
    assert!(matches!(
        ClassicBloom::from_parts(vec![], 0, 4, 3),
        Err(Error::Corrupt(_))
    ));
    assert!(matches!(
        ClassicBloom::from_parts(f.words(), 1000, 0, 3),
        Err(Error::InvalidK { .. })
    ));
    // 1000 bits use 40 bits of the last word; bit 40 is past the end.
    let mut words = f.words();
    *words.last_mut().unwrap() |= 1 << 40;
    assert!(matches!(
        ClassicBloom::from_parts(words, 1000, 4, 3),
        Err(Error::Corrupt(_))
    ));
}

#[test]
fn clear_clone_and_equality() {
    let mut f = ClassicBloom::with_bits(777, 3, 1).unwrap();
    f.insert("a");
    let g = f.clone();
    assert_eq!(f, g);
    assert!(g.contains("a"));
    f.clear();
    assert_eq!(f.count_ones(), 0);
    assert_ne!(f, g);
    assert_ne!(ClassicBloom::with_bits(777, 3, 2).unwrap(), f);
    assert!(format!("{g:?}").contains("num_bits: 777"));
}

#[test]
fn model_and_trait_agree_with_inherent_methods() {
    let mut f = ClassicBloom::with_bits_per_key(100, 10.0).unwrap();
    assert_eq!(f.expected_fpr(0), 0.0);
    assert_eq!(f.expected_fpr(100), model::classic_fpr(10.0, 7));
    let dyn_f: &mut dyn Filter = &mut f;
    assert_eq!(dyn_f.kind(), FilterKind::Classic);
    dyn_f.insert_hash(42).unwrap();
    assert!(dyn_f.contains_hash(42));
    assert_eq!(
        (dyn_f.k(), dyn_f.seed(), dyn_f.size_bytes()),
        (Some(7), DEFAULT_SEED, 16 * 8)
    );
    let mut out = [false; 2];
    dyn_f.contains_hashes(&[42, 42], &mut out).unwrap();
    assert_eq!(out, [true, true]);
    assert!(dyn_f.contains_hashes(&[42], &mut out).is_err());
}

/// The unrolled scalar paths against the plain `DoubleHash` iterator, for every probe count
/// that `with_fixed_hashes!` turns into a literal and some beyond.
#[test]
fn scalar_paths_set_and_test_the_double_hash_bits() {
    for k in (1..=20).chain([31, 64]) {
        let m = 10_007;
        let mut f = ClassicBloom::with_bits(m, k, 5).unwrap();
        let mut reference = vec![0u64; (m as usize).div_ceil(64)];
        for i in 0..300 {
            let h = mix64(i);
            f.insert_hash(h);
            for probe in DoubleHash::new(h).take(k as usize) {
                let (word, bit) = locate(reduce(probe, m as usize));
                reference[word] |= bit;
            }
            assert_eq!(f.words(), reference, "k = {k}, key {i}");
        }
        // Past `DIRECT_PROBES_MAX_WORDS` the inserts chain their probes: the same bits.
        let big = (DIRECT_PROBES_MAX_WORDS as u64 + 1) * 64 + 13;
        let mut g = ClassicBloom::with_bits(big, k, 5).unwrap();
        let mut set = std::collections::BTreeSet::new();
        for i in 0..300 {
            let h = mix64(i);
            g.insert_hash(h);
            set.extend(
                DoubleHash::new(h)
                    .take(k as usize)
                    .map(|p| reduce(p, big as usize)),
            );
        }
        let got: std::collections::BTreeSet<usize> = g
            .words()
            .iter()
            .enumerate()
            .flat_map(|(w, &word)| {
                (0..64)
                    .filter(move |b| word >> b & 1 == 1)
                    .map(move |b| w * 64 + b)
            })
            .collect();
        assert_eq!(got, set, "k = {k}, chained probes");
        for i in 0..5_000 {
            let h = mix64(i);
            let expected = DoubleHash::new(h).take(k as usize).all(|probe| {
                let (word, bit) = locate(reduce(probe, m as usize));
                reference[word] & bit != 0
            });
            assert_eq!(f.contains_hash(h), expected, "k = {k}, key {i}");
        }
    }
}

#[test]
fn probe_is_the_iterators_value() {
    for h in [0u64, 1, 0x1234_5678_9abc_def0, u64::MAX] {
        let h2 = DoubleHash::second(h);
        for (i, p) in DoubleHash::new(h).take(40).enumerate() {
            assert_eq!(probe(h, h2, i as u64), p, "h={h:x} i={i}");
        }
    }
}

#[test]
fn insert_groups_are_never_empty() {
    assert_eq!(insert_group(1), 64);
    assert_eq!(insert_group(7), 9);
    assert_eq!(insert_group(64), 1);
    assert_eq!(insert_group(0), 64);
}
