//! One 256-bit block's worth of SIMD: a key's mask, set it, test it.
//!
//! The split-block filter's only SIMD seam: the code above it works with [`Block`] and
//! [`BlockMask`] and never names a vector type. A mask is one `u32x8` multiply by the eight
//! salts, one shift right by 27 and one variable shift left (`vpmulld`, `vpsrld`, `vpsllvd` with
//! AVX2); a test is an and-not and a compare against zero. The zero-copy view
//! ([`SplitBlockBloomRef`](super::SplitBlockBloomRef)) loads its blocks from bytes of any
//! alignment into the same vector ([`Block::from_le_bytes`]).

use bytemuck::{Pod, Zeroable};
use wide::u32x8;

/// Bytes in one block.
pub const BLOCK_BYTES: usize = 32;
/// Bits in one block.
pub const BLOCK_BITS: u32 = 256;
/// Bits each key sets (one per 32-bit word of its block).
pub const BITS_PER_KEY_SET: u32 = 8;

/// The Parquet format's salts (apache/parquet-format, `BloomFilter.md`): word `i` of a key's
/// block gets bit `((hash as u32) * SALT[i]) >> 27`. Part of the layout every Parquet reader
/// and writer shares.
pub const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

const SALT_LANES: u32x8 = u32x8::new(SALT);

/// One block of a split-block filter: eight 32-bit words, 32-byte aligned (so a block never
/// straddles two cache lines). The words are stored little-endian, as in a Parquet bitset, so a
/// filter's memory *is* its bitset on every machine (on a big-endian one, [`BlockMask`] is
/// byte-swapped to match, at no cost on a little-endian one).
///
/// ```
/// use linebloom::sbbf::{Block, BlockMask};
///
/// let mut block = Block::ZERO;
/// let mask = BlockMask::for_hash(42);
/// assert!(!block.test(mask));
/// block.set(mask);
/// assert!(block.test(mask));
/// assert_eq!(block.count_ones(), 8);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(32))]
pub struct Block(pub [u32; 8]);

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Block(")?;
        for w in self.0.iter().rev() {
            write!(f, "{w:08x}")?;
        }
        write!(f, ")")
    }
}

/// The eight bits one key sets in its block, one per word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct BlockMask(u32x8);

impl BlockMask {
    /// The mask of a 64-bit hash: word `i` gets bit `((hash as u32) * SALT[i]) >> 27`.
    #[inline(always)]
    pub fn for_hash(hash: u64) -> Self {
        let positions = (u32x8::splat(hash as u32) * SALT_LANES) >> 27;
        let mask: u32x8 = u32x8::splat(1) << positions;
        if cfg!(target_endian = "big") {
            return BlockMask(u32x8::new(mask.to_array().map(u32::to_le)));
        }
        BlockMask(mask)
    }

    /// The mask's words (as values, whatever the machine's byte order).
    pub fn to_array(self) -> [u32; 8] {
        self.0.to_array().map(u32::from_le)
    }
}

impl Block {
    /// A block with no bits set.
    pub const ZERO: Block = Block([0; 8]);

    /// The block whose bitset bytes are `bytes` (32 bytes, any alignment).
    #[inline(always)]
    pub fn from_le_bytes(bytes: &[u8; BLOCK_BYTES]) -> Self {
        Block(bytemuck::pod_read_unaligned(bytes))
    }

    /// The block's 32 bytes in bitset order (little-endian words).
    pub fn to_le_bytes(&self) -> [u8; BLOCK_BYTES] {
        bytemuck::cast(self.0)
    }

    /// Word `i`'s value (0..8), whatever the machine's byte order.
    pub fn word(&self, i: usize) -> u32 {
        u32::from_le(self.0[i % 8])
    }

    /// Sets the mask's bits: `block |= mask`.
    #[inline(always)]
    pub fn set(&mut self, mask: BlockMask) {
        self.0 = (u32x8::new(self.0) | mask.0).to_array();
    }

    /// Whether every bit of the mask is set: `(block & mask) == mask`.
    #[inline(always)]
    pub fn test(&self, mask: BlockMask) -> bool {
        let missing: [u64; 4] = bytemuck::cast((mask.0 & !u32x8::new(self.0)).to_array());
        missing.iter().fold(0, |any, &w| any | w) == 0
    }

    /// Set bits in the block.
    pub fn count_ones(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
}

/// The block a hash selects among `blocks`: `((hash >> 32) * blocks) >> 32`, the format's
/// multiply-shift (so `blocks` may be any count up to 2^32).
#[inline(always)]
pub fn block_index(hash: u64, blocks: usize) -> usize {
    (((hash >> 32) * blocks as u64) >> 32) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector mask equals the format's scalar definition, word by word.
    #[test]
    fn the_mask_is_the_formats_scalar_definition() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            x = crate::hash::mix64(x);
            let scalar: [u32; 8] =
                std::array::from_fn(|i| 1u32 << ((x as u32).wrapping_mul(SALT[i]) >> 27));
            assert_eq!(BlockMask::for_hash(x).to_array(), scalar);
        }
    }

    #[test]
    fn bytes_round_trip_little_endian() {
        let mut bytes = [0u8; BLOCK_BYTES];
        bytes[0] = 1;
        bytes[31] = 0xde;
        let block = Block::from_le_bytes(&bytes);
        assert_eq!((block.word(0), block.word(7)), (1, 0xde00_0000));
        assert_eq!(block.to_le_bytes(), bytes);
        let mut set = Block::ZERO;
        set.set(BlockMask::for_hash(7));
        let mask = BlockMask::for_hash(7).to_array();
        assert!((0..8).all(|i| set.word(i) == mask[i]));
    }
}
