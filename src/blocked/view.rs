//! The zero-copy view: query a serialized blocked filter where its bytes lie.
//!
//! This module owns [`BlockedBloomRef`], which checks a serialized filter (header and checksum,
//! through [`crate::format`]) and then tests keys against its payload in place, and
//! [`AlignedBytes`], a byte buffer that starts on a 64-byte boundary to read such bytes into. It
//! does not own the byte layout (`crate::format`) or the lookups themselves: the view calls the
//! same functions as the owned filter (`batch.rs`, the engine's `mask.rs` and `arch.rs`), so both answer bit for bit alike.
//!
//! The alignment and byte order the view needs are documented on [`BlockedBloomRef`].

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};

use super::batch::{
    contains_hashes_in, contains_keys_in, count_contained_in, par_contains_hashes_in,
};
use super::setops::{current_fpr_of, estimated_items_of, ones_in};
use super::{BlockedBloom, line_for};
use crate::engine::mask::{LINE_BITS, Line, Placement, Probes};
use crate::error::{Error, Result};
use crate::filter::FilterKind;
use crate::format::{HEADER_LEN, Shape, parse, parse_unverified};
use crate::hash::Key;
use crate::model;

/// A blocked Bloom filter read in place from its serialized bytes: the same lookups as
/// [`BlockedBloom`] without copying the lines.
///
/// # Alignment and endianness
/// The payload is viewed as `&[Line]`, and a [`Line`] is 64-byte aligned, so the payload must
/// start on a 64-byte boundary in memory. It sits at offset 64 of the serialized bytes, so the
/// buffer must start on one: a file read into [`AlignedBytes`] (or a `Vec<Line>` seen as bytes
/// with `bytemuck`), a memory map (page-aligned) of a file whose filter starts at a multiple of
/// 64, or a filter block that a storage engine placed at such an offset. A `Vec<u8>` usually is
/// *not* 64-byte aligned (the allocator promises 8 or 16). A misaligned buffer is an
/// [`Error::InvalidParameter`] that says so; [`BlockedBloom::from_bytes`] reads the same bytes
/// from any alignment into an owned copy instead.
///
/// The payload's words are little-endian, the order of the in-memory `Line` only on
/// little-endian machines; on a big-endian target the view returns an error and
/// [`BlockedBloom::from_bytes`] (which converts) is the way to read.
///
/// ```
/// use linebloom::blocked::AlignedBytes;
/// use linebloom::{BlockedBloom, BlockedBloomRef};
///
/// let mut filter = BlockedBloom::with_fpr(1_000, 0.01)?;
/// filter.insert("apple");
/// // A `Vec<u8>` may sit anywhere; `AlignedBytes` starts on a 64-byte boundary.
/// let bytes = AlignedBytes::from_slice(&filter.to_bytes())?;
/// let view = BlockedBloomRef::from_bytes(&bytes)?;
/// assert!(view.contains("apple"));
/// assert_eq!(view.to_filter()?, filter);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct BlockedBloomRef<'a> {
    lines: &'a [Line],
    probes: Probes,
    seed: u64,
    items: u64,
}

impl<'a> BlockedBloomRef<'a> {
    /// Checks the serialized filter in `bytes` (header, length, checksum: one pass over the
    /// bytes at xxh3 speed) and views its lines in place. An [`Error::Corrupt`] for malformed
    /// bytes; an [`Error::InvalidParameter`] when `bytes` does not start on a 64-byte boundary or
    /// the machine is big-endian.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
        Self::open(bytes, true)
    }

    /// [`from_bytes`](Self::from_bytes) without the checksum: the header and the exact length
    /// are checked (constant time, whatever the filter's size), the payload's hash is not. For
    /// bytes whose integrity something else vouches for (a storage engine's own block
    /// checksum, a file verified once); [`crate::format::verify`] checks the checksum alone.
    /// Damaged bits give wrong answers, never a read out of bounds.
    ///
    /// ```
    /// use linebloom::blocked::AlignedBytes;
    /// use linebloom::{BlockedBloom, BlockedBloomRef};
    ///
    /// let mut filter = BlockedBloom::with_fpr(1_000, 0.01)?;
    /// filter.insert("apple");
    /// let bytes = AlignedBytes::from_slice(&filter.to_bytes())?;
    /// let view = BlockedBloomRef::from_bytes_unverified(&bytes)?;
    /// assert!(view.contains("apple"));
    /// linebloom::format::verify(&bytes)?; // when the bytes' origin is not trusted
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<Self> {
        Self::open(bytes, false)
    }

    /// Views bare lines that a storage engine keeps in its own blocks (no linebloom header or
    /// checksum), with the parameters they were made with: `k` probes per key (1..=16), the
    /// [`Placement`] of the bits and the hash `seed`. Bare lines do not record these, so an
    /// engine that stores bare lines stores the three beside them (lines read with another
    /// placement lose keys). [`BlockedBloom::lines`] gives the lines to store.
    ///
    /// ```
    /// use linebloom::{BlockedBloom, BlockedBloomRef};
    ///
    /// let mut filter = BlockedBloom::with_fpr(1_000, 0.01)?;
    /// filter.insert("apple");
    /// let (k, placement, seed) = (filter.k(), filter.placement(), filter.seed());
    /// let view = BlockedBloomRef::from_lines(filter.lines(), k, placement, seed)?;
    /// assert!(view.contains("apple"));
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn from_lines(lines: &'a [Line], k: u32, placement: Placement, seed: u64) -> Result<Self> {
        super::check_k(k)?;
        if lines.is_empty() {
            return Err(Error::InvalidParameter {
                name: "lines",
                value: "0".into(),
                allowed: "at least 1",
            });
        }
        Ok(Self {
            lines,
            probes: Probes::new(k, placement),
            seed,
            items: 0,
        })
    }

    /// [`from_lines`](Self::from_lines) over the lines' bytes as an engine stores them: 64
    /// bytes per line, little-endian words (what `bytemuck::cast_slice(filter.lines())` gives),
    /// starting on a 64-byte boundary. An [`Error::InvalidParameter`] for a misaligned buffer, a
    /// length that is not a positive multiple of 64, or a big-endian machine.
    pub fn from_raw_bytes(
        bytes: &'a [u8],
        k: u32,
        placement: Placement,
        seed: u64,
    ) -> Result<Self> {
        check_little_endian()?;
        if bytes.is_empty() || !bytes.len().is_multiple_of(size_of::<Line>()) {
            return Err(Error::InvalidParameter {
                name: "raw line bytes",
                value: format!("{} bytes", bytes.len()),
                allowed: "a positive multiple of 64 (whole lines)",
            });
        }
        let lines = bytemuck::try_cast_slice::<u8, Line>(bytes)
            .map_err(|_| misaligned(bytes.as_ptr() as usize))?;
        Self::from_lines(lines, k, placement, seed)
    }

    fn open(bytes: &'a [u8], checksum: bool) -> Result<Self> {
        check_little_endian()?;
        // The cheap check first: the payload starts HEADER_LEN (a multiple of 64) bytes in.
        let offset = bytes.as_ptr() as usize % core::mem::align_of::<Line>();
        if offset != 0 {
            return Err(misaligned(bytes.as_ptr() as usize));
        }
        let kind = Some(FilterKind::Blocked);
        let (header, payload) = if checksum {
            parse(bytes, kind)?
        } else {
            parse_unverified(bytes, kind)?
        };
        let Shape::Blocked { k, .. } = header.shape else {
            return Err(Error::Corrupt(
                "the header's kind disagrees with its parameters".into(),
            ));
        };
        let lines = bytemuck::try_cast_slice::<u8, Line>(payload)
            .map_err(|_| misaligned(bytes.as_ptr() as usize + HEADER_LEN))?;
        Ok(Self {
            lines,
            probes: Probes::new(k, header.placement()),
            seed: header.seed,
            items: header.items,
        })
    }

    /// Whether the key may have been inserted (false: it certainly was not).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_with_seed(self.seed))
    }

    /// Whether a key given by its 64-bit hash may have been inserted.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        crate::engine::arch::test(line_for(self.lines, hash), hash, self.probes)
    }

    /// Batched, prefetching lookup, as [`BlockedBloom::contains_hashes`]: `out[i] =
    /// contains_hash(hashes[i])`; an error (nothing written) when the lengths differ.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        contains_hashes_in(self.lines, self.probes, hashes, out)
    }

    /// [`BlockedBloom::par_contains_hashes`] on the view: the batched lookup on rayon's
    /// threads, with the same answers as [`contains_hashes`](Self::contains_hashes).
    pub fn par_contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        par_contains_hashes_in(self.lines, self.probes, hashes, out)
    }

    /// Counts how many of the pre-hashed keys may be present, with the batched lookup.
    pub fn count_contained_hashes(&self, hashes: &[u64]) -> usize {
        count_contained_in(self.lines, self.probes, hashes)
    }

    /// Looks up many keys at once, as [`BlockedBloom::contains_keys`]: `out[i] =
    /// contains(&keys[i])`; an error (nothing written) when the lengths differ.
    pub fn contains_keys<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        contains_keys_in(self.lines, self.probes, self.seed, keys, out)
    }

    /// An owned copy of the filter; an error where its memory cannot be had.
    pub fn to_filter(&self) -> Result<BlockedBloom> {
        let mut lines = super::zeroed_lines(self.lines.len())?;
        lines.copy_from_slice(self.lines);
        BlockedBloom::from_parts(lines, self.probes, self.seed)
    }

    /// Probes per key.
    pub fn k(&self) -> u32 {
        self.probes.k
    }

    /// Where each key's bits go in its line.
    pub fn placement(&self) -> Placement {
        self.probes.placement
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The item count the writer recorded in the header (0: not recorded).
    pub fn recorded_items(&self) -> u64 {
        self.items
    }

    /// The lines, in place.
    pub fn lines(&self) -> &'a [Line] {
        self.lines
    }

    /// Number of lines.
    pub fn num_lines(&self) -> usize {
        self.lines.len()
    }

    /// Number of bits (512 per line).
    pub fn num_bits(&self) -> u64 {
        self.lines.len() as u64 * LINE_BITS as u64
    }

    /// Bytes of filter data (64 per line).
    pub fn size_bytes(&self) -> usize {
        core::mem::size_of_val(self.lines)
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        ones_in(self.lines)
    }

    /// Set bits over all bits, as [`BlockedBloom::fill_ratio`].
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }

    /// Distinct keys inserted, estimated from the fill, as [`BlockedBloom::estimated_items`].
    pub fn estimated_items(&self) -> f64 {
        estimated_items_of(self.lines, self.probes.k)
    }

    /// The FPR expected from the bits as they are, as [`BlockedBloom::current_fpr`].
    pub fn current_fpr(&self) -> f64 {
        current_fpr_of(self.lines, self.probes.k)
    }

    /// The FPR the model expects after `items` distinct keys, as
    /// [`BlockedBloom::expected_fpr`].
    pub fn expected_fpr(&self, items: u64) -> f64 {
        if items == 0 {
            return 0.0;
        }
        model::blocked_fpr(self.num_bits() as f64 / items as f64, self.probes.k)
    }
}

impl core::fmt::Debug for BlockedBloomRef<'_> {
    // The lines can be gigabytes: print the shape, not the contents.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BlockedBloomRef")
            .field("lines", &self.lines.len())
            .field("k", &self.probes.k)
            .field("placement", &self.probes.placement)
            .field("seed", &self.seed)
            .field("recorded_items", &self.items)
            .finish()
    }
}

/// The view reads the lines' little-endian words in place: only on little-endian machines.
fn check_little_endian() -> Result<()> {
    if cfg!(target_endian = "big") {
        return Err(Error::InvalidParameter {
            name: "target byte order",
            value: "big-endian".into(),
            allowed: "little-endian for the zero-copy view (BlockedBloom::from_bytes reads \
                      the same bytes on any machine)",
        });
    }
    Ok(())
}

fn misaligned(address: usize) -> Error {
    Error::InvalidParameter {
        name: "buffer alignment",
        value: format!(
            "address {address:#x}, {} bytes past a 64-byte boundary",
            address % 64
        ),
        allowed: "a buffer starting on a 64-byte boundary for the zero-copy view (read into \
                  linebloom::blocked::AlignedBytes, a Vec<Line>, or a memory map; or copy with \
                  BlockedBloom::from_bytes)",
    }
}

/// Bytes that start on a 64-byte boundary: the buffer to read a serialized blocked filter into
/// for [`BlockedBloomRef`]. Backed by whole [`Line`]s, so its storage is a multiple of 64 bytes;
/// it derefs to exactly the requested number of bytes.
///
/// ```
/// use linebloom::blocked::AlignedBytes;
///
/// let mut buf = AlignedBytes::zeroed(100)?;
/// assert_eq!(buf.len(), 100);
/// assert_eq!(buf.as_ptr() as usize % 64, 0);
/// // e.g. `file.read_exact(&mut buf)?` to fill it.
/// buf[0] = 7;
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AlignedBytes {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedBytes {
    /// `len` zero bytes, or an error when they cannot be allocated.
    pub fn zeroed(len: usize) -> Result<Self> {
        // A plain vector, never a huge-page mapping: these buffers are read into, not probed
        // at random.
        let lines = bytemuck::allocation::try_zeroed_vec::<Line>(
            len.div_ceil(core::mem::size_of::<Line>()),
        )
        .map_err(|_| Error::InvalidParameter {
            name: "len",
            value: len.to_string(),
            allowed: "a number of bytes that fits in memory",
        })?;
        Ok(Self { lines, len })
    }

    /// An aligned copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        let mut out = Self::zeroed(bytes.len())?;
        out.as_bytes_mut().copy_from_slice(bytes);
        Ok(out)
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.lines)[..self.len]
    }

    /// The bytes, to fill (e.g. with `Read::read_exact`).
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.lines)[..self.len]
    }
}

impl Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl DerefMut for AlignedBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_bytes_mut()
    }
}

impl AsRef<[u8]> for AlignedBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl core::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    #[test]
    fn aligned_bytes_are_aligned_at_every_length() {
        for len in [0, 1, 63, 64, 65, 1000] {
            let buf = AlignedBytes::zeroed(len).unwrap();
            assert_eq!(buf.len(), len);
            assert_eq!(buf.as_ptr() as usize % 64, 0);
            assert!(buf.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn view_answers_as_the_owned_filter() {
        let mut f = BlockedBloom::with_lines(17, 6, 3).unwrap();
        let keys: Vec<u64> = (0..2000).map(mix64).collect();
        f.insert_hashes(&keys[..500]);
        let bytes = AlignedBytes::from_slice(&f.to_bytes()).unwrap();
        let view = BlockedBloomRef::from_bytes(&bytes).unwrap();
        let mut a = vec![false; keys.len()];
        let mut b = vec![false; keys.len()];
        f.contains_hashes(&keys, &mut a).unwrap();
        view.contains_hashes(&keys, &mut b).unwrap();
        assert_eq!(a, b);
        for (&h, &expected) in keys.iter().zip(&a) {
            assert_eq!(view.contains_hash(h), expected);
        }
        assert_eq!(
            view.count_contained_hashes(&keys),
            f.count_contained_hashes(&keys)
        );
        assert_eq!(view.to_filter().unwrap(), f);
        assert_eq!(view.count_ones(), f.count_ones());
        assert_eq!(view.size_bytes(), f.size_bytes());
    }
}
