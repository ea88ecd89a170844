//! Unit tests of the byte layout: header fields at their offsets, the streaming and `Vec`
//! writers agreeing, and oversized parameters refused before any allocation. The public
//! behaviour (round trips, golden files, corrupt input) is tested in `tests/format.rs`.

use xxhash_rust::xxh3::xxh3_64;

use super::*;
use crate::blocked::Line;
use crate::hash::mix64;
use crate::{BlockedBloom, ClassicBloom};

fn blocked() -> BlockedBloom {
    let mut f = BlockedBloom::with_lines(3, 7, 99).unwrap();
    (0..50).for_each(|i| f.insert_hash(mix64(i)));
    f
}

#[test]
fn header_fields_sit_where_the_table_says() {
    let bytes = blocked().to_bytes();
    assert_eq!(bytes.len(), 64 + 3 * 64 + 8);
    assert_eq!(&bytes[0..8], b"LINEBLM\0");
    assert_eq!(u16_at(&bytes, 8), 1);
    assert_eq!((bytes[10], bytes[11]), (KIND_BLOCKED, HASH_SCHEME));
    assert_eq!(u32_at(&bytes, 12), 64);
    assert_eq!(u64_at(&bytes, 16), 99);
    assert_eq!(u64_at(&bytes, 24), 0);
    assert_eq!(u64_at(&bytes, 32), 3);
    assert_eq!(u32_at(&bytes, 40), 7);
    assert_eq!(u64_at(&bytes, 56), 192);
    assert_eq!(u64_at(&bytes, 256), xxh3_64(&bytes[..256]));
    assert_eq!(
        &bytes[64..256],
        bytemuck::cast_slice::<Line, u8>(blocked().lines())
    );
}

#[test]
fn streaming_and_vec_writers_agree() {
    let f = blocked();
    let mut streamed = Vec::new();
    f.write_to(&mut streamed).unwrap();
    assert_eq!(streamed, f.to_bytes());
    let mut c = ClassicBloom::with_bits(40_000, 3, 1).unwrap();
    (0..500).for_each(|i| c.insert_hash(mix64(i)));
    // More than one 4 KiB buffer of words, and a partial one.
    assert_eq!(c.size_bytes(), 625 * 8);
    assert_eq!(ClassicBloom::from_bytes(&c.to_bytes()).unwrap(), c);
}

#[test]
fn oversized_parameters_are_corrupt_not_allocations() {
    let mut bytes = blocked().to_bytes();
    bytes[32..40].copy_from_slice(&(u64::MAX / 64).to_le_bytes());
    bytes[56..64].copy_from_slice(&(u64::MAX / 64 * 64).to_le_bytes());
    let err = BlockedBloom::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(err, Error::Corrupt(ref m) if m.contains("addressed")),
        "{err}"
    );
    bytes[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = BlockedBloom::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(err, Error::Corrupt(ref m) if m.contains("overflows")),
        "{err}"
    );
}
