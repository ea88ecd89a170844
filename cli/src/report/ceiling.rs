//! The ceiling of the parallel bulk insert, measured in the same run: every thread of a pool
//! fills a blocked filter of its own with the keys its task of `par_insert_hashes` would
//! insert (those of its run of lines), split beforehand, off the clock (`insert_hashes`, the
//! prefetching sequential insert), nothing shared. That is the bulk insert with a free
//! handover: each thread moves the lines its task moves and reads only its own keys, so only
//! the memory system limits how the rate grows with threads, and `par_insert_hashes` on one
//! shared filter cannot scale better. The ceiling moves with the machine's state (on a shared
//! host a 2-thread ceiling ranges from about 1.4x to 2x between runs and within one), so the
//! report prints the two side by side, and for filters past the cache times them on
//! alternate chunks of the same fill: each chunk the bulk insert takes on a pool, that pool's
//! threads then also insert into filters of their own.
//!
//! Each thread inserts only its task's share, not all the keys: a thread that inserts every
//! key into a filter of its own writes lines all over it, twice the span the bulk insert's
//! tasks write together, so less of it stays in the L3 and that ceiling reads lower than the
//! split one (`cargo run --release --features internals --example bulk_scaling`, 100 M keys into 119 MiB,
//! 2 threads: 1.64x and 1.72x against 1.82x and 1.77x for the split, two runs each): it would
//! not bound the bulk insert, whose tasks write half the lines each.
//!
//! Beside it, the bound of the bulk insert's design: one of its tasks (scan every key, insert
//! those of its run of lines) timed alone on the measuring thread. Every task reads the whole
//! input, so no number of threads sharing nothing could beat one thread by more than that
//! task is faster than the whole insert timed the same way (the "task" of one thread); unlike
//! the ceiling, it holds steady while a shared host contends the other cores.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::config::ReportConfig;
use super::keys::key_hash;
use super::measure::{Stat, sample_runs, unpinned};
use linebloom::BlockedBloom;
use linebloom::error::{Error, Result};

/// One blocked filter per thread of the largest pool, each only ever written by its own
/// thread, and one for the bulk insert's task alone.
pub struct OwnFilters {
    own: Vec<Mutex<BlockedBloom>>,
    alone: Mutex<BlockedBloom>,
}

impl OwnFilters {
    /// `threads` empty filters for `items` keys, and the task's.
    pub fn new(items: usize, config: &ReportConfig, threads: usize) -> Result<Self> {
        let own = (0..threads)
            .map(|_| config.empty_blocked(items).map(Mutex::new))
            .collect::<Result<Vec<_>>>()?;
        let alone = Mutex::new(config.empty_blocked(items)?);
        Ok(Self { own, alone })
    }

    /// The time for the first of `threads` bulk-insert tasks to take its keys of `hashes`
    /// (scanning them all, `insert_hashes_as_task`), alone on the calling thread.
    pub fn one_task(&self, hashes: &[u64], threads: usize) -> Duration {
        let Ok(mut filter) = self.alone.lock() else {
            return Duration::ZERO;
        };
        let started = Instant::now();
        filter.insert_hashes_as_task(black_box(hashes), 0, threads);
        started.elapsed()
    }

    /// `hashes` split as the bulk insert's tasks on `threads` threads take them
    /// ([`BlockedBloom::task_shares`]), for [`fill`](Self::fill).
    pub fn shares(&self, hashes: &[u64], threads: usize) -> Vec<Vec<u64>> {
        match self.alone.lock() {
            Ok(filter) => filter.task_shares(hashes, threads),
            Err(_) => vec![hashes.to_vec()],
        }
    }

    /// The wall time for each thread `i` of `pool` to insert `shares[i]` into a filter of its
    /// own (`insert_hashes`); timed as the bulk insert is, the unpinning outside the span.
    pub fn fill(&self, pool: &rayon::ThreadPool, shares: &[Vec<u64>]) -> Duration {
        unpinned(|| {
            let started = Instant::now();
            pool.broadcast(|ctx| {
                let i = ctx.index();
                // Each thread locks only its own filter, so no lock is ever contended.
                if let (Some(Ok(mut filter)), Some(share)) =
                    (self.own.get(i).map(|f| f.lock()), shares.get(i))
                {
                    filter.insert_hashes(black_box(share));
                }
            });
            started.elapsed()
        })
    }

    fn clear(&self) {
        for filter in self.own.iter().chain([&self.alone]) {
            if let Ok(mut filter) = filter.lock() {
                filter.clear();
            }
        }
    }
}

/// For filters small enough that the sweep fills them whole, both bounds of a pool of
/// `threads`, each filter filled again and again (cleared in between, so no page faults) for
/// each of the `config.reps` samples after a warm-up: the ceiling (ns per key, all threads
/// together, every thread filling its own blocked filter of `items` keys with its task's
/// share of the keys) and the one-task bound (ns per key of one of `threads` bulk-insert
/// tasks alone, [`OwnFilters::one_task`]).
/// Larger filters get both from chunks timed between the bulk insert's own (called by the
/// sweep).
pub fn refill_bounds(
    items: usize,
    config: &ReportConfig,
    threads: usize,
    pool: &rayon::ThreadPool,
) -> Result<(Stat, Stat)> {
    let own = OwnFilters::new(items, config, threads)?;
    let hashes: Vec<u64> = (0..items as u64)
        .map(|i| key_hash(config.seed, 0, i))
        .collect();
    let shares = own.shares(&hashes, threads);
    let ceiling = sample_runs(config.sampling(), items, || {
        own.clear();
        Ok(own.fill(pool, &shares))
    })?;
    let task = sample_runs(config.sampling(), items, || {
        own.clear();
        Ok(own.one_task(&hashes, threads))
    })?;
    Ok((stat_of(&ceiling, items)?, stat_of(&task, items)?))
}

fn stat_of(samples: &[f64], items: usize) -> Result<Stat> {
    Stat::from_samples(samples).ok_or(Error::InvalidParameter {
        name: "items",
        value: items.to_string(),
        allowed: "at least 1",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::measure::thread_pool;

    fn config() -> ReportConfig {
        let mut c = ReportConfig::quick();
        c.reps = 2;
        c.min_sample_ms = 0.0;
        c
    }

    #[test]
    fn a_refill_gives_one_sample_per_rep() {
        let pool = thread_pool(2).unwrap();
        let (s, task) = refill_bounds(20_000, &config(), 2, &pool).unwrap();
        assert_eq!(s.samples, 2);
        assert!(s.median_ns > 0.0 && s.median_ns.is_finite());
        assert_eq!(task.samples, 2);
    }

    #[test]
    fn every_thread_fills_its_own_filter_with_its_tasks_keys() {
        let pool = thread_pool(2).unwrap();
        let own = OwnFilters::new(50_000, &config(), 2).unwrap();
        let hashes: Vec<u64> = (0..50_000).map(|i| key_hash(7, 0, i)).collect();
        let shares = own.shares(&hashes, 2);
        assert_eq!(shares.len(), 2);
        assert!(shares.iter().all(|s| s.len() > 20_000));
        own.fill(&pool, &shares);
        for (filter, share) in own.own.iter().zip(&shares) {
            let filter = filter.lock().unwrap();
            assert!(share.iter().all(|&h| filter.contains_hash(h)));
        }
        // Each filter holds its share only: thread 0's lines past its half stay empty.
        let first = own.own[0].lock().unwrap();
        let half = first.num_lines().div_ceil(2);
        assert!(
            first.lines()[half..]
                .iter()
                .all(|l| *l == linebloom::blocked::Line::ZERO)
        );
    }

    #[test]
    fn one_task_inserts_the_keys_of_its_run_of_lines() {
        let own = OwnFilters::new(50_000, &config(), 0).unwrap();
        let hashes: Vec<u64> = (0..50_000).map(|i| key_hash(7, 0, i)).collect();
        own.one_task(&hashes, 2);
        let filter = own.alone.lock().unwrap();
        let half = filter.num_lines().div_ceil(2);
        let (first, second) = filter.lines().split_at(half);
        assert!(first.iter().any(|l| *l != linebloom::blocked::Line::ZERO));
        assert!(second.iter().all(|l| *l == linebloom::blocked::Line::ZERO));
    }
}
