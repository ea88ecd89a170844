//! One 256-bit block's worth of SIMD: a key's mask, set it, test it.
//!
//! The split-block filter's SIMD seam: the code above it works with [`Block`] and
//! [`BlockMask`] and never names a vector type. A mask is one `u32x8` multiply by the eight
//! salts, one shift right by 27 and one variable shift left (`vpmulld`, `vpsrld`, `vpsllvd` with
//! AVX2); a test is an and-not and a compare against zero. The portable form uses `wide`, as
//! the build compiles it; its AVX2 form (`BlockKernel`) is compiled into every x86-64 build and
//! runs on the AVX2 and AVX-512 paths (`crate::simd_path`). The zero-copy view
//! ([`SplitBlockBloomRef`](super::SplitBlockBloomRef)) loads its blocks from bytes of any
//! alignment into the same vector ([`Block::from_le_bytes`]).

use bytemuck::{Pod, Zeroable};
use wide::u32x8;

use crate::engine::arch::SimdPath;
use crate::engine::bulk::Slots;

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
#[derive(Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(32))]
pub struct Block(pub [u32; 8]);

impl core::fmt::Debug for Block {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
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
    #[cfg(test)]
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
    #[cfg(test)]
    pub fn to_le_bytes(self) -> [u8; BLOCK_BYTES] {
        bytemuck::cast(self.0)
    }

    /// Word `i`'s value (0..8), whatever the machine's byte order.
    #[cfg(test)]
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

/// A block's test and set on one SIMD path (`engine::arch`): the portable `u32x8` above, or
/// AVX2 intrinsics, which the AVX2 and AVX-512 paths both run (a block is one 256-bit register,
/// so AVX-512 has nothing to add). Both set and test exactly [`BlockMask::for_hash`]'s bits.
///
/// # Safety
/// The methods may only run on a CPU that has the implementor's instructions.
pub(crate) trait BlockKernel {
    /// Whether every bit of `hash`'s mask is set in `block`.
    unsafe fn test(block: &Block, hash: u64) -> bool;
    /// Sets `hash`'s mask in `block`.
    unsafe fn set(block: &mut Block, hash: u64);
}

/// The portable kernel.
pub(crate) struct PortableBlocks;

impl BlockKernel for PortableBlocks {
    #[inline(always)]
    unsafe fn test(block: &Block, hash: u64) -> bool {
        block.test(BlockMask::for_hash(hash))
    }
    #[inline(always)]
    unsafe fn set(block: &mut Block, hash: u64) {
        block.set(BlockMask::for_hash(hash));
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::Avx2Blocks;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    use super::{Block, BlockKernel, SALT};

    /// The AVX2 kernel.
    pub(crate) struct Avx2Blocks;

    /// The mask: one multiply by the salts, a shift right by 27, a variable shift left.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn mask(hash: u64) -> __m256i {
        let salts: __m256i = bytemuck::cast(SALT);
        let positions =
            _mm256_srli_epi32::<27>(_mm256_mullo_epi32(_mm256_set1_epi32(hash as i32), salts));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), positions)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn test_avx2(block: &Block, hash: u64) -> bool {
        let b: __m256i = bytemuck::cast(block.0);
        // `testc` sets its flag when every bit of the mask is set in the block.
        _mm256_testc_si256(b, mask(hash)) == 1
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn set_avx2(block: &mut Block, hash: u64) {
        let b: __m256i = bytemuck::cast(block.0);
        block.0 = bytemuck::cast(_mm256_or_si256(b, mask(hash)));
    }

    impl BlockKernel for Avx2Blocks {
        #[inline(always)]
        unsafe fn test(block: &Block, hash: u64) -> bool {
            // SAFETY: the caller runs this kernel only where the CPU has AVX2 (the trait's
            // contract).
            unsafe { test_avx2(block, hash) }
        }
        #[inline(always)]
        unsafe fn set(block: &mut Block, hash: u64) {
            // SAFETY: as in `test`.
            unsafe { set_avx2(block, hash) }
        }
    }
}

/// Whether `path` runs the AVX2 kernel.
#[inline(always)]
pub(crate) fn avx2_on(path: SimdPath) -> bool {
    cfg!(target_arch = "x86_64") && path >= SimdPath::Avx2
}

/// [`Block::test`] of `hash`'s mask on `path` (an available one).
#[inline(always)]
pub(crate) fn test_on(path: SimdPath, block: &Block, hash: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx2_on(path) {
        // SAFETY: the AVX2 and AVX-512 paths are available only on CPUs with AVX2.
        return unsafe { Avx2Blocks::test(block, hash) };
    }
    let _ = path;
    // SAFETY: the portable kernel runs everywhere.
    unsafe { PortableBlocks::test(block, hash) }
}

/// [`Block::set`] of `hash`'s mask on `path` (an available one).
#[inline(always)]
pub(crate) fn set_on(path: SimdPath, block: &mut Block, hash: u64) {
    #[cfg(target_arch = "x86_64")]
    if avx2_on(path) {
        // SAFETY: as in `test_on`.
        return unsafe { Avx2Blocks::set(block, hash) };
    }
    let _ = path;
    // SAFETY: the portable kernel runs everywhere.
    unsafe { PortableBlocks::set(block, hash) }
}

/// The block a hash selects among `blocks`: `((hash >> 32) * blocks) >> 32`, the format's
/// multiply-shift (so `blocks` may be any count up to 2^32).
#[inline(always)]
pub fn block_index(hash: u64, blocks: usize) -> usize {
    (((hash >> 32) * blocks as u64) >> 32) as usize
}

/// The split-block filter's blocks as the engine's bulk insert sees them ([`Slots`]), set on
/// the given SIMD path: slot `((hash >> 32) * total) >> 32` ([`block_index`]).
pub(crate) struct Blocks(pub SimdPath);

impl Slots for Blocks {
    type Slot = Block;
    #[inline(always)]
    fn index(hash: u64, total: usize) -> usize {
        block_index(hash, total)
    }
    /// `((h >> 32) * n) >> 32 >= f` exactly when `h >> 32 >= ceil(f * 2^32 / n)`, that is when
    /// `h >= ceil(f * 2^32 / n) * 2^32`.
    fn first_hash(slot: usize, total: usize) -> u128 {
        ((slot as u128) << 32).div_ceil(total as u128) << 32
    }
    #[inline(always)]
    fn set(&self, slot: &mut Block, hash: u64) {
        set_on(self.0, slot, hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_range_holds_exactly_the_hashes_of_its_blocks() {
        crate::engine::bulk::check_hash_range::<Blocks>(&[
            2,
            3,
            7,
            1000,
            1 << 20,
            3 << 30,
            u32::MAX as usize,
        ]);
    }

    /// The vector mask equals the format's scalar definition, word by word.
    #[test]
    fn the_mask_is_the_formats_scalar_definition() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            x = crate::hash::mix64(x);
            let scalar: [u32; 8] =
                core::array::from_fn(|i| 1u32 << ((x as u32).wrapping_mul(SALT[i]) >> 27));
            assert_eq!(BlockMask::for_hash(x).to_array(), scalar);
        }
    }

    /// Every SIMD path sets and tests the portable bits.
    #[test]
    fn every_path_sets_and_tests_the_portable_bits() {
        for path in SimdPath::available() {
            let mut x = 0x0fed_cba9_8765_4321u64;
            for i in 0..20_000u64 {
                x = crate::hash::mix64(x ^ i);
                let mut block = Block(core::array::from_fn(|w| {
                    crate::hash::mix64(x + w as u64) as u32
                }));
                let mut want = block;
                want.set(BlockMask::for_hash(x));
                assert_eq!(test_on(path, &block, x), block.test(BlockMask::for_hash(x)));
                set_on(path, &mut block, x);
                assert_eq!(block, want, "{path}");
                assert!(test_on(path, &block, x));
                let mut empty = Block::ZERO;
                set_on(path, &mut empty, x);
                assert_eq!(empty.count_ones(), 8);
                for w in 0..8 {
                    let mut missing = empty;
                    missing.0[w] = 0;
                    assert!(!test_on(path, &missing, x), "{path}");
                }
            }
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
