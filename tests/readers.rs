//! Every reader of serialized bytes on generated input, on the stable toolchain: the checks of
//! the fuzz targets in `fuzz/` (which need a nightly compiler and `cargo fuzz`), driven by
//! proptest with a fixed number of cases so the run is the same every time.
//!
//! Inputs are arbitrary bytes, and valid filters damaged in every way a file can be (bytes
//! flipped, cut short, extended, a header field overwritten), each also with its trailing
//! checksum recomputed so the checks behind the checksum are reached. Each reader must return
//! an error or a filter that round-trips; none may panic. The Parquet form of the split-block
//! filter (thrift-compact header and bitset) goes through its readers the same way.

use linebloom::blocked::AlignedBytes;
use linebloom::format::{read_any, read_header};
use linebloom::sbbf::parquet_header;
use linebloom::{
    BlockedBloom, BlockedBloomRef, ClassicBloom, CountingBlockedBloom, CuckooFilter, Filter,
    ScalableBlockedBloom, SplitBlockBloom, SplitBlockBloomRef,
};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// `data`, and (if it can hold a checksum) `data` with its last 8 bytes replaced by the
/// xxh3-64 of the rest.
fn inputs(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![data.to_vec()];
    if let Some(end) = data.len().checked_sub(8) {
        let mut sealed = data.to_vec();
        let sum = xxh3_64(&sealed[..end]);
        sealed[end..].copy_from_slice(&sum.to_le_bytes());
        out.push(sealed);
    }
    out
}

/// Small valid filters of every kind, serialized (built once).
fn valid_filters() -> Vec<Vec<u8>> {
    static FILTERS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    FILTERS.get_or_init(build_valid_filters).clone()
}

fn build_valid_filters() -> Vec<Vec<u8>> {
    let mut blocked = BlockedBloom::with_fpr(200, 0.01).unwrap();
    let mut classic = ClassicBloom::with_fpr(200, 0.01).unwrap();
    let mut cuckoo = CuckooFilter::with_fpr(200, 0.01).unwrap();
    for i in 0..150u64 {
        blocked.insert(&i);
        classic.insert(&i);
        cuckoo.insert(&i).unwrap();
    }
    let mut counting = CountingBlockedBloom::with_fpr(100, 0.01).unwrap();
    let mut scalable = ScalableBlockedBloom::with_fpr(10, 0.01).unwrap();
    for i in 0..100u64 {
        counting.insert(&i);
        scalable.insert(&i);
    }
    let empty = BlockedBloom::with_bits_per_key(1, 10.0).unwrap();
    let mut split_block = SplitBlockBloom::with_ndv_fpp(100, 0.01).unwrap();
    (0..100u64).for_each(|i| split_block.insert(&i));
    vec![
        blocked.to_bytes(),
        classic.to_bytes(),
        cuckoo.to_bytes(),
        empty.to_bytes(),
        counting.to_bytes(),
        scalable.to_bytes(),
        split_block.to_bytes(),
        split_block.to_parquet_bytes().unwrap(),
    ]
}

/// One way to damage a file.
#[derive(Clone, Debug)]
enum Damage {
    Flip { at: usize, bits: u8 },
    Cut { keep: usize },
    Extend { extra: Vec<u8> },
    Overwrite { at: usize, value: u64 },
}

fn damage() -> impl Strategy<Value = Vec<Damage>> {
    let one = prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, bits)| Damage::Flip { at, bits }),
        any::<usize>().prop_map(|keep| Damage::Cut { keep }),
        proptest::collection::vec(any::<u8>(), 1..80).prop_map(|extra| Damage::Extend { extra }),
        // Header fields sit at multiples of 4 and 8 bytes in the first 64.
        (0usize..16, any::<u64>()).prop_map(|(at, value)| Damage::Overwrite { at: at * 4, value }),
    ];
    proptest::collection::vec(one, 1..4)
}

fn apply(mut data: Vec<u8>, damage: &[Damage]) -> Vec<u8> {
    for d in damage {
        match d {
            Damage::Flip { at, bits } if !data.is_empty() => {
                let i = at % data.len();
                data[i] ^= bits;
            }
            Damage::Cut { keep } => data.truncate(keep % (data.len() + 1)),
            Damage::Extend { extra } => data.extend_from_slice(extra),
            Damage::Overwrite { at, value } => {
                let bytes = value.to_le_bytes();
                let width = if at % 8 == 0 { 8 } else { 4 };
                if at + width <= data.len() {
                    data[*at..at + width].copy_from_slice(&bytes[..width]);
                }
            }
            Damage::Flip { .. } => {}
        }
    }
    data
}

/// The fuzz targets' checks, on one input.
fn check_every_reader(data: &[u8]) {
    let _ = read_header(data);
    if let Ok(filter) = read_any(data) {
        assert_eq!(read_header(data).map(|h| h.kind()), Ok(filter.kind()));
        assert_eq!(read_any(&filter.to_bytes()).as_ref(), Ok(&filter));
        filter.contains_hash(data.len() as u64);
    }
    if let Ok(filter) = BlockedBloom::from_bytes(data) {
        let again = filter.to_bytes();
        if read_header(data).is_ok_and(|h| h.items == 0) {
            assert_eq!(again, data);
        }
        assert_eq!(BlockedBloom::from_bytes(&again).as_ref(), Ok(&filter));
    }
    if let Ok(filter) = ClassicBloom::from_bytes(data) {
        let again = filter.to_bytes();
        assert_eq!(ClassicBloom::from_bytes(&again).as_ref(), Ok(&filter));
        filter.contains(&data.len());
    }
    if let Ok(mut filter) = CuckooFilter::from_bytes(data) {
        assert_eq!(filter.to_bytes(), data);
        filter.contains(&data.len());
        let _ = filter.insert(&data.len());
    }
    if let Ok(filter) = CountingBlockedBloom::from_bytes(data) {
        let again = filter.to_bytes();
        assert_eq!(
            CountingBlockedBloom::from_bytes(&again).as_ref(),
            Ok(&filter)
        );
        filter.contains(&data.len());
    }
    if let Ok(mut filter) = ScalableBlockedBloom::from_bytes(data) {
        assert_eq!(filter.to_bytes(), data);
        filter.contains(&data.len());
        filter.insert(&data.len());
    }
    if let Ok(mut filter) = SplitBlockBloom::from_bytes(data) {
        if read_header(data).is_ok_and(|h| h.items == 0) {
            assert_eq!(filter.to_bytes(), data);
        }
        assert_eq!(
            SplitBlockBloom::from_bytes(&filter.to_bytes()).as_ref(),
            Ok(&filter)
        );
        filter.contains(&data.len());
        filter.insert(&data.len());
    }
    check_parquet_readers(data);
    if let Ok(aligned) = AlignedBytes::from_slice(data) {
        let owned = BlockedBloom::from_bytes(data);
        match BlockedBloomRef::from_bytes(&aligned) {
            Ok(view) => {
                assert_eq!(owned.as_ref(), Ok(&view.to_filter().unwrap()));
                let hashes: Vec<u64> = data
                    .chunks(8)
                    .map(|c| c.iter().fold(0u64, |h, &b| h << 8 | u64::from(b)))
                    .map(|h| h.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    .collect();
                let mut out = vec![false; hashes.len()];
                view.contains_hashes(&hashes, &mut out).unwrap();
            }
            Err(_) => assert!(owned.is_err()),
        }
        let mut shifted = AlignedBytes::zeroed(data.len() + 1).unwrap();
        shifted[1..].copy_from_slice(data);
        assert!(BlockedBloomRef::from_bytes(&shifted[1..]).is_err());
    }
}

/// The Parquet form's readers: the header, the owned filter and the view (at any alignment)
/// agree, and what reads writes back the same bytes.
fn check_parquet_readers(data: &[u8]) {
    let header = parquet_header(data);
    let owned = SplitBlockBloom::from_parquet_bytes(data);
    let view = SplitBlockBloomRef::from_parquet_bytes(data);
    match (&owned, &view) {
        (Ok(f), Ok(v)) => {
            let h = header.unwrap();
            assert_eq!(h.header_len + h.bitset_len, data.len());
            assert_eq!(&v.to_filter().unwrap(), f);
            assert_eq!(f.bitset(), &data[h.header_len..]);
            assert_eq!(
                SplitBlockBloom::from_parquet_bytes(&f.to_parquet_bytes().unwrap()).as_ref(),
                Ok(f)
            );
            let hashes: Vec<u64> = (0..64u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            let mut out = vec![false; hashes.len()];
            v.contains_hashes(&hashes, &mut out).unwrap();
            assert!(
                hashes
                    .iter()
                    .zip(&out)
                    .all(|(&h, &o)| f.contains_hash(h) == o)
            );
        }
        (Err(_), Err(_)) => {}
        _ => panic!(
            "owned ({}) and view ({}) disagree",
            owned.is_ok(),
            view.is_ok()
        ),
    }
    if let Ok(f) = SplitBlockBloom::from_bitset(data) {
        assert_eq!(f.bitset(), data);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 3000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6c62_7265_6164),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_are_an_error_or_a_filter(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        for input in inputs(&data) {
            check_every_reader(&input);
        }
    }

    #[test]
    fn damaged_filters_are_an_error_or_a_filter(which in 0usize..8, damage in damage()) {
        let data = apply(valid_filters().swap_remove(which), &damage);
        for input in inputs(&data) {
            check_every_reader(&input);
        }
    }
}

#[test]
fn the_valid_filters_read_back() {
    let all = valid_filters();
    let (parquet, ours) = all.split_last().unwrap();
    for data in ours {
        check_every_reader(data);
        assert!(read_any(data).is_ok());
    }
    check_every_reader(parquet);
    assert!(SplitBlockBloom::from_parquet_bytes(parquet).is_ok());
}
