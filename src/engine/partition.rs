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
//!
//! Generic over the bulk insert's [`Slots`] seam (a slot index monotonic in the hash, the bits
//! a hash sets in its slot), like `bulk.rs`: the blocked filter runs it through its lines on
//! its chosen SIMD path (`blocked/partitioned.rs`), and this file names no filter.

use crate::par::*;
use alloc::vec::Vec;

use super::bulk::Slots;
use super::line::Line;
use super::prefetch::{Level, prefetch_to};
use super::storage::LineBuf;

/// Hashes per block of a bucket: 4 KiB, a page's worth of one range's keys.
const BLOCK: usize = 512;

/// Lines per range, as a power of two: 4096 lines, 256 KiB, within a 1 MiB L2 with room for the
/// next range's lines. Half or twice as many lines per range run level with it past the cache.
/// Filters of more than [`MAX_RANGES`] such ranges take ranges of 8192 lines: see
/// [`range_shift`].
pub(crate) const RANGE_SHIFT: u32 = 12;

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
pub(crate) fn range_shift(lines: usize) -> u32 {
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
/// call ([`par_insert_hashes_with`](crate::BlockedBloom::par_insert_hashes_with)). What keeps
/// [`MIN_THREADS`] at 4 on 2-core machines is mostly the buffers' first touch, which kept buffers pay once. With the buffers
/// kept, the partitioned insert on 2 threads beats both the scanning tasks and the same
/// partition with buffers allocated per call (`docs/performance.md`, Building a filter). On
/// one thread input order stays: partitioned is slower there. The first touch itself ranges
/// from cheap on huge pages the kernel has just freed to more than the whole gain once the
/// memory has gone back to the host (`docs/performance.md`, Bounds); smaller chunks, whose
/// buffers are smaller, are slower even kept (README, "Memory allocated per call").
pub(crate) const MIN_THREADS_KEPT: usize = 2;

/// Whether a batch of `keys` hashes into `lines` lines on `threads` threads goes through
/// partitions: by [`par_insert_hashes`](crate::BlockedBloom::par_insert_hashes) (`kept`
/// false, buffers allocated for the call) or
/// [`par_insert_hashes_with`](crate::BlockedBloom::par_insert_hashes_with) (`kept` true).
pub(crate) fn use_for(lines: usize, keys: usize, threads: usize, kept: bool) -> bool {
    let fewest = if kept { MIN_THREADS_KEPT } else { MIN_THREADS };
    threads >= fewest
        && lines * size_of::<Line>() >= MIN_BYTES
        && keys / lines >= MIN_KEYS_PER_LINE
        && (threads >= MIN_THREADS || ranges(lines) <= MAX_RANGES)
}

/// Whether a fill piece by piece ([`par_fill`](crate::BlockedBloom::par_fill)) of a filter of
/// `lines` lines on `threads` threads goes through partitions: where a whole batch of many keys per line
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
pub(crate) fn chunk_keys(lines: usize) -> usize {
    lines.saturating_mul(CHUNK_KEYS_PER_LINE).max(1)
}

/// The memory the partitioned insert sorts a batch into, kept from one call to the next: pass
/// the same `BuildBuffers` to
/// [`BlockedBloom::par_insert_hashes_with`](crate::BlockedBloom::par_insert_hashes_with) for
/// every filter built from a whole batch (a storage engine writing one file after another), and the buffers are
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

    /// Appends each of `hashes` to the bucket of its range of slots (`S::index` of `total`, in
    /// ranges of `1 << shift` slots). At most the `hashes` [`prepare`](Self::prepare) was sized for,
    /// since the last [`clear`](Self::clear).
    fn fill<S: Slots>(&mut self, hashes: &[u64], total: usize, shift: u32) {
        let pool: &mut [u64] = bytemuck::cast_slice_mut(&mut self.pool);
        for &h in hashes {
            let range = S::index(h, total) >> shift;
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

impl BuildBuffers {
    /// Readies, emptied, one partition per thread of `threads` (no more than the ranges of
    /// `1 << shift` lines that `total` lines make) for chunks of up to `chunk` hashes split
    /// evenly among them (see [`Partition::prepare`]). The hashes each partition takes per
    /// chunk, or `None` where the memory cannot be had.
    pub(crate) fn prepare(
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
    pub(crate) fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// Sorts `piece` into the partitions, each taking an equal share of it (at most
    /// `piece.len().div_ceil(partitions)`), in parallel on more than one, into ranges of
    /// `1 << shift` of `total` slots (`S::index`).
    pub(crate) fn fill<S: Slots>(&mut self, piece: &[u64], total: usize, shift: u32) {
        if let [part] = self.parts.as_mut_slice() {
            part.fill::<S>(piece, total, shift);
            return;
        }
        let share = piece.len().div_ceil(self.parts.len()).max(1);
        self.parts
            .par_iter_mut()
            .zip(piece.par_chunks(share))
            .for_each(|(part, share)| part.fill::<S>(share, total, shift));
    }

    /// Inserts every partition's hashes into `slots` (ranges of `1 << shift` slots), each
    /// thread a run of whole ranges, then empties the partitions. `run(slots, first, ranges)`
    /// inserts the keys of `ranges` whose slot lies in `slots`, the filter's slots `first..`:
    /// the filter's [`insert_ranges`] on its chosen SIMD path, so that the path is chosen once
    /// per run, not per key.
    pub(crate) fn insert_into<T: Send>(
        &mut self,
        slots: &mut [T],
        shift: u32,
        run: impl Fn(&mut [T], usize, Ranges<'_>) + Sync,
    ) {
        let total = slots.len();
        let parts = Ranges(&self.parts);
        if self.parts.len() == 1 {
            run(slots, 0, parts);
        } else {
            // Each task's run of slots: whole ranges, the last run possibly shorter.
            let per_task = ranges_of(total, shift).div_ceil(self.parts.len()) << shift;
            slots
                .par_chunks_mut(per_task)
                .enumerate()
                .for_each(|(task, slots)| run(slots, task * per_task, parts));
        }
        self.parts.iter_mut().for_each(Partition::clear);
    }
}

/// The partitions' hashes, grouped by range, as [`BuildBuffers::insert_into`] hands them to a
/// filter's run.
#[derive(Clone, Copy)]
pub(crate) struct Ranges<'a>(&'a [Partition]);

/// The length of the chunks a batch of `keys` hashes into `lines` lines goes in: as few as
/// hold at most [`CHUNK_KEYS_PER_LINE`] keys per line, all of one length (the last one
/// possibly a little shorter), at least 1. Full chunks and a short last one would cost more per
/// key: the last chunk's ranges' lines are read and written back for fewer keys each, and it
/// is split among the threads by a full chunk's share, so one thread fills it alone. Equal
/// chunks, each split evenly, keep every thread busy on every chunk (measured in
/// `docs/performance.md`, Levers tried).
pub(crate) fn chunk_len(keys: usize, lines: usize) -> usize {
    let most = chunk_keys(lines);
    keys.div_ceil(keys.div_ceil(most).max(1)).max(1)
}

/// Inserts the keys of every partition whose range lies in `slots`, the filter's slots
/// `first..` of `total` in ranges of `1 << shift` slots (`first` a multiple of the range size),
/// range by range; while a range takes its keys, the slots of the next range are prefetched
/// into L2, one per key.
#[inline(always)]
pub(crate) fn insert_ranges<S: Slots>(
    seam: &S,
    slots: &mut [S::Slot],
    first: usize,
    total: usize,
    shift: u32,
    parts: Ranges<'_>,
) {
    let size = 1 << shift;
    let mut start = 0;
    while start < slots.len() {
        let len = size.min(slots.len() - start);
        let (here, after) = slots[start..].split_at_mut(len);
        let next = &after[..size.min(after.len())];
        let offset = first + start;
        let mut ahead = next.iter();
        for part in parts.0 {
            part.each_block(offset >> shift, |hashes| {
                for &h in hashes {
                    if let Some(slot) = ahead.next() {
                        prefetch_to(Level::L2, slot);
                    }
                    seam.set(&mut here[S::index(h, total) - offset], h);
                }
            });
        }
        start += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::line::line_index;
    use crate::hash::mix64;

    /// A seam of one 64-bit word per slot, a hash setting one bit of it: the partitioned
    /// insert's bookkeeping without any filter.
    struct Words;

    impl Slots for Words {
        type Slot = u64;
        fn set(&self, slot: &mut u64, hash: u64) {
            *slot |= 1 << (hash & 63);
        }
    }

    /// Through 1 to 5 partitions and both range sizes, every slot gets exactly the bits of
    /// setting each hash in turn, skewed batches (one range) included.
    #[test]
    fn ranges_insert_each_hash_into_its_slot() {
        let mut buffers = BuildBuffers::new();
        for total in [1, 100, 4097, 3 * 4096 + 5, 20_000] {
            for hashes in [
                (0..50_000u64).map(mix64).collect::<Vec<u64>>(),
                (0..20_000u64).collect(),
            ] {
                let mut want = vec![0u64; total];
                hashes
                    .iter()
                    .for_each(|&h| Words.set(&mut want[Words::index(h, total)], h));
                for threads in 1..=5 {
                    for shift in [RANGE_SHIFT, RANGE_SHIFT + 1] {
                        let mut got = vec![0u64; total];
                        let chunk = chunk_len(hashes.len(), total);
                        assert!(buffers.prepare(threads, total, shift, chunk).is_some());
                        for piece in hashes.chunks(chunk) {
                            buffers.fill::<Words>(piece, total, shift);
                            buffers.insert_into(&mut got, shift, |slots, first, parts| {
                                insert_ranges(&Words, slots, first, total, shift, parts)
                            });
                        }
                        assert_eq!(got, want, "{total} slots, {threads} threads, shift {shift}");
                    }
                }
            }
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
        part.fill::<Words>(&hashes, total, RANGE_SHIFT);
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
}
