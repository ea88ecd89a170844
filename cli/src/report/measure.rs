//! The measurement loop: how one figure (ns per operation) is taken, and the threads it runs on.
//!
//! This module owns the statistics of a figure ([`Stat`]: median and spread over samples), the
//! sampling loop (a warm-up, then repetitions, each long enough for the clock), and thread
//! pinning with `core_affinity` (the measuring thread and each bulk-insert pool thread get a
//! core of their own, so the scheduler does not move them mid-sample). It does not know what is
//! measured; the sweep passes closures.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::subject::Subject;
use linebloom::error::{Error, Result};

/// The median and spread of one figure over its samples, in nanoseconds per operation.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Stat {
    /// The median sample.
    pub median_ns: f64,
    /// The fastest sample.
    pub min_ns: f64,
    /// The slowest sample.
    pub max_ns: f64,
    /// The first quartile (linear interpolation between samples).
    pub q1_ns: f64,
    /// The third quartile.
    pub q3_ns: f64,
    /// How many samples the figure is taken from (warm-up excluded).
    pub samples: usize,
}

impl Stat {
    /// Summarises samples (ns per operation); `None` when there are none.
    pub fn from_samples(samples: &[f64]) -> Option<Stat> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        Some(Stat {
            median_ns: quantile(&s, 0.5),
            min_ns: s[0],
            max_ns: s[s.len() - 1],
            q1_ns: quantile(&s, 0.25),
            q3_ns: quantile(&s, 0.75),
            samples: s.len(),
        })
    }

    /// Millions of operations per second at the median.
    pub fn mops(&self) -> f64 {
        1e3 / self.median_ns
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// How many samples to take and how long each must at least run.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// Samples kept (after one warm-up sample that is thrown away).
    pub reps: usize,
    /// A sample repeats its operation batch until it has run at least this long, so timer
    /// resolution and the cost of reading the clock stay far below 1 % of the figure.
    pub min_sample: Duration,
}

/// Times `batch`, which performs `ops` operations and returns a value that depends on all of
/// them (kept from the optimiser with [`black_box`]): one warm-up sample, then `reps` samples,
/// each running the batch as often as needed to last `min_sample`.
pub fn sample_batch(sampling: Sampling, ops: usize, mut batch: impl FnMut() -> u64) -> Stat {
    // The warm-up also tells how many batches a sample needs.
    let started = Instant::now();
    black_box(batch());
    let once = started.elapsed().max(Duration::from_nanos(1));
    let repeat = (sampling.min_sample.as_secs_f64() / once.as_secs_f64())
        .ceil()
        .clamp(1.0, 1e6) as usize;
    let samples: Vec<f64> = (0..sampling.reps.max(1))
        .map(|_| {
            let started = Instant::now();
            for _ in 0..repeat {
                black_box(batch());
            }
            ns_per_op(started.elapsed(), repeat * ops)
        })
        .collect();
    Stat::from_samples(&samples).expect("at least one sample")
}

/// Samples of work that must run whole, such as a complete fill of a new filter: `run` does it
/// once and returns how long the part worth timing took (its setup stays out). One warm-up
/// sample, then `sampling.reps`, each repeating `run` until it has lasted `min_sample`; `ops`
/// operations per run. Returns the kept samples in ns per operation.
pub fn sample_runs(
    sampling: Sampling,
    ops: usize,
    mut run: impl FnMut() -> Result<Duration>,
) -> Result<Vec<f64>> {
    let mut samples = Vec::with_capacity(sampling.reps);
    for sample in 0..=sampling.reps {
        let (mut elapsed, mut runs) = (Duration::ZERO, 0usize);
        while runs == 0 || elapsed < sampling.min_sample {
            elapsed += run()?;
            runs += 1;
        }
        if sample > 0 {
            samples.push(ns_per_op(elapsed, runs * ops));
        }
    }
    Ok(samples)
}

/// Nanoseconds per operation.
pub fn ns_per_op(elapsed: Duration, ops: usize) -> f64 {
    elapsed.as_secs_f64() * 1e9 / ops.max(1) as f64
}

/// Where the measuring thread runs: pinned to a core, or wherever the scheduler puts it.
#[derive(Clone, Debug, Serialize)]
pub struct Pinning {
    /// Whether the measuring thread is pinned.
    pub pinned: bool,
    /// The core it is pinned to.
    pub core: Option<usize>,
    /// Cores `core_affinity` reports (the bulk-insert pools pin thread i to the i-th of these).
    pub cores: usize,
    /// One line for the report.
    pub note: String,
}

/// Pins the calling thread to the first core `core_affinity` lists and says whether it worked.
/// Threads started afterwards inherit the pin on Linux, so pools built later must pin their
/// own threads ([`thread_pool`] does).
pub fn pin_current_thread() -> Pinning {
    let ids = all_cores();
    match ids.first() {
        Some(&id) if core_affinity::set_for_current(id) => Pinning {
            pinned: true,
            core: Some(id.id),
            cores: ids.len(),
            note: format!("measuring thread pinned to core {}", id.id),
        },
        Some(_) => Pinning {
            pinned: false,
            core: None,
            cores: ids.len(),
            note: "pinning failed (core_affinity could not set the affinity): figures may be \
                   noisier, as the scheduler can move the thread mid-sample"
                .to_string(),
        },
        None => Pinning {
            pinned: false,
            core: None,
            cores: 0,
            note: "pinning unavailable (core_affinity lists no cores on this system): figures \
                   may be noisier"
                .to_string(),
        },
    }
}

/// The cores this process may run on, as `core_affinity` lists them the first time this is
/// asked, before [`pin_current_thread`] narrows the calling thread's list to its one core
/// (asked afterwards, the list would hold that one core, and every pool thread would be pinned
/// to it).
fn all_cores() -> &'static [core_affinity::CoreId] {
    static CORES: std::sync::OnceLock<Vec<core_affinity::CoreId>> = std::sync::OnceLock::new();
    CORES.get_or_init(|| core_affinity::get_core_ids().unwrap_or_default())
}

/// Runs `f` with the calling thread allowed on every core, then restores its affinity (Linux;
/// elsewhere just runs `f`). The report's measuring thread is pinned to the core that the
/// first thread of each bulk-insert pool also gets; left there while it waits for a pool, the
/// 1-thread bulk insert of a 119 MiB filter takes 3.1-7.9 ns per key from run to run, against
/// a steady 3.0 with the waiting thread free to run anywhere (1 Mi-key chunks, pools pinned,
/// back to back; 2 threads: 2.4-3.1 against 2.2).
pub fn unpinned<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_os = "linux")]
    {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `cpu_set_t` is plain data for which all zeroes is the empty set;
        // `sched_getaffinity`/`sched_setaffinity` on pid 0 read or write only the set passed,
        // of `size` bytes, for the calling thread; `CPU_SET` is called below `CPU_SETSIZE`.
        unsafe {
            let mut saved: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size, &mut saved) == 0 {
                // Every CPU the set can name: the kernel keeps those that exist and that the
                // process may use (`core_affinity` lists only the pinned thread's own core).
                let mut all: libc::cpu_set_t = std::mem::zeroed();
                for cpu in 0..libc::CPU_SETSIZE as usize {
                    libc::CPU_SET(cpu, &mut all);
                }
                libc::sched_setaffinity(0, size, &all);
                let result = f();
                libc::sched_setaffinity(0, size, &saved);
                return result;
            }
        }
    }
    f()
}

/// A rayon pool of `threads` threads, thread i pinned to the i-th core `core_affinity` lists
/// (wrapping around when there are more threads than cores).
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool> {
    let ids = all_cores().to_vec();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("linebloom-bulk-{i}"))
        .start_handler(move |i| {
            if !ids.is_empty() {
                // A thread that cannot be pinned still runs; the report states whether the
                // measuring thread was pinned, which is what the other figures depend on.
                core_affinity::set_for_current(ids[i % ids.len()]);
            }
        })
        .build()
        .map_err(|e| Error::InvalidParameter {
            name: "threads",
            value: format!("{threads} ({e})"),
            allowed: "a number of threads this system can start",
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_runs_drops_the_warm_up_and_repeats_short_runs() {
        let sampling = Sampling {
            reps: 3,
            min_sample: Duration::from_micros(50),
        };
        let mut calls = 0;
        let samples = sample_runs(sampling, 10, || {
            calls += 1;
            Ok(Duration::from_micros(20))
        })
        .unwrap();
        // Each sample needs three 20 µs runs to last 50 µs: 60 µs over 30 operations.
        assert_eq!(samples, vec![2000.0; 3]);
        assert_eq!(calls, 4 * 3);
        let failing = sample_runs(sampling, 1, || Err(Error::Full));
        assert!(failing.is_err());
    }

    #[test]
    fn stat_summarises() {
        let s = Stat::from_samples(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((s.median_ns, s.min_ns, s.max_ns), (3.0, 1.0, 5.0));
        assert_eq!((s.q1_ns, s.q3_ns, s.samples), (2.0, 4.0, 5));
        assert!(Stat::from_samples(&[]).is_none());
        let one = Stat::from_samples(&[7.0]).unwrap();
        assert_eq!((one.median_ns, one.q1_ns, one.q3_ns), (7.0, 7.0, 7.0));
    }

    #[cfg(target_os = "linux")]
    fn allowed_cpus() -> usize {
        // SAFETY: as in `unpinned`: a zeroed set, filled by the kernel for this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            libc::CPU_COUNT(&set) as usize
        }
    }

    #[test]
    fn unpinned_frees_the_thread_then_restores_its_pin() {
        // On its own thread, so the test harness's threads keep their affinity.
        std::thread::spawn(|| {
            let pinning = pin_current_thread();
            #[cfg(target_os = "linux")]
            if pinning.pinned {
                assert_eq!(allowed_cpus(), 1);
                let inside = unpinned(allowed_cpus);
                assert_eq!(inside, pinning.cores);
                assert_eq!(allowed_cpus(), 1);
            }
            assert_eq!(unpinned(|| 7), 7);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn sample_batch_counts_ops() {
        let sampling = Sampling {
            reps: 3,
            min_sample: Duration::from_micros(100),
        };
        let s = sample_batch(sampling, 1000, || (0..1000u64).map(black_box).sum());
        assert_eq!(s.samples, 3);
        assert!(s.median_ns > 0.0 && s.min_ns <= s.median_ns && s.median_ns <= s.max_ns);
    }
}

/// How a batch of keys goes into a filter.
#[derive(Clone, Copy)]
pub enum Method<'a> {
    /// One key at a time (`insert_each`).
    OneByOne,
    /// The filter's parallel insert on this pool.
    Parallel(&'a rayon::ThreadPool),
}

/// Inserts a batch the given way and says how long it took and how many keys were refused.
/// The parallel insert runs with the measuring thread unpinned (it only waits for the pool),
/// and the unpinning stays outside the timed span: its two affinity calls, and the migrations
/// they may cause, cost more than filling a 16 KiB filter (inside the span they would put its
/// bulk figure at several ns per key).
pub fn timed_insert(
    method: Method<'_>,
    s: &mut Box<dyn Subject>,
    hashes: &[u64],
) -> Result<(u64, Duration)> {
    match method {
        Method::OneByOne => {
            let started = Instant::now();
            let refused = s.insert_each(hashes)?;
            Ok((refused, started.elapsed()))
        }
        Method::Parallel(pool) => {
            let s: &mut dyn Subject = &mut **s;
            let (done, took) = unpinned(|| {
                let started = Instant::now();
                let done = pool.install(|| s.par_insert(hashes));
                (done, started.elapsed())
            });
            done.unwrap_or(Ok(()))?;
            Ok((0, took))
        }
    }
}
