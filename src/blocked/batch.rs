//! Batched lookups and inserts (software prefetch) and the rayon bulk insert.
//!
//! A lookup in a filter far larger than the last-level cache is one cache miss; the scalar path
//! waits for each miss in turn, as many at once as the out-of-order window holds lookups. The
//! batched lookups are the engine's (`engine/lookup.rs`): they prefetch a key's line far ahead
//! of its test, so that many misses are in flight whatever a lookup costs in instructions, and
//! on filters of up to [`CACHED_BYTES`] run the plain loop, which is faster there; this file
//! gives them the lines ([`Probe`]) for each path and placement. One loop per path and
//! placement, compiled from Rust: the lookups' walk is the engine's, and there is no second,
//! hand-written one to keep in step with it.
//! In the bulk insert each rayon task owns a disjoint, contiguous run of lines, picks the hashes
//! of its run out of the input and writes its lines without atomics; since OR is commutative
//! the result is bit-identical to inserting the same hashes one by one. On 4 threads or more,
//! large batches into large filters go through `engine/partition.rs` instead (sorted by range of
//! lines first).

#[cfg(any(test, feature = "internals"))]
use alloc::{vec, vec::Vec};

use super::slots::Lines;
use crate::engine::bulk::{DRAIN, insert_prefetched, insert_task};
use crate::engine::lookahead::CACHED_BYTES;
use crate::engine::lookup::{Probe, contains_each, count_each};
use crate::par::*;
use core::marker::PhantomData;

use super::BuildBuffers;
use super::{BlockedBloom, Run, line_for_mut};
use crate::engine::arch::{Kernel, Place, per_path, placed, simd_path};
use crate::engine::mask::{Line, Probes};
use crate::engine::partition;
use crate::error::{Result, check_same_len};
use crate::hash::{Key, each_hashed_round, in_hashed_rounds};

/// Below this many hashes the bulk insert runs sequentially: starting the tasks would cost more
/// than the threads win.
const BULK_MIN: usize = 1 << 14;

impl BlockedBloom {
    /// Looks up many pre-hashed keys at once: `out[i] = self.contains_hash(hashes[i])`.
    /// Faster than a loop over [`contains_hash`](Self::contains_hash) on filters larger than the
    /// cache, because the memory misses of many keys overlap. An error (and nothing
    /// written) when the two slices differ in length.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        contains_hashes_in(&self.lines, self.probes, hashes, out)
    }

    /// [`contains_hashes`](Self::contains_hashes) on rayon's threads: the batch is split into
    /// runs of 64 Ki keys, each looked up with the batched (prefetching) lookup on one thread,
    /// so the answers are exactly those of `contains_hashes`. Past the cache each thread keeps
    /// its own misses in flight. Batches under 128 Ki keys run on the calling thread. An error
    /// (and nothing written) when the two slices differ in length.
    pub fn par_contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        par_contains_hashes_in(&self.lines, self.probes, hashes, out)
    }

    /// Counts how many of the pre-hashed keys may be present, with the batched lookup.
    pub fn count_contained_hashes(&self, hashes: &[u64]) -> usize {
        count_contained_in(&self.lines, self.probes, hashes)
    }

    /// Looks up many keys at once: `out[i] = self.contains(&keys[i])`. The keys are hashed
    /// 4096 at a time (on the stack) and each round goes through
    /// [`contains_hashes`](Self::contains_hashes), so past the cache their misses overlap as the
    /// batched lookup's do. An error (and nothing written) when the two slices differ in length.
    ///
    /// ```
    /// let mut filter = linebloom::BlockedBloom::with_fpr(1000, 0.01)?;
    /// filter.insert_keys(&["a", "b"]);
    /// let mut found = [false; 3];
    /// filter.contains_keys(&["a", "b", "c"], &mut found)?;
    /// assert_eq!(found[..2], [true, true]);
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn contains_keys<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        contains_keys_in(&self.lines, self.probes, self.seed, keys, out)
    }

    /// Inserts many keys: [`insert`](Self::insert) of each, hashed 4096 at a time (on the
    /// stack) and inserted through [`insert_hashes`](Self::insert_hashes).
    pub fn insert_keys<K: Key>(&mut self, keys: &[K]) {
        let seed = self.seed;
        each_hashed_round(keys, |k| k.hash_with_seed(seed), |h| self.insert_hashes(h));
    }

    /// Inserts many pre-hashed keys on this thread; in a filter of more than 2 MiB, prefetching
    /// lines ahead as the batched lookups do, and up to 2 MiB with the plain loop of
    /// [`insert_hash`](Self::insert_hash) compiled once per SIMD path (no dispatch per key).
    /// Takes no memory of its own. It keeps the input
    /// order: with the prefetches into L2, that is faster on one thread than sorting the batch
    /// by range of lines first (`engine/partition.rs`; see `partition::MIN_THREADS`).
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        if fits_in(&self.lines, CACHED_BYTES) {
            insert_loop(simd_path(), &mut self.lines, self.probes, hashes);
            return;
        }
        insert_prefetched_loop(simd_path(), &mut self.lines, self.probes, hashes);
    }

    /// Inserts many pre-hashed keys with all of rayon's threads. Bit-identical to
    /// [`insert_hashes`](Self::insert_hashes), since no line has two writers and OR is
    /// commutative. Runs on one thread for fewer than 16 Ki hashes. Two designs:
    /// - on fewer than 4 threads, and for a batch of fewer than 4 keys per line or a filter
    ///   under 32 MiB, each task owns one contiguous run of lines, scans the whole input and
    ///   inserts the keys of its run. No memory of its own; past the cache 2 threads run
    ///   faster than one, though short of twice as fast, since every task scans the whole
    ///   input (`docs/performance.md`, Building a filter);
    /// - on 4 threads or more, a batch of at least 4 keys per line into a filter of at least
    ///   32 MiB (building a filter from all its keys at once) is partitioned: each thread
    ///   sorts its share of a chunk by range of lines, then each inserts a run of ranges from
    ///   every thread's buckets, its lines in L2 (`engine/partition.rs`; temporary memory up to twice
    ///   the filter's size), so no thread reads another's share of the input.
    ///
    /// To build one filter after another from whole batches, keep that memory from call to
    /// call with [`par_insert_hashes_with`](Self::par_insert_hashes_with), which partitions
    /// from 2 threads on. (Allocated per call, that memory's first touch can cost more than
    /// partitioning on 2 threads saves; `docs/performance.md` says how to measure it on a given
    /// machine.)
    pub fn par_insert_hashes(&mut self, hashes: &[u64]) {
        self.par_insert(hashes, &mut BuildBuffers::new(), false);
    }

    /// [`par_insert_hashes`](Self::par_insert_hashes) with the partitioned insert's buffers
    /// kept in `buffers` from one call to the next, so that they are allocated and first
    /// touched once, not on every call. With them kept, a batch of at least 4 keys per line
    /// into a filter of at least 32 MiB is partitioned from 2 threads on, which on 2 threads
    /// beats both the scanning tasks and the same partition with buffers allocated per call,
    /// whose first touch eats its gain (`docs/performance.md`, Building a filter). Every other
    /// batch goes as in `par_insert_hashes` and leaves `buffers` as they were. The buffers
    /// hold up to twice the filter's size until dropped: see [`BuildBuffers`].
    pub fn par_insert_hashes_with(&mut self, hashes: &[u64], buffers: &mut BuildBuffers) {
        self.par_insert(hashes, buffers, true);
    }

    /// The work of both: through partitions into `buffers` where [`partition::use_for`] says
    /// so (`kept`: whether they are the caller's), else by the scanning tasks.
    fn par_insert(&mut self, hashes: &[u64], buffers: &mut BuildBuffers, kept: bool) {
        let threads = crate::par::current_num_threads();
        if partition::use_for(self.lines.len(), hashes.len(), threads, kept)
            && self.insert_partitioned(hashes, threads, buffers)
        {
            return;
        }
        let Some(per_task) = self.lines_per_task(hashes, threads) else {
            self.insert_hashes(hashes);
            return;
        };
        // Each task owns one contiguous run of lines and scans the whole input (`insert_task`).
        // No partition is written to memory and nothing is allocated per call. Partitioning
        // each block of hashes into per-part vectors first, or a counting sort into one buffer
        // per thread, scales worse: writing the partitions costs a pass over memory that two
        // threads scanning the same clean input do not (docs/performance.md, Levers tried).
        let (total, k, path) = (self.lines.len(), self.probes, simd_path());
        self.lines
            .par_chunks_mut(per_task)
            .enumerate()
            .for_each(|(task, lines)| {
                insert_task_on(path, lines, task * per_task, total, k, hashes)
            });
    }

    /// How [`par_insert_hashes`](Self::par_insert_hashes) splits `hashes` over `threads`:
    /// the lines each task owns (the last run may be shorter), or `None` where it inserts on
    /// one thread (one thread, fewer than [`BULK_MIN`] hashes, fewer lines than threads).
    fn lines_per_task(&self, hashes: &[u64], threads: usize) -> Option<usize> {
        let lines = self.lines.len();
        (threads > 1 && hashes.len() >= BULK_MIN && lines >= threads)
            .then(|| lines.div_ceil(threads))
    }

    /// What one task of [`par_insert_hashes`](Self::par_insert_hashes) on `tasks` threads
    /// does, on this thread: inserts those of `hashes` whose line lies in the `task`-th run of
    /// lines, after scanning them all. Where `par_insert_hashes` would not split the work
    /// (one thread, fewer than 16 Ki hashes, fewer lines than threads), task 0 inserts every
    /// hash and the others none. For timing the parts of the bulk insert one at a time
    /// (`examples/bulk_scaling.rs`, the report's one-task bound); not a way to insert, since
    /// it leaves the other runs' keys out.
    #[cfg(any(test, feature = "internals"))]
    #[doc(hidden)]
    pub fn insert_hashes_as_task(&mut self, hashes: &[u64], task: usize, tasks: usize) {
        let Some(per_task) = self.lines_per_task(hashes, tasks) else {
            if task == 0 {
                self.insert_hashes(hashes);
            }
            return;
        };
        let (total, k) = (self.lines.len(), self.probes);
        if let Some(lines) = self.lines.chunks_mut(per_task).nth(task) {
            insert_task_on(simd_path(), lines, task * per_task, total, k, hashes);
        }
    }

    /// The hashes each of [`par_insert_hashes`](Self::par_insert_hashes)' tasks on `tasks`
    /// threads inserts, in input order: element `t` holds those whose line lies in the `t`-th
    /// run of lines (all of them in element 0 where it would not split the work: one thread,
    /// fewer than 16 Ki hashes, fewer lines than threads). For the report's ceiling, where
    /// every thread inserts its share, split beforehand, into a filter of its own: the bulk
    /// insert with a free handover. Not a way to insert.
    #[cfg(any(test, feature = "internals"))]
    #[doc(hidden)]
    pub fn task_shares(&self, hashes: &[u64], tasks: usize) -> Vec<Vec<u64>> {
        let mut shares = vec![Vec::new(); tasks.max(1)];
        let Some(per_task) = self.lines_per_task(hashes, tasks) else {
            shares[0] = hashes.to_vec();
            return shares;
        };
        let total = self.lines.len();
        for &h in hashes {
            shares[super::line_index(h, total) / per_task].push(h);
        }
        shares
    }
}

/// The batched lookup over any run of lines with `k` probes per key: the one implementation
/// behind [`BlockedBloom::contains_hashes`] and the zero-copy view's. An error (and nothing
/// written) when the two slices differ in length.
pub(crate) fn contains_hashes_in(
    lines: &[Line],
    k: Probes,
    hashes: &[u64],
    out: &mut [bool],
) -> Result<()> {
    check_same_len(hashes.len(), out.len())?;
    contains_hashes_on(simd_path(), lines, k, hashes, out);
    Ok(())
}

per_path! {
    /// [`contains_hashes_in`] on one path, for slices of equal length: the engine's walk
    /// compiled for the path and placement.
    pub(crate) fn contains_hashes_on(lines: &[Line], k: Probes, hashes: &[u64], out: &mut [bool]) = contains_with;
}

/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn contains_with<K: Kernel>(lines: &[Line], k: Probes, hashes: &[u64], out: &mut [bool]) {
    let Some(run) = Run::new(lines) else {
        out.fill(false);
        return;
    };
    placed!(k, P => {
        // SAFETY: the caller's contract.
        let probe = unsafe { LineProbe::<K, P>::new(run, k) };
        contains_each(&probe, hashes, out);
    })
}

per_path! {
    /// Inserts `hashes` into a filter past the cache on one path, prefetching lines ahead
    /// (the engine's walk).
    fn insert_prefetched_loop(lines: &mut [Line], k: Probes, hashes: &[u64]) =
        insert_prefetched_with;
}

/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn insert_prefetched_with<K: Kernel>(lines: &mut [Line], k: Probes, hashes: &[u64]) {
    let total = lines.len();
    placed!(k, P => {
        // SAFETY: the caller's contract.
        let slots = unsafe { Lines::<K, P>::new(k) };
        insert_prefetched::<_, false>(&slots, lines, 0, total, hashes, 0, DRAIN);
    })
}

per_path! {
    /// One scanning task of the bulk insert on one path: the keys of `hashes` whose line is
    /// in `lines` (lines `first..` of `total`).
    fn insert_task_on(
        lines: &mut [Line],
        first: usize,
        total: usize,
        k: Probes,
        hashes: &[u64],
    ) = insert_task_with;
}

/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn insert_task_with<K: Kernel>(
    lines: &mut [Line],
    first: usize,
    total: usize,
    k: Probes,
    hashes: &[u64],
) {
    placed!(k, P => {
        // SAFETY: the caller's contract.
        let slots = unsafe { Lines::<K, P>::new(k) };
        insert_task(&slots, lines, first, total, hashes);
    })
}

per_path! {
    /// Inserts `hashes` one after another on one path (a filter in cache).
    fn insert_loop(lines: &mut [Line], k: Probes, hashes: &[u64]) = insert_with;
}

/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn insert_with<K: Kernel>(lines: &mut [Line], k: Probes, hashes: &[u64]) {
    placed!(k, P => {
        for &h in hashes {
            if let Some(line) = line_for_mut(lines, h) {
                // SAFETY: the caller's contract.
                unsafe { P::set::<K>(line, h, k) };
            }
        }
    })
}

/// The keyed batched lookup behind [`BlockedBloom::contains_keys`] and the view's: the keys
/// hashed with `seed`, 4096 at a time, then [`contains_hashes_in`]; an error (and nothing
/// written) when the two slices differ in length.
pub(crate) fn contains_keys_in<K: Key>(
    lines: &[Line],
    k: Probes,
    seed: u64,
    keys: &[K],
    out: &mut [bool],
) -> Result<()> {
    check_same_len(keys.len(), out.len())?;
    in_hashed_rounds(
        keys,
        |key| key.hash_with_seed(seed),
        |first, hashes| contains_hashes_in(lines, k, hashes, &mut out[first..first + hashes.len()]),
    )
}

/// Keys per task of the parallel lookup: a task's start costs nothing next to 64 Ki lookups,
/// and a batch of many runs balances over the threads.
const PAR_LOOKUP_RUN: usize = 1 << 16;

/// [`contains_hashes_in`] over runs of [`PAR_LOOKUP_RUN`] keys on rayon's threads.
pub(crate) fn par_contains_hashes_in(
    lines: &[Line],
    k: Probes,
    hashes: &[u64],
    out: &mut [bool],
) -> Result<()> {
    check_same_len(hashes.len(), out.len())?;
    if hashes.len() < 2 * PAR_LOOKUP_RUN {
        return contains_hashes_in(lines, k, hashes, out);
    }
    hashes
        .par_chunks(PAR_LOOKUP_RUN)
        .zip(out.par_chunks_mut(PAR_LOOKUP_RUN))
        .try_for_each(|(hashes, out)| contains_hashes_in(lines, k, hashes, out))
}

/// How many of `hashes` may be in `lines`, with the batched lookup.
pub(crate) fn count_contained_in(lines: &[Line], k: Probes, hashes: &[u64]) -> usize {
    count_contained_on(simd_path(), lines, k, hashes)
}

per_path! {
    /// [`count_contained_in`] on one path.
    pub(crate) fn count_contained_on(lines: &[Line], k: Probes, hashes: &[u64]) -> usize = count_with;
}

/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn count_with<K: Kernel>(lines: &[Line], k: Probes, hashes: &[u64]) -> usize {
    let Some(run) = Run::new(lines) else {
        return 0;
    };
    placed!(k, P => {
        // SAFETY: the caller's contract.
        let probe = unsafe { LineProbe::<K, P>::new(run, k) };
        count_each(&probe, hashes)
    })
}

/// The blocked filter's lines as the engine's batched lookup sees them, tested by path `K`'s
/// kernel with placement `P`.
struct LineProbe<'a, K, P> {
    run: Run<'a>,
    k: Probes,
    kernel: PhantomData<fn() -> (K, P)>,
}

impl<'a, K: Kernel, P: Place> LineProbe<'a, K, P> {
    /// # Safety
    /// The CPU has `K`'s path: [`Probe::test`] runs its kernel.
    #[inline(always)]
    unsafe fn new(run: Run<'a>, k: Probes) -> Self {
        LineProbe {
            run,
            k,
            kernel: PhantomData,
        }
    }
}

impl<K: Kernel, P: Place> Probe for LineProbe<'_, K, P> {
    type Slot = Line;
    #[inline(always)]
    fn slot(&self, hash: u64) -> &Line {
        self.run.line(hash)
    }
    #[inline(always)]
    fn test(&self, line: &Line, hash: u64) -> bool {
        // SAFETY: `new`'s caller promised that the CPU has `K`'s path.
        unsafe { P::test::<K>(line, hash, self.k) }
    }
    #[inline(always)]
    fn bytes(&self) -> usize {
        self.run.bytes()
    }
}

/// Whether `lines` take at most `bytes`.
fn fits_in(lines: &[Line], bytes: usize) -> bool {
    core::mem::size_of_val(lines) <= bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocked::line_for;
    use crate::engine::arch::SimdPath;
    use crate::hash::mix64;

    /// The keyed batches answer and insert as the one-key paths, in cache and past
    /// `CACHED_BYTES`, for batches below, at and across the 4096-key rounds, owned and viewed.
    #[test]
    fn keyed_batches_match_one_key_at_a_time() {
        let keys: Vec<String> = (0..10_001).map(|i| format!("key:{i}")).collect();
        for lines in [1000usize, 40_000] {
            let mut one = BlockedBloom::with_lines(lines, 7, 3).unwrap();
            keys[..5000].iter().for_each(|k| one.insert(k));
            let mut batch = BlockedBloom::with_lines(lines, 7, 3).unwrap();
            batch.insert_keys(&keys[..5000]);
            assert!(batch == one, "{lines} lines");
            let bytes = crate::blocked::AlignedBytes::from_slice(&one.to_bytes()).unwrap();
            let view = crate::BlockedBloomRef::from_bytes(&bytes).unwrap();
            for len in [0, 1, 64, 65, 4095, 4096, 4097, 10_001] {
                let probe = &keys[..len];
                let want: Vec<bool> = probe.iter().map(|k| one.contains(k)).collect();
                let (mut got, mut viewed) = (vec![true; len], vec![false; len]);
                one.contains_keys(probe, &mut got).unwrap();
                view.contains_keys(probe, &mut viewed).unwrap();
                assert_eq!(got, want, "{lines} lines, {len} keys");
                assert_eq!(viewed, want, "{lines} lines, {len} keys, viewed");
            }
            let ints: Vec<u64> = (0..5000).collect();
            let mut by_int = BlockedBloom::with_lines(lines, 7, 3).unwrap();
            by_int.insert_keys(&ints);
            assert!(ints.iter().all(|i| by_int.contains(i)));
            assert!(one.contains_keys(&keys[..3], &mut [false; 2]).is_err());
            assert!(view.contains_keys(&["a"], &mut []).is_err());
        }
    }

    /// Every SIMD path the CPU has, against the portable one: the in-cache and prefetching
    /// inserts set the same bits, and the batched lookups (answers and counts) give the
    /// portable one-key answers, for every k, in cache and past 2 MiB, hits among misses.
    #[test]
    fn every_simd_path_inserts_and_answers_as_the_portable_one() {
        use crate::blocked::Placement;
        for (lines, keys) in [(37usize, 300usize), (40_000, 150_000)] {
            for (kk, placement) in [1, 3, 6, 7, 8, 9, 12, 16]
                .into_iter()
                .flat_map(|k| [(k, Placement::Shifted), (k, Placement::Salted)])
            {
                let k = Probes::new(kk, placement);
                let inserted: Vec<u64> = (0..keys as u64)
                    .map(|i| mix64(i ^ u64::from(kk) << 50))
                    .collect();
                let mut portable = vec![Line::ZERO; lines];
                insert_loop(SimdPath::Portable, &mut portable, k, &inserted);
                let probes: Vec<u64> = inserted
                    .iter()
                    .zip((0..).map(|i: u64| mix64(!i)))
                    .flat_map(|(&hit, miss)| [hit, miss])
                    .collect();
                let want: Vec<bool> = probes
                    .iter()
                    .map(|&h| line_for(&portable, h).test(k.mask(h)))
                    .collect();
                for path in SimdPath::available() {
                    let mut looped = vec![Line::ZERO; lines];
                    insert_loop(path, &mut looped, k, &inserted);
                    assert_eq!(looped, portable, "{path} {k:?} lines {lines}");
                    let mut prefetched = vec![Line::ZERO; lines];
                    insert_prefetched_loop(path, &mut prefetched, k, &inserted);
                    let mut tasks = vec![Line::ZERO; lines];
                    for (t, run) in tasks.chunks_mut(lines.div_ceil(3)).enumerate() {
                        insert_task_on(path, run, t * lines.div_ceil(3), lines, k, &inserted);
                    }
                    assert_eq!(tasks, portable, "{path} {k:?} lines {lines}");
                    assert_eq!(prefetched, portable, "{path} {k:?} lines {lines}");
                    let mut got = vec![false; probes.len()];
                    contains_hashes_on(path, &portable, k, &probes, &mut got);
                    assert_eq!(got, want, "{path} {k:?} lines {lines}");
                    let found = want.iter().filter(|&&y| y).count();
                    assert_eq!(count_contained_on(path, &portable, k, &probes), found);
                }
            }
        }
    }

    #[test]
    fn parallel_lookups_answer_as_the_batched_and_scalar_ones() {
        // 3 MiB (past the plain loop) and a tiny filter; batches below, at and past the
        // threshold where the runs go to rayon, with a ragged last run.
        for lines in [49_152usize, 3] {
            let mut f = BlockedBloom::with_lines(lines, 7, 1).unwrap();
            let inserted: Vec<u64> = (0..200_000u64).map(mix64).collect();
            f.insert_hashes(&inserted);
            for len in [0, 1, 2 * PAR_LOOKUP_RUN - 1, 2 * PAR_LOOKUP_RUN, 300_001] {
                let probes: Vec<u64> = (0..len as u64).map(|i| mix64(i * 3)).collect();
                let mut par = vec![false; len];
                let mut batched = vec![true; len];
                f.par_contains_hashes(&probes, &mut par).unwrap();
                f.contains_hashes(&probes, &mut batched).unwrap();
                assert_eq!(par, batched, "lines {lines}, len {len}");
                for (i, &h) in probes.iter().enumerate().step_by(97) {
                    assert_eq!(par[i], f.contains_hash(h));
                }
                let bytes = crate::blocked::AlignedBytes::from_slice(&f.to_bytes()).unwrap();
                let view = crate::BlockedBloomRef::from_bytes(&bytes).unwrap();
                let mut viewed = vec![false; len];
                view.par_contains_hashes(&probes, &mut viewed).unwrap();
                assert_eq!(viewed, batched);
            }
        }
        let f = BlockedBloom::with_lines(8, 7, 1).unwrap();
        let mut out = vec![false; 3];
        assert!(f.par_contains_hashes(&[1, 2], &mut out).is_err());
        assert!(f.par_contains_hashes(&vec![0; 1 << 18], &mut out).is_err());
    }

    /// The tasks of the bulk insert, run one after another on this thread, set exactly the
    /// bits of the one-by-one insert, whatever the split, in cache and past `CACHED_BYTES`
    /// (where the tasks hint their input), with tails of fewer than 8 and 32 hashes, and where the
    /// bulk insert would not split the work (too few hashes).
    #[test]
    fn the_tasks_together_insert_exactly_what_insert_hashes_does() {
        for (lines, keys) in [(1000usize, 20_003u64), (40_000, 150_001), (5000, 3000)] {
            let hs: Vec<u64> = (0..keys).map(mix64).collect();
            let mut want = BlockedBloom::with_lines(lines, 7, 0).unwrap();
            want.insert_hashes(&hs);
            for tasks in [2, 3, 8] {
                let mut got = BlockedBloom::with_lines(lines, 7, 0).unwrap();
                for task in 0..tasks {
                    got.insert_hashes_as_task(&hs, task, tasks);
                }
                assert!(got == want, "{lines} lines, {tasks} tasks");
            }
        }
    }

    #[test]
    fn task_shares_hold_each_hash_once_in_its_task() {
        let f = BlockedBloom::with_lines(1001, 7, 0).unwrap();
        let hashes: Vec<u64> = (0..50_000).map(mix64).collect();
        for tasks in 1..=3 {
            let shares = f.task_shares(&hashes, tasks);
            assert_eq!(shares.len(), tasks);
            assert_eq!(shares.iter().map(Vec::len).sum::<usize>(), hashes.len());
            let per_task = 1001usize.div_ceil(tasks);
            for (t, share) in shares.iter().enumerate() {
                assert!(
                    share
                        .iter()
                        .all(|&h| super::super::line_index(h, 1001) / per_task == t)
                );
                let mut into = BlockedBloom::with_lines(1001, 7, 0).unwrap();
                into.insert_hashes_as_task(&hashes, t, tasks);
                let mut alone = BlockedBloom::with_lines(1001, 7, 0).unwrap();
                alone.insert_hashes(share);
                assert!(into.lines() == alone.lines(), "task {t} of {tasks}");
            }
        }
        let few = f.task_shares(&hashes[..100], 2);
        assert_eq!((few[0].len(), few[1].len()), (100, 0));
    }
}
