//! The header of a serialized filter: what [`Header`] and [`Shape`] record, how they are
//! written, and the checks that turn a malformed header (or a whole filter, in `parse`) into
//! [`Error::Corrupt`]. The payloads are `payload.rs`'s.

use alloc::format;
use alloc::string::ToString;
use xxhash_rust::xxh3::xxh3_64;

use super::{
    CHECKSUM_LEN, HASH_SCHEME, HEADER_LEN, KIND_BLOCKED, KIND_CLASSIC, KIND_COUNTING, KIND_CUCKOO,
    KIND_SCALABLE, KIND_SPLIT_BLOCK, MAGIC, VERSION, check_range, corrupt, u16_at, u32_at, u64_at,
};
use crate::blocked::{Line, MAX_K, Placement};
use crate::counting::MAX_COUNTING_K;
use crate::cuckoo::{FINGERPRINT_WIDTHS, SLOTS_PER_BUCKET};
use crate::error::{Error, Result};
use crate::filter::FilterKind;
use crate::model::CLASSIC_MAX_K;
#[cfg(doc)]
use crate::{BlockedBloom, ClassicBloom, CuckooFilter};

/// What a serialized filter's header says, checked for consistency but before the payload and
/// the checksum are read. [`read_header`] returns it, so a storage engine can learn a filter
/// block's kind and total length from its first 64 bytes.
///
/// ```
/// use linebloom::format::{HEADER_LEN, read_header};
/// use linebloom::{BlockedBloom, FilterKind};
///
/// let bytes = BlockedBloom::with_fpr(1_000, 0.01)?.to_bytes();
/// let header = read_header(&bytes[..HEADER_LEN])?;
/// assert_eq!(header.kind(), FilterKind::Blocked);
/// assert_eq!(header.encoded_len(), bytes.len());
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version (1).
    pub version: u16,
    /// The hash scheme: 2, or 3 for a blocked or scalable filter of [`Placement::Shifted`]
    /// (1 in blocked filters of older builds; see [`HASH_SCHEME`]).
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
///
/// ```
/// use linebloom::ClassicBloom;
/// use linebloom::format::{Shape, read_header};
///
/// let bytes = ClassicBloom::with_bits(1_000, 7, 0)?.to_bytes();
/// assert_eq!(read_header(&bytes)?.shape, Shape::Classic { bits: 1_000, k: 7 });
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A [`BlockedBloom`]: `lines` 64-byte lines, `k` probes per key.
    Blocked {
        /// The number of 64-byte lines.
        lines: u64,
        /// Probes per key.
        k: u32,
    },
    /// A [`ClassicBloom`]: `bits` bits, `k` probes per key.
    Classic {
        /// The number of bits, `m`.
        bits: u64,
        /// Probes per key.
        k: u32,
    },
    /// A [`CuckooFilter`]: `buckets` buckets of four `fingerprint_bits`-bit slots.
    Cuckoo {
        /// The number of buckets.
        buckets: u64,
        /// Bits per fingerprint: 8, 12 or 16.
        fingerprint_bits: u32,
    },
    /// A [`CountingBlockedBloom`](crate::CountingBlockedBloom): `lines` lines of 128 4-bit
    /// counters, `k` counters per key.
    Counting {
        /// The number of 64-byte lines.
        lines: u64,
        /// Counters per key.
        k: u32,
    },
    /// A [`ScalableBlockedBloom`](crate::ScalableBlockedBloom) of `filters` blocked filters
    /// (their sizes are in the payload).
    Scalable {
        /// The number of filters in the chain.
        filters: u64,
    },
    /// A [`SplitBlockBloom`](crate::SplitBlockBloom): `blocks` 32-byte blocks (8 bits per
    /// key, the Parquet layout; seed 0).
    SplitBlock {
        /// The number of 32-byte blocks.
        blocks: u64,
    },
}

/// The error of a `with_shape` given another kind's shape.
pub(crate) fn wrong_shape(kind: FilterKind, shape: Shape) -> Error {
    Error::InvalidParameter {
        name: "shape",
        value: alloc::format!("{shape:?}"),
        allowed: match kind {
            FilterKind::Blocked => "a Shape::Blocked",
            FilterKind::Classic => "a Shape::Classic",
            FilterKind::Cuckoo => "a Shape::Cuckoo",
            FilterKind::Counting => "a Shape::Counting",
            FilterKind::Scalable => "a Shape::Scalable",
            FilterKind::SplitBlock => "a Shape::SplitBlock",
        },
    }
}

/// A shape's count as a `usize`, or an error naming it.
pub(crate) fn count_of(n: u64, name: &'static str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::InvalidParameter {
        name,
        value: alloc::string::ToString::to_string(&n),
        allowed: "a count this machine can address",
    })
}

impl Shape {
    /// Bytes of filter data a filter of this shape holds: its payload in the format, which is
    /// its `size_bytes()` in memory but for the cuckoo filter's table (rounded up to whole
    /// 8-byte words, and 2 bytes more with 12-bit fingerprints). An error for a shape out of
    /// range, and for a scalable chain, whose size is in its parts.
    ///
    /// ```
    /// use linebloom::BlockedBloom;
    ///
    /// let shape = BlockedBloom::builder(1_000_000).fpr(0.01).shape()?;
    /// let filter = BlockedBloom::builder(1_000_000).fpr(0.01).build()?;
    /// assert_eq!(shape.size_bytes()?, filter.size_bytes() as u64);
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn size_bytes(&self) -> Result<u64> {
        if let Shape::Scalable { .. } = self {
            return Err(Error::InvalidParameter {
                name: "shape",
                value: "scalable".into(),
                allowed: "a single filter (a chain's size is the sum of its parts)",
            });
        }
        self.payload_len()
    }

    /// The filter kind.
    pub fn kind(&self) -> FilterKind {
        match self {
            Shape::Blocked { .. } => FilterKind::Blocked,
            Shape::Classic { .. } => FilterKind::Classic,
            Shape::Cuckoo { .. } => FilterKind::Cuckoo,
            Shape::Counting { .. } => FilterKind::Counting,
            Shape::Scalable { .. } => FilterKind::Scalable,
            Shape::SplitBlock { .. } => FilterKind::SplitBlock,
        }
    }

    /// Checks `payload_len` against these parameters: equal to the length they imply, or for a
    /// scalable filter (whose parts' sizes are in the payload) at least its fixed blocks, in
    /// whole 64-byte units.
    fn check_payload_len(&self, payload_len: u64) -> Result<()> {
        if let Shape::Scalable { filters } = *self {
            let least = filters
                .checked_add(1)
                .and_then(|blocks| blocks.checked_mul(64))
                .ok_or_else(|| corrupt(format!("{self:?} overflows a 64-bit byte count")))?;
            if filters == 0 || payload_len < least || !payload_len.is_multiple_of(64) {
                return Err(corrupt(format!(
                    "payload length {payload_len} does not fit {self:?} (at least {least} \
                     bytes, a multiple of 64)"
                )));
            }
            return Ok(());
        }
        let expected = self.payload_len()?;
        if payload_len != expected {
            return Err(corrupt(format!(
                "payload length {payload_len} does not match {self:?} ({expected} bytes)"
            )));
        }
        Ok(())
    }

    /// The payload length these parameters imply, or why they are out of range.
    fn payload_len(&self) -> Result<u64> {
        let bytes = match *self {
            Shape::Blocked { lines, k: hashes } => {
                check_range("blocked probes per key", hashes, 1, MAX_K)?;
                if lines == 0 {
                    return Err(corrupt("a blocked filter of zero lines"));
                }
                lines.checked_mul(core::mem::size_of::<Line>() as u64)
            }
            Shape::Classic { bits, k: hashes } => {
                check_range("classic probes per key", hashes, 1, CLASSIC_MAX_K)?;
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
            Shape::Counting { lines, k: hashes } => {
                check_range("counting counters per key", hashes, 1, MAX_COUNTING_K)?;
                if lines == 0 {
                    return Err(corrupt("a counting filter of zero lines"));
                }
                lines.checked_mul(core::mem::size_of::<Line>() as u64)
            }
            Shape::Scalable { .. } => None,
            Shape::SplitBlock { blocks } => {
                if !(1..=crate::sbbf::MAX_BLOCKS).contains(&blocks) {
                    return Err(corrupt(format!(
                        "a split-block filter of {blocks} blocks (allowed: 1 to 2^32)"
                    )));
                }
                blocks.checked_mul(crate::sbbf::BLOCK_BYTES as u64)
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

    /// Where the bits of a blocked or scalable filter's keys go: [`Placement::Shifted`] for
    /// hash scheme 3, [`Placement::Salted`] for schemes 1 and 2 (and for the other kinds, which
    /// have no such placement).
    pub fn placement(&self) -> Placement {
        Placement::from_hash_scheme(self.hash_scheme).unwrap_or(Placement::Salted)
    }

    /// The header of a filter of `shape` whose hashes place bits as hash scheme 2 says (every
    /// kind but the blocked ones with [`Placement::Shifted`]; see [`Header::with_placement`]).
    pub(super) fn for_filter(shape: Shape, seed: u64, items: u64, payload_len: usize) -> Self {
        Header {
            version: VERSION,
            hash_scheme: 2,
            seed,
            items,
            shape,
            payload_len: payload_len as u64,
        }
    }

    /// The same header for a blocked or scalable filter of `placement`: its hash scheme.
    pub(super) fn with_placement(self, placement: Placement) -> Self {
        Header {
            hash_scheme: placement.hash_scheme(),
            ..self
        }
    }

    pub(super) fn to_bytes(self) -> [u8; HEADER_LEN] {
        let (kind, size, param) = match self.shape {
            Shape::Blocked { lines, k: hashes } => (KIND_BLOCKED, lines, hashes),
            Shape::Classic { bits, k: hashes } => (KIND_CLASSIC, bits, hashes),
            Shape::Cuckoo {
                buckets,
                fingerprint_bits,
            } => (KIND_CUCKOO, buckets, fingerprint_bits),
            Shape::Counting { lines, k: hashes } => (KIND_COUNTING, lines, hashes),
            Shape::Scalable { filters } => (KIND_SCALABLE, filters, 0),
            Shape::SplitBlock { blocks } => (
                KIND_SPLIT_BLOCK,
                blocks,
                crate::sbbf::block::BITS_PER_KEY_SET,
            ),
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
    if hash_scheme == 3 && h[10] != KIND_BLOCKED && h[10] != KIND_SCALABLE {
        return Err(corrupt(format!(
            "hash scheme 3 on a filter of kind {}: only blocked and scalable filters are \
             written with it",
            h[10]
        )));
    }
    if hash_scheme == 0 || hash_scheme > HASH_SCHEME {
        return Err(corrupt(format!(
            "unknown hash scheme {hash_scheme} (this build knows schemes 1 to {HASH_SCHEME})"
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
            k: param,
        },
        KIND_CLASSIC => Shape::Classic {
            bits: size,
            k: param,
        },
        KIND_CUCKOO => Shape::Cuckoo {
            buckets: size,
            fingerprint_bits: param,
        },
        KIND_COUNTING => Shape::Counting {
            lines: size,
            k: param,
        },
        KIND_SCALABLE if param == 0 => Shape::Scalable { filters: size },
        KIND_SCALABLE => {
            return Err(corrupt(format!(
                "a scalable filter's parameter field is {param} (must be 0)"
            )));
        }
        KIND_SPLIT_BLOCK => {
            let (bits, seed) = (crate::sbbf::block::BITS_PER_KEY_SET, u64_at(h, 16));
            if param != bits || seed != 0 {
                return Err(corrupt(format!(
                    "a split-block filter with {param} bits per key and seed {seed:#x} (the \
                     layout sets {bits} and hashes with XXH64, seed 0)"
                )));
            }
            Shape::SplitBlock { blocks: size }
        }
        other => {
            return Err(corrupt(format!(
                "unknown filter kind {other} (1 blocked, 2 classic, 3 cuckoo, 4 counting, \
                 5 scalable, 6 split-block)"
            )));
        }
    };
    let payload_len = u64_at(h, 56);
    shape.check_payload_len(payload_len)?;
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
    let (header, payload) = parse_unverified(bytes, kind)?;
    let body_end = HEADER_LEN + payload.len();
    let stored = u64_at(bytes, body_end);
    let computed = xxh3_64(&bytes[..body_end]);
    if stored != computed {
        return Err(corrupt(format!(
            "checksum mismatch (stored {stored:#018x}, computed {computed:#018x})"
        )));
    }
    Ok((header, payload))
}

/// Checks a whole serialized filter: its header, its exact length and its checksum (one pass
/// over the bytes at xxh3 speed), as every `from_bytes` does. For bytes opened with
/// [`crate::BlockedBloomRef::from_bytes_unverified`], whose checksum was skipped.
///
/// ```
/// let bytes = linebloom::BlockedBloom::with_fpr(100, 0.01)?.to_bytes();
/// linebloom::format::verify(&bytes)?;
/// let mut damaged = bytes.clone();
/// damaged[100] ^= 1;
/// assert!(linebloom::format::verify(&damaged).is_err());
/// # Ok::<(), linebloom::Error>(())
/// ```
pub fn verify(bytes: &[u8]) -> Result<()> {
    parse(bytes, None).map(drop)
}

/// [`parse`] without the checksum: the header and the exact length only, in constant time.
pub(crate) fn parse_unverified(bytes: &[u8], kind: Option<FilterKind>) -> Result<(Header, &[u8])> {
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
    Ok((header, &bytes[HEADER_LEN..total - CHECKSUM_LEN]))
}
