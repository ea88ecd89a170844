//! Batched lookups and inserts (software prefetch) and the rayon bulk insert.
//!
//! A lookup in a filter far larger than the last-level cache is one cache miss; the scalar path
//! waits for each miss in turn. The batched paths compute a group of line addresses first, issue
//! a prefetch for each, and only then build masks and test, so the misses of a group overlap.
//! The bulk insert partitions hashes by line range so that each rayon task owns a disjoint,
//! contiguous run of lines and writes it without atomics; since OR is commutative the result is
//! bit-identical to inserting the same hashes one by one.

use crate::prefetch::prefetch;
use rayon::prelude::*;

use super::simd::{Line, mask_for};
use super::{BlockedBloom, line_index};
use crate::error::{Error, Result};

/// Keys whose lines are computed and prefetched together before any is tested. 16 outstanding
/// misses is about what one core's fill buffers hold (measured: `benches/lookup.rs`,
/// `batched/*`; 8 and 32 were within noise of 16 on the 512 MiB filter).
const GROUP: usize = 16;

/// Bulk inserts work through their input in blocks of this many hashes, so the partition buffer
/// stays small (8 MiB) whatever the input size.
const BULK_BLOCK: usize = 1 << 20;

/// Below this many hashes the bulk insert runs sequentially: the partition would cost more
/// than the threads win.
const BULK_MIN: usize = 1 << 14;

impl BlockedBloom {
    /// Looks up many pre-hashed keys at once: `out[i] = self.contains_hash(hashes[i])`.
    /// Faster than a loop over [`contains_hash`](Self::contains_hash) on filters larger than the
    /// cache, because the memory misses of each group of keys overlap. An error (and nothing
    /// written) when the two slices differ in length.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        contains_hashes_in(&self.lines, self.hashes, hashes, out)
    }

    /// Counts how many of the pre-hashed keys may be present, with the batched lookup.
    pub fn count_contained_hashes(&self, hashes: &[u64]) -> usize {
        count_contained_in(&self.lines, self.hashes, hashes)
    }

    /// Inserts many pre-hashed keys on this thread, prefetching each group's lines first.
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        if fits_in_cache(&self.lines) {
            // As for lookups: nothing to overlap in cache (grouped inserts ran at 0.5x the
            // plain loop on a 16 KiB filter, `benches/insert.rs`).
            hashes.iter().for_each(|&h| self.insert_hash(h));
            return;
        }
        let total = self.lines.len();
        insert_prefetched(&mut self.lines, 0, total, hashes, self.hashes);
    }

    /// Inserts many pre-hashed keys with all of rayon's threads. Bit-identical to
    /// [`insert_hashes`](Self::insert_hashes): hashes are partitioned by line range and each
    /// task writes only its own range.
    pub fn par_insert_hashes(&mut self, hashes: &[u64]) {
        let threads = rayon::current_num_threads();
        if threads <= 1 || hashes.len() < BULK_MIN || self.lines.len() < 64 {
            self.insert_hashes(hashes);
            return;
        }
        // A few parts per thread evens out the work; each part is a contiguous run of lines.
        let parts = (threads * 4).min(self.lines.len());
        let per_part = self.lines.len().div_ceil(parts);
        let total = self.lines.len();
        let k = self.hashes;
        let sources = threads;
        let mut buckets: Vec<Vec<Vec<u64>>> = vec![vec![Vec::new(); parts]; sources];
        for block in hashes.chunks(BULK_BLOCK) {
            let per_source = block.len().div_ceil(sources);
            buckets
                .par_iter_mut()
                .zip(block.par_chunks(per_source))
                .for_each(|(mine, chunk)| {
                    mine.iter_mut().for_each(Vec::clear);
                    for &h in chunk {
                        mine[line_index(h, total) / per_part].push(h);
                    }
                });
            let buckets = &buckets;
            self.lines
                .par_chunks_mut(per_part)
                .enumerate()
                .for_each(|(part, lines)| {
                    for source in buckets {
                        insert_prefetched(lines, part * per_part, total, &source[part], k);
                    }
                });
        }
    }
}

/// The batched lookup over any run of lines with `k` probes per key: the one implementation
/// behind [`BlockedBloom::contains_hashes`] and the zero-copy view's. An error (and nothing
/// written) when the two slices differ in length.
pub(crate) fn contains_hashes_in(
    lines: &[Line],
    k: u32,
    hashes: &[u64],
    out: &mut [bool],
) -> Result<()> {
    check_same_len(hashes.len(), out.len())?;
    if fits_in_cache(lines) {
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = lines[line_index(h, lines.len())].test(mask_for(h, k));
        }
        return Ok(());
    }
    for (hs, os) in hashes.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
        let idx = prefetch_group(lines, 0, lines.len(), hs);
        for ((o, &h), &i) in os.iter_mut().zip(hs).zip(&idx) {
            *o = lines[i].test(mask_for(h, k));
        }
    }
    Ok(())
}

/// How many of `hashes` may be in `lines`, with the batched lookup.
pub(crate) fn count_contained_in(lines: &[Line], k: u32, hashes: &[u64]) -> usize {
    if fits_in_cache(lines) {
        let test = |&h: &u64| lines[line_index(h, lines.len())].test(mask_for(h, k));
        return hashes.iter().filter(|h| test(h)).count();
    }
    let mut found = 0;
    for hs in hashes.chunks(GROUP) {
        let idx = prefetch_group(lines, 0, lines.len(), hs);
        for (&h, &i) in hs.iter().zip(&idx) {
            found += usize::from(lines[i].test(mask_for(h, k)));
        }
    }
    found
}

/// Filters this small live in L1/L2, where there is no miss to overlap: the plain loop is
/// faster than grouping and prefetching (measured with `benches/lookup.rs`: at 16 KiB the
/// grouped path ran at 0.77x the scalar loop's rate; at 1 MiB it was 1.2x faster).
const CACHED_BYTES: usize = 256 << 10;

fn fits_in_cache(lines: &[Line]) -> bool {
    std::mem::size_of_val(lines) <= CACHED_BYTES
}

/// The index in `lines` of each hash of a group (at most [`GROUP`]), each line prefetched.
/// `lines` hold the filter's lines `first..first + lines.len()` of `total` in all, and every
/// hash must fall in that range (the whole filter: `first = 0, total = lines.len()`).
#[inline(always)]
fn prefetch_group(lines: &[Line], first: usize, total: usize, hashes: &[u64]) -> [usize; GROUP] {
    let mut idx = [0usize; GROUP];
    for (slot, &h) in idx.iter_mut().zip(hashes) {
        *slot = line_index(h, total) - first;
        prefetch(&lines[*slot]);
    }
    idx
}

/// Inserts `hashes` into `lines`, which hold the filter's lines `first..first + lines.len()` of
/// `total` in all; every hash must fall in that range (the bulk insert partitions so it does).
fn insert_prefetched(lines: &mut [Line], first: usize, total: usize, hashes: &[u64], k: u32) {
    for hs in hashes.chunks(GROUP) {
        let idx = prefetch_group(lines, first, total, hs);
        for (&h, &i) in hs.iter().zip(&idx) {
            lines[i].set(mask_for(h, k));
        }
    }
}

fn check_same_len(hashes: usize, out: usize) -> Result<()> {
    if hashes != out {
        return Err(Error::InvalidParameter {
            name: "output length",
            value: out.to_string(),
            allowed: "equal to the number of hashes",
        });
    }
    Ok(())
}
