//! The partitioned insert: a large batch into a filter far larger than the cache.
//!
//! Inserting keys in input order writes one random line per key, a cache miss and a dirty
//! line written back for every key. When a batch holds several keys per line, sorting it
//! first by *range of lines* turns that into cache hits: the hashes of a chunk of the batch go
//! into per-range buckets (one sequential pass, [`Partition::fill`]), then each range's lines
//! (256 KiB, within L2) take all their keys at once while the next range's lines are
//! prefetched. Each line then comes from memory once per chunk instead of once per key. The
//! ranges are disjoint runs of lines, so with several threads each fills a partition of its
//! share of the chunk, then each inserts a run of ranges taking the keys of every partition:
//! no thread reads another's share of the input, and no line has two writers. OR is
//! commutative, so the bits are exactly those of inserting one key at a time.
//!
//! This is the radix-partitioning step of partitioned hash joins (Manegold, Boncz and Kersten,
//! "Optimizing main-memory join on modern hardware", IEEE TKDE 2002: partition until each
//! part fits the cache). The buckets need no counting pass: each is a list of 4 KiB blocks
//! from one pool, so a skewed batch (all keys in one range) fits as well as a uniform one.
//! The batched inserts hint their lines into L2 (`engine/prefetch.rs`), which makes input order
//! cheaper than sorting first on one and two threads, so this runs only on [`MIN_THREADS`]
//! or more (or [`MIN_THREADS_KEPT`] with kept buffers), where it spares each thread a scan of
//! the whole batch; its own prefetch of the next range's lines goes into L2 as well
//! (`docs/performance.md`, Levers tried, has the figures).
//! On a machine that hands freed memory back to its host (free page reporting), the buffers'
//! first touch can cost as much again; see README, "The partitioned insert". The buckets take
//! plain stores: staging each range's hashes in a line written to the pool with a
//! non-temporal store slows the sort, and the insert then reads its keys from memory.

use crate::par::*;
use alloc::vec::Vec;

use super::{BlockedBloom, line_index};
use crate::engine::arch::{Kernel, Place, per_path, placed, simd_path};
use crate::engine::mask::{Line, Probes};
use crate::engine::prefetch::{Level, prefetch_to};
use crate::engine::storage::LineBuf;

/// Hashes per block of a bucket: 4 KiB, a page's worth of one range's keys.
const BLOCK: usize = 512;

/// Lines per range, as a power of two: 4096 lines, 256 KiB, within a 1 MiB L2 with room for the
/// next range's lines. Half or twice as many lines per range run level with it past the cache.
/// Filters of more than [`MAX_RANGES`] such ranges take ranges of 8192 lines: see
/// [`range_shift`].
const RANGE_SHIFT: u32 = 12;

/// The most ranges a filter is split into before its ranges double in size, and, on fewer
/// than [`MIN_THREADS`] threads, the most for which the partitioned insert runs at all. The
/// sort writes to every range's open block in turn, so its cost grows with their number once
/// those lines no longer fit L1. Past this many, ranges of 8192 lines keep the open blocks
/// few while still leaving room in L2, which pays more than the smaller ranges' room; ranges
/// of 16 384 lines (1 MiB, a whole L2) leave none. Up to this many, the smaller ranges are
/// level or ahead (measured in `docs/performance.md`, Levers tried).
const MAX_RANGES: usize = 1024;

/// The range size, as a shift, for a filter of `lines` lines: [`RANGE_SHIFT`], or one more
/// for filters of more than [`MAX_RANGES`] ranges of that size.
pub(super) fn range_shift(lines: usize) -> u32 {
    if lines > MAX_RANGES << RANGE_SHIFT {
        RANGE_SHIFT + 1
    } else {
        RANGE_SHIFT
    }
}

/// The number of ranges of a filter of `lines` lines (at least one line).
fn ranges(lines: usize) -> usize {
    ranges_of(lines, range_shift(lines))
}

/// The number of ranges of `1 << shift` lines that `lines` lines (at least one) make.
fn ranges_of(lines: usize, shift: u32) -> usize {
    ((lines.max(1) - 1) >> shift) + 1
}

/// Filters smaller than this are filled in input order: a filter that fits the last-level
/// cache gains nothing from sorting its keys first: while the lines come from L3 the sort
/// costs more than it saves, and once they come from memory it saves more, the more so the
/// larger the filter. 32 MiB is the size of a large L3 cache.
const MIN_BYTES: usize = 32 << 20;

/// A batch is partitioned only when it holds at least this many keys per line of the filter
/// (fewer, and most lines would still be read from memory for one key). At 4 keys per line
/// each line read still serves enough keys to beat input order with every prefetch into L1,
/// once the buffers are touched (the first call of a process pays their page faults).
const MIN_KEYS_PER_LINE: usize = 4;

/// Keys per line in one chunk of the batch: a chunk's partition holds 8 bytes per key, so its
/// buffers take twice the filter's size at 16 keys per line. Each chunk reads every line of
/// the filter and writes it back once, so longer chunks move fewer lines per key: 16 keys per
/// line beat 8, and 8 beat 4 (`docs/performance.md`, Levers tried), for buffers twice the
/// filter's size rather than half or the same.
const CHUNK_KEYS_PER_LINE: usize = 16;

/// The fewest threads the partitioned insert runs on; fewer go through the prefetching insert
/// (one thread) or the bulk insert's tasks, which each scan the whole batch (`batch.rs`).
/// The batched inserts hint their lines into L2 (`engine/prefetch.rs`), so inserting in input order
/// costs less than sorting first: input order is faster on one thread, and the tasks are level
/// with or ahead of the partitioned insert on two. Each task, though, reads the whole batch
/// however many there are, while a thread of the partitioned insert reads only its share:
/// with T threads a task's scan stays at one pass over all keys while its inserts fall to 1/T
/// of them, so from 4 threads on the partitioned insert takes over. That threshold follows
/// from those costs; `bulk_scaling` (`docs/performance.md`) checks it on more cores.
pub(crate) const MIN_THREADS: usize = 4;

/// The fewest threads the partitioned insert runs on with its buffers kept from an earlier
/// call ([`BlockedBloom::par_insert_hashes_with`]). What keeps [`MIN_THREADS`] at 4 on 2-core
/// machines is mostly the buffers' first touch, which kept buffers pay once. With the buffers
/// kept, the partitioned insert on 2 threads beats both the scanning tasks and the same
/// partition with buffers allocated per call (`docs/performance.md`, Building a filter). On
/// one thread input order stays: partitioned is slower there. The first touch itself ranges
/// from cheap on huge pages the kernel has just freed to more than the whole gain once the
/// memory has gone back to the host (`docs/performance.md`, Bounds); smaller chunks, whose
/// buffers are smaller, are slower even kept (README, "Memory allocated per call").
pub(crate) const MIN_THREADS_KEPT: usize = 2;

/// Whether a batch of `keys` hashes into `lines` lines on `threads` threads goes through
/// partitions: by [`BlockedBloom::par_insert_hashes`] (`kept` false, buffers allocated for the
/// call) or [`BlockedBloom::par_insert_hashes_with`] (`kept` true).
pub(crate) fn use_for(lines: usize, keys: usize, threads: usize, kept: bool) -> bool {
    let fewest = if kept { MIN_THREADS_KEPT } else { MIN_THREADS };
    threads >= fewest
        && lines * size_of::<Line>() >= MIN_BYTES
        && keys / lines >= MIN_KEYS_PER_LINE
        && (threads >= MIN_THREADS || ranges(lines) <= MAX_RANGES)
}

/// Whether a fill piece by piece ([`BlockedBloom::par_fill`]) of a filter of `lines` lines
/// on `threads` threads goes through partitions: where a whole batch of many keys per line
/// would with kept buffers.
pub(crate) fn fills(lines: usize, threads: usize) -> bool {
    use_for(
        lines,
        lines.saturating_mul(MIN_KEYS_PER_LINE),
        threads,
        true,
    )
}

/// The most keys a chunk of a batch into `lines` lines holds: [`CHUNK_KEYS_PER_LINE`] per
/// line, at least 1.
pub(super) fn chunk_keys(lines: usize) -> usize {
    lines.saturating_mul(CHUNK_KEYS_PER_LINE).max(1)
}

/// The memory the partitioned insert sorts a batch into, kept from one call to the next: pass
/// the same `BuildBuffers` to [`BlockedBloom::par_insert_hashes_with`] for every filter built
/// from a whole batch (a storage engine writing one file after another), and the buffers are
/// allocated and first touched once instead of on every call.
///
/// They grow to what the largest batch needed, up to about twice the filter's size (8 bytes
/// per key of a chunk of up to 16 keys per line), and hold it until dropped. A new
/// `BuildBuffers` holds nothing.
///
/// ```
/// use linebloom::{BlockedBloom, BuildBuffers};
///
/// let mut buffers = BuildBuffers::new();
/// for file in 0..3u64 {
///     let hashes: Vec<u64> = (0..1000).map(|i| linebloom::hash::mix64(file << 32 | i)).collect();
///     let mut filter = BlockedBloom::with_fpr(hashes.len() as u64, 0.01)?;
///     filter.par_insert_hashes_with(&hashes, &mut buffers);
///     assert!(hashes.iter().all(|&h| filter.contains_hash(h)));
/// }
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Default)]
pub struct BuildBuffers {
    /// One partition per thread of the last partitioned call.
    parts: Vec<Partition>,
}

impl BuildBuffers {
    /// Buffers that hold nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes these buffers hold.
    pub fn size_bytes(&self) -> usize {
        self.parts.iter().map(Partition::size_bytes).sum()
    }
}

impl core::fmt::Debug for BuildBuffers {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BuildBuffers")
            .field("partitions", &self.parts.len())
            .field("size_bytes", &self.size_bytes())
            .finish()
    }
}

/// One thread's share of a chunk, its hashes grouped by range of lines, each range's in input
/// order in a list of [`BLOCK`]-hash blocks from one pool.
struct Partition {
    /// The pool of blocks, on huge pages where the filter's lines would be.
    pool: LineBuf,
    /// Per range, the blocks it filled, by number.
    full: Vec<Vec<usize>>,
    /// Per range, where its next hash goes in the pool: inside its open block.
    next: Vec<usize>,
    /// Blocks handed out.
    used: usize,
}

impl Partition {
    /// A partition that holds nothing; [`prepare`](Self::prepare) sizes it.
    fn empty() -> Self {
        Partition {
            pool: LineBuf::from(Vec::new()),
            full: Vec::new(),
            next: Vec::new(),
            used: 0,
        }
    }

    /// Readies this partition, emptied, for up to `hashes` hashes over `ranges` ranges: every
    /// block but each range's open one is full, so `hashes / BLOCK + ranges` blocks always
    /// suffice. A pool already that large is reused as it is (its old hashes are never read:
    /// only what [`fill`](Self::fill) writes after this is); a smaller one is replaced.
    /// `false`, the partition left empty, where the pool cannot be allocated.
    fn prepare(&mut self, ranges: usize, hashes: usize) -> bool {
        let lines = hashes
            .div_ceil(BLOCK)
            .saturating_add(ranges)
            .saturating_mul(BLOCK / 8);
        if self.pool.len() < lines {
            // The old pool goes first, so the two are never held at once.
            *self = Partition::empty();
            match LineBuf::zeroed(lines) {
                Ok(pool) => self.pool = pool,
                Err(_) => return false,
            }
        }
        self.full.resize_with(ranges, Vec::new);
        self.next.resize(ranges, 0);
        self.clear();
        true
    }

    /// The bytes this partition holds.
    fn size_bytes(&self) -> usize {
        let lists: usize = self
            .full
            .iter()
            .map(|f| f.capacity() * size_of::<usize>())
            .sum();
        self.pool.len() * size_of::<Line>()
            + lists
            + self.full.capacity() * size_of::<Vec<usize>>()
            + self.next.capacity() * size_of::<usize>()
    }

    /// Empties every bucket: range `r` gets block `r` as its open block.
    fn clear(&mut self) {
        self.full.iter_mut().for_each(Vec::clear);
        self.next
            .iter_mut()
            .enumerate()
            .for_each(|(r, n)| *n = r * BLOCK);
        self.used = self.next.len();
    }

    /// Appends each of `hashes` to the bucket of its range of lines (of `total`, in ranges of
    /// `1 << shift` lines). At most the `hashes` [`prepare`](Self::prepare) was sized for,
    /// since the last [`clear`](Self::clear).
    fn fill(&mut self, hashes: &[u64], total: usize, shift: u32) {
        let pool: &mut [u64] = bytemuck::cast_slice_mut(&mut self.pool);
        for &h in hashes {
            let range = line_index(h, total) >> shift;
            let at = self.next[range];
            pool[at] = h;
            let mut next = at + 1;
            if next.is_multiple_of(BLOCK) {
                self.full[range].push(at / BLOCK);
                next = self.used * BLOCK;
                self.used += 1;
            }
            self.next[range] = next;
        }
    }

    /// Calls `f` on the hashes of `range`, block by block, in input order. Before each full
    /// block, the range's next block is hinted into L2. A range's blocks lie anywhere in the
    /// pool, so the hardware's stream prefetcher starts over at each one, and the inserts
    /// would wait on its first lines. The hint costs a few instructions per block and speeds
    /// the whole build, on one thread and on two (`docs/performance.md`, Levers tried).
    fn each_block(&self, range: usize, mut f: impl FnMut(&[u64])) {
        let pool: &[u64] = bytemuck::cast_slice(&self.pool);
        let full = &self.full[range];
        let open = self.next[range] / BLOCK;
        for (i, &b) in full.iter().enumerate() {
            let next = full.get(i + 1).copied().unwrap_or(open);
            let lines = BLOCK / 8;
            self.pool[next * lines..(next + 1) * lines]
                .iter()
                .for_each(|line| prefetch_to(Level::L2, line));
            let start = b * BLOCK;
            f(&pool[start..start + BLOCK]);
        }
        let next = self.next[range];
        f(&pool[next - next % BLOCK..next]);
    }
}

impl BlockedBloom {
    /// Inserts `hashes` through partitions on `threads` threads (rayon's, when more than one),
    /// in chunks of [`CHUNK_KEYS_PER_LINE`] keys per line, sorting them into `buffers` (grown
    /// where too small, kept for the caller). Returns `false`, having inserted nothing, where
    /// the partitions cannot be allocated. Never inlined: `insert_hashes` and
    /// `par_insert_hashes` share this one compiled copy (inlined into a caller with one thread
    /// known, the same partitioned insert runs slower in some binaries and not in others: code
    /// placement, not the algorithm, which one copy takes out of the picture).
    #[inline(never)]
    pub(super) fn insert_partitioned(
        &mut self,
        hashes: &[u64],
        threads: usize,
        buffers: &mut BuildBuffers,
    ) -> bool {
        let shift = range_shift(self.lines.len());
        self.insert_partitioned_in(hashes, threads, buffers, shift)
    }

    /// [`insert_partitioned`](Self::insert_partitioned) in ranges of `1 << shift` lines (the
    /// tests take every range size through small filters).
    fn insert_partitioned_in(
        &mut self,
        hashes: &[u64],
        threads: usize,
        buffers: &mut BuildBuffers,
        shift: u32,
    ) -> bool {
        let total = self.lines.len();
        let chunk = chunk_len(hashes.len(), total);
        if buffers.prepare(threads, total, shift, chunk).is_none() {
            return false;
        }
        for piece in hashes.chunks(chunk) {
            buffers.fill(piece, total, shift);
            buffers.insert_into(&mut self.lines, shift, self.probes);
        }
        true
    }
}

impl BuildBuffers {
    /// Readies, emptied, one partition per thread of `threads` (no more than the ranges of
    /// `1 << shift` lines that `total` lines make) for chunks of up to `chunk` hashes split
    /// evenly among them (see [`Partition::prepare`]). The hashes each partition takes per
    /// chunk, or `None` where the memory cannot be had.
    pub(super) fn prepare(
        &mut self,
        threads: usize,
        total: usize,
        shift: u32,
        chunk: usize,
    ) -> Option<usize> {
        let ranges = ranges_of(total, shift);
        let threads = threads.clamp(1, ranges);
        let share = chunk.div_ceil(threads);
        self.parts.truncate(threads);
        self.parts.resize_with(threads, Partition::empty);
        self.parts
            .iter_mut()
            .all(|part| part.prepare(ranges, share))
            .then_some(share)
    }

    /// The number of partitions [`prepare`](Self::prepare) readied.
    pub(super) fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// Sorts `piece` into the partitions, each taking an equal share of it (at most
    /// `piece.len().div_ceil(partitions)`), in parallel on more than one, into ranges of
    /// `1 << shift` of `total` lines.
    pub(super) fn fill(&mut self, piece: &[u64], total: usize, shift: u32) {
        if let [part] = self.parts.as_mut_slice() {
            part.fill(piece, total, shift);
            return;
        }
        let share = piece.len().div_ceil(self.parts.len()).max(1);
        self.parts
            .par_iter_mut()
            .zip(piece.par_chunks(share))
            .for_each(|(part, share)| part.fill(share, total, shift));
    }

    /// Inserts every partition's hashes into `lines` (ranges of `1 << shift` lines, `k`
    /// probes), each thread a run of whole ranges, then empties the partitions.
    pub(super) fn insert_into(&mut self, lines: &mut [Line], shift: u32, k: Probes) {
        let (total, path) = (lines.len(), simd_path());
        let parts = &self.parts;
        if parts.len() == 1 {
            insert_run(path, lines, 0, total, shift, k, parts);
        } else {
            // Each task's run of lines: whole ranges, the last run possibly shorter.
            let run = ranges_of(total, shift).div_ceil(parts.len()) << shift;
            lines
                .par_chunks_mut(run)
                .enumerate()
                .for_each(|(task, lines)| {
                    insert_run(path, lines, task * run, total, shift, k, parts)
                });
        }
        self.parts.iter_mut().for_each(Partition::clear);
    }
}

/// The length of the chunks a batch of `keys` hashes into `lines` lines goes in: as few as
/// hold at most [`CHUNK_KEYS_PER_LINE`] keys per line, all of one length (the last one
/// possibly a little shorter), at least 1. Full chunks and a short last one would cost more per
/// key: the last chunk's ranges' lines are read and written back for fewer keys each, and it
/// is split among the threads by a full chunk's share, so one thread fills it alone. Equal
/// chunks, each split evenly, keep every thread busy on every chunk (measured in
/// `docs/performance.md`, Levers tried).
pub(super) fn chunk_len(keys: usize, lines: usize) -> usize {
    let most = chunk_keys(lines);
    keys.div_ceil(keys.div_ceil(most).max(1)).max(1)
}

per_path! {
    /// Inserts the keys of every partition whose range lies in `lines`, the filter's lines
    /// `first..` of `total` in ranges of `1 << shift` lines (`first` a multiple of the range
    /// size), range by range, on one path; while a range takes its keys, the lines of the next
    /// range in `lines` are prefetched, one per key.
    fn insert_run(
        lines: &mut [Line],
        first: usize,
        total: usize,
        shift: u32,
        k: Probes,
        parts: &[Partition],
    ) = insert_run_with;
}

/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn insert_run_with<K: Kernel>(
    lines: &mut [Line],
    first: usize,
    total: usize,
    shift: u32,
    k: Probes,
    parts: &[Partition],
) {
    placed!(k, P => {
        // SAFETY: the caller's contract.
        unsafe { insert_run_placed::<K, P>(lines, first, total, shift, k, parts) }
    })
}

/// [`insert_run`] with path `K` and placement `P` fixed.
///
/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn insert_run_placed<K: Kernel, P: Place>(
    lines: &mut [Line],
    first: usize,
    total: usize,
    shift: u32,
    k: Probes,
    parts: &[Partition],
) {
    let size = 1 << shift;
    let mut start = 0;
    while start < lines.len() {
        let len = size.min(lines.len() - start);
        let (here, after) = lines[start..].split_at_mut(len);
        let next = &after[..size.min(after.len())];
        let offset = first + start;
        let mut ahead = next.iter();
        for part in parts {
            part.each_block(offset >> shift, |hashes| {
                for &h in hashes {
                    if let Some(line) = ahead.next() {
                        prefetch_to(Level::L2, line);
                    }
                    // SAFETY: the caller's contract.
                    unsafe { P::set::<K>(&mut here[line_index(h, total) - offset], h, k) };
                }
            });
        }
        start += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocked::Placement;
    use crate::hash::mix64;

    fn filter(lines: usize) -> BlockedBloom {
        BlockedBloom::with_lines(lines, 7, 0).unwrap()
    }

    /// On one thread and several, in one chunk and many, with uniform hashes and with batches
    /// skewed into one range (small integers: all in line 0) or mixed, the partitioned insert
    /// sets exactly the bits of inserting one key at a time.
    #[test]
    fn partitioned_inserts_set_exactly_the_bits_of_one_by_one_inserts() {
        let uniform: Vec<u64> = (0..200_000).map(mix64).collect();
        let skewed: Vec<u64> = (0..70_000).collect();
        let mixed: Vec<u64> = (0..90_000u64)
            .map(|i| if i % 3 == 0 { i } else { mix64(i) })
            .chain([0, u64::MAX, 1 << 63, (1 << 63) - 1])
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // Buffers kept across every call below: other filters, batches and thread counts,
        // their pools grown, reused larger than needed, and holding older calls' hashes.
        let mut kept = BuildBuffers::new();
        // One range, a range and a bit, several ranges with a short last one; chunks of
        // 16 keys per line, so the larger batches take several.
        for lines in [1, 100, 4097, 3 * 4096 + 5, 20_000] {
            for hashes in [&uniform, &skewed, &mixed] {
                let mut want = filter(lines);
                hashes.iter().for_each(|&h| want.insert_hash(h));
                for threads in [1, 2, 3, 5] {
                    for buffers in [&mut BuildBuffers::new(), &mut kept] {
                        let mut got = filter(lines);
                        let done =
                            pool.install(|| got.insert_partitioned(hashes, threads, buffers));
                        assert!(done);
                        assert!(got == want, "{lines} lines, {threads} threads");
                    }
                    // The larger ranges of large filters, through the same small ones.
                    let mut got = filter(lines);
                    let shift = RANGE_SHIFT + 1;
                    let done = pool
                        .install(|| got.insert_partitioned_in(hashes, threads, &mut kept, shift));
                    assert!(done);
                    assert!(
                        got == want,
                        "{lines} lines, {threads} threads, shift {shift}"
                    );
                }
            }
        }
        let mut empty = filter(10);
        assert!(empty.insert_partitioned(&[], 2, &mut BuildBuffers::new()));
        assert!(empty == filter(10));
        // The salted placement, and k > 8, through the same insert.
        for (k, placement) in [
            (7, Placement::Salted),
            (11, Placement::Shifted),
            (11, Placement::Salted),
        ] {
            let lines = 3 * 4096 + 5;
            let mut want = BlockedBloom::with_lines_placed(lines, k, placement, 0).unwrap();
            uniform.iter().for_each(|&h| want.insert_hash(h));
            let mut got = BlockedBloom::with_lines_placed(lines, k, placement, 0).unwrap();
            assert!(pool.install(|| got.insert_partitioned(&uniform, 3, &mut kept)));
            assert!(got == want, "{placement} k {k}");
        }
    }

    /// Chunks are as few as hold at most `CHUNK_KEYS_PER_LINE` keys per line, all of one
    /// length: no short last chunk.
    #[test]
    fn a_batch_goes_in_the_fewest_equal_chunks() {
        let most = 10 * CHUNK_KEYS_PER_LINE;
        for keys in [
            0,
            1,
            most - 1,
            most,
            most + 1,
            2 * most,
            2 * most + 1,
            1000 * most - 7,
        ] {
            let len = chunk_len(keys, 10);
            assert!((1..=most).contains(&len), "{keys} keys: {len}");
            let chunks = keys.div_ceil(len);
            assert_eq!(chunks, keys.div_ceil(most), "{keys} keys");
            // The last chunk is at most one key per chunk shorter than the others.
            assert!(chunks * len - keys < chunks.max(1), "{keys} keys: {len}");
        }
        assert_eq!(chunk_len(5, 0), 1);
        assert_eq!(chunk_len(usize::MAX, usize::MAX), usize::MAX);
    }

    /// A bucket's blocks hand back its hashes in input order, however many blocks it fills.
    #[test]
    fn a_partition_keeps_each_ranges_hashes_in_order() {
        let total = 5 << RANGE_SHIFT;
        assert_eq!(range_shift(total), RANGE_SHIFT);
        let hashes: Vec<u64> = (0..(3 * BLOCK as u64 + 7)).map(mix64).collect();
        let mut part = Partition::empty();
        assert!(part.prepare(5, hashes.len()));
        part.fill(&hashes, total, RANGE_SHIFT);
        for range in 0..5 {
            let mut got = Vec::new();
            part.each_block(range, |b| got.extend_from_slice(b));
            let want: Vec<u64> = hashes
                .iter()
                .copied()
                .filter(|&h| line_index(h, total) >> RANGE_SHIFT == range)
                .collect();
            assert_eq!(got, want, "range {range}");
        }
    }

    #[test]
    fn only_large_batches_into_large_filters_on_many_threads_are_partitioned() {
        let lines = MIN_BYTES / size_of::<Line>();
        for (t, kept) in [(MIN_THREADS, false), (MIN_THREADS_KEPT, true)] {
            assert!(use_for(lines, lines * MIN_KEYS_PER_LINE, t, kept));
            assert!(use_for(lines, lines * MIN_KEYS_PER_LINE, 64, kept));
            assert!(!use_for(lines, lines * MIN_KEYS_PER_LINE, t - 1, kept));
            assert!(!use_for(lines, lines * MIN_KEYS_PER_LINE - 1, t, kept));
            assert!(!use_for(lines - 1, lines * 100, t, kept));
        }
        assert!(!use_for(lines, lines * 100, MIN_THREADS - 1, false));
        // Past MAX_RANGES ranges of 8192 lines (512 MiB), only on MIN_THREADS or more.
        let most = MAX_RANGES << (RANGE_SHIFT + 1);
        assert!(use_for(most, most * 100, MIN_THREADS_KEPT, true));
        assert!(!use_for(most + 1, most * 100, MIN_THREADS_KEPT, true));
        assert!(use_for(most + 1, most * 100, MIN_THREADS, true));
        assert!(use_for(most + 1, most * 100, MIN_THREADS, false));
    }

    /// Ranges of 4096 lines up to MAX_RANGES of them, then of 8192; never more than MAX_RANGES
    /// ranges up to 512 MiB.
    #[test]
    fn large_filters_take_larger_ranges() {
        let limit = MAX_RANGES << RANGE_SHIFT;
        assert_eq!(range_shift(1), RANGE_SHIFT);
        assert_eq!(range_shift(limit), RANGE_SHIFT);
        assert_eq!(ranges(limit), MAX_RANGES);
        assert_eq!(range_shift(limit + 1), RANGE_SHIFT + 1);
        assert_eq!(ranges(limit + 1), MAX_RANGES / 2 + 1);
        assert_eq!(ranges(2 * limit), MAX_RANGES);
        assert_eq!(ranges(2 * limit + 1), MAX_RANGES + 1);
        assert_eq!(ranges(1), 1);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// One set of buffers kept through a random sequence of builds (filter sizes, batch
        /// sizes, thread counts, range sizes): every build sets exactly the bits of inserting
        /// its keys one at a time, whatever earlier builds left in the buffers.
        #[test]
        fn kept_buffers_never_change_the_bits(
            builds in proptest::collection::vec(
                (1usize..20_000, 0usize..60_000, 1usize..6, 0u32..2, proptest::prelude::any::<u64>()),
                1..4,
            )
        ) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let mut kept = BuildBuffers::new();
            for (lines, keys, threads, wider, seed) in builds {
                let hashes: Vec<u64> = (0..keys as u64).map(|i| mix64(seed ^ i)).collect();
                let mut want = filter(lines);
                hashes.iter().for_each(|&h| want.insert_hash(h));
                let mut got = filter(lines);
                let shift = RANGE_SHIFT + wider;
                let done = pool
                    .install(|| got.insert_partitioned_in(&hashes, threads, &mut kept, shift));
                proptest::prop_assert!(done);
                proptest::prop_assert!(got == want, "{} lines, {} keys, {} threads", lines, keys, threads);
            }
        }
    }

    /// Kept buffers grow to what a call needs and are reused as they are by a call that needs
    /// no more; a new one holds nothing.
    #[test]
    fn kept_buffers_grow_once_and_are_reused() {
        let hashes: Vec<u64> = (0..50_000).map(mix64).collect();
        let mut buffers = BuildBuffers::new();
        assert_eq!(buffers.size_bytes(), 0);
        let mut f = filter(3 * 4096);
        assert!(f.insert_partitioned(&hashes, 2, &mut buffers));
        let grown = buffers.size_bytes();
        assert!(grown >= hashes.len() * 8, "{grown}");
        assert!(f.insert_partitioned(&hashes[..10_000], 2, &mut buffers));
        assert_eq!(buffers.size_bytes(), grown);
        assert!(format!("{buffers:?}").contains("partitions: 2"));
        // One thread needs one partition: the other is let go.
        assert!(f.insert_partitioned(&hashes[..100], 1, &mut buffers));
        assert!(buffers.size_bytes() < grown);
    }
}

/// The partitioned build on one and two pinned threads beside input order and the scanning
/// tasks, on any thread count (`par_insert_hashes` partitions only from [`MIN_THREADS`]):
/// `cargo test --release -p linebloom --lib partitioned_build_times -- --ignored --nocapture`
/// (100 M keys into 119 MiB, seven rounds, the ways taking turns to come first; `N=...` for
/// other sizes).
/// Prints the median and range of ns per key for each.
#[cfg(test)]
mod timing {
    use super::*;
    use crate::hash::mix64;
    use std::time::Instant;

    #[test]
    #[ignore]
    fn partitioned_build_times() {
        let n: usize = std::env::var("N").map_or(100_000_000, |v| v.parse().unwrap());
        let keys: Vec<u64> = (0..n as u64).map(mix64).collect();
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        let (one, two) = (pool(1), pool(2));
        let names = [
            "input order, 1 thread",
            "partitioned, 1 thread",
            "tasks, 2 threads",
            "partitioned, 2 threads",
            "partitioned, kept, 2",
        ];
        let mut kept = BuildBuffers::new();
        let mut ns = vec![Vec::new(); names.len()];
        for round in 0..7 {
            for j in 0..names.len() {
                let way = (j + round) % names.len();
                let mut f = BlockedBloom::with_lines(n * 10 / 512, 7, 0).unwrap();
                f.clear();
                let started = Instant::now();
                match way {
                    0 => one.install(|| f.insert_hashes(&keys)),
                    1 => assert!(one.install(|| f.insert_partitioned(
                        &keys,
                        1,
                        &mut BuildBuffers::new()
                    ))),
                    2 => two.install(|| f.par_insert_hashes(&keys)),
                    3 => assert!(two.install(|| f.insert_partitioned(
                        &keys,
                        2,
                        &mut BuildBuffers::new()
                    ))),
                    _ => two.install(|| f.par_insert_hashes_with(&keys, &mut kept)),
                }
                ns[way].push(started.elapsed().as_secs_f64() * 1e9 / n as f64);
            }
        }
        for (name, v) in names.iter().zip(&mut ns) {
            v.sort_by(f64::total_cmp);
            let (low, mid, high) = (v[0], v[v.len() / 2], v[v.len() - 1]);
            eprintln!("{name:<24} {mid:.2} ({low:.2}-{high:.2}) ns per key");
        }
    }
}
