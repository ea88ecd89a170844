//! The Parquet split-block Bloom filter (SBBF): the layout of the filters in Parquet files.
//!
//! This module owns [`SplitBlockBloom`] and its zero-copy view [`SplitBlockBloomRef`]: the
//! layout of apache/parquet-format's `BloomFilter.md`, bit for bit, so a filter read from a
//! Parquet file answers as the writer's own reader would, and one written here reads back in
//! any Parquet reader. It does not read Parquet files (the CLI's `linebloom parquet` finds the
//! filters in a file's footer and hands their bytes here).
//!
//! # The layout
//! - A value's hash is XXH64 with seed 0 over its plain encoding: a BYTE_ARRAY's bytes without
//!   the length prefix, INT32 / INT64 / FLOAT / DOUBLE as little-endian bytes ([`Key::hash_xxh64`]
//!   does that for this crate's key types: integers as their little-endian bytes, so `i32` and
//!   `i64` values hash as Parquet's INT32 and INT64).
//! - The bitset is `z` blocks of 32 bytes, each eight little-endian `u32` words. A hash picks
//!   block `((h >> 32) * z) >> 32`, and sets in word `i` the bit `((h as u32) * SALT[i]) >> 27`
//!   (`SALT`, the spec's eight odd constants): 8 bits per key, one in each word of one block.
//! - In a file the bitset follows a thrift-compact `BloomFilterHeader {numBytes, algorithm
//!   BLOCK, hash XXHASH, compression UNCOMPRESSED}` ([`parquet_header`], written by
//!   [`SplitBlockBloom::to_parquet_bytes`] and read by [`SplitBlockBloom::from_parquet_bytes`]).
//!   Sizes are 32 bytes to 128 MiB; writers use powers of two ([`SplitBlockBloom::with_ndv_fpp`]).
//!
//! # Speed
//! A block is one `u32x8` register (`block.rs`): a key's mask is a multiply, two shifts, and
//! the test an and-not and a compare. A block is half a cache line, so a lookup is at most one
//! miss; [`SplitBlockBloom::contains_hashes`] prefetches ahead on filters past the cache as the
//! blocked filter's batched lookups do, and [`SplitBlockBloom::par_insert_hashes`] gives each
//! rayon task its own run of blocks (bit-identical to inserting one by one).
//!
//! # FPR
//! [`model::split_block_fpr`]: 8 bits in 8 words of 32 bits (Putze, Sanders and Singler 2007).
//! At a given size the layout's FPR is above the blocked filter's (1.26 % against 0.97 % at 10
//! bits per key), the price of the fixed 32-byte block and the fixed k = 8 that every Parquet
//! reader shares.
//!
//! ```
//! use linebloom::SplitBlockBloom;
//!
//! // Sized as Parquet writers size a column chunk's filter.
//! let mut filter = SplitBlockBloom::with_ndv_fpp(10_000, 0.01)?;
//! filter.insert("apple");
//! filter.insert(&42i64);
//! assert!(filter.contains("apple") && filter.contains(&42i64));
//! // The header and bitset a Parquet file stores, and back.
//! let bytes = filter.to_parquet_bytes()?;
//! assert_eq!(SplitBlockBloom::from_parquet_bytes(&bytes)?, filter);
//! # Ok::<(), linebloom::Error>(())
//! ```

mod batch;
pub(crate) mod block;
mod thrift;
mod view;

#[cfg(test)]
mod tests;

#[cfg(not(feature = "std"))]
use crate::math::Float;
use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
pub use block::{BLOCK_BITS, BLOCK_BYTES};
pub(crate) use block::{Block, block_index};
pub use thrift::{ParquetHeader, parquet_header};
pub use view::SplitBlockBloomRef;

use crate::engine::arch::simd_path;
use crate::engine::storage::{LineBuf, zeroed_lines};
use crate::error::{Error, Result, check_bits_per_key, check_fpr, check_items};
use crate::filter::{Filter, FilterKind, Sizing};
use crate::hash::Key;
use crate::model;
use batch::BlockBytes;

/// The smallest bitset the Parquet format allows (one block).
pub const MIN_BITSET_BYTES: usize = 32;
/// The largest bitset the Parquet format allows (128 MiB).
pub const MAX_BITSET_BYTES: usize = 128 << 20;
/// The most blocks an in-memory filter may have: the block index takes the high 32 bits of the
/// hash times the block count, so more than 2^32 blocks would leave some unreachable.
pub const MAX_BLOCKS: u64 = 1 << 32;

/// The bitset size Parquet writers pick for `ndv` distinct values at false-positive rate `fpp`:
/// `m = -8 ndv / ln(1 - fpp^(1/8))` bits (the split-block model of Putze et al. solved for m,
/// with the Poisson mixture left out), as bytes rounded down, then clamped to 32 B..128 MiB and
/// rounded up to a power of two. The same formula is in parquet-mr
/// (`BlockSplitBloomFilter.optimalNumOfBits`) and the `parquet` crate
/// (`num_of_bits_from_ndv_fpp`, `optimal_num_of_bytes`).
///
/// ```
/// use linebloom::sbbf::parquet_bitset_bytes;
///
/// assert_eq!(parquet_bitset_bytes(1_000_000, 0.01)?, 2 << 20);
/// assert_eq!(parquet_bitset_bytes(1, 0.5)?, 32);
/// # Ok::<(), linebloom::Error>(())
/// ```
pub fn parquet_bitset_bytes(ndv: u64, fpp: f64) -> Result<usize> {
    check_fpr(fpp)?;
    let bits = -8.0 * ndv as f64 / (1.0 - fpp.powf(1.0 / 8.0)).ln();
    // `as` saturates: a huge or infinite bit count clamps to the largest bitset.
    let bytes = (bits / 8.0) as usize;
    Ok(bytes
        .clamp(MIN_BITSET_BYTES, MAX_BITSET_BYTES)
        .next_power_of_two())
}

/// The Parquet split-block Bloom filter: 32-byte blocks, 8 bits per key, XXH64 with seed 0 (see
/// the [module docs](self)).
///
/// ```
/// use linebloom::SplitBlockBloom;
///
/// let mut filter = SplitBlockBloom::with_fpr(1_000, 0.01)?;
/// for i in 0..1_000i64 {
///     filter.insert(&i);
/// }
/// assert!((0..1_000i64).all(|i| filter.contains(&i)));
/// let hashes: Vec<u64> = (0..1_000i64).map(|i| linebloom::Key::hash_xxh64(&i)).collect();
/// let mut out = vec![false; hashes.len()];
/// filter.contains_hashes(&hashes, &mut out)?;
/// assert!(out.iter().all(|&b| b));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SplitBlockBloom {
    /// The blocks, two to a 64-byte line, in the engine's line storage: filters of 8 MiB and
    /// more get a huge-page mapping (`engine/storage.rs`), which past the cache saves a TLB
    /// miss per lookup. With an odd block count the last line's second half is never touched.
    lines: LineBuf,
    /// The number of blocks.
    num_blocks: usize,
}

impl core::fmt::Debug for SplitBlockBloom {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SplitBlockBloom")
            .field("blocks", &self.num_blocks)
            .field("ones", &self.count_ones())
            .finish()
    }
}

/// Whole blocks for `items` keys at `bits_per_key` bits each (at least one).
fn blocks_for_bits(items: u64, bits_per_key: f64) -> Result<usize> {
    check_bits_per_key(bits_per_key)?;
    let blocks = (items as f64 * bits_per_key / f64::from(BLOCK_BITS)).ceil();
    if blocks > MAX_BLOCKS as f64 {
        return Err(Error::TooLarge {
            items,
            bits_per_key,
        });
    }
    Ok((blocks as usize).max(1))
}

/// Builds a [`SplitBlockBloom`] from an expected item count and a size (a target FPR, sized as
/// Parquet writers size a bitset, or a number of bits per key). The layout fixes the rest: 8
/// bits per key, XXH64 with seed 0.
///
/// ```
/// use linebloom::SplitBlockBloom;
///
/// let filter = SplitBlockBloom::builder(10_000).bits_per_key(16.0).build()?;
/// assert_eq!(filter.num_blocks(), 625);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SplitBlockBloomBuilder {
    items: u64,
    size: Sizing,
}

impl SplitBlockBloomBuilder {
    crate::filter::sizing_setters!(size);

    /// Builds the empty filter, or says which parameter is out of range.
    pub fn build(self) -> Result<SplitBlockBloom> {
        SplitBlockBloom::with_blocks(self.blocks()?)
    }

    /// The shape [`build`](Self::build) gives (its blocks), without taking memory: the sizing
    /// rule, for planning.
    pub fn shape(&self) -> Result<crate::format::Shape> {
        Ok(crate::format::Shape::SplitBlock {
            blocks: self.blocks()? as u64,
        })
    }

    fn blocks(&self) -> Result<usize> {
        check_items(self.items)?;
        match self.size {
            Sizing::Fpr(fpr) => Ok(parquet_bitset_bytes(self.items, fpr)? / BLOCK_BYTES),
            Sizing::BitsPerKey(b) => blocks_for_bits(self.items, b),
        }
    }
}

impl SplitBlockBloom {
    /// A builder for `items` keys (1 % FPR unless set).
    pub fn builder(items: u64) -> SplitBlockBloomBuilder {
        SplitBlockBloomBuilder {
            items,
            size: Sizing::Fpr(0.01),
        }
    }

    /// Bits set per key: 8, one in each word of the key's block.
    pub fn k(&self) -> u32 {
        block::BITS_PER_KEY_SET
    }

    /// A filter sized as Parquet writers size a column chunk's: [`parquet_bitset_bytes`] for
    /// `ndv` distinct values at `fpp` (a power of two from 32 bytes to 128 MiB).
    pub fn with_ndv_fpp(ndv: u64, fpp: f64) -> Result<Self> {
        Self::with_blocks(parquet_bitset_bytes(ndv, fpp)? / BLOCK_BYTES)
    }

    /// A filter for `items` keys at false-positive rate `fpr`, sized as Parquet writers size
    /// one ([`with_ndv_fpp`](Self::with_ndv_fpp)); an error for 0 items.
    pub fn with_fpr(items: u64, fpr: f64) -> Result<Self> {
        Self::builder(items).fpr(fpr).build()
    }

    /// A filter for `items` keys at `bits_per_key` bits each, in whole blocks (not rounded to a
    /// power of two, which the layout does not need: any Parquet reader reads such a bitset, but
    /// writers of Parquet files use [`with_ndv_fpp`](Self::with_ndv_fpp)).
    pub fn with_bits_per_key(items: u64, bits_per_key: f64) -> Result<Self> {
        Self::builder(items).bits_per_key(bits_per_key).build()
    }

    /// An empty filter of exactly `shape`, the exact-size constructor every kind shares (a
    /// builder's `shape()` plans one; `with_blocks` is the same by its parts); an error for
    /// another kind's shape, and for a seed other than 0 (Parquet's hash has none).
    pub fn with_shape(shape: crate::format::Shape, seed: u64) -> Result<Self> {
        if seed != 0 {
            return Err(Error::InvalidParameter {
                name: "seed",
                value: alloc::format!("{seed:#x}"),
                allowed: "0 for a split-block filter (XXH64 with seed 0, as Parquet hashes)",
            });
        }
        match shape {
            crate::format::Shape::SplitBlock { blocks } => {
                Self::with_blocks(crate::format::count_of(blocks, "blocks")?)
            }
            other => Err(crate::format::wrong_shape(FilterKind::SplitBlock, other)),
        }
    }

    /// An empty filter of exactly `blocks` 32-byte blocks (1 to 2^32).
    pub fn with_blocks(blocks: usize) -> Result<Self> {
        check_blocks(blocks as u64)?;
        Ok(Self {
            lines: zeroed_lines(blocks.div_ceil(2))?,
            num_blocks: blocks,
        })
    }

    /// A filter from a Parquet bitset (the bytes after the header): a multiple of 32 bytes from
    /// 32 B to 128 MiB, any alignment. Anything else is an [`Error::Corrupt`].
    pub fn from_bitset(bitset: &[u8]) -> Result<Self> {
        Self::from_block_bytes(check_bitset(bitset)?)
    }

    /// The bitset as Parquet stores it: the filter's own memory, not a copy.
    pub fn bitset(&self) -> &[u8] {
        bytemuck::cast_slice(self.blocks())
    }

    /// The filter as a Parquet file stores it: the thrift-compact `BloomFilterHeader`, then the
    /// bitset. An error when the bitset is larger than the format's 128 MiB.
    pub fn to_parquet_bytes(&self) -> Result<Vec<u8>> {
        let header = thrift::encode_header(self.size_bytes())?;
        let mut out = Vec::with_capacity(header.len() + self.size_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(self.bitset());
        Ok(out)
    }

    /// Reads a Parquet filter: the thrift-compact header, then exactly the bitset it announces.
    /// A malformed header, an unknown algorithm, hash or compression, a bad size or a length
    /// mismatch is an [`Error::Corrupt`].
    pub fn from_parquet_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bitset(thrift::parquet_bitset(bytes)?)
    }

    /// A filter of the blocks whose bitset bytes are `blocks` (allocating no more than their
    /// own size).
    pub(crate) fn from_block_bytes(blocks: &[[u8; BLOCK_BYTES]]) -> Result<Self> {
        let mut f = Self::with_blocks(blocks.len())?;
        for (dst, src) in f.blocks_mut().iter_mut().zip(blocks) {
            *dst = Block::from_le_bytes(src);
        }
        Ok(f)
    }

    /// Adds a value, hashed as Parquet hashes its plain encoding ([`Key::hash_xxh64`]).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(key.hash_xxh64());
    }

    /// Whether the value may have been inserted (false: it certainly was not).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_xxh64())
    }

    /// Adds a value given by its XXH64 hash.
    ///
    /// Both one-key paths index the lines' blocks directly rather than through
    /// `blocks()`, whose trim to `num_blocks` (a slice and its bounds check per
    /// call) is a large share of a one-key insert's few instructions.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let i = block_index(hash, self.num_blocks);
        // `i < num_blocks`, so the padding block of an odd count is never reached.
        let all: &mut [Block] = bytemuck::cast_slice_mut(&mut self.lines);
        debug_assert!(i < all.len());
        // SAFETY: as in `contains_hash`: `i < num_blocks <= all.len()`.
        block::set_on(simd_path(), unsafe { all.get_unchecked_mut(i) }, hash);
    }

    /// Whether a value given by its XXH64 hash may have been inserted.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        // All of the lines' blocks: `block_index` stays below `num_blocks`.
        let all: &[Block] = bytemuck::cast_slice(&self.lines);
        let i = block_index(hash, self.num_blocks);
        debug_assert!(i < all.len());
        // SAFETY: `block_index(hash, n)` is `((hash >> 32) * n) >> 32`, below `n` for every
        // hash when `1 <= n <= 2^32`, which every constructor checks (`check_blocks`); and the
        // lines hold `2 * ceil(n / 2) >= n` blocks. So `i < all.len()`.
        block::test_on(simd_path(), unsafe { all.get_unchecked(i) }, hash)
    }

    /// The blocks.
    #[inline(always)]
    pub(crate) fn blocks(&self) -> &[Block] {
        let all: &[Block] = bytemuck::cast_slice(&self.lines);
        &all[..self.num_blocks.min(all.len())]
    }

    #[inline(always)]
    pub(crate) fn blocks_mut(&mut self) -> &mut [Block] {
        let all: &mut [Block] = bytemuck::cast_slice_mut(&mut self.lines);
        let n = self.num_blocks.min(all.len());
        &mut all[..n]
    }

    /// The number of 32-byte blocks.
    pub fn num_blocks(&self) -> usize {
        self.num_blocks
    }

    /// Bits in the filter.
    pub fn num_bits(&self) -> u64 {
        self.num_blocks as u64 * u64::from(BLOCK_BITS)
    }

    /// Bytes of bitset.
    pub fn size_bytes(&self) -> usize {
        self.num_blocks * BLOCK_BYTES
    }

    /// Bits set.
    pub fn count_ones(&self) -> u64 {
        ones_in(self.blocks())
    }

    /// Set bits over all bits, in [0, 1].
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }

    /// Distinct values inserted, estimated from the set bits: each value sets one uniform bit
    /// in each word of a uniform block, so a bit stays clear with probability
    /// `(1 - 1/(32 z))^n` for `z` blocks, and `n ≈ ln Z / ln(1 - 1/(32 z))` for the observed
    /// share `Z` of clear bits. Infinite when every bit is set.
    pub fn estimated_items(&self) -> f64 {
        estimated_items_of(self.blocks())
    }

    /// The false-positive rate of the filter as it is: a value never inserted picks a uniform
    /// block and one uniform bit in each word, so it is a false positive with probability
    /// `Π_i f_i` (`f_i` the share of word `i` set), averaged over the blocks. Exact for the
    /// filter's current bits, whatever was inserted.
    pub fn current_fpr(&self) -> f64 {
        current_fpr_of(self.blocks())
    }

    /// The FPR the model expects once `items` distinct values are in (see
    /// [`model::split_block_fpr`]).
    pub fn expected_fpr(&self, items: u64) -> f64 {
        if items == 0 {
            return 0.0;
        }
        model::split_block_fpr(self.num_bits() as f64 / items as f64)
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        self.blocks_mut().fill(Block::ZERO);
    }

    /// Adds every value of `other`: afterwards `self` is bit for bit the filter built from
    /// both filters' values (the OR of the bitsets), as a Parquet writer merging two column
    /// chunks' filters of one size would get. [`Error::Incompatible`] (and `self` unchanged)
    /// when the two differ in blocks.
    ///
    /// ```
    /// use linebloom::SplitBlockBloom;
    ///
    /// let (mut a, mut b) = (SplitBlockBloom::with_blocks(64)?, SplitBlockBloom::with_blocks(64)?);
    /// a.insert("x");
    /// b.insert("y");
    /// a.union(&b)?;
    /// assert!(a.contains("x") && a.contains("y"));
    /// assert!(a.union(&SplitBlockBloom::with_blocks(32)?).is_err());
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn union(&mut self, other: &Self) -> Result<()> {
        if self.num_blocks != other.num_blocks {
            return Err(Error::Incompatible(format!(
                "split-block filters of {} and {} blocks",
                self.num_blocks, other.num_blocks
            )));
        }
        for (a, b) in self.lines.iter_mut().zip(other.lines.iter()) {
            a.union(b);
        }
        Ok(())
    }
}

fn check_blocks(blocks: u64) -> Result<()> {
    if !(1..=MAX_BLOCKS).contains(&blocks) {
        return Err(Error::InvalidParameter {
            name: "blocks",
            value: blocks.to_string(),
            allowed: "1 to 2^32 blocks of 32 bytes",
        });
    }
    Ok(())
}

/// Checks a Parquet bitset's length and returns it as blocks of 32 bytes.
pub(crate) fn check_bitset(bitset: &[u8]) -> Result<&[[u8; BLOCK_BYTES]]> {
    let len = bitset.len();
    if !(MIN_BITSET_BYTES..=MAX_BITSET_BYTES).contains(&len) || !len.is_multiple_of(BLOCK_BYTES) {
        return Err(Error::Corrupt(format!(
            "a split-block bitset of {len} bytes (allowed: a multiple of 32 from 32 to \
             {MAX_BITSET_BYTES})"
        )));
    }
    let (blocks, rest) = bitset.as_chunks::<BLOCK_BYTES>();
    debug_assert!(rest.is_empty());
    Ok(blocks)
}

pub(crate) fn ones_in<B: BlockBytes>(blocks: &[B]) -> u64 {
    blocks
        .iter()
        .map(|b| u64::from(b.load().count_ones()))
        .sum()
}

pub(crate) fn estimated_items_of<B: BlockBytes>(blocks: &[B]) -> f64 {
    let bits = blocks.len() as f64 * f64::from(BLOCK_BITS);
    let zeros = bits - ones_in(blocks) as f64;
    if zeros <= 0.0 {
        return f64::INFINITY;
    }
    let per_key = (-1.0 / (32.0 * blocks.len() as f64)).ln_1p();
    (zeros / bits).ln() / per_key
}

pub(crate) fn current_fpr_of<B: BlockBytes>(blocks: &[B]) -> f64 {
    let sum: f64 = blocks
        .iter()
        .map(|b| {
            b.load()
                .0
                .iter()
                .map(|w| f64::from(w.count_ones()) / 32.0)
                .product::<f64>()
        })
        .sum();
    sum / blocks.len().max(1) as f64
}

impl Filter for SplitBlockBloom {
    fn kind(&self) -> FilterKind {
        FilterKind::SplitBlock
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        SplitBlockBloom::insert_hash(self, hash);
        Ok(())
    }
    fn contains_hash(&self, hash: u64) -> bool {
        SplitBlockBloom::contains_hash(self, hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        SplitBlockBloom::contains_hashes(self, hashes, out)
    }
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        SplitBlockBloom::insert_hashes(self, hashes);
        Ok(())
    }
    fn size_bytes(&self) -> usize {
        SplitBlockBloom::size_bytes(self)
    }
    fn k(&self) -> Option<u32> {
        Some(block::BITS_PER_KEY_SET)
    }
    fn seed(&self) -> u64 {
        0
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        SplitBlockBloom::expected_fpr(self, items)
    }
}
