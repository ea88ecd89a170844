//! `serde` for every filter (feature `serde`): a filter serializes as its
//! [serialized format](super) bytes, one byte string (a sequence of bytes in formats without
//! one), and deserializes through the same checked reader as `from_bytes`, so a damaged or
//! foreign value is an error of the format, never a filter that answers wrongly. The format's
//! version and checksum travel with the value.

use alloc::vec::Vec;

use serde::de::{Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{
    AnyFilter, BlockedBloom, ClassicBloom, CountingBlockedBloom, CuckooFilter,
    ScalableBlockedBloom, SplitBlockBloom,
};

/// Collects the bytes of a byte string or of a sequence of bytes.
struct Bytes;

impl<'de> Visitor<'de> for Bytes {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        f.write_str("a linebloom filter's serialized bytes")
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        // The hint comes from the input: it bounds nothing, so it is capped.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(b) = seq.next_element()? {
            out.push(b);
        }
        Ok(out)
    }
}

macro_rules! serde_as_bytes {
    ($($ty:ty),* $(,)?) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(&self.to_bytes())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let bytes = deserializer.deserialize_byte_buf(Bytes)?;
                <$ty>::from_bytes(&bytes).map_err(D::Error::custom)
            }
        }
    )*};
}

serde_as_bytes!(
    AnyFilter,
    BlockedBloom,
    ClassicBloom,
    CountingBlockedBloom,
    CuckooFilter,
    ScalableBlockedBloom,
    SplitBlockBloom,
);
