//! The ceiling of the parallel bulk insert, measured in the same run: every thread of a pool
//! fills a blocked filter of its own with the same keys (`insert_hashes`, the prefetching
//! sequential insert), nothing shared, so only the memory system limits how the rate grows
//! with threads. `par_insert_hashes` on one shared filter cannot scale better, and the
//! ceiling moves with the machine (a shared host gave 1.97x on 2 threads one day and 1.56-1.65x
//! the next), so the report prints the two side by side.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::config::ReportConfig;
use super::fpr::key_hash;
use super::measure::{Stat, ns_per_op, sample_runs, unpinned};
use crate::BlockedBloom;
use crate::error::{Error, Result};

/// ns per key, all threads together, when each of the pool's threads fills its own blocked
/// filter of `items` keys at the sweep's bits per key. Filters of up to `small_fill` keys are
/// filled again and again (cleared in between, so no page faults) for each of the
/// `config.reps` samples after a warm-up; larger ones once, each chunk of `chunk` keys a
/// sample, as the sweep times its own large fills.
pub fn own_filters_fill(
    items: usize,
    config: &ReportConfig,
    threads: usize,
    pool: &rayon::ThreadPool,
    small_fill: usize,
    chunk: usize,
) -> Result<Stat> {
    let filters = (0..threads)
        .map(|_| {
            BlockedBloom::builder(items)
                .bits_per_key(config.bits_per_key)
                .seed(config.seed)
                .build()
                .map(Mutex::new)
        })
        .collect::<Result<Vec<_>>>()?;
    // Timed as the bulk insert is: the unpinning outside the timed span.
    let fill = |hashes: &[u64]| -> Duration {
        unpinned(|| {
            let started = Instant::now();
            pool.broadcast(|ctx| {
                // Each thread locks only its own filter, so no lock is ever contended.
                if let Some(Ok(mut filter)) = filters.get(ctx.index()).map(|f| f.lock()) {
                    filter.insert_hashes(black_box(hashes));
                }
            });
            started.elapsed()
        })
    };
    let mut samples = Vec::new();
    if items <= small_fill {
        let hashes: Vec<u64> = (0..items as u64)
            .map(|i| key_hash(config.seed, 0, i))
            .collect();
        samples = sample_runs(config.sampling(), items * threads, || {
            for filter in &filters {
                if let Ok(mut filter) = filter.lock() {
                    filter.clear();
                }
            }
            Ok(fill(&hashes))
        })?;
    } else {
        let mut buffer = Vec::with_capacity(chunk);
        for start in (0..items).step_by(chunk.max(1)) {
            let end = (start + chunk).min(items);
            buffer.clear();
            buffer.extend((start as u64..end as u64).map(|i| key_hash(config.seed, 0, i)));
            samples.push(ns_per_op(fill(&buffer), (end - start) * threads));
        }
    }
    Stat::from_samples(&samples).ok_or(Error::InvalidParameter {
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
    fn a_small_fill_gives_one_sample_per_rep() {
        let pool = thread_pool(2).unwrap();
        let s = own_filters_fill(20_000, &config(), 2, &pool, 1 << 21, 1 << 20).unwrap();
        assert_eq!(s.samples, 2);
        assert!(s.median_ns > 0.0 && s.median_ns.is_finite());
    }

    #[test]
    fn a_large_fill_gives_one_sample_per_chunk() {
        let pool = thread_pool(2).unwrap();
        let s = own_filters_fill(10_500, &config(), 2, &pool, 1000, 1000).unwrap();
        assert_eq!(s.samples, 11);
    }
}
