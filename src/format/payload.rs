//! Each kind's payload: `to_bytes`, `write_to` and `from_bytes` of [`BlockedBloom`],
//! [`ClassicBloom`] and [`CuckooFilter`]. Every kind streams its header and payload through a
//! `Checksummed` writer, so `write_to` never holds a second copy of the filter; every reader
//! goes through `parse` first and allocates no more than the input's own size.

use std::io::Write;

use xxhash_rust::xxh3::Xxh3Default;

use super::header::{Header, Shape, parse};
use super::{CHECKSUM_LEN, HEADER_LEN, corrupt, into_corrupt};
use crate::blocked::{Line, zeroed_lines};
use crate::error::Result;
use crate::filter::FilterKind;
#[cfg(doc)]
use crate::{AnyFilter, Error};
use crate::{BlockedBloom, ClassicBloom, CuckooFilter};

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
    /// The filter in the [serialized format](super): header, lines, checksum. Records 0 items
    /// (see [`AnyFilter::write_to_with_items`] to record a count).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(self.encoded_len(), |out| self.write_to(out))
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    fn encoded_len(&self) -> usize {
        HEADER_LEN + self.size_bytes() + CHECKSUM_LEN
    }

    pub(super) fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
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

    /// Reads a blocked filter from its [serialized format](super) into an owned copy (any
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
    /// The filter in the [serialized format](super): header, 64-bit words, checksum. Records 0
    /// items (see [`AnyFilter::write_to_with_items`] to record a count).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(HEADER_LEN + self.size_bytes() + CHECKSUM_LEN, |out| {
            self.write_to(out)
        })
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_with_items(0, out)
    }

    pub(super) fn write_with_items(&self, items: u64, out: impl Write) -> Result<()> {
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

    /// Reads a classic filter from its [serialized format](super). Every malformed input is an
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
    /// The filter in the [serialized format](super): header (recording [`len`](Self::len) as
    /// the item count), table, checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(
            HEADER_LEN + self.table_bytes().len() + CHECKSUM_LEN,
            |out| self.write_to(out),
        )
    }

    /// Writes the [serialized format](super) to `out`, streaming (no second copy in memory).
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
