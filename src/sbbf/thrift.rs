//! The thrift-compact `BloomFilterHeader` that precedes a split-block bitset in a Parquet file.
//!
//! This module owns the few bytes of Thrift this crate reads and writes, by hand (the
//! library's dependencies stay those an engine embeds). From apache/parquet-format's
//! `parquet.thrift`:
//!
//! ```text
//! struct BloomFilterHeader {
//!   1: required i32 numBytes;                       // bytes of bitset that follow
//!   2: required BloomFilterAlgorithm algorithm;     // union { 1: SplitBlockAlgorithm BLOCK }
//!   3: required BloomFilterHash hash;               // union { 1: XxHash XXHASH }
//!   4: required BloomFilterCompression compression; // union { 1: Uncompressed UNCOMPRESSED }
//! }
//! ```
//!
//! The three unions hold empty structs. In the compact protocol a field is a byte with the
//! field id's delta from the previous one in its high nibble and the type in its low one (a
//! zero delta is followed by the id as a zigzag varint), an `i32` is a zigzag varint, a struct
//! ends with a zero byte. The writer's bytes are therefore `15 <varint> 1C 1C 00 00 1C 1C 00 00
//! 1C 1C 00 00 00`. The reader accepts any valid compact encoding (long-form field ids, unknown
//! fields skipped, as Thrift readers must), and turns everything else (truncation, a type that
//! does not match, an algorithm, hash or compression other than the one the format defines, a
//! size outside 32 B..128 MiB) into [`Error::Corrupt`]; it never reads past its input or
//! recurses without bound.

use super::{BLOCK_BYTES, MAX_BITSET_BYTES, MIN_BITSET_BYTES};
use crate::error::{Error, Result};
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// What a Parquet Bloom filter header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParquetHeader {
    /// Bytes of bitset after the header (`numBytes`), checked: a multiple of 32 from 32 B to
    /// 128 MiB.
    pub bitset_len: usize,
    /// Bytes of header: the bitset starts this far into the input.
    pub header_len: usize,
}

const STOP: u8 = 0;
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// How deep nested values of unknown fields may go before the reader gives up.
const MAX_DEPTH: usize = 32;

/// The thrift-compact header for a bitset of `bitset_len` bytes; an error when that is not a
/// size the format allows.
pub(crate) fn encode_header(bitset_len: usize) -> Result<Vec<u8>> {
    check_len(bitset_len as i64)?;
    let mut out = vec![(1 << 4) | I32];
    let mut zigzag = ((bitset_len as i32) << 1) as u32;
    while zigzag >= 0x80 {
        out.push((zigzag as u8 & 0x7f) | 0x80);
        zigzag >>= 7;
    }
    out.push(zigzag as u8);
    for _ in 0..3 {
        // Field n + 1 (a union), whose field 1 is an empty struct; the struct's and the union's
        // stops.
        out.extend_from_slice(&[(1 << 4) | STRUCT, (1 << 4) | STRUCT, STOP, STOP]);
    }
    out.push(STOP);
    Ok(out)
}

/// The bitset of a Parquet filter's header-and-bitset bytes: exactly the length the header
/// announces must follow it, else an [`Error::Corrupt`].
pub(crate) fn parquet_bitset(bytes: &[u8]) -> Result<&[u8]> {
    let header = parquet_header(bytes)?;
    let bitset = &bytes[header.header_len..];
    if bitset.len() != header.bitset_len {
        return Err(Error::Corrupt(format!(
            "the Bloom filter header announces {} bytes of bitset, {} follow it",
            header.bitset_len,
            bitset.len()
        )));
    }
    Ok(bitset)
}

/// Reads the thrift-compact `BloomFilterHeader` at the start of `bytes` (the bitset may follow
/// or not): the bitset's length and where it starts. Every malformed or unsupported header is
/// an [`Error::Corrupt`] that says what is wrong.
///
/// ```
/// use linebloom::SplitBlockBloom;
/// use linebloom::sbbf::parquet_header;
///
/// let bytes = SplitBlockBloom::with_blocks(4)?.to_parquet_bytes()?;
/// let header = parquet_header(&bytes)?;
/// assert_eq!(header.bitset_len, 128);
/// assert_eq!(header.header_len + header.bitset_len, bytes.len());
/// assert!(parquet_header(&bytes[..3]).is_err());
/// # Ok::<(), linebloom::Error>(())
/// ```
pub fn parquet_header(bytes: &[u8]) -> Result<ParquetHeader> {
    let mut r = Reader { bytes, at: 0 };
    let mut num_bytes = None;
    let (mut algorithm, mut hash, mut compression) = (false, false, false);
    let mut id = 0i16;
    while let Some((field, kind)) = r.field_header(&mut id)? {
        match (field, kind) {
            (1, I32) => num_bytes = Some(r.zigzag()? as i32),
            (2, STRUCT) => algorithm = r.union_of_empty("algorithm", "BLOCK")?,
            (3, STRUCT) => hash = r.union_of_empty("hash", "XXHASH")?,
            (4, STRUCT) => compression = r.union_of_empty("compression", "UNCOMPRESSED")?,
            (1..=4, _) => {
                return Err(corrupt(format!(
                    "Bloom filter header field {field} has thrift type {kind}, not the one \
                     parquet.thrift gives it"
                )));
            }
            _ => r.skip(kind, 0)?,
        }
    }
    let Some(num_bytes) = num_bytes else {
        return Err(corrupt("Bloom filter header without numBytes"));
    };
    for (present, name) in [
        (algorithm, "algorithm"),
        (hash, "hash"),
        (compression, "compression"),
    ] {
        if !present {
            return Err(corrupt(format!("Bloom filter header without {name}")));
        }
    }
    check_len(i64::from(num_bytes))?;
    Ok(ParquetHeader {
        bitset_len: num_bytes as usize,
        header_len: r.at,
    })
}

fn check_len(len: i64) -> Result<()> {
    let allowed = (MIN_BITSET_BYTES as i64..=MAX_BITSET_BYTES as i64).contains(&len)
        && len % BLOCK_BYTES as i64 == 0;
    if !allowed {
        return Err(corrupt(format!(
            "Bloom filter numBytes {len} (allowed: a multiple of 32 from 32 to \
             {MAX_BITSET_BYTES})"
        )));
    }
    Ok(())
}

fn corrupt(why: impl Into<String>) -> Error {
    Error::Corrupt(why.into())
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let b = self.bytes.get(self.at).copied().ok_or_else(|| {
            corrupt(format!(
                "Bloom filter header truncated after {} bytes",
                self.at
            ))
        })?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64) -> Result<()> {
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(corrupt(format!(
                "Bloom filter header truncated: {n} bytes wanted at offset {}, {left} left",
                self.at
            )));
        }
        self.at += n as usize;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(corrupt(
            "Bloom filter header: a varint longer than 10 bytes",
        ))
    }

    fn zigzag(&mut self) -> Result<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// The next field's id and type, or `None` at the struct's stop. `last` is the previous
    /// field's id (the short form gives a delta from it).
    fn field_header(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>> {
        let b = self.byte()?;
        if b == STOP {
            return Ok(None);
        }
        let (delta, kind) = (b >> 4, b & 0x0f);
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?)
                .map_err(|_| corrupt("Bloom filter header: a field id out of range"))?
        } else {
            last.wrapping_add(i16::from(delta))
        };
        *last = id;
        Ok(Some((id, kind)))
    }

    /// A union whose only allowed member is field 1, an empty struct (`what`'s `name`): true
    /// once read; an error for any other member.
    fn union_of_empty(&mut self, what: &str, name: &str) -> Result<bool> {
        let mut id = 0;
        let mut found = false;
        while let Some((field, kind)) = self.field_header(&mut id)? {
            if field != 1 || kind != STRUCT || found {
                return Err(corrupt(format!(
                    "Bloom filter {what} is member {field} of its union (type {kind}); this \
                     reader knows only {name} (member 1)"
                )));
            }
            self.skip(STRUCT, 1)?;
            found = true;
        }
        if !found {
            return Err(corrupt(format!("Bloom filter {what} is an empty union")));
        }
        Ok(true)
    }

    /// Skips one value of thrift type `kind`.
    fn skip(&mut self, kind: u8, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(corrupt(format!(
                "Bloom filter header nested deeper than {MAX_DEPTH} levels"
            )));
        }
        match kind {
            BOOL_TRUE | BOOL_FALSE | BYTE => self.take(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.take(8),
            BINARY => {
                let len = self.varint()?;
                self.take(len)
            }
            LIST | SET => {
                let b = self.byte()?;
                let (short, elem) = (b >> 4, b & 0x0f);
                let len = if short == 15 {
                    self.varint()?
                } else {
                    u64::from(short)
                };
                self.skip_many(len, elem, depth)
            }
            MAP => {
                let len = self.varint()?;
                if len == 0 {
                    return Ok(());
                }
                let b = self.byte()?;
                for _ in 0..len {
                    self.skip(b >> 4, depth + 1)?;
                    self.skip(b & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            STRUCT => {
                let mut id = 0;
                while let Some((_, k)) = self.field_header(&mut id)? {
                    self.skip(k, depth + 1)?;
                }
                Ok(())
            }
            other => Err(corrupt(format!(
                "Bloom filter header: unknown thrift compact type {other}"
            ))),
        }
    }

    fn skip_many(&mut self, len: u64, elem: u8, depth: usize) -> Result<()> {
        // Each element takes at least one byte, so a length past the input is truncation, found
        // before a long loop.
        if len > (self.bytes.len() - self.at) as u64 {
            return Err(corrupt(format!(
                "Bloom filter header: a list of {len} elements in {} bytes",
                self.bytes.len() - self.at
            )));
        }
        for _ in 0..len {
            // In a list a bool is one byte.
            let kind = if elem == BOOL_FALSE { BYTE } else { elem };
            self.skip(kind, depth + 1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writers_bytes_are_the_documented_ones() {
        let h = encode_header(32).unwrap();
        assert_eq!(
            h,
            [
                0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0
            ]
        );
        let h = encode_header(128 << 20).unwrap();
        let parsed = parquet_header(&h).unwrap();
        assert_eq!((parsed.bitset_len, parsed.header_len), (128 << 20, h.len()));
    }

    #[test]
    fn long_form_ids_and_unknown_fields_are_read() {
        // numBytes as a long-form field 1, an unknown field 9 (binary "ab"), a list of two i32
        // as field 10, then the three unions.
        // Delta 0 and type i32, then the zigzag id 1 (0x02) and the value 32.
        let mut bytes = vec![I32, 0x02, 0x40];
        bytes.extend_from_slice(&[0x88, 0x02, b'a', b'b']); // field 9 (delta 8), binary
        bytes.extend_from_slice(&[0x19, 0x25, 0x02, 0x04]); // field 10, list<i32> [1, 2]
        // Field 2 long form after 10: delta 0, id 2.
        bytes.extend_from_slice(&[STRUCT, 0x04, 0x1c, 0, 0]);
        bytes.extend_from_slice(&[0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0]);
        let parsed = parquet_header(&bytes).unwrap();
        assert_eq!(parsed.bitset_len, 32);
        assert_eq!(parsed.header_len, bytes.len());
    }

    #[test]
    fn every_prefix_and_bad_member_is_an_error() {
        let good = encode_header(64).unwrap();
        for n in 0..good.len() {
            assert!(parquet_header(&good[..n]).is_err(), "prefix {n}");
        }
        for (at, value) in [
            (1, 0x41),
            (1, 0x00),
            (1, 0x7f),
            (3, 0x2c),
            (7, 0x15),
            (0, 0x16),
        ] {
            let mut bad = good.clone();
            bad[at] = value;
            assert!(parquet_header(&bad).is_err(), "byte {at} = {value:#x}");
        }
        // Deep nesting in an unknown field stops at the depth limit.
        let mut deep = vec![0x5c];
        deep.extend(core::iter::repeat_n(0x1c, 10_000));
        assert!(parquet_header(&deep).is_err());
    }
}
