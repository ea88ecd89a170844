//! The API contract every filter kind follows (docs/design.md, "The API contract"): the same
//! constructors and builder setters, `u64` item counts, `k()` for the probe count, the batched
//! trio, and the return types the table gives for `insert`, `insert_hashes` and `insert_keys`.
//! Each block below compiles only while a kind keeps its row of the table.

use linebloom::filter::Sizing;
use linebloom::{
    AtomicBlockedBloom, BlockedBloom, ClassicBloom, CountingBlockedBloom, CuckooFilter, Result,
    ScalableBlockedBloom, SplitBlockBloom,
};

const ITEMS: u64 = 2_000;

fn keys() -> Vec<u64> {
    (0..ITEMS).collect()
}

fn hashes() -> Vec<u64> {
    (0..ITEMS).map(|i| linebloom::hash::mix64(i + 1)).collect()
}

/// Constructors, builder, one-key and batched calls of one kind, with the return types of its
/// row: `$insert` for `insert` / `insert_hash`, `$many` for `insert_hashes` / `insert_keys`.
macro_rules! follows_the_contract {
    ($kind:ident, $builder:expr, insert -> $insert:ty, many -> $many:ty, $unwrap:expr) => {{
        let _: $kind = $kind::with_fpr(ITEMS, 0.01)?;
        let _: $kind = $kind::with_bits_per_key(ITEMS, 10.0)?;
        let _: $kind = $kind::builder(ITEMS)
            .sizing(Sizing::BitsPerKey(12.0))
            .build()?;
        #[allow(unused_mut)]
        let mut f: $kind = $builder.fpr(0.01).build()?;
        let (keys, hashes) = (keys(), hashes());

        let one: $insert = f.insert(&u64::MAX);
        $unwrap(one);
        let one: $insert = f.insert_hash(hashes[0]);
        $unwrap(one);
        let many: $many = f.insert_hashes(&hashes);
        $unwrap(many);
        let many: $many = f.insert_keys(&keys);
        $unwrap(many);

        assert!(f.contains(&u64::MAX));
        assert!(f.contains_hash(hashes[0]));
        let mut out = vec![false; keys.len()];
        f.contains_hashes(&hashes, &mut out)?;
        assert!(
            out.iter().all(|&x| x),
            "{}: contains_hashes",
            stringify!($kind)
        );
        out.fill(false);
        f.contains_keys(&keys, &mut out)?;
        assert!(
            out.iter().all(|&x| x),
            "{}: contains_keys",
            stringify!($kind)
        );
        assert!(f.contains_keys(&keys, &mut out[1..]).is_err());
        assert!(f.expected_fpr(ITEMS) < 0.02);
        assert!(f.size_bytes() > 0);
        f
    }};
}

fn ignore<T>(_: T) {}

fn unwrap_ok(r: Result<()>) {
    r.unwrap();
}

#[test]
fn every_kind_follows_the_contract() -> Result<()> {
    let f = follows_the_contract!(BlockedBloom, BlockedBloom::builder(ITEMS).k(7).seed(1), insert -> (), many -> (), ignore);
    assert_eq!((f.k(), f.seed()), (7, 1));
    let f = follows_the_contract!(ClassicBloom, ClassicBloom::builder(ITEMS).k(7).seed(1), insert -> (), many -> (), ignore);
    assert_eq!((f.k(), f.seed()), (7, 1));
    let f = follows_the_contract!(CountingBlockedBloom, CountingBlockedBloom::builder(ITEMS).k(7).seed(1), insert -> (), many -> (), ignore);
    assert_eq!((f.k(), f.seed()), (7, 1));
    let f = follows_the_contract!(AtomicBlockedBloom, AtomicBlockedBloom::builder(ITEMS).k(7).seed(1), insert -> (), many -> (), ignore);
    assert_eq!((f.k(), f.seed()), (7, 1));
    let salted = linebloom::blocked::Placement::Salted;
    let f = AtomicBlockedBloom::builder(ITEMS)
        .placement(salted)
        .build()
        .unwrap();
    assert_eq!(f.placement(), salted);
    let f = BlockedBloom::builder(ITEMS)
        .placement(salted)
        .build()
        .unwrap();
    assert_eq!(f.placement(), salted);
    let f = follows_the_contract!(CuckooFilter, // Room for the hashes and the keys, both inserted.
        CuckooFilter::builder(3 * ITEMS).fingerprint_bits(16).seed(1), insert -> Result<()>, many -> Result<()>, unwrap_ok);
    assert_eq!((f.fingerprint_bits(), f.seed()), (16, 1));
    let f = follows_the_contract!(ScalableBlockedBloom, ScalableBlockedBloom::builder(ITEMS).seed(1), insert -> bool, many -> usize, ignore);
    assert_eq!(f.seed(), 1);
    let f = follows_the_contract!(SplitBlockBloom, SplitBlockBloom::builder(ITEMS), insert -> (), many -> (), ignore);
    assert_eq!(f.k(), 8);
    Ok(())
}

/// Every owned kind writes the format and reads it back equal, through `to_bytes` /
/// `from_bytes` and `write_to` / `AnyFilter`.
#[test]
fn every_kind_round_trips_through_its_bytes() -> Result<()> {
    macro_rules! round_trip {
        ($($kind:ident),*) => {$(
            let f = $kind::with_fpr(ITEMS, 0.01)?;
            let bytes = f.to_bytes();
            assert_eq!($kind::from_bytes(&bytes)?, f, stringify!($kind));
            let mut written = Vec::new();
            f.write_to(&mut written)?;
            assert_eq!(written, bytes, stringify!($kind));
        )*};
    }
    round_trip!(
        BlockedBloom,
        ClassicBloom,
        CuckooFilter,
        CountingBlockedBloom,
        ScalableBlockedBloom,
        SplitBlockBloom
    );
    Ok(())
}

/// Through the `Filter` trait every owned kind and the atomic filter insert a batch and find it.
#[test]
fn the_filter_trait_covers_every_owned_kind() -> Result<()> {
    use linebloom::Filter;
    let filters: Vec<Box<dyn Filter>> = vec![
        Box::new(BlockedBloom::with_fpr(ITEMS, 0.01)?),
        Box::new(AtomicBlockedBloom::with_fpr(ITEMS, 0.01)?),
        Box::new(ClassicBloom::with_fpr(ITEMS, 0.01)?),
        Box::new(CuckooFilter::with_fpr(ITEMS, 0.01)?),
        Box::new(CountingBlockedBloom::with_fpr(ITEMS, 0.01)?),
        Box::new(ScalableBlockedBloom::with_fpr(ITEMS, 0.01)?),
        Box::new(SplitBlockBloom::with_fpr(ITEMS, 0.01)?),
    ];
    let hashes = hashes();
    for mut f in filters {
        f.insert_hashes(&hashes)?;
        let mut out = vec![false; hashes.len()];
        f.contains_hashes(&hashes, &mut out)?;
        assert!(out.iter().all(|&x| x), "{}", f.kind());
        assert_eq!(f.k().is_none(), f.kind() == linebloom::FilterKind::Cuckoo);
    }
    Ok(())
}

/// `with_shape` is the exact-size constructor every sized kind shares: the shape a builder
/// plans is the filter it builds, and another kind's shape is an error.
#[test]
fn with_shape_builds_what_the_builder_plans() -> Result<()> {
    macro_rules! exact {
        ($kind:ident, $seed:expr) => {{
            let builder = $kind::builder(ITEMS).bits_per_key(12.0);
            let shape = builder.shape()?;
            let planned = $kind::with_shape(shape, $seed)?;
            assert_eq!(
                planned.to_bytes(),
                builder.build()?.to_bytes(),
                stringify!($kind)
            );
            assert_eq!(shape.size_bytes()?, planned.to_bytes().len() as u64 - 72);
            let other = linebloom::format::Shape::Scalable { filters: 1 };
            assert!($kind::with_shape(other, $seed).is_err(), stringify!($kind));
        }};
    }
    exact!(BlockedBloom, linebloom::hash::DEFAULT_SEED);
    exact!(ClassicBloom, linebloom::hash::DEFAULT_SEED);
    exact!(CuckooFilter, linebloom::hash::DEFAULT_SEED);
    exact!(CountingBlockedBloom, linebloom::hash::DEFAULT_SEED);
    exact!(SplitBlockBloom, 0);
    assert!(SplitBlockBloom::with_shape(SplitBlockBloom::builder(ITEMS).shape()?, 1).is_err());
    Ok(())
}
