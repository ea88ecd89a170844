//! Batched lookups (software prefetch) and the rayon bulk insert of the split-block filter.
//!
//! The batched lookup is the blocked filter's (`blocked/batch.rs`) on 32-byte blocks: on
//! filters past [`PLAIN_LOOP_BYTES`] the block of the key [`PREFETCH_AHEAD`] places ahead is
//! hinted into L2, and into L1 a few keys before its use, so that many misses are in flight at
//! once; smaller filters run the plain loop, which is faster in cache. One implementation serves
//! the owned filter (aligned [`Block`]s) and the zero-copy view (bytes of any alignment), through
//! [`BlockBytes`].
//!
//! The bulk insert splits the blocks into contiguous runs, one per rayon task; the input is
//! first split by run (in parallel, each thread sorting its share of the input into one list per
//! run), then each task sets the bits of its own lists in its own blocks. OR is commutative, so
//! the result is bit-identical to inserting the hashes one by one.

use rayon::prelude::*;

use super::SplitBlockBloom;
use super::block::{BLOCK_BYTES, Block, BlockMask, block_index};
use crate::blocked::{PLAIN_LOOP_BYTES, PREFETCH_AHEAD};
use crate::error::{Error, Result};
use crate::prefetch::{NEAR, hint_step, prefetch_ahead};

/// Below this many hashes the bulk insert runs on one thread: starting the tasks would cost
/// more than the threads win.
const BULK_MIN: usize = 1 << 14;

/// Tasks per thread in the bulk insert: a few, so a thread that finishes early takes another
/// run while one with a denser run still works.
const TASKS_PER_THREAD: usize = 4;

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

#[inline(always)]
fn block_at<B: BlockBytes>(blocks: &[B], hash: u64) -> &B {
    blocks
        .get(block_index(hash, blocks.len()))
        .unwrap_or(B::EMPTY)
}

/// One lookup in any run of blocks.
#[inline(always)]
pub(crate) fn contains_in<B: BlockBytes>(blocks: &[B], hash: u64) -> bool {
    block_at(blocks, hash)
        .load()
        .test(BlockMask::for_hash(hash))
}

/// The batched lookup over any run of blocks: `out[i] = contains(hashes[i])`; an error (and
/// nothing written) when the two slices differ in length.
pub(crate) fn contains_hashes_in<B: BlockBytes>(
    blocks: &[B],
    hashes: &[u64],
    out: &mut [bool],
) -> Result<()> {
    if hashes.len() != out.len() {
        return Err(Error::InvalidParameter {
            name: "output length",
            value: out.len().to_string(),
            allowed: "equal to the number of hashes",
        });
    }
    if std::mem::size_of_val(blocks) <= PLAIN_LOOP_BYTES {
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = contains_in(blocks, h);
        }
        return Ok(());
    }
    let mut out = out.iter_mut();
    prefetch_ahead(hashes, PREFETCH_AHEAD, NEAR, |to_l2, to_l1, now| {
        hint_step(to_l2, to_l1, |h| block_at(blocks, h));
        if let (Some(h), Some(o)) = (now, out.next()) {
            *o = contains_in(blocks, h);
        }
    });
    Ok(())
}

/// Counts how many of `hashes` may be in `blocks`, with the batched lookup's prefetching.
pub(crate) fn count_contained_in<B: BlockBytes>(blocks: &[B], hashes: &[u64]) -> usize {
    if std::mem::size_of_val(blocks) <= PLAIN_LOOP_BYTES {
        return hashes.iter().filter(|&&h| contains_in(blocks, h)).count();
    }
    let mut found = 0;
    prefetch_ahead(hashes, PREFETCH_AHEAD, NEAR, |to_l2, to_l1, now| {
        hint_step(to_l2, to_l1, |h| block_at(blocks, h));
        if let Some(h) = now {
            found += usize::from(contains_in(blocks, h));
        }
    });
    found
}

/// Inserts `hashes` into `blocks`, which are the filter's blocks `first..first + blocks.len()`
/// of `total`; a hash outside that run is skipped (the callers never pass one). Prefetches
/// ahead on runs past the cache, as the lookups do.
fn insert_into(blocks: &mut [Block], first: usize, total: usize, hashes: &[u64]) {
    let at = |h: u64| block_index(h, total).wrapping_sub(first);
    if std::mem::size_of_val(blocks) <= PLAIN_LOOP_BYTES {
        for &h in hashes {
            if let Some(b) = blocks.get_mut(at(h)) {
                b.set(BlockMask::for_hash(h));
            }
        }
        return;
    }
    prefetch_ahead(hashes, PREFETCH_AHEAD, NEAR, |to_l2, to_l1, now| {
        hint_step(to_l2, to_l1, |h| blocks.get(at(h)).unwrap_or(&Block::ZERO));
        if let Some(h) = now
            && let Some(b) = blocks.get_mut(at(h))
        {
            b.set(BlockMask::for_hash(h));
        }
    });
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

    /// Inserts many pre-hashed values on this thread, prefetching ahead in filters past the
    /// cache.
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        let total = self.num_blocks();
        insert_into(self.blocks_mut(), 0, total, hashes);
    }

    /// Inserts many pre-hashed values on the rayon pool: each task owns a run of blocks (see
    /// the module's notes), and the result is bit-identical to inserting them one by one.
    pub fn par_insert_hashes(&mut self, hashes: &[u64]) {
        let total = self.num_blocks();
        let threads = rayon::current_num_threads();
        if hashes.len() < BULK_MIN || threads < 2 || total < 2 {
            return self.insert_hashes(hashes);
        }
        let tasks = (threads * TASKS_PER_THREAD).min(total);
        let per_task = total.div_ceil(tasks);
        let tasks = total.div_ceil(per_task);
        let shares: Vec<Vec<Vec<u64>>> = hashes
            .par_chunks(hashes.len().div_ceil(threads))
            .map(|chunk| {
                let mut lists = vec![Vec::with_capacity(chunk.len() / tasks + 16); tasks];
                for &h in chunk {
                    if let Some(list) = lists.get_mut(block_index(h, total) / per_task) {
                        list.push(h);
                    }
                }
                lists
            })
            .collect();
        self.blocks_mut()
            .par_chunks_mut(per_task)
            .enumerate()
            .for_each(|(task, run)| {
                for lists in &shares {
                    insert_into(run, task * per_task, total, &lists[task]);
                }
            });
    }
}
