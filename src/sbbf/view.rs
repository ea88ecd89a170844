//! The zero-copy view: query a split-block bitset where its bytes lie.
//!
//! [`SplitBlockBloomRef`] tests values against a Parquet bitset in place: a memory-mapped
//! Parquet file, a page an engine read. Parquet places a filter at any byte offset, so the view
//! asks for no alignment: each block is loaded with one unaligned 32-byte load into the same
//! vector the owned filter uses, and the lookups are the owned filter's (`batch.rs`), so both
//! answer bit for bit alike.

use super::batch::{contains_hashes_in, contains_in, contains_keys_in, count_contained_in};
use super::block::{BLOCK_BITS, BLOCK_BYTES};
use super::thrift::parquet_bitset;
use super::{SplitBlockBloom, check_bitset, current_fpr_of, estimated_items_of, ones_in};
use crate::error::Result;
use crate::hash::Key;
use crate::model;

/// A split-block filter read in place from a Parquet bitset (any alignment, any byte order).
///
/// ```
/// use linebloom::{SplitBlockBloom, SplitBlockBloomRef};
///
/// let mut filter = SplitBlockBloom::with_ndv_fpp(1_000, 0.01)?;
/// filter.insert("apple");
/// let bytes = filter.to_parquet_bytes()?;
/// // Any offset will do: here the view starts one byte into a buffer.
/// let mut shifted = vec![0u8];
/// shifted.extend_from_slice(&bytes);
/// let view = SplitBlockBloomRef::from_parquet_bytes(&shifted[1..])?;
/// assert!(view.contains("apple"));
/// assert_eq!(view.to_filter()?, filter);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SplitBlockBloomRef<'a> {
    blocks: &'a [[u8; BLOCK_BYTES]],
}

impl<'a> SplitBlockBloomRef<'a> {
    /// Views a bitset (the bytes after the header): a multiple of 32 bytes from 32 B to 128 MiB,
    /// else an [`Error::Corrupt`](crate::Error::Corrupt).
    pub fn from_bitset(bitset: &'a [u8]) -> Result<Self> {
        Ok(Self {
            blocks: check_bitset(bitset)?,
        })
    }

    /// Views a Parquet filter's header and bitset: exactly the bitset the header announces must
    /// follow it (see [`SplitBlockBloom::from_parquet_bytes`]).
    pub fn from_parquet_bytes(bytes: &'a [u8]) -> Result<Self> {
        Self::from_bitset(parquet_bitset(bytes)?)
    }

    /// Whether the value may have been inserted ([`Key::hash_xxh64`]).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_xxh64())
    }

    /// Whether a value given by its XXH64 hash may have been inserted.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        contains_in(self.blocks, hash)
    }

    /// Batched, prefetching lookup, as [`SplitBlockBloom::contains_hashes`].
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        contains_hashes_in(self.blocks, hashes, out)
    }

    /// Counts how many of the pre-hashed values may be present, with the batched lookup.
    pub fn count_contained_hashes(&self, hashes: &[u64]) -> usize {
        count_contained_in(self.blocks, hashes)
    }

    /// Looks up many values at once, as [`SplitBlockBloom::contains_keys`].
    pub fn contains_keys<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        contains_keys_in(self.blocks, keys, out)
    }

    /// The bitset viewed.
    pub fn bitset(&self) -> &'a [u8] {
        self.blocks.as_flattened()
    }

    /// An owned copy; an error where its memory cannot be had.
    pub fn to_filter(&self) -> Result<SplitBlockBloom> {
        SplitBlockBloom::from_block_bytes(self.blocks)
    }

    /// The number of 32-byte blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Bytes of bitset.
    pub fn size_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    /// Bits set.
    pub fn count_ones(&self) -> u64 {
        ones_in(self.blocks)
    }

    /// Distinct values inserted, estimated from the set bits
    /// ([`SplitBlockBloom::estimated_items`]).
    pub fn estimated_items(&self) -> f64 {
        estimated_items_of(self.blocks)
    }

    /// The FPR of the filter as it is ([`SplitBlockBloom::current_fpr`]).
    pub fn current_fpr(&self) -> f64 {
        current_fpr_of(self.blocks)
    }

    /// The FPR the model expects once `items` distinct values are in.
    pub fn expected_fpr(&self, items: u64) -> f64 {
        if items == 0 {
            return 0.0;
        }
        let bits = self.blocks.len() as f64 * f64::from(BLOCK_BITS);
        model::split_block_fpr(bits / items as f64)
    }
}
