//! Each kind's payload: `to_bytes`, `write_to` and `from_bytes` of [`BlockedBloom`],
//! [`ClassicBloom`], [`CuckooFilter`], [`CountingBlockedBloom`], [`ScalableBlockedBloom`] and
//! [`SplitBlockBloom`]. Every kind streams its header and payload through a `Checksummed` writer, so `write_to` never holds a second copy of the filter; every reader
//! goes through `parse` first and allocates no more than the input's own size.

use alloc::boxed::Box;
use alloc::format;
use alloc::vec::Vec;
#[cfg(feature = "std")]
use std::io::{Read, Write};

use xxhash_rust::xxh3::Xxh3Default;

#[cfg(feature = "std")]
use super::header::read_header;
use super::header::{Header, Shape, parse};
use super::{CHECKSUM_LEN, HEADER_LEN, check_range, corrupt, into_corrupt, u32_at, u64_at};
use crate::blocked::{Line, MAX_K, Probes};
use crate::engine::storage::{LineBuf, zeroed_lines};
use crate::error::Result;
use crate::filter::FilterKind;
use crate::sbbf::BLOCK_BYTES;
#[cfg(doc)]
use crate::{AnyFilter, Error};
use crate::{
    BlockedBloom, ClassicBloom, CountingBlockedBloom, CuckooFilter, ScalableBlockedBloom,
    SplitBlockBloom,
};

/// Without `std`, the writers' one destination: the `Vec<u8>` of `to_bytes`.
#[cfg(not(feature = "std"))]
pub(crate) trait Write {
    fn write_all(&mut self, bytes: &[u8]) -> Result<()>;
    fn flush(&mut self) -> Result<()>;
}

#[cfg(not(feature = "std"))]
impl Write for &mut Vec<u8> {
    fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

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

/// Fills `buf` from `input`: a stream that ends first is a truncated filter.
#[cfg(feature = "std")]
fn read_all(input: &mut impl Read, buf: &mut [u8]) -> Result<()> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            corrupt("truncated: the stream ended inside the filter")
        } else {
            e.into()
        }
    })
}

/// Writes to a `Vec`, which cannot fail.
fn to_vec(len: usize, write: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    // Writing to a `Vec<u8>` never returns an error (an allocation failure aborts instead).
    write(&mut out).expect("writing to a Vec<u8> cannot fail");
    out
}

impl BlockedBloom {
    /// The filter in the [serialized format](super): header, lines, checksum. Records 0 items
    /// (see [`AnyFilter::write_to_with_items`] to record a count).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(self.encoded_len(), |out| self.write_with_items(0, out))
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    #[cfg(feature = "std")]
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    fn encoded_len(&self) -> usize {
        HEADER_LEN + self.size_bytes() + CHECKSUM_LEN
    }

    pub(super) fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        let shape = Shape::Blocked {
            lines: self.num_lines() as u64,
            k: self.k(),
        };
        let header = Header::for_filter(shape, self.seed(), items, self.size_bytes())
            .with_placement(self.placement());
        let mut out = Checksummed::new(out, header)?;
        put_lines(&mut out, self.lines())?;
        out.finish()
    }

    /// Reads a blocked filter in the [serialized format](super) from `input`, straight into
    /// the filter's own aligned lines (no buffer of the whole file), checking the checksum as
    /// the bytes pass. Reads exactly the filter's bytes, so a filter inside a larger stream
    /// leaves the stream just past it. A malformed filter is an [`Error::Corrupt`], a failed
    /// read an [`Error::Io`]; memory is taken as the header announces it (virtual until the
    /// bytes arrive), and a stream that ends early is an error.
    ///
    /// ```
    /// use linebloom::BlockedBloom;
    ///
    /// let mut filter = BlockedBloom::with_fpr(1_000, 0.01)?;
    /// filter.insert("apple");
    /// let mut file = Vec::new();
    /// filter.write_to(&mut file)?;
    /// file.extend_from_slice(b"what follows the filter");
    /// let mut input = &file[..];
    /// let read = BlockedBloom::read_from(&mut input)?;
    /// assert_eq!(read, filter);
    /// assert_eq!(input, b"what follows the filter");
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn read_from(mut input: impl Read) -> Result<Self> {
        let mut head = [0u8; HEADER_LEN];
        read_all(&mut input, &mut head)?;
        let header = read_header(&head)?;
        let Shape::Blocked { lines, k } = header.shape else {
            return Err(corrupt(format!(
                "the bytes hold a {} filter, not a blocked one",
                header.kind()
            )));
        };
        let n = usize::try_from(lines).map_err(|_| corrupt("more lines than memory holds"))?;
        let mut buf = zeroed_lines(n)?;
        let mut hasher = Xxh3Default::new();
        hasher.update(&head);
        // A megabyte at a time: the hash reads each piece while it is still in cache.
        for piece in bytemuck::cast_slice_mut::<Line, u8>(&mut buf[..]).chunks_mut(1 << 20) {
            read_all(&mut input, piece)?;
            hasher.update(piece);
        }
        let mut sum = [0u8; CHECKSUM_LEN];
        read_all(&mut input, &mut sum)?;
        if u64::from_le_bytes(sum) != hasher.digest() {
            return Err(corrupt("checksum mismatch"));
        }
        if cfg!(target_endian = "big") {
            for word in bytemuck::cast_slice_mut::<Line, u32>(&mut buf[..]) {
                *word = u32::from_le(*word);
            }
        }
        let probes = Probes::new(k, header.placement());
        BlockedBloom::from_parts(buf, probes, header.seed).map_err(into_corrupt)
    }

    /// Reads a blocked filter from its [serialized format](super) into an owned copy (any
    /// alignment, any endianness). [`crate::BlockedBloomRef::from_bytes`] reads it in place
    /// instead. Every malformed input is an [`Error::Corrupt`] naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = parse(bytes, Some(FilterKind::Blocked))?;
        let Shape::Blocked { k, .. } = header.shape else {
            return Err(corrupt("the header's kind disagrees with its parameters"));
        };
        // The line count is the checked payload length over 64, so the allocation is bounded by
        // the input's size.
        let lines = lines_from(payload)?;
        let probes = Probes::new(k, header.placement());
        BlockedBloom::from_parts(lines, probes, header.seed).map_err(into_corrupt)
    }
}

impl ClassicBloom {
    /// The filter in the [serialized format](super): header, 64-bit words, checksum. Records 0
    /// items (see [`AnyFilter::write_to_with_items`] to record a count).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(HEADER_LEN + self.size_bytes() + CHECKSUM_LEN, |out| {
            self.write_with_items(0, out)
        })
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    #[cfg(feature = "std")]
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    pub(super) fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        let shape = Shape::Classic {
            bits: self.num_bits(),
            k: self.k(),
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

    /// Reads a classic filter from its [serialized format](super). Every malformed input is an
    /// [`Error::Corrupt`] naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = parse(bytes, Some(FilterKind::Classic))?;
        let Shape::Classic { bits, k: hashes } = header.shape else {
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
    /// The filter in the [serialized format](super): header (recording [`len`](Self::len) as
    /// the item count), table, checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(
            HEADER_LEN + self.table_bytes().len() + CHECKSUM_LEN,
            |out| self.write_into(out),
        )
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    #[cfg(feature = "std")]
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_into(out)
    }

    fn write_into(&self, out: impl Write) -> Result<()> {
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

    /// Reads a cuckoo filter from its [serialized format](super), checking that the recorded
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

impl CountingBlockedBloom {
    /// The filter in the [serialized format](super): header, counters, checksum. Records 0
    /// items (see [`AnyFilter::write_to_with_items`] to record a count).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(HEADER_LEN + self.size_bytes() + CHECKSUM_LEN, |out| {
            self.write_with_items(0, out)
        })
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    #[cfg(feature = "std")]
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    pub(super) fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        let shape = Shape::Counting {
            lines: self.num_lines() as u64,
            k: self.k(),
        };
        let header = Header::for_filter(shape, self.seed(), items, self.size_bytes());
        let mut out = Checksummed::new(out, header)?;
        put_words(&mut out, self.lines())?;
        out.finish()
    }

    /// Reads a counting filter from its [serialized format](super). Every malformed input is
    /// an [`Error::Corrupt`] naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = parse(bytes, Some(FilterKind::Counting))?;
        let Shape::Counting { k: hashes, .. } = header.shape else {
            return Err(corrupt("the header's kind disagrees with its parameters"));
        };
        let lines = lines_from_words(payload)?;
        CountingBlockedBloom::from_parts(lines, hashes, header.seed).map_err(into_corrupt)
    }
}

impl SplitBlockBloom {
    /// The filter in the [serialized format](super): header, bitset, checksum. Records 0 items
    /// (see [`AnyFilter::write_to_with_items`] to record a count). For the form a Parquet file
    /// stores, see [`to_parquet_bytes`](Self::to_parquet_bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(HEADER_LEN + self.size_bytes() + CHECKSUM_LEN, |out| {
            self.write_with_items(0, out)
        })
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    #[cfg(feature = "std")]
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    pub(super) fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        let shape = Shape::SplitBlock {
            blocks: self.num_blocks() as u64,
        };
        let header = Header::for_filter(shape, 0, items, self.size_bytes());
        let mut out = Checksummed::new(out, header)?;
        out.put(self.bitset())?;
        out.finish()
    }

    /// Reads a split-block filter from its [serialized format](super) (any alignment). Every
    /// malformed input is an [`Error::Corrupt`] naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (_, payload) = parse(bytes, Some(FilterKind::SplitBlock))?;
        let (blocks, _) = payload.as_chunks::<BLOCK_BYTES>();
        SplitBlockBloom::from_block_bytes(blocks).map_err(into_corrupt)
    }
}

/// Writes a blocked filter's lines as little-endian `u32` words (the in-memory bytes on a
/// little-endian machine).
fn put_lines<W: Write>(out: &mut Checksummed<W>, lines: &[Line]) -> Result<()> {
    if cfg!(target_endian = "little") {
        return out.put(bytemuck::cast_slice(lines));
    }
    let mut buf = [0u8; 64];
    for line in lines {
        for (bytes, word) in buf.chunks_exact_mut(4).zip(line.0) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        out.put(&buf)?;
    }
    Ok(())
}

/// A blocked filter's lines from a payload of little-endian `u32` words (its length a checked
/// multiple of 64).
pub(crate) fn lines_from(payload: &[u8]) -> Result<LineBuf> {
    let mut lines = zeroed_lines(payload.len() / core::mem::size_of::<Line>())?;
    bytemuck::cast_slice_mut::<Line, u8>(&mut lines[..]).copy_from_slice(payload);
    if cfg!(target_endian = "big") {
        for word in bytemuck::cast_slice_mut::<Line, u32>(&mut lines[..]) {
            *word = u32::from_le(*word);
        }
    }
    Ok(lines)
}

/// Writes lines as little-endian `u64` words (the in-memory bytes on a little-endian machine).
fn put_words<W: Write>(out: &mut Checksummed<W>, lines: &[Line]) -> Result<()> {
    if cfg!(target_endian = "little") {
        return out.put(bytemuck::cast_slice(lines));
    }
    let mut buf = [0u8; 64];
    for line in lines {
        let words: [u64; 8] = bytemuck::cast(*line);
        for (bytes, word) in buf.chunks_exact_mut(8).zip(words) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        out.put(&buf)?;
    }
    Ok(())
}

/// Lines from a payload of little-endian `u64` words (its length a checked multiple of 64).
fn lines_from_words(payload: &[u8]) -> Result<LineBuf> {
    let mut lines = zeroed_lines(payload.len() / core::mem::size_of::<Line>())?;
    bytemuck::cast_slice_mut::<Line, u8>(&mut lines[..]).copy_from_slice(payload);
    if cfg!(target_endian = "big") {
        for word in bytemuck::cast_slice_mut::<Line, u64>(&mut lines[..]) {
            *word = u64::from_le(*word);
        }
    }
    Ok(lines)
}

/// The scalable payload's fixed blocks: the parameters, and one header per part.
const BLOCK: usize = 64;

impl ScalableBlockedBloom {
    /// The chain in the [serialized format](super): header (recording [`len`](Self::len) as
    /// the item count), parameters, each filter with its size and keys, checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(HEADER_LEN + self.payload_len() + CHECKSUM_LEN, |out| {
            self.write_into(out)
        })
    }

    fn payload_len(&self) -> usize {
        BLOCK + self.parts().map(|p| BLOCK + p.size_bytes()).sum::<usize>()
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    #[cfg(feature = "std")]
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_into(out)
    }

    fn write_into(&self, out: impl Write) -> Result<()> {
        let shape = Shape::Scalable {
            filters: self.filters() as u64,
        };
        let header = Header::for_filter(shape, self.seed(), self.len(), self.payload_len())
            .with_placement(self.placement());
        let mut out = Checksummed::new(out, header)?;
        let mut block = [0u8; BLOCK];
        block[0..8].copy_from_slice(&self.initial_items().to_le_bytes());
        block[8..16].copy_from_slice(&self.fpr().to_bits().to_le_bytes());
        block[16..24].copy_from_slice(&self.growth().to_bits().to_le_bytes());
        block[24..32].copy_from_slice(&self.tightening().to_bits().to_le_bytes());
        out.put(&block)?;
        for (part, len) in self.parts().zip(self.part_lens()) {
            let mut block = [0u8; BLOCK];
            block[0..8].copy_from_slice(&(part.num_lines() as u64).to_le_bytes());
            block[8..12].copy_from_slice(&part.k().to_le_bytes());
            block[16..24].copy_from_slice(&len.to_le_bytes());
            out.put(&block)?;
            put_lines(&mut out, part.lines())?;
        }
        out.finish()
    }

    /// Reads a scalable filter from its [serialized format](super), checking every part's
    /// size against the payload and the sum of their keys against the header. Every malformed
    /// input is an [`Error::Corrupt`] naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, payload) = parse(bytes, Some(FilterKind::Scalable))?;
        let Shape::Scalable { filters } = header.shape else {
            return Err(corrupt("the header's kind disagrees with its parameters"));
        };
        let (params, mut rest) = payload.split_at(BLOCK);
        if params[32..].iter().any(|&b| b != 0) {
            return Err(corrupt("scalable filter: reserved parameter bytes are set"));
        }
        let float = |at: usize| f64::from_bits(u64_at(params, at));
        let (initial, fpr, growth, tightening) =
            (u64_at(params, 0), float(8), float(16), float(24));
        let mut parts = Vec::new();
        let mut total = 0u64;
        for i in 0..filters {
            let Some((block, after)) = rest.split_first_chunk::<BLOCK>() else {
                return Err(corrupt(format!("scalable filter: part {i} is missing")));
            };
            let (lines, hashes, len) = (u64_at(block, 0), u32_at(block, 8), u64_at(block, 16));
            if u32_at(block, 12) != 0 || block[24..].iter().any(|&b| b != 0) {
                return Err(corrupt(format!(
                    "scalable filter: part {i} has reserved bytes set"
                )));
            }
            check_range("scalable part probes per key", hashes, 1, MAX_K)?;
            let bytes = usize::try_from(lines)
                .ok()
                .and_then(|l| l.checked_mul(core::mem::size_of::<Line>()))
                .filter(|&b| lines > 0 && b <= after.len())
                .ok_or_else(|| {
                    corrupt(format!(
                        "scalable filter: part {i} of {lines} lines does not fit the payload"
                    ))
                })?;
            let (payload, after) = after.split_at(bytes);
            let probes = Probes::new(hashes, header.placement());
            let part = BlockedBloom::from_parts(lines_from(payload)?, probes, header.seed)
                .map_err(into_corrupt)?;
            total = total.saturating_add(len);
            parts.push((part, len));
            rest = after;
        }
        if !rest.is_empty() {
            return Err(corrupt(format!(
                "scalable filter: {} bytes follow its last part",
                rest.len()
            )));
        }
        if total != header.items {
            return Err(corrupt(format!(
                "scalable filter: its parts hold {total} keys, the header records {}",
                header.items
            )));
        }
        ScalableBlockedBloom::from_parts(initial, fpr, growth, tightening, header.seed, parts)
            .map_err(into_corrupt)
    }
}
