//! The serialized format's contract: every kind round-trips exactly, the bytes of a small filter
//! of each kind are pinned (golden files), and malformed input of any sort (flipped bits,
//! truncation, extension, re-sealed bad parameters, misalignment) is an `Err`, never a panic.
//!
//! The golden files in `tests/data/` are regenerated with
//! `LINEBLOOM_BLESS=1 cargo test --test format golden`: do that only for a deliberate format
//! change, together with a new format version or hash scheme.

use linebloom::blocked::{AlignedBytes, Placement};
use linebloom::format::{self, AnyFilter, HEADER_LEN, Shape, read_any, read_header};
use linebloom::hash::mix64;
use linebloom::{
    BlockedBloom, BlockedBloomRef, ClassicBloom, CountingBlockedBloom, CuckooFilter, Error, Filter,
    FilterKind, ScalableBlockedBloom, SplitBlockBloom,
};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

fn blocked(lines: usize, k: u32, seed: u64, keys: u64) -> BlockedBloom {
    blocked_placed(lines, k, Placement::Shifted, seed, keys)
}

fn blocked_placed(
    lines: usize,
    k: u32,
    placement: Placement,
    seed: u64,
    keys: u64,
) -> BlockedBloom {
    let mut f = BlockedBloom::with_lines_placed(lines, k, placement, seed).unwrap();
    (0..keys).for_each(|i| f.insert(&i));
    f
}

fn classic(bits: u64, k: u32, seed: u64, keys: u64) -> ClassicBloom {
    let mut f = ClassicBloom::with_bits(bits, k, seed).unwrap();
    (0..keys).for_each(|i| f.insert(&i));
    f
}

fn cuckoo(buckets: usize, fingerprint_bits: u32, seed: u64, keys: u64) -> CuckooFilter {
    let mut f = CuckooFilter::with_buckets(buckets, fingerprint_bits, seed).unwrap();
    for i in 0..keys {
        // Small tables fill up; a full insert loses nothing, so the filter stays valid.
        let _ = f.insert(&i);
    }
    f
}

/// Recomputes the checksum, so a test can reach the checks behind it.
fn reseal(bytes: &mut [u8]) {
    let end = bytes.len() - 8;
    let sum = xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
}

fn corrupt_message(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(Error::Corrupt(m)) => m,
        other => panic!("expected Error::Corrupt, got {other:?}"),
    }
}

#[test]
fn every_kind_round_trips() {
    for (lines, k) in [(1, 1), (3, 7), (100, 16), (257, 8)] {
        let f = blocked(lines, k, 7, 400);
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), 64 + lines * 64 + 8);
        assert_eq!(BlockedBloom::from_bytes(&bytes).unwrap(), f);
        let mut streamed = Vec::new();
        f.write_to(&mut streamed).unwrap();
        assert_eq!(streamed, bytes);
        assert_eq!(read_any(&bytes).unwrap(), AnyFilter::Blocked(f.clone()));
        let aligned = AlignedBytes::from_slice(&bytes).unwrap();
        let view = BlockedBloomRef::from_bytes(&aligned).unwrap();
        assert_eq!(view.to_filter().unwrap(), f);
    }
    for (bits, k) in [(1, 1), (64, 3), (1000, 7), (100_003, 64)] {
        let f = classic(bits, k, 9, 300);
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), 64 + bits.div_ceil(64) as usize * 8 + 8);
        assert_eq!(ClassicBloom::from_bytes(&bytes).unwrap(), f);
        assert_eq!(read_any(&bytes).unwrap(), AnyFilter::Classic(f));
    }
    for (buckets, fp) in [(1, 8), (37, 12), (1000, 16), (5, 12)] {
        let f = cuckoo(buckets, fp, 11, 3000);
        let bytes = f.to_bytes();
        let back = CuckooFilter::from_bytes(&bytes).unwrap();
        assert_eq!(back.len(), f.len());
        assert_eq!(back, f);
        assert_eq!(read_any(&bytes).unwrap(), AnyFilter::Cuckoo(f));
    }
    for (lines, k) in [(1, 1), (3, 6), (100, 8)] {
        let mut f = CountingBlockedBloom::with_lines(lines, k, 5).unwrap();
        for i in 0..400u64 {
            f.insert(&(i % 150));
        }
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), 64 + lines * 64 + 8);
        assert_eq!(CountingBlockedBloom::from_bytes(&bytes).unwrap(), f);
        assert_eq!(read_any(&bytes).unwrap(), AnyFilter::Counting(f));
    }
    for (initial, keys) in [(1, 0), (10, 5_000), (1_000, 100)] {
        let mut f = ScalableBlockedBloom::with_fpr(initial, 0.01).unwrap();
        (0..keys).for_each(|i: u64| {
            f.insert(&i);
        });
        let bytes = f.to_bytes();
        let mut streamed = Vec::new();
        f.write_to(&mut streamed).unwrap();
        assert_eq!(streamed, bytes);
        let back = ScalableBlockedBloom::from_bytes(&bytes).unwrap();
        assert_eq!(back, f);
        assert_eq!(read_header(&bytes).unwrap().items, f.len());
        assert!((0..keys).all(|i| back.contains(&i)));
        assert_eq!(read_any(&bytes).unwrap(), AnyFilter::Scalable(f));
    }
    for (blocks, keys) in [(1, 0), (3, 100), (1024, 5_000)] {
        let mut f = SplitBlockBloom::with_blocks(blocks).unwrap();
        (0..keys).for_each(|i: u64| f.insert(&i));
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), 64 + blocks * 32 + 8);
        // The payload is the Parquet bitset itself.
        assert_eq!(&bytes[64..64 + blocks * 32], f.bitset());
        let mut streamed = Vec::new();
        f.write_to(&mut streamed).unwrap();
        assert_eq!(streamed, bytes);
        assert_eq!(SplitBlockBloom::from_bytes(&bytes).unwrap(), f);
        let h = read_header(&bytes).unwrap();
        assert_eq!(
            (h.shape, h.seed),
            (
                Shape::SplitBlock {
                    blocks: blocks as u64
                },
                0
            )
        );
        let any = read_any(&bytes).unwrap();
        assert!((0..keys).all(|i| any.contains(&i)));
        assert_eq!(any, AnyFilter::SplitBlock(f));
    }
}

#[test]
fn split_block_parameters_are_checked() {
    let good = SplitBlockBloom::with_blocks(2).unwrap().to_bytes();
    for (at, value, wants) in [
        (40, 7u64, "7 bits per key"),
        (16, 5, "seed 0x5"),
        (32, 0, "0 blocks"),
        (32, 3, "payload length"),
    ] {
        let mut b = good.clone();
        let width = if at == 40 { 4 } else { 8 };
        b[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        reseal(&mut b);
        let m = corrupt_message(SplitBlockBloom::from_bytes(&b));
        assert!(m.contains(wants), "{m}");
    }
    let m = corrupt_message(BlockedBloom::from_bytes(&good));
    assert!(m.contains("split-block filter, not a blocked"), "{m}");
}

#[test]
fn the_header_describes_the_filter() {
    let f = blocked(5, 6, 0xabc, 10);
    let h = read_header(&f.to_bytes()).unwrap();
    assert_eq!(h.kind(), FilterKind::Blocked);
    assert_eq!(h.shape, Shape::Blocked { lines: 5, k: 6 });
    assert_eq!(
        (h.version, h.seed, h.items, h.payload_len),
        (1, 0xabc, 0, 320)
    );
    assert_eq!(h.encoded_len(), f.to_bytes().len());
    let c = cuckoo(10, 16, 1, 20);
    let h = read_header(&c.to_bytes()).unwrap();
    assert_eq!(h.items, c.len() as u64);
    assert_eq!(
        h.shape,
        Shape::Cuckoo {
            buckets: 10,
            fingerprint_bits: 16
        }
    );
    // The header alone is enough to learn the length.
    assert!(read_header(&c.to_bytes()[..HEADER_LEN]).is_ok());
    // A recorded item count round-trips through AnyFilter.
    let mut out = Vec::new();
    AnyFilter::Blocked(f)
        .write_to_with_items(1234, &mut out)
        .unwrap();
    assert_eq!(read_header(&out).unwrap().items, 1234);
    assert!(BlockedBloom::from_bytes(&out).is_ok());
}

#[test]
fn each_malformation_names_itself() {
    let good = blocked(2, 7, 1, 20).to_bytes();
    let with = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        corrupt_message(BlockedBloom::from_bytes(&b))
    };
    let m = with(&|b| b[0] = b'X');
    assert!(m.contains("magic"), "{m}");
    let m = with(&|b| {
        b[8] = 2;
        reseal(b)
    });
    assert!(m.contains("version 2"), "{m}");
    let m = with(&|b| {
        b[10] = 9;
        reseal(b)
    });
    assert!(m.contains("kind 9"), "{m}");
    let m = with(&|b| {
        b[11] = 4;
        reseal(b)
    });
    assert!(m.contains("hash scheme 4"), "{m}");
    let m = with(&|b| {
        b[11] = 0;
        reseal(b)
    });
    assert!(m.contains("hash scheme 0"), "{m}");
    let m = with(&|b| {
        b[12] = 128;
        reseal(b)
    });
    assert!(m.contains("header length 128"), "{m}");
    let m = with(&|b| {
        b[44] = 1;
        reseal(b)
    });
    assert!(m.contains("reserved"), "{m}");
    for k in [0u32, 17] {
        let m = with(&|b| {
            b[40..44].copy_from_slice(&k.to_le_bytes());
            reseal(b)
        });
        assert!(m.contains(&format!("probes per key {k}")), "{m}");
    }
    let m = with(&|b| {
        b[32..40].copy_from_slice(&0u64.to_le_bytes());
        reseal(b)
    });
    assert!(m.contains("zero lines"), "{m}");
    let m = with(&|b| {
        b[32..40].copy_from_slice(&3u64.to_le_bytes());
        reseal(b)
    });
    assert!(m.contains("payload length 128"), "{m}");
    let m = with(&|b| b.truncate(100));
    assert!(m.contains("truncated"), "{m}");
    let m = with(&|b| b.truncate(10));
    assert!(m.contains("truncated"), "{m}");
    let m = with(&|b| b.push(0));
    assert!(m.contains("follow the checksum"), "{m}");
    let m = with(&|b| b[70] ^= 1);
    assert!(m.contains("checksum mismatch"), "{m}");
    let m = with(&|b| {
        let n = b.len();
        b[n - 1] ^= 0x80
    });
    assert!(m.contains("checksum mismatch"), "{m}");
    // The wrong reader for the kind.
    let m = corrupt_message(ClassicBloom::from_bytes(&good));
    assert!(m.contains("blocked filter, not a classic"), "{m}");
    let m = corrupt_message(CuckooFilter::from_bytes(&good));
    assert!(m.contains("not a cuckoo"), "{m}");
    assert!(corrupt_message(read_any(b"")).contains("truncated"));
}

#[test]
fn kind_specific_parameters_are_checked() {
    let c = classic(1000, 5, 1, 50).to_bytes();
    let mut b = c.clone();
    b[40..44].copy_from_slice(&65u32.to_le_bytes());
    reseal(&mut b);
    assert!(corrupt_message(ClassicBloom::from_bytes(&b)).contains("65"));
    // A bit past m = 1000 (bit 40 of the last word).
    let mut b = c.clone();
    let last_word = 64 + 15 * 8;
    b[last_word + 5] |= 1;
    reseal(&mut b);
    assert!(corrupt_message(ClassicBloom::from_bytes(&b)).contains("past"));

    let q = cuckoo(10, 12, 1, 20).to_bytes();
    let mut b = q.clone();
    b[40..44].copy_from_slice(&10u32.to_le_bytes());
    reseal(&mut b);
    assert!(corrupt_message(CuckooFilter::from_bytes(&b)).contains("fingerprint bits 10"));
    let mut b = q.clone();
    b[24] ^= 1; // item count disagrees with the table
    reseal(&mut b);
    assert!(corrupt_message(CuckooFilter::from_bytes(&b)).contains("fingerprints"));
    let mut b = q.clone();
    b[48] = 1; // a victim this filter never stores
    reseal(&mut b);
    assert!(corrupt_message(CuckooFilter::from_bytes(&b)).contains("reserved"));
}

#[test]
fn huge_length_fields_do_not_allocate() {
    // A 72-byte input whose header claims 2^50 lines (64 PiB): rejected by the length checks
    // before any allocation (an allocation of that size would abort the test process).
    let mut b = blocked(1, 1, 0, 0).to_bytes();
    b[32..40].copy_from_slice(&(1u64 << 50).to_le_bytes());
    b[56..64].copy_from_slice(&(1u64 << 56).to_le_bytes());
    b.truncate(72);
    reseal(&mut b);
    assert!(corrupt_message(BlockedBloom::from_bytes(&b)).contains("truncated"));
    let mut c = classic(64, 1, 0, 0).to_bytes();
    c[32..40].copy_from_slice(&(u64::MAX - 5).to_le_bytes());
    c[56..64].copy_from_slice(&(u64::MAX / 64 * 8 + 8).to_le_bytes());
    reseal(&mut c);
    assert!(ClassicBloom::from_bytes(&c).is_err());
}

#[test]
fn the_view_needs_64_byte_alignment() {
    let bytes = blocked(4, 7, 3, 100).to_bytes();
    let mut buf = AlignedBytes::zeroed(bytes.len() + 64).unwrap();
    for shift in [1usize, 8, 16, 32, 63] {
        buf[shift..shift + bytes.len()].copy_from_slice(&bytes);
        let err = BlockedBloomRef::from_bytes(&buf[shift..shift + bytes.len()]).unwrap_err();
        match err {
            Error::InvalidParameter { name, value, .. } => {
                assert_eq!(name, "buffer alignment");
                assert!(value.contains(&format!("{shift} bytes past")), "{value}");
            }
            other => panic!("expected an alignment error, got {other:?}"),
        }
        // The owned reader does not care.
        assert!(BlockedBloom::from_bytes(&buf[shift..shift + bytes.len()]).is_ok());
    }
    buf[64..64 + bytes.len()].copy_from_slice(&bytes);
    assert!(BlockedBloomRef::from_bytes(&buf[64..64 + bytes.len()]).is_ok());
}

// ---- Golden files: the exact bytes of one small filter of each kind.

fn golden_filters() -> Vec<(&'static str, AnyFilter)> {
    let mut b = BlockedBloom::with_lines_placed(4, 7, Placement::Salted, 42).unwrap();
    let mut b3 = BlockedBloom::with_lines(4, 7, 42).unwrap();
    let mut c = ClassicBloom::with_bits(1000, 5, 42).unwrap();
    let mut q = CuckooFilter::with_buckets(16, 12, 42).unwrap();
    let mut n = CountingBlockedBloom::with_lines(4, 6, 42).unwrap();
    let scalable = |placement| {
        ScalableBlockedBloom::builder(8)
            .fpr(0.01)
            .seed(42)
            .placement(placement)
            .build()
            .unwrap()
    };
    let (mut s, mut s3) = (scalable(Placement::Salted), scalable(Placement::Shifted));
    let mut p = SplitBlockBloom::with_blocks(4).unwrap();
    for i in 0..40 {
        let key = format!("key-{i}");
        b.insert(&key);
        b3.insert(&key);
        s3.insert(&key);
        c.insert(&key);
        q.insert(&key).unwrap();
        n.insert(&key);
        s.insert(&key);
        p.insert(&key);
    }
    vec![
        ("blocked_v1.lbf", b.into()),
        ("classic_v1.lbf", c.into()),
        ("cuckoo_v1.lbf", q.into()),
        ("counting_v1.lbf", n.into()),
        ("scalable_v1.lbf", s.into()),
        ("split_block_v1.lbf", p.into()),
        ("blocked_v1_scheme3.lbf", b3.into()),
        ("scalable_v1_scheme3.lbf", s3.into()),
    ]
}

#[test]
fn golden_files_pin_the_format() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let bless = std::env::var_os("LINEBLOOM_BLESS").is_some_and(|v| v == "1");
    for (name, filter) in golden_filters() {
        let path = dir.join(name);
        let bytes = filter.to_bytes();
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
            continue;
        }
        let pinned = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (bless with LINEBLOOM_BLESS=1)", path.display()));
        assert!(
            pinned == bytes,
            "{name}: the serialized bytes changed. If this is deliberate, bump the format \
             version or hash scheme and rerun with LINEBLOOM_BLESS=1"
        );
        let read = read_any(&pinned).unwrap();
        assert_eq!(read, filter);
        for i in 0..40 {
            assert!(read.contains(&format!("key-{i}")), "{name}: key-{i}");
        }
    }
}

// ---- Property tests: mangled real filters read as errors or as the same filter.

/// A small real filter of any kind and its bytes.
fn any_filter() -> impl Strategy<Value = (AnyFilter, Vec<u8>)> {
    let blocked = (1usize..6, 1u32..=16, any::<u64>(), 0u64..200)
        .prop_map(|(l, k, s, n)| AnyFilter::from(blocked(l, k, s, n)));
    let classic = (1u64..700, 1u32..=64, any::<u64>(), 0u64..200)
        .prop_map(|(m, k, s, n)| AnyFilter::from(classic(m, k, s, n)));
    let cuckoo = (
        1usize..12,
        prop::sample::select(vec![8u32, 12, 16]),
        any::<u64>(),
        0u64..60,
    )
        .prop_map(|(b, f, s, n)| AnyFilter::from(cuckoo(b, f, s, n)));
    let split_block = (1usize..6, 0u64..200).prop_map(|(b, n)| {
        let mut f = SplitBlockBloom::with_blocks(b).unwrap();
        (0..n).for_each(|i| f.insert(&i));
        AnyFilter::from(f)
    });
    prop_oneof![blocked, classic, cuckoo, split_block].prop_map(|f| {
        let bytes = f.to_bytes();
        (f, bytes)
    })
}

#[derive(Debug, Clone)]
enum Mangle {
    Flip(usize, u8),
    Truncate(usize),
    Extend(Vec<u8>),
    /// Overwrite a byte of the header and fix the checksum, to reach the parameter checks.
    ResealedHeader(usize, u8),
    /// Overwrite a byte anywhere and fix the checksum.
    ResealedAnywhere(usize, u8),
}

fn mangle() -> impl Strategy<Value = Mangle> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(i, bit)| Mangle::Flip(i, bit)),
        any::<usize>().prop_map(Mangle::Truncate),
        prop::collection::vec(any::<u8>(), 1..80).prop_map(Mangle::Extend),
        (0usize..HEADER_LEN, any::<u8>()).prop_map(|(i, v)| Mangle::ResealedHeader(i, v)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Mangle::ResealedAnywhere(i, v)),
    ]
}

fn apply(bytes: &[u8], m: &Mangle) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let n = b.len();
    match *m {
        Mangle::Flip(i, bit) => b[i % n] ^= 1 << bit,
        Mangle::Truncate(len) => b.truncate(len % n),
        Mangle::Extend(ref extra) => b.extend_from_slice(extra),
        Mangle::ResealedHeader(i, v) => {
            b[i] = v;
            reseal(&mut b);
        }
        Mangle::ResealedAnywhere(i, v) => {
            b[i % (n - 8)] = v;
            reseal(&mut b);
        }
    }
    b
}

/// Reads `bytes` with every reader; each must fail or give back a valid filter (the original
/// itself, unless the mangling was re-sealed into another valid filter).
fn read_everything(
    bytes: &[u8],
    original: &AnyFilter,
    resealed: bool,
) -> Result<(), TestCaseError> {
    let check = |read: Result<AnyFilter, Error>| -> Result<(), TestCaseError> {
        match read {
            Err(Error::Corrupt(_)) => Ok(()),
            Err(e) => Err(TestCaseError::fail(format!("not Corrupt: {e:?}"))),
            Ok(f) if resealed || &f == original => {
                // Whatever reads must be a filter that round-trips.
                let again = read_any(&f.to_bytes());
                prop_assert_eq!(again, Ok(f));
                Ok(())
            }
            Ok(f) => Err(TestCaseError::fail(format!(
                "read a different filter {f:?}"
            ))),
        }
    };
    check(read_any(bytes))?;
    check(BlockedBloom::from_bytes(bytes).map(AnyFilter::from))?;
    check(ClassicBloom::from_bytes(bytes).map(AnyFilter::from))?;
    check(CuckooFilter::from_bytes(bytes).map(AnyFilter::from))?;
    check(SplitBlockBloom::from_bytes(bytes).map(AnyFilter::from))?;
    let aligned = AlignedBytes::from_slice(bytes).unwrap();
    check(
        BlockedBloomRef::from_bytes(&aligned)
            .and_then(|v| v.to_filter())
            .map(AnyFilter::from),
    )?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mangled_filters_read_as_errors_or_themselves(
        (filter, bytes) in any_filter(),
        m in mangle(),
    ) {
        let mangled = apply(&bytes, &m);
        let resealed = matches!(m, Mangle::ResealedHeader(..) | Mangle::ResealedAnywhere(..));
        read_everything(&mangled, &filter, resealed)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let original = AnyFilter::from(blocked(1, 1, 0, 0));
        // Almost always an error; anything that reads must at least be a valid filter.
        read_everything(&bytes, &original, true)?;
        let mut with_magic = format::MAGIC.to_vec();
        with_magic.extend_from_slice(&bytes);
        read_everything(&with_magic, &original, true)?;
    }

    #[test]
    fn view_and_owned_filter_agree(
        lines in 1usize..40,
        k in 1u32..=16,
        keys in 0u64..2000,
        seed in any::<u64>(),
    ) {
        let f = blocked(lines, k, seed, keys);
        let bytes = AlignedBytes::from_slice(&f.to_bytes()).unwrap();
        let view = BlockedBloomRef::from_bytes(&bytes).unwrap();
        let probes: Vec<u64> = (0..3000).map(|i| mix64(i ^ seed)).collect();
        let mut a = vec![false; probes.len()];
        let mut b = vec![false; probes.len()];
        f.contains_hashes(&probes, &mut a).unwrap();
        view.contains_hashes(&probes, &mut b).unwrap();
        prop_assert_eq!(&a, &b);
        for (&h, &expected) in probes.iter().zip(&a) {
            prop_assert_eq!(view.contains_hash(h), expected);
        }
        prop_assert!((0..keys).all(|i| view.contains(&i)));
        prop_assert_eq!(view.k(), f.k());
        prop_assert_eq!(view.seed(), f.seed());
        prop_assert_eq!(Filter::contains_hash(&f, probes[0]), view.contains_hash(probes[0]));
    }
}

/// Each placement's filters record their hash scheme (salted 2, shifted 3) and read back with
/// it, owned, viewed and streamed, keeping every key; scheme 3 on any other kind is refused.
#[test]
fn placements_are_recorded_in_the_hash_scheme() {
    for (placement, scheme) in [(Placement::Salted, 2), (Placement::Shifted, 3)] {
        let f = blocked_placed(50, 7, placement, 5, 1_000);
        let bytes = f.to_bytes();
        assert_eq!(bytes[11], scheme);
        let header = read_header(&bytes).unwrap();
        assert_eq!(
            (header.hash_scheme, header.placement()),
            (scheme, placement)
        );
        let back = BlockedBloom::from_bytes(&bytes).unwrap();
        assert_eq!(back.placement(), placement);
        assert!(back == f && (0..1_000u64).all(|i| back.contains(&i)));
        let aligned = AlignedBytes::from_slice(&bytes).unwrap();
        let view = BlockedBloomRef::from_bytes(&aligned).unwrap();
        assert_eq!(view.placement(), placement);
        assert!((0..1_000u64).all(|i| view.contains(&i)));
        assert!(BlockedBloom::read_from(&bytes[..]).unwrap() == f);
        let chain = ScalableBlockedBloom::builder(100)
            .placement(placement)
            .build()
            .unwrap();
        assert_eq!(chain.to_bytes()[11], scheme);
        assert_eq!(
            ScalableBlockedBloom::from_bytes(&chain.to_bytes()).unwrap(),
            chain
        );
    }
    // The same bits read with the other placement are another filter.
    let mut relabelled = blocked(50, 7, 5, 1_000).to_bytes();
    relabelled[11] = 2;
    reseal(&mut relabelled);
    assert_eq!(
        BlockedBloom::from_bytes(&relabelled).unwrap().placement(),
        Placement::Salted
    );
    for mut other in [
        classic(1000, 7, 1, 20).to_bytes(),
        cuckoo(10, 8, 1, 20).to_bytes(),
        CountingBlockedBloom::with_lines(4, 6, 1)
            .unwrap()
            .to_bytes(),
        SplitBlockBloom::with_blocks(4).unwrap().to_bytes(),
    ] {
        assert_eq!(other[11], 2);
        other[11] = 3;
        reseal(&mut other);
        let m = corrupt_message(read_any(&other));
        assert!(m.contains("hash scheme 3"), "{m}");
    }
}

#[test]
fn scheme_one_blocked_filters_still_read_and_the_other_kinds_are_refused() {
    let scheme_one = |mut b: Vec<u8>| {
        b[11] = 1;
        reseal(&mut b);
        b
    };
    let f = blocked_placed(3, 7, Placement::Salted, 1, 20);
    let back = BlockedBloom::from_bytes(&scheme_one(f.to_bytes())).unwrap();
    assert!(back == f);
    let m = corrupt_message(ClassicBloom::from_bytes(&scheme_one(
        classic(1000, 7, 1, 20).to_bytes(),
    )));
    assert!(m.contains("hash scheme 1") && m.contains("rebuild"), "{m}");
    let m = corrupt_message(CuckooFilter::from_bytes(&scheme_one(
        cuckoo(10, 8, 1, 20).to_bytes(),
    )));
    assert!(m.contains("rebuild"), "{m}");
}
