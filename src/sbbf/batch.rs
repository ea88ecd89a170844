//! Batched lookups (software prefetch) and the rayon bulk insert of the split-block filter.
//!
//! The batched lookup is the engine's (`engine/lookup.rs`, as the blocked filter's) on 32-byte
//! blocks: past [`PLAIN_LOOP_BYTES`] a block is hinted into L2 far ahead of its test and into
//! L1 a few keys before, so that many misses are in flight at once; smaller filters run the
//! plain loop, which is faster in cache. One implementation serves the owned filter (aligned
//! [`Block`]s) and the zero-copy view (bytes of any alignment), through [`BlockBytes`].
//!
//! The bulk insert is the blocked filter's (`engine/bulk.rs`) on 32-byte blocks.

use crate::par::*;

use super::SplitBlockBloom;
#[cfg(target_arch = "x86_64")]
use super::block::Avx2Blocks;
use super::block::Blocks;
use super::block::{
    BLOCK_BYTES, Block, BlockKernel, PortableBlocks, avx2_on, block_index, test_on,
};
use crate::engine::arch::{SimdPath, simd_path};
use crate::engine::bulk::{DRAIN, insert_prefetched, insert_task};
use crate::engine::lookahead::CACHED_BYTES as PLAIN_LOOP_BYTES;
use crate::engine::lookup::{Probe, contains_each, count_each};
use crate::error::{Result, check_same_len};
use crate::hash::{Key, each_hashed_round, in_hashed_rounds};
use core::marker::PhantomData;

/// Below this many hashes the bulk insert runs on one thread: starting the tasks would cost
/// more than the threads win.
const BULK_MIN: usize = 1 << 14;

/// A block as the filter stores it ([`Block`]) or as a bitset holds it (32 bytes, any
/// alignment): what the batched loops read.
pub(crate) trait BlockBytes: Sized + 'static {
    /// A zero block, answered for an empty run (never reached by a filter, which has a block).
    const EMPTY: &'static Self;
    /// The block's words.
    fn load(&self) -> Block;
}

impl BlockBytes for Block {
    const EMPTY: &'static Self = &Block::ZERO;
    #[inline(always)]
    fn load(&self) -> Block {
        *self
    }
}

impl BlockBytes for [u8; BLOCK_BYTES] {
    const EMPTY: &'static Self = &[0; BLOCK_BYTES];
    #[inline(always)]
    fn load(&self) -> Block {
        Block::from_le_bytes(self)
    }
}

/// The block of `hash` in `blocks` (an empty run answers [`BlockBytes::EMPTY`]), with no
/// per-key bounds check: in cache, where a lookup is a handful of instructions, the check is a
/// large share of them (measured in `docs/performance.md`, Levers tried).
#[inline(always)]
fn block_at<B: BlockBytes>(blocks: &[B], hash: u64) -> &B {
    if blocks.is_empty() {
        return B::EMPTY;
    }
    let i = block_index(hash, blocks.len());
    debug_assert!(i < blocks.len());
    // SAFETY: `block_index(hash, n)` is `((hash >> 32) * n) >> 32`, below `n` for every hash
    // when `1 <= n <= 2^32`: `n >= 1` here, and no filter or bitset holds more than 2^32
    // blocks (`check_blocks`, and Parquet's 128 MiB bound on bitsets).
    unsafe { blocks.get_unchecked(i) }
}

/// One lookup in any run of blocks, on the chosen SIMD path.
#[inline(always)]
pub(crate) fn contains_in<B: BlockBytes>(blocks: &[B], hash: u64) -> bool {
    test_on(simd_path(), &block_at(blocks, hash).load(), hash)
}

/// The batched lookup over any run of blocks: `out[i] = contains(hashes[i])`; an error (and
/// nothing written) when the two slices differ in length.
pub(crate) fn contains_hashes_in<B: BlockBytes>(
    blocks: &[B],
    hashes: &[u64],
    out: &mut [bool],
) -> Result<()> {
    check_same_len(hashes.len(), out.len())?;
    contains_hashes_on(simd_path(), blocks, hashes, out);
    Ok(())
}

/// [`contains_hashes_in`] on `path` (an available one), for slices of equal length: the loop
/// compiled once per kernel, so the kernel inlines into it.
pub(crate) fn contains_hashes_on<B: BlockBytes>(
    path: SimdPath,
    blocks: &[B],
    hashes: &[u64],
    out: &mut [bool],
) {
    #[cfg(target_arch = "x86_64")]
    if avx2_on(path) {
        #[target_feature(enable = "avx2")]
        fn run<B: BlockBytes>(blocks: &[B], hashes: &[u64], out: &mut [bool]) {
            // SAFETY: this function runs only where the CPU has AVX2.
            unsafe { contains_loop::<B, Avx2Blocks>(blocks, hashes, out) }
        }
        // SAFETY: the AVX2 and AVX-512 paths are available only on CPUs with AVX2.
        return unsafe { run(blocks, hashes, out) };
    }
    let _ = path;
    // SAFETY: the portable kernel runs everywhere.
    unsafe { contains_loop::<B, PortableBlocks>(blocks, hashes, out) }
}

/// # Safety
/// The CPU has `K`'s instructions.
#[inline(always)]
unsafe fn contains_loop<B: BlockBytes, K: BlockKernel>(
    blocks: &[B],
    hashes: &[u64],
    out: &mut [bool],
) {
    // SAFETY: the caller's contract.
    contains_each(&unsafe { BlockProbe::<B, K>::new(blocks) }, hashes, out);
}

/// The split-block filter's blocks (owned or viewed) as the engine's batched lookup sees them,
/// tested by kernel `K`.
struct BlockProbe<'a, B, K> {
    blocks: &'a [B],
    kernel: PhantomData<fn() -> K>,
}

impl<'a, B: BlockBytes, K: BlockKernel> BlockProbe<'a, B, K> {
    /// # Safety
    /// The CPU has `K`'s instructions: [`Probe::test`] runs its kernel.
    #[inline(always)]
    unsafe fn new(blocks: &'a [B]) -> Self {
        BlockProbe {
            blocks,
            kernel: PhantomData,
        }
    }
}

impl<B: BlockBytes, K: BlockKernel> Probe for BlockProbe<'_, B, K> {
    type Slot = B;
    #[inline(always)]
    fn slot(&self, hash: u64) -> &B {
        block_at(self.blocks, hash)
    }
    #[inline(always)]
    fn test(&self, block: &B, hash: u64) -> bool {
        // SAFETY: `new`'s caller promised that the CPU has `K`'s instructions.
        unsafe { K::test(&block.load(), hash) }
    }
    #[inline(always)]
    fn bytes(&self) -> usize {
        core::mem::size_of_val(self.blocks)
    }
}

/// The keyed batched lookup over any run of blocks: each value hashed (XXH64), 4096 at a time,
/// then [`contains_hashes_in`]; an error (and nothing written) when the lengths differ.
pub(crate) fn contains_keys_in<B: BlockBytes, K: Key>(
    blocks: &[B],
    keys: &[K],
    out: &mut [bool],
) -> Result<()> {
    check_same_len(keys.len(), out.len())?;
    in_hashed_rounds(keys, Key::hash_xxh64, |first, hashes| {
        contains_hashes_in(blocks, hashes, &mut out[first..first + hashes.len()])
    })
}

/// Counts how many of `hashes` may be in `blocks`, with the batched lookup's prefetching.
pub(crate) fn count_contained_in<B: BlockBytes>(blocks: &[B], hashes: &[u64]) -> usize {
    count_contained_on(simd_path(), blocks, hashes)
}

/// [`count_contained_in`] on `path` (an available one).
pub(crate) fn count_contained_on<B: BlockBytes>(
    path: SimdPath,
    blocks: &[B],
    hashes: &[u64],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if avx2_on(path) {
        #[target_feature(enable = "avx2")]
        fn run<B: BlockBytes>(blocks: &[B], hashes: &[u64]) -> usize {
            // SAFETY: this function runs only where the CPU has AVX2.
            unsafe { count_loop::<B, Avx2Blocks>(blocks, hashes) }
        }
        // SAFETY: the AVX2 and AVX-512 paths are available only on CPUs with AVX2.
        return unsafe { run(blocks, hashes) };
    }
    let _ = path;
    // SAFETY: the portable kernel runs everywhere.
    unsafe { count_loop::<B, PortableBlocks>(blocks, hashes) }
}

/// # Safety
/// The CPU has `K`'s instructions.
#[inline(always)]
unsafe fn count_loop<B: BlockBytes, K: BlockKernel>(blocks: &[B], hashes: &[u64]) -> usize {
    // SAFETY: the caller's contract.
    count_each(&unsafe { BlockProbe::<B, K>::new(blocks) }, hashes)
}

impl SplitBlockBloom {
    /// Looks up many pre-hashed values at once: `out[i] = self.contains_hash(hashes[i])`.
    /// Faster than a loop over [`contains_hash`](Self::contains_hash) on filters larger than the
    /// cache, because the misses of many keys overlap. An error (and nothing written) when the
    /// two slices differ in length.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        contains_hashes_in(self.blocks(), hashes, out)
    }

    /// Counts how many of the pre-hashed values may be present, with the batched lookup.
    pub fn count_contained_hashes(&self, hashes: &[u64]) -> usize {
        count_contained_in(self.blocks(), hashes)
    }

    /// Looks up many values at once: `out[i] = self.contains(&keys[i])`, the values hashed
    /// (XXH64) 4096 at a time on the stack and each round looked up with
    /// [`contains_hashes`](Self::contains_hashes). An error (and nothing written) when the two
    /// slices differ in length.
    pub fn contains_keys<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        contains_keys_in(self.blocks(), keys, out)
    }

    /// Inserts many values: [`insert`](Self::insert) of each, hashed 4096 at a time (on the
    /// stack) and inserted through [`insert_hashes`](Self::insert_hashes).
    pub fn insert_keys<K: Key>(&mut self, keys: &[K]) {
        each_hashed_round(keys, Key::hash_xxh64, |h| self.insert_hashes(h));
    }

    /// Inserts many pre-hashed values on this thread, prefetching ahead in filters past the
    /// cache as the blocked filter's batched insert does.
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        if self.size_bytes() <= PLAIN_LOOP_BYTES {
            hashes.iter().for_each(|&h| self.insert_hash(h));
            return;
        }
        let total = self.num_blocks();
        let blocks = Blocks(simd_path());
        insert_prefetched::<_, false>(&blocks, self.blocks_mut(), 0, total, hashes, 0, DRAIN);
    }

    /// Inserts many pre-hashed values on the rayon pool, bit-identical to inserting them one
    /// by one: each thread's task owns a contiguous run of blocks, scans the whole input and
    /// inserts the hashes of its run (the blocked filter's scanning tasks, `engine/bulk.rs`). Takes no
    /// memory of its own. Runs on one thread for fewer than 16 Ki hashes, and for a filter of
    /// up to 2 MiB: there a key's insert costs about as little as scanning it, so every task's
    /// scan of the whole input outweighs what the threads share, and two threads run slower
    /// than one (`docs/performance.md`, The Parquet split-block filter).
    pub fn par_insert_hashes(&mut self, hashes: &[u64]) {
        let total = self.num_blocks();
        let threads = crate::par::current_num_threads();
        let in_cache = total * BLOCK_BYTES <= PLAIN_LOOP_BYTES;
        if hashes.len() < BULK_MIN || threads < 2 || total < threads || in_cache {
            return self.insert_hashes(hashes);
        }
        let per_task = total.div_ceil(threads);
        let blocks = Blocks(simd_path());
        self.blocks_mut()
            .par_chunks_mut(per_task)
            .enumerate()
            .for_each(|(task, run)| insert_task(&blocks, run, task * per_task, total, hashes));
    }
}
