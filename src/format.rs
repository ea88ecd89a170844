//! The serialized form of every filter: one versioned, checksummed byte layout.
//!
//! This module owns the bytes: the header, the payload of each kind, the checksum, and every
//! check that turns malformed input into [`Error::Corrupt`]. It also owns [`AnyFilter`], the
//! filter of a kind known only once a file is read. It does not own the filters' in-memory
//! layouts (their modules do) or the zero-copy view ([`crate::BlockedBloomRef`], which reads this
//! layout in place through `parse`).
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
//! | 10 | 1 | filter kind: 1 blocked, 2 classic, 3 cuckoo |
//! | 11 | 1 | hash scheme ([`HASH_SCHEME`] = 2) |
//! | 12 | 4 | header length (`u32`, 64 in version 1: the payload's offset) |
//! | 16 | 8 | hash seed |
//! | 24 | 8 | items inserted, as the writer knew it (0: not recorded; cuckoo: its `len`) |
//! | 32 | 8 | size: lines (blocked), bits `m` (classic), buckets (cuckoo) |
//! | 40 | 4 | probes per key `k` (Bloom filters), fingerprint bits (cuckoo) |
//! | 44 | 4 | flags: 0 (reserved; cuckoo bit 0 would mean "a victim is stored") |
//! | 48 | 8 | cuckoo victim: 0 (reserved; also 0 for the Bloom filters) |
//! | 56 | 8 | payload length in bytes |
//! | 64 | `payload_len` | payload |
//! | 64 + `payload_len` | 8 | xxh3-64 (seed 0) of every byte before it |
//!
//! Payloads:
//! - **blocked**: `lines` lines of 16 `u32` words each (`lines * 64` bytes): the same bytes as the
//!   in-memory [`Line`]s on a little-endian machine, which is what lets
//!   [`BlockedBloomRef`](crate::BlockedBloomRef) query them in place.
//! - **classic**: `ceil(m / 64)` `u64` words, bit `b` at bit `b % 64` of word `b / 64`; the bits
//!   past `m` are zero.
//! - **cuckoo**: the table as [`CuckooFilter::table_bytes`] returns it: `buckets` buckets of
//!   `4 * f / 8` bytes. This filter undoes failed inserts instead of parking a victim, so the
//!   victim fields are always 0; they are reserved so that a filter which keeps one can be stored
//!   without a new layout.
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

use std::io::Write;

use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

use crate::blocked::{Line, MAX_HASHES, zeroed_lines};
use crate::cuckoo::{FINGERPRINT_WIDTHS, SLOTS_PER_BUCKET};
use crate::error::{Error, Result};
use crate::filter::{Filter, FilterKind, Sizing};
use crate::hash::Key;
use crate::model::CLASSIC_MAX_HASHES;
use crate::{BlockedBloom, ClassicBloom, CuckooFilter};

/// The first 8 bytes of every serialized filter.
pub const MAGIC: [u8; 8] = *b"LINEBLM\0";
/// The format version this build writes and the only one it reads.
pub const VERSION: u16 = 1;
/// The header's length in bytes, which is also the payload's offset (a multiple of 64, so the
/// payload of a 64-byte-aligned buffer is 64-byte aligned).
pub const HEADER_LEN: usize = 64;
/// The checksum's length in bytes, after the payload.
pub const CHECKSUM_LEN: usize = 8;
/// The hash scheme this build writes: this crate's key hashing and each kind's placement of a
/// hash into bits or buckets. Scheme 1 had the same blocked placement (so blocked filters of
/// scheme 1 still read) and another classic second hash and cuckoo alternate index (so classic
/// and cuckoo filters of scheme 1 are refused: read with today's placement they would lose keys).
pub const HASH_SCHEME: u8 = 2;

const KIND_BLOCKED: u8 = 1;
const KIND_CLASSIC: u8 = 2;
const KIND_CUCKOO: u8 = 3;

/// What a serialized filter's header says, checked for consistency but before the payload and
/// the checksum are read. [`read_header`] returns it, so a storage engine can learn a filter
/// block's kind and total length from its first 64 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version (1).
    pub version: u16,
    /// The hash scheme ([`HASH_SCHEME`]).
    pub hash_scheme: u8,
    /// The hash seed the filter was built with.
    pub seed: u64,
    /// Items inserted as the writer recorded them: 0 when not recorded (the Bloom filters'
    /// `to_bytes`), the number of stored fingerprints for a cuckoo filter.
    pub items: u64,
    /// The kind and its parameters.
    pub shape: Shape,
    /// Payload bytes between the header and the checksum.
    pub payload_len: u64,
}

/// A filter's kind and the parameters that fix its payload's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A [`BlockedBloom`]: `lines` 64-byte lines, `hashes` probes per key.
    Blocked { lines: u64, hashes: u32 },
    /// A [`ClassicBloom`]: `bits` bits, `hashes` probes per key.
    Classic { bits: u64, hashes: u32 },
    /// A [`CuckooFilter`]: `buckets` buckets of four `fingerprint_bits`-bit slots.
    Cuckoo { buckets: u64, fingerprint_bits: u32 },
}

impl Shape {
    /// The filter kind.
    pub fn kind(&self) -> FilterKind {
        match self {
            Shape::Blocked { .. } => FilterKind::Blocked,
            Shape::Classic { .. } => FilterKind::Classic,
            Shape::Cuckoo { .. } => FilterKind::Cuckoo,
        }
    }

    /// The payload length these parameters imply, or why they are out of range.
    fn payload_len(&self) -> Result<u64> {
        let bytes = match *self {
            Shape::Blocked { lines, hashes } => {
                check_range("blocked probes per key", hashes, 1, MAX_HASHES)?;
                if lines == 0 {
                    return Err(corrupt("a blocked filter of zero lines"));
                }
                lines.checked_mul(std::mem::size_of::<Line>() as u64)
            }
            Shape::Classic { bits, hashes } => {
                check_range("classic probes per key", hashes, 1, CLASSIC_MAX_HASHES)?;
                if bits == 0 {
                    return Err(corrupt("a classic filter of zero bits"));
                }
                bits.div_ceil(64).checked_mul(8)
            }
            Shape::Cuckoo {
                buckets,
                fingerprint_bits,
            } => {
                if !FINGERPRINT_WIDTHS.contains(&fingerprint_bits) {
                    return Err(corrupt(format!(
                        "cuckoo fingerprint bits {fingerprint_bits} (allowed: 8, 12 or 16)"
                    )));
                }
                if buckets == 0 {
                    return Err(corrupt("a cuckoo filter of zero buckets"));
                }
                buckets.checked_mul(u64::from(SLOTS_PER_BUCKET * fingerprint_bits / 8))
            }
        };
        bytes.ok_or_else(|| corrupt(format!("{self:?} overflows a 64-bit byte count")))
    }
}

impl Header {
    /// The filter kind.
    pub fn kind(&self) -> FilterKind {
        self.shape.kind()
    }

    /// The serialized filter's total length: header, payload and checksum. For a header from
    /// [`read_header`] it fits in a `usize`; one built by hand saturates at `usize::MAX`.
    pub fn encoded_len(&self) -> usize {
        usize::try_from(self.payload_len)
            .unwrap_or(usize::MAX)
            .saturating_add(HEADER_LEN + CHECKSUM_LEN)
    }

    fn for_filter(shape: Shape, seed: u64, items: u64, payload_len: usize) -> Self {
        Header {
            version: VERSION,
            hash_scheme: HASH_SCHEME,
            seed,
            items,
            shape,
            payload_len: payload_len as u64,
        }
    }

    fn to_bytes(self) -> [u8; HEADER_LEN] {
        let (kind, size, param) = match self.shape {
            Shape::Blocked { lines, hashes } => (KIND_BLOCKED, lines, hashes),
            Shape::Classic { bits, hashes } => (KIND_CLASSIC, bits, hashes),
            Shape::Cuckoo {
                buckets,
                fingerprint_bits,
            } => (KIND_CUCKOO, buckets, fingerprint_bits),
        };
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&self.version.to_le_bytes());
        h[10] = kind;
        h[11] = self.hash_scheme;
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.seed.to_le_bytes());
        h[24..32].copy_from_slice(&self.items.to_le_bytes());
        h[32..40].copy_from_slice(&size.to_le_bytes());
        h[40..44].copy_from_slice(&param.to_le_bytes());
        // 44..48 flags and 48..56 victim stay zero.
        h[56..64].copy_from_slice(&self.payload_len.to_le_bytes());
        h
    }
}

/// Reads and checks the 64-byte header at the start of `bytes` (the rest may be absent): magic,
/// version, kind, hash scheme, reserved fields, and that the parameters are in range and agree
/// with the payload length. Does not look at the payload or the checksum.
pub fn read_header(bytes: &[u8]) -> Result<Header> {
    let Some(h) = bytes.first_chunk::<HEADER_LEN>() else {
        return Err(corrupt(format!(
            "truncated: {} bytes, but the header alone is {HEADER_LEN}",
            bytes.len()
        )));
    };
    if h[0..8] != MAGIC {
        return Err(corrupt(format!(
            "wrong magic \"{}\" (expected \"{}\"): not a linebloom filter",
            h[0..8].escape_ascii(),
            MAGIC.escape_ascii()
        )));
    }
    let version = u16_at(h, 8);
    if version != VERSION {
        return Err(corrupt(format!(
            "unknown format version {version} (this build reads version {VERSION})"
        )));
    }
    let hash_scheme = h[11];
    if hash_scheme == 1 && h[10] != KIND_BLOCKED {
        return Err(corrupt(
            "hash scheme 1: a classic or cuckoo filter written by an older linebloom, which \
             placed a hash differently for these kinds; rebuild it from its keys"
                .to_string(),
        ));
    }
    if hash_scheme != HASH_SCHEME && hash_scheme != 1 {
        return Err(corrupt(format!(
            "unknown hash scheme {hash_scheme} (this build knows schemes 1 and {HASH_SCHEME})"
        )));
    }
    let header_len = u32_at(h, 12);
    if header_len as usize != HEADER_LEN {
        return Err(corrupt(format!(
            "header length {header_len} (version {VERSION} headers are {HEADER_LEN} bytes)"
        )));
    }
    let (flags, victim) = (u32_at(h, 44), u64_at(h, 48));
    if flags != 0 || victim != 0 {
        return Err(corrupt(format!(
            "reserved fields are set (flags {flags:#x}, victim {victim:#x}; both must be 0)"
        )));
    }
    let (size, param) = (u64_at(h, 32), u32_at(h, 40));
    let shape = match h[10] {
        KIND_BLOCKED => Shape::Blocked {
            lines: size,
            hashes: param,
        },
        KIND_CLASSIC => Shape::Classic {
            bits: size,
            hashes: param,
        },
        KIND_CUCKOO => Shape::Cuckoo {
            buckets: size,
            fingerprint_bits: param,
        },
        other => {
            return Err(corrupt(format!(
                "unknown filter kind {other} (1 blocked, 2 classic, 3 cuckoo)"
            )));
        }
    };
    let payload_len = u64_at(h, 56);
    let expected = shape.payload_len()?;
    if payload_len != expected {
        return Err(corrupt(format!(
            "payload length {payload_len} does not match {shape:?} ({expected} bytes)"
        )));
    }
    let fits = payload_len
        .checked_add((HEADER_LEN + CHECKSUM_LEN) as u64)
        .is_some_and(|total| usize::try_from(total).is_ok_and(|t| t <= isize::MAX as usize));
    if !fits {
        return Err(corrupt(format!(
            "a payload of {payload_len} bytes cannot be addressed on this machine"
        )));
    }
    Ok(Header {
        version,
        hash_scheme,
        seed: u64_at(h, 16),
        items: u64_at(h, 24),
        shape,
        payload_len,
    })
}

/// Checks a whole serialized filter (header, exact length, checksum) and returns its header and
/// payload; `kind` (if given) must match. The one entry point of every reader, the zero-copy
/// view's included.
pub(crate) fn parse(bytes: &[u8], kind: Option<FilterKind>) -> Result<(Header, &[u8])> {
    let minimum = HEADER_LEN + CHECKSUM_LEN;
    if bytes.len() < minimum {
        return Err(corrupt(format!(
            "truncated: {} bytes, but a filter is at least {minimum} \
             ({HEADER_LEN}-byte header and {CHECKSUM_LEN}-byte checksum)",
            bytes.len()
        )));
    }
    let header = read_header(bytes)?;
    if let Some(kind) = kind
        && header.kind() != kind
    {
        return Err(corrupt(format!(
            "the bytes hold a {} filter, not a {kind} one",
            header.kind()
        )));
    }
    let total = header.encoded_len();
    if bytes.len() < total {
        return Err(corrupt(format!(
            "truncated: the header describes {total} bytes, only {} are present",
            bytes.len()
        )));
    }
    if bytes.len() > total {
        return Err(corrupt(format!(
            "{} bytes follow the checksum of this {total}-byte filter (length mismatch)",
            bytes.len() - total
        )));
    }
    let body_end = total - CHECKSUM_LEN;
    let stored = u64_at(bytes, body_end);
    let computed = xxh3_64(&bytes[..body_end]);
    if stored != computed {
        return Err(corrupt(format!(
            "checksum mismatch (stored {stored:#018x}, computed {computed:#018x})"
        )));
    }
    Ok((header, &bytes[HEADER_LEN..body_end]))
}

/// Reads a serialized filter of any kind: the CLI's way to open a file it knows nothing about.
pub fn read_any(bytes: &[u8]) -> Result<AnyFilter> {
    match read_header(bytes)?.kind() {
        FilterKind::Blocked => BlockedBloom::from_bytes(bytes).map(AnyFilter::Blocked),
        FilterKind::Classic => ClassicBloom::from_bytes(bytes).map(AnyFilter::Classic),
        FilterKind::Cuckoo => CuckooFilter::from_bytes(bytes).map(AnyFilter::Cuckoo),
    }
}

// ---- Writing. Each kind streams its header and payload through a `Checksummed` writer, so
// `write_to` never holds a second copy of the filter.

/// A writer that hashes everything written through it, then appends the checksum.
struct Checksummed<W: Write> {
    inner: W,
    hasher: Box<Xxh3Default>,
}

impl<W: Write> Checksummed<W> {
    fn new(inner: W, header: Header) -> Result<Self> {
        let mut out = Checksummed {
            inner,
            // Boxed: the streaming state is a few hundred bytes of buffer.
            hasher: Box::new(Xxh3Default::new()),
        };
        out.put(&header.to_bytes())?;
        Ok(out)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.hasher.update(bytes);
        self.inner.write_all(bytes)?;
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        let sum = self.hasher.digest();
        self.inner.write_all(&sum.to_le_bytes())?;
        self.inner.flush()?;
        Ok(())
    }
}

/// Writes to a `Vec`, which cannot fail.
fn to_vec(len: usize, write: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    // `impl Write for Vec<u8>` never returns an error (an allocation failure aborts instead).
    write(&mut out).expect("writing to a Vec<u8> cannot fail");
    out
}

impl BlockedBloom {
    /// The filter in the [serialized format](self): header, lines, checksum. Records 0 items
    /// (see [`AnyFilter::write_to_with_items`] to record a count).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(self.encoded_len(), |out| self.write_to(out))
    }

    /// Writes the [serialized format](self) to `out`, streaming (no second copy in memory).
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    fn encoded_len(&self) -> usize {
        HEADER_LEN + self.size_bytes() + CHECKSUM_LEN
    }

    fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        let shape = Shape::Blocked {
            lines: self.num_lines() as u64,
            hashes: self.hashes(),
        };
        let header = Header::for_filter(shape, self.seed(), items, self.size_bytes());
        let mut out = Checksummed::new(out, header)?;
        if cfg!(target_endian = "little") {
            // The in-memory lines are the format's bytes.
            out.put(bytemuck::cast_slice(self.lines()))?;
        } else {
            let mut buf = [0u8; 64];
            for line in self.lines() {
                for (bytes, word) in buf.chunks_exact_mut(4).zip(line.0) {
                    bytes.copy_from_slice(&word.to_le_bytes());
                }
                out.put(&buf)?;
            }
        }
        out.finish()
    }

    /// Reads a blocked filter from its [serialized format](self) into an owned copy (any
    /// alignment, any endianness). [`crate::BlockedBloomRef::from_bytes`] reads it in place
    /// instead. Every malformed input is an [`Error::Corrupt`] naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = parse(bytes, Some(FilterKind::Blocked))?;
        let Shape::Blocked { hashes, .. } = header.shape else {
            return Err(corrupt("the header's kind disagrees with its parameters"));
        };
        // The line count is the checked payload length over 64, so the allocation is bounded by
        // the input's size.
        let mut lines = zeroed_lines(payload.len() / std::mem::size_of::<Line>())?;
        bytemuck::cast_slice_mut::<Line, u8>(&mut lines[..]).copy_from_slice(payload);
        if cfg!(target_endian = "big") {
            for word in bytemuck::cast_slice_mut::<Line, u32>(&mut lines[..]) {
                *word = u32::from_le(*word);
            }
        }
        BlockedBloom::from_parts(lines, hashes, header.seed).map_err(into_corrupt)
    }
}

impl ClassicBloom {
    /// The filter in the [serialized format](self): header, 64-bit words, checksum. Records 0
    /// items (see [`AnyFilter::write_to_with_items`] to record a count).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(HEADER_LEN + self.size_bytes() + CHECKSUM_LEN, |out| {
            self.write_to(out)
        })
    }

    /// Writes the [serialized format](self) to `out`, streaming (no second copy in memory).
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        let shape = Shape::Classic {
            bits: self.num_bits(),
            hashes: self.hashes(),
        };
        let header = Header::for_filter(shape, self.seed(), items, self.size_bytes());
        let mut out = Checksummed::new(out, header)?;
        // Words go out through a 4 KiB buffer: the filter's words are atomics, not bytes.
        let mut buf = [0u8; 4096];
        let mut filled = 0;
        for word in self.iter_words() {
            buf[filled..filled + 8].copy_from_slice(&word.to_le_bytes());
            filled += 8;
            if filled == buf.len() {
                out.put(&buf)?;
                filled = 0;
            }
        }
        out.put(&buf[..filled])?;
        out.finish()
    }

    /// Reads a classic filter from its [serialized format](self). Every malformed input is an
    /// [`Error::Corrupt`] naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = parse(bytes, Some(FilterKind::Classic))?;
        let Shape::Classic { bits, hashes } = header.shape else {
            return Err(corrupt("the header's kind disagrees with its parameters"));
        };
        let mut words = Vec::new();
        words
            .try_reserve_exact(payload.len() / 8)
            .map_err(|_| corrupt(format!("{bits} bits do not fit in memory")))?;
        words.extend(
            payload
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default())),
        );
        ClassicBloom::from_parts(words, bits, hashes, header.seed).map_err(into_corrupt)
    }
}

impl CuckooFilter {
    /// The filter in the [serialized format](self): header (recording [`len`](Self::len) as
    /// the item count), table, checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(
            HEADER_LEN + self.table_bytes().len() + CHECKSUM_LEN,
            |out| self.write_to(out),
        )
    }

    /// Writes the [serialized format](self) to `out`, streaming (no second copy in memory).
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        let table = self.table_bytes();
        let shape = Shape::Cuckoo {
            buckets: self.num_buckets() as u64,
            fingerprint_bits: self.fingerprint_bits(),
        };
        let header = Header::for_filter(shape, self.seed(), self.len() as u64, table.len());
        let mut out = Checksummed::new(out, header)?;
        out.put(table)?;
        out.finish()
    }

    /// Reads a cuckoo filter from its [serialized format](self), checking that the recorded
    /// item count equals the occupied slots. Every malformed input is an [`Error::Corrupt`]
    /// naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = parse(bytes, Some(FilterKind::Cuckoo))?;
        let Shape::Cuckoo {
            buckets,
            fingerprint_bits,
        } = header.shape
        else {
            return Err(corrupt("the header's kind disagrees with its parameters"));
        };
        // Both fit: the payload, at least as large as either, is in memory.
        let buckets = usize::try_from(buckets).map_err(|_| corrupt("bucket count overflows"))?;
        let len = usize::try_from(header.items)
            .map_err(|_| corrupt(format!("item count {} overflows", header.items)))?;
        CuckooFilter::from_parts(payload, buckets, fingerprint_bits, len, header.seed)
            .map_err(into_corrupt)
    }
}

/// A filter of any kind: what [`read_any`] returns and the CLI works with. Implements
/// [`Filter`] by delegating to the filter inside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyFilter {
    /// A register-blocked Bloom filter.
    Blocked(BlockedBloom),
    /// A classic Bloom filter.
    Classic(ClassicBloom),
    /// A cuckoo filter.
    Cuckoo(CuckooFilter),
}

impl AnyFilter {
    /// An empty filter of `kind` for `items` keys: `hashes` fixes the probes per key (Bloom
    /// filters) or the fingerprint bits (cuckoo) instead of the sizing's choice.
    pub fn new(
        kind: FilterKind,
        items: usize,
        sizing: Sizing,
        hashes: Option<u32>,
        seed: u64,
    ) -> Result<Self> {
        Ok(match kind {
            FilterKind::Blocked => {
                let b = BlockedBloom::builder(items).seed(seed).sizing(sizing);
                AnyFilter::Blocked(
                    match hashes {
                        Some(k) => b.hashes(k),
                        None => b,
                    }
                    .build()?,
                )
            }
            FilterKind::Classic => {
                let b = ClassicBloom::builder(items).seed(seed).sizing(sizing);
                AnyFilter::Classic(
                    match hashes {
                        Some(k) => b.hashes(k),
                        None => b,
                    }
                    .build()?,
                )
            }
            FilterKind::Cuckoo => {
                let b = CuckooFilter::builder(items).seed(seed).sizing(sizing);
                AnyFilter::Cuckoo(
                    match hashes {
                        Some(f) => b.fingerprint_bits(f),
                        None => b,
                    }
                    .build()?,
                )
            }
        })
    }

    /// Reads a serialized filter of any kind (the same as [`read_any`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        read_any(bytes)
    }

    /// The filter as a trait object.
    pub fn as_filter(&self) -> &dyn Filter {
        match self {
            AnyFilter::Blocked(f) => f,
            AnyFilter::Classic(f) => f,
            AnyFilter::Cuckoo(f) => f,
        }
    }

    /// The filter as a mutable trait object.
    pub fn as_filter_mut(&mut self) -> &mut dyn Filter {
        match self {
            AnyFilter::Blocked(f) => f,
            AnyFilter::Classic(f) => f,
            AnyFilter::Cuckoo(f) => f,
        }
    }

    /// Adds a key; only a cuckoo filter can fail ([`Error::Full`], having lost nothing).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        let hash = key.hash_with_seed(self.seed());
        self.as_filter_mut().insert_hash(hash)
    }

    /// Whether the key may have been inserted.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.as_filter()
            .contains_hash(key.hash_with_seed(self.seed()))
    }

    /// The serialized bytes ([`BlockedBloom::to_bytes`] and its siblings).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            AnyFilter::Blocked(f) => f.to_bytes(),
            AnyFilter::Classic(f) => f.to_bytes(),
            AnyFilter::Cuckoo(f) => f.to_bytes(),
        }
    }

    /// Writes the serialized bytes to `out`, recording 0 items for the Bloom filters.
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_to_with_items(0, out)
    }

    /// Writes the serialized bytes to `out`, recording `items` as the number of keys inserted
    /// for the Bloom filters (which do not count them); a cuckoo filter records its own
    /// [`len`](CuckooFilter::len) whatever `items` says.
    pub fn write_to_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        match self {
            AnyFilter::Blocked(f) => f.write_with_items(items, out),
            AnyFilter::Classic(f) => f.write_with_items(items, out),
            AnyFilter::Cuckoo(f) => f.write_to(out),
        }
    }

    /// Share of the filter in use: set bits over all bits for the Bloom filters, occupied slots
    /// over all slots (the load factor) for the cuckoo filter.
    pub fn fill_ratio(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.fill_ratio(),
            AnyFilter::Classic(f) => f.fill_ratio(),
            AnyFilter::Cuckoo(f) => f.load_factor(),
        }
    }

    /// Distinct keys inserted, estimated from the fill for the Bloom filters (see
    /// [`BlockedBloom::estimated_items`]); exact (stored fingerprints) for the cuckoo filter.
    pub fn estimated_items(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.estimated_items(),
            AnyFilter::Classic(f) => f.estimated_items(),
            AnyFilter::Cuckoo(f) => f.len() as f64,
        }
    }

    /// The false-positive rate expected from the filter as it is now (see
    /// [`BlockedBloom::current_fpr`]; for the cuckoo filter, the model at its current load).
    pub fn current_fpr(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.current_fpr(),
            AnyFilter::Classic(f) => f.current_fpr(),
            AnyFilter::Cuckoo(f) => f.expected_fpr(f.len() as u64),
        }
    }
}

impl From<BlockedBloom> for AnyFilter {
    fn from(f: BlockedBloom) -> Self {
        AnyFilter::Blocked(f)
    }
}

impl From<ClassicBloom> for AnyFilter {
    fn from(f: ClassicBloom) -> Self {
        AnyFilter::Classic(f)
    }
}

impl From<CuckooFilter> for AnyFilter {
    fn from(f: CuckooFilter) -> Self {
        AnyFilter::Cuckoo(f)
    }
}

impl Filter for AnyFilter {
    fn kind(&self) -> FilterKind {
        self.as_filter().kind()
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        self.as_filter_mut().insert_hash(hash)
    }
    fn contains_hash(&self, hash: u64) -> bool {
        self.as_filter().contains_hash(hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        self.as_filter().contains_hashes(hashes, out)
    }
    fn size_bytes(&self) -> usize {
        self.as_filter().size_bytes()
    }
    fn hashes(&self) -> u32 {
        self.as_filter().hashes()
    }
    fn seed(&self) -> u64 {
        self.as_filter().seed()
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        self.as_filter().expected_fpr(items)
    }
}

fn corrupt(why: impl Into<String>) -> Error {
    Error::Corrupt(why.into())
}

/// A filter's own validation error, reported as corruption of the bytes it came from.
fn into_corrupt(e: Error) -> Error {
    match e {
        Error::Corrupt(_) => e,
        other => Error::Corrupt(other.to_string()),
    }
}

fn check_range(what: &str, value: u32, min: u32, max: u32) -> Result<()> {
    if !(min..=max).contains(&value) {
        return Err(corrupt(format!("{what} {value} (allowed: {min}..={max})")));
    }
    Ok(())
}

// The callers have checked that `at + N <= bytes.len()`; a failure reads as 0 rather than panic.
fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(array_at(bytes, at))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(array_at(bytes, at))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(array_at(bytes, at))
}

fn array_at<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..)
        .and_then(|rest| rest.first_chunk::<N>())
        .copied()
        .unwrap_or([0; N])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

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
}
