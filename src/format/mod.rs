//! The serialized form of every filter: one versioned, checksummed byte layout.
//!
//! This module owns the bytes: the header, the payload of each kind, the checksum, and every
//! check that turns malformed input into [`Error::Corrupt`]. It also owns [`AnyFilter`], the
//! filter of a kind known only once a file is read. It does not own the filters' in-memory
//! layouts (their modules do) or the zero-copy view ([`crate::BlockedBloomRef`], which reads this
//! layout in place through `parse`). This file holds the constants and the byte readers all
//! parts share; `header.rs` the header ([`Header`], [`Shape`], [`read_header`]) and `parse`,
//! the one check every reader runs; `payload.rs` each kind's `to_bytes`, `write_to` and
//! `from_bytes`; `any.rs` [`AnyFilter`] and [`read_any`]; `tests.rs` the unit tests.
//!
//! # Layout, format version 1
//! All integers are little-endian and fixed-width. A filter is a 64-byte header, the payload
//! (starting at byte 64, so a buffer that starts on a 64-byte boundary has its payload on one
//! too), and an 8-byte checksum: `64 + payload_len + 8` bytes, no more and no less.
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `b"LINEBLM\0"` ([`MAGIC`]) |
//! | 8 | 2 | format version (`u16`, [`VERSION`] = 1) |
//! | 10 | 1 | filter kind: 1 blocked, 2 classic, 3 cuckoo, 4 counting, 5 scalable, 6 split-block |
//! | 11 | 1 | hash scheme (2; 3 for blocked and scalable filters of the shifted placement: [`HASH_SCHEME`]) |
//! | 12 | 4 | header length (`u32`, 64 in version 1: the payload's offset) |
//! | 16 | 8 | hash seed |
//! | 24 | 8 | items inserted, as the writer knew it (0: not recorded; cuckoo and scalable: their `len`) |
//! | 32 | 8 | size: lines (blocked, counting), bits `m` (classic), buckets (cuckoo), filters (scalable), blocks (split-block) |
//! | 40 | 4 | probes per key `k` (Bloom filters; 8 for split-block), fingerprint bits (cuckoo), 0 (scalable) |
//! | 44 | 4 | flags: 0 (reserved; cuckoo bit 0 would mean "a victim is stored") |
//! | 48 | 8 | cuckoo victim: 0 (reserved; also 0 for the Bloom filters) |
//! | 56 | 8 | payload length in bytes |
//! | 64 | `payload_len` | payload |
//! | 64 + `payload_len` | 8 | xxh3-64 (seed 0) of every byte before it |
//!
//! Payloads:
//! - **blocked**: `lines` lines of 16 `u32` words each (`lines * 64` bytes): the same bytes as the
//!   in-memory [`Line`](crate::blocked::Line)s on a little-endian machine, which is what lets
//!   [`BlockedBloomRef`](crate::BlockedBloomRef) query them in place.
//! - **classic**: `ceil(m / 64)` `u64` words, bit `b` at bit `b % 64` of word `b / 64`; the bits
//!   past `m` are zero.
//! - **cuckoo**: the table as [`CuckooFilter::table_bytes`] returns it: `buckets` buckets of
//!   `4 * f / 8` bytes. This filter undoes failed inserts instead of parking a victim, so the
//!   victim fields are always 0; they are reserved so that a filter which keeps one can be stored
//!   without a new layout.
//! - **counting**: `lines` lines of eight little-endian `u64` words, counter `j` of word `w` in
//!   bits `4j..4j + 4` (counter `16w + j` of the line).
//! - **scalable**: a 64-byte parameter block (initial items `u64`, then the target FPR, growth
//!   and tightening as `f64` bits, then 32 zero bytes), then for each filter, oldest first, a
//!   64-byte part header (lines `u64`, probes per key `u32`, 4 zero bytes, keys stored `u64`,
//!   40 zero bytes) followed by its lines as a blocked payload. Every part starts on a multiple
//!   of 64 bytes, as the blocked payload does.
//! - **split-block**: `blocks` blocks of eight little-endian `u32` words (`blocks * 32` bytes):
//!   the Parquet bitset itself ([`SplitBlockBloom::bitset`](crate::SplitBlockBloom::bitset)).
//!   Its seed field is 0 and its hash is the Parquet one (XXH64 with seed 0 of the value's
//!   plain encoding), whatever the hash scheme field says: the kind fixes it.
//!
//! Kinds 4, 5 and 6 came after the first three in the same format version: a file of those
//! kinds is refused by an older build as an unknown kind, and every file an older build wrote
//! still reads.
//!
//! Hash scheme 2 is this crate's key hashing ([`crate::hash`]: xxh3-64 of the key's bytes with
//! the seed, integers as little-endian bytes) followed by each kind's placement of a hash into
//! bits or buckets (scheme 1 differed in the classic and cuckoo placements; see
//! [`HASH_SCHEME`]). A change to either gets a new scheme number (and the golden files
//! in `tests/data/` fail until it does). Filters filled through the `*_hash` methods depend on
//! the caller's hash function too, which the format cannot record.
//!
//! # Reading
//! Every reader checks, in this order: the length is at least 72 bytes, the magic, the version,
//! the kind (and that it is the one asked for), the hash scheme, the header length, the reserved
//! fields, the parameters (in range, and the payload length they imply equals the stored one),
//! the total length, and finally the checksum. Only then is memory allocated, never more than
//! the input's own size, so a corrupt length field cannot trigger a huge allocation. Every
//! failure is an [`Error::Corrupt`] that says what is wrong; nothing panics or reads out of
//! bounds (`fuzz/` runs each reader on arbitrary bytes).

mod any;
mod header;
mod payload;
#[cfg(test)]
mod tests;

#[cfg(feature = "serde")]
mod serde;
use alloc::format;
use alloc::string::String;
use alloc::string::ToString;
pub use any::{AnyFilter, read_any};
pub use header::{Header, Shape, read_header, verify};
pub(crate) use header::{count_of, wrong_shape};
pub(crate) use header::{parse, parse_unverified};
#[cfg(feature = "redis")]
pub(crate) use payload::lines_from;

#[cfg(doc)]
use crate::CuckooFilter;
use crate::error::{Error, Result};

/// The first 8 bytes of every serialized filter.
pub const MAGIC: [u8; 8] = *b"LINEBLM\0";
/// The format version this build writes and the only one it reads.
pub const VERSION: u16 = 1;
/// The header's length in bytes, which is also the payload's offset (a multiple of 64, so the
/// payload of a 64-byte-aligned buffer is 64-byte aligned).
pub const HEADER_LEN: usize = 64;
/// The checksum's length in bytes, after the payload.
pub const CHECKSUM_LEN: usize = 8;
/// The newest hash scheme this build writes and reads: this crate's key hashing and each kind's
/// placement of a hash into bits or buckets. Scheme 3 is scheme 2 with the blocked filters'
/// [`Placement::Shifted`](crate::blocked::Placement) (blocked and scalable filters only; a
/// blocked filter of [`Placement::Salted`](crate::blocked::Placement::Salted) is still written as scheme 2, so older builds read
/// it, and every other kind too). Scheme 1 had the salted blocked placement (so blocked filters
/// of scheme 1 still read) and another classic second hash and cuckoo alternate index (so
/// classic and cuckoo filters of scheme 1 are refused: read with today's placement they would
/// lose keys).
pub const HASH_SCHEME: u8 = 3;

pub(super) const KIND_BLOCKED: u8 = 1;
pub(super) const KIND_CLASSIC: u8 = 2;
pub(super) const KIND_CUCKOO: u8 = 3;
pub(super) const KIND_COUNTING: u8 = 4;
pub(super) const KIND_SCALABLE: u8 = 5;
pub(super) const KIND_SPLIT_BLOCK: u8 = 6;

pub(super) fn corrupt(why: impl Into<String>) -> Error {
    Error::Corrupt(why.into())
}

/// A filter's own validation error, reported as corruption of the bytes it came from.
pub(super) fn into_corrupt(e: Error) -> Error {
    match e {
        Error::Corrupt(_) => e,
        other => Error::Corrupt(other.to_string()),
    }
}

pub(super) fn check_range(what: &str, value: u32, min: u32, max: u32) -> Result<()> {
    if !(min..=max).contains(&value) {
        return Err(corrupt(format!("{what} {value} (allowed: {min}..={max})")));
    }
    Ok(())
}

// The callers have checked that `at + N <= bytes.len()`; a failure reads as 0 rather than panic.
pub(super) fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(array_at(bytes, at))
}

pub(super) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(array_at(bytes, at))
}

pub(super) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(array_at(bytes, at))
}

pub(super) fn array_at<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..)
        .and_then(|rest| rest.first_chunk::<N>())
        .copied()
        .unwrap_or([0; N])
}
