//! Unit tests of the cuckoo filter's internals: the alternate index, the fingerprints, the
//! SWAR and vector bucket tests against plain scans, the undo of a failed insert,
//! `from_parts`, and the sizing constants. The public behaviour is tested in `tests/cuckoo.rs`.

use super::bucket::*;
use super::builder::*;
use super::*;

/// A small deterministic generator for the tests' random buckets.
fn randoms(seed: u64) -> impl Iterator<Item = u64> {
    (0u64..).map(move |i| mix64(i ^ seed.rotate_left(32)))
}

#[test]
fn alt_is_an_involution_for_any_bucket_count() {
    let mut ns: Vec<usize> = (1..=300).collect();
    ns.extend([
        1000,
        1023,
        1024,
        1025,
        999_983,
        (1 << 32) + 1,
        usize::MAX / 3,
        usize::MAX,
    ]);
    for &n in &ns {
        for (k, r) in randoms(n as u64).take(200).enumerate() {
            let fp = 1 + (r >> 48) % 0xFFFF;
            let i = if k < 2 { [0, n - 1][k] } else { reduce(r, n) };
            let j = alt_bucket(i, fp, n);
            assert!(j < n, "n={n} i={i} fp={fp} -> {j}");
            assert_eq!(alt_bucket(j, fp, n), i, "n={n} i={i} fp={fp}");
        }
    }
}

#[test]
fn looked_up_alternates_equal_computed_ones() {
    // Bucket counts up to 2^40 without allocating their tables: only the lookup table.
    for buckets in [
        1,
        2,
        3,
        255,
        256,
        257,
        1000,
        999_983,
        1 << 32,
        (1 << 40) + 7,
    ] {
        let mut filter = CuckooFilter::with_buckets(1, 8, 1).unwrap();
        filter.buckets = buckets;
        *filter.alt_hashes = core::array::from_fn(|fp| alt_hash(fp as u64, buckets));
        for h in randoms(buckets as u64)
            .take(2_000)
            .chain([0, u64::MAX, 0xFFFF_FFFF])
        {
            let (i1, fp, i2) = filter.candidates::<8>(h);
            assert_eq!(i1, reduce(h, buckets));
            assert_eq!(fp, fingerprint::<8>(h));
            assert_eq!(
                i2,
                alt_bucket(i1, fp, buckets),
                "buckets={buckets} h={h:#x}"
            );
        }
    }
    // And the table a constructor builds is that one.
    let filter = CuckooFilter::with_buckets(12_345, 8, 1).unwrap();
    for fp in 1..256 {
        assert_eq!(filter.alt_hashes[fp], alt_hash(fp as u64, 12_345));
    }
}

#[test]
fn fingerprints_are_never_zero_and_fit() {
    for f in FINGERPRINT_WIDTHS {
        let fp = |h| match f {
            8 => fingerprint::<8>(h),
            12 => fingerprint::<12>(h),
            _ => fingerprint::<16>(h),
        };
        for h in [
            0,
            1,
            0xFFFF_FFFF,
            u64::MAX,
            0xFFFF_FFFF_0000_0000,
            0x8000_0000,
        ] {
            assert!((1..=lane_mask(f)).contains(&fp(h)), "f={f} h={h:#x}");
        }
        assert_eq!(fp(0), 1);
        assert_eq!(fp(0xFFFF_FFFF), lane_mask(f));
    }
}

#[test]
fn twelve_bit_buckets_pack_without_touching_neighbours() {
    let mut t = vec![0u8; 5 * 6 + 2];
    let values = [0xFFF, 0x001, 0xABC, 0x800];
    for b in 0..5 {
        let mut v = 0;
        for (j, x) in values.iter().enumerate() {
            v |= (x ^ b as u64) << (12 * j);
        }
        store::<12>(&mut t, b, v);
    }
    for b in 0..5 {
        let v = load::<12>(&t, b);
        for (j, x) in values.iter().enumerate() {
            assert_eq!((v >> (12 * j)) & 0xFFF, x ^ b as u64, "bucket {b} slot {j}");
        }
        assert_eq!(v >> 48, 0);
    }
    // Emptying a slot of bucket 2 leaves buckets 1 and 3 alone.
    let before = t.clone();
    assert!(take::<12>(&mut t, 2, 0xFFF ^ 2));
    assert_eq!(t[..12], before[..12]);
    assert_eq!(t[18..], before[18..]);
    assert_eq!(load::<12>(&t, 2) & 0xFFF, 0);
    // The padding after the last bucket is never written.
    assert_eq!(t[30..], [0, 0]);
}

fn check_swar<const F: u32>() {
    let mask = lane_mask(F);
    let mut r = randoms(u64::from(F));
    for _ in 0..20_000 {
        // Lanes from a tiny alphabet (0, 1, max, and two randoms) so matches, empties and
        // borrow chains (a 0 lane below a 1 lane) are all frequent.
        let alphabet = [
            0,
            1,
            mask,
            r.next().unwrap() & mask,
            1 + r.next().unwrap() % mask,
        ];
        let pick = r.next().unwrap();
        let lanes: Vec<u64> = (0..4)
            .map(|j| alphabet[(pick >> (8 * j)) as usize % 5])
            .collect();
        let bucket = lanes
            .iter()
            .enumerate()
            .fold(0, |acc, (j, &x)| acc | x << (j as u32 * F));
        for fp in alphabet {
            let found = matches::<F>(bucket, fp);
            let first = lanes.iter().position(|&x| x == fp);
            assert_eq!(
                found != 0,
                first.is_some(),
                "F={F} lanes={lanes:x?} fp={fp:x}"
            );
            if let Some(first) = first {
                assert_eq!(
                    first_slot::<F>(found) as usize,
                    first,
                    "lanes={lanes:x?} fp={fp:x}"
                );
            }
        }
    }
}

#[test]
fn swar_match_agrees_with_a_scalar_scan() {
    check_swar::<8>();
    check_swar::<12>();
    check_swar::<16>();
}

/// `in_either` (the vector tests, unchecked loads) answers as a slot-by-slot scan of both
/// buckets, on a table of exactly `buckets` buckets (plus the 12-bit padding), so that
/// reading past the last one would trip the debug assertion.
fn check_in_either<const F: u32>() {
    let mask = lane_mask(F);
    let buckets = 37;
    let mut r = randoms(u64::from(F) << 8);
    let padding = if F == 12 { 2 } else { 0 };
    let mut t = vec![0u8; buckets * bucket_bytes(F) + padding];
    let mut alphabet = [0; 5];
    for round in 0..2_000 {
        alphabet = [
            1,
            mask,
            1 + r.next().unwrap() % mask,
            alphabet[3],
            alphabet[4],
        ];
        if round % 50 == 0 {
            alphabet[3] = 1 + r.next().unwrap() % mask;
            alphabet[4] = alphabet[3] ^ 1 | 1;
        }
        for b in 0..buckets {
            let pick = r.next().unwrap();
            let bucket = (0..4).fold(0, |acc, j| {
                let lane = if (pick >> (40 + j)) & 3 == 0 {
                    0
                } else {
                    alphabet[(pick >> (8 * j)) as usize % 5]
                };
                acc | lane << (j * F)
            });
            store::<F>(&mut t, b, bucket);
        }
        let scan = |b: usize, fp: u64| {
            let v = load::<F>(&t, b);
            (0..4).any(|j| (v >> (j * F)) & mask == fp)
        };
        for i1 in [0, buckets - 1, reduce(r.next().unwrap(), buckets)] {
            let i2 = reduce(r.next().unwrap(), buckets);
            for fp in alphabet {
                // SAFETY: `t` is a whole table of `buckets` buckets and both are below it.
                let got = unsafe { in_either::<F>(&t, i1, fp, i2) };
                assert_eq!(got, scan(i1, fp) || scan(i2, fp), "F={F} {i1} {i2} {fp:x}");
                // SAFETY: as above.
                let swapped = unsafe { in_either::<F>(&t, i2, fp, i1) };
                assert_eq!(got, swapped);
            }
        }
    }
}

#[test]
fn in_either_agrees_with_a_scan_of_both_buckets() {
    check_in_either::<8>();
    check_in_either::<12>();
    check_in_either::<16>();
}

#[test]
fn failed_insert_leaves_the_table_bit_for_bit_unchanged() {
    for f in FINGERPRINT_WIDTHS {
        let mut filter = CuckooFilter::with_buckets(37, f, 1).unwrap();
        let mut keys = randoms(u64::from(f));
        let mut failures = 0;
        while failures < 20 {
            let before = filter.clone();
            if filter.insert_hash(keys.next().unwrap()).is_err() {
                assert!(filter == before, "f={f}: a failed insert changed the table");
                failures += 1;
            }
        }
        assert_eq!(filter.count_occupied(), filter.len());
    }
}

#[test]
fn from_parts_round_trips_and_rejects_inconsistent_parts() {
    let mut filter = CuckooFilter::with_buckets(10, 12, 5).unwrap();
    for h in randoms(9).take(30) {
        filter.insert_hash(h).unwrap();
    }
    let t = filter.table_bytes().to_vec();
    assert_eq!(t.len(), 60);
    let back = CuckooFilter::from_parts(&t, 10, 12, filter.len(), 5).unwrap();
    assert!(back == filter);
    assert!(CuckooFilter::from_parts(&t, 10, 12, filter.len() + 1, 5).is_err());
    assert!(CuckooFilter::from_parts(&t[..59], 10, 12, filter.len(), 5).is_err());
    assert!(CuckooFilter::from_parts(&t, 11, 12, filter.len(), 5).is_err());
    assert!(CuckooFilter::from_parts(&t, 10, 13, filter.len(), 5).is_err());
    assert!(CuckooFilter::from_parts(&t, 0, 12, 0, 5).is_err());
}

#[test]
fn sizing_constants_agree() {
    assert_eq!(TARGET_LOAD_PERCENT as f64 / 100.0, TARGET_LOAD);
    assert_eq!(buckets_for(19, 8).unwrap(), 5);
    assert_eq!(buckets_for(20, 8).unwrap(), 6);
    assert_eq!(buckets_for(1, 16).unwrap(), 1);
}
