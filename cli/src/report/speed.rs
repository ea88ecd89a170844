//! Insert, bulk-insert and lookup figures of one filter at one size, the rows of the report's
//! speed and bulk-insert tables:
//!
//! - **insert**: filling a new filter to its design load one key at a time, and
//! - **bulk insert**: the same through the filter's parallel insert on a pool of each thread
//!   count (threads pinned). Small filters (up to 2 Mi keys) are filled again and again, each
//!   sample being one or more complete fills. A larger filter is filled once, in chunks, each
//!   chunk timed and handed to one way of inserting in turn, so every figure's samples spread
//!   over the whole fill from empty to full (what a build pays on average) and the filter is
//!   built only once. Either way the figures include first-touch page faults, as a real build
//!   does (they land in the first chunks of a large fill, which the median discounts).
//! - **lookups** in the filled filter: hit (keys drawn from the inserted ones), miss (keys
//!   never inserted), and the same two through the batched lookup. The keys are independent, so
//!   a lookup loop overlaps its cache misses: these are throughput figures, divided by the
//!   memory probe's best figure ([`MemoryLimit::best_ns`]) in the ratio columns.
//!
//! This module owns how a filter is filled and looked up for those figures; `sweep.rs` owns
//! which filters and sizes are measured, `measure.rs` how one figure is sampled.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::ceiling::{OwnFilters, refill_bounds};
use super::config::ReportConfig;
use super::keys::{CHUNK, key_hash};
use super::limit::MemoryLimit;
use super::lineup::build_subject;
use super::machine;
use super::measure::{Method, Stat, ns_per_op, sample_batch, sample_runs, timed_insert};
use super::subject::{Contender, Subject};
use linebloom::error::Result;
use linebloom::filter::FilterKind;
use linebloom::hash::{mix64, reduce};

/// Filters with at most this many keys are filled repeatedly for the insert figure; larger ones
/// once, in chunks.
pub(super) const SMALL_FILL: usize = 1 << 21;

/// A large fill inserts at most this many chunks one key at a time when the filter has a
/// parallel insert for the rest: enough samples for a median and a spread, without spending
/// minutes on the slowest path.
const MAX_ONE_BY_ONE_CHUNKS: usize = 16;

/// One filter at one size.
#[derive(Clone, Debug, Serialize)]
pub struct SpeedRow {
    /// The filter's name.
    pub filter: String,
    /// Whether it is a peer crate.
    pub peer: bool,
    /// Its parameters ("k=7", "f=8").
    pub params: String,
    /// The size the sweep asked for, in bytes.
    pub target_bytes: usize,
    /// The filter's actual size, in bytes.
    pub bytes: usize,
    /// Keys inserted.
    pub items: usize,
    /// Bits of filter per inserted key.
    pub bits_per_key: f64,
    /// Insert, one key at a time (ns per key).
    pub insert: Stat,
    /// What the insert samples are: "complete fills" or "1 Mi-key chunks of one fill".
    pub insert_samples: String,
    /// Lookup of inserted keys, one at a time (ns per key).
    pub hit: Stat,
    /// Lookup of never-inserted keys, one at a time (ns per key).
    pub miss: Stat,
    /// Hit lookups through the batched lookup, if the filter has one.
    pub batched_hit: Option<Stat>,
    /// Miss lookups through the batched lookup, if the filter has one.
    pub batched_miss: Option<Stat>,
    /// The memory probe's best ns per random line read at this size.
    pub limit_ns: f64,
    /// `hit.median_ns / limit_ns`.
    pub hit_ratio: f64,
    /// `miss.median_ns / limit_ns`.
    pub miss_ratio: f64,
    /// `batched_hit.median_ns / limit_ns`.
    pub batched_hit_ratio: Option<f64>,
    /// `batched_miss.median_ns / limit_ns`.
    pub batched_miss_ratio: Option<f64>,
    /// Share of the miss lookups that answered "maybe".
    pub measured_fpr: f64,
    /// The filter's model FPR at this load, if it has a model.
    pub model_fpr: Option<f64>,
    /// Hit lookups answered "no": false negatives, or keys the filter refused (see
    /// `insert_failures`). Zero for a correct filter that refused nothing.
    pub hits_not_found: u64,
    /// Inserts the filter refused (a full cuckoo table) during the kept fill.
    pub insert_failures: u64,
    /// Bytes of the filled filter on transparent huge pages (blocked filters; `None` for the
    /// others, and where the system cannot tell).
    pub huge_page_bytes: Option<usize>,
    /// The SIMD path linebloom's kernels ran (`linebloom::simd_path`); empty for a peer crate,
    /// which chooses its own.
    pub simd_path: String,
    /// The build the figures come from ([`machine::build_kind`]): `target-cpu` or `default`.
    pub build: &'static str,
}

impl SpeedRow {
    /// Sets `limit_ns` to the limit's best figure and the lookups' ratios to it.
    pub fn set_limit(&mut self, limit: &MemoryLimit) {
        let limit_ns = limit.best_ns();
        let ratio = |s: &Stat| s.median_ns / limit_ns;
        self.limit_ns = limit_ns;
        self.hit_ratio = ratio(&self.hit);
        self.miss_ratio = ratio(&self.miss);
        self.batched_hit_ratio = self.batched_hit.as_ref().map(ratio);
        self.batched_miss_ratio = self.batched_miss.as_ref().map(ratio);
    }
}

/// One filter's bulk insert at one size and thread count.
#[derive(Clone, Debug, Serialize)]
pub struct BulkRow {
    /// The filter's name.
    pub filter: String,
    /// The size the sweep asked for, in bytes.
    pub target_bytes: usize,
    /// The filter's actual size, in bytes.
    pub bytes: usize,
    /// Keys inserted.
    pub items: usize,
    /// Threads in the pool.
    pub threads: usize,
    /// ns per key (wall clock, all threads together).
    pub insert: Stat,
    /// Millions of keys per second at the median.
    pub mkeys_per_s: f64,
    /// Throughput relative to the first thread count of the sweep (usually 1).
    pub speedup: f64,
    /// The ceiling, blocked filters only: ns per key, all threads together, when every thread
    /// fills a filter of its own with its task's share of the keys, split beforehand (nothing
    /// shared; see `ceiling.rs`).
    pub ceiling: Option<Stat>,
    /// The ceiling's throughput relative to its own first thread count.
    pub ceiling_speedup: Option<f64>,
    /// Blocked filters: ns per key of the chunk when the first of the bulk insert's tasks for
    /// this many threads runs alone on the measuring thread (see `ceiling.rs`; for one thread,
    /// the whole sequential insert, without the pool's start-up).
    pub one_task: Option<Stat>,
    /// That task's throughput relative to the first thread count's: the most the bulk
    /// insert's design can give this many threads, however little they share.
    pub one_task_bound: Option<f64>,
    /// Blocked filters: ns per key (all threads together) of `par_contains_hashes` of the
    /// never-inserted keys on this pool.
    pub par_miss: Option<Stat>,
    /// Its throughput relative to the first thread count's.
    pub par_miss_speedup: Option<f64>,
}

/// A filled filter and what filling it cost.
struct Fill {
    /// One key at a time.
    insert: Stat,
    /// What the insert samples are.
    samples: &'static str,
    /// Through the parallel insert, per pool (in the order of the pools); `None` for a pool
    /// that got no sample.
    bulk: Vec<Option<Stat>>,
    /// The ceiling per pool, when `timed_fill` was given filters for it (see `ceiling.rs`).
    ceiling: Vec<Option<Stat>>,
    /// One of the pool's bulk-insert tasks alone, per pool, likewise.
    one_task: Vec<Option<Stat>>,
    subject: Box<dyn Subject>,
    refused: u64,
}

/// Fills new filters and times it, one key at a time and through the parallel insert on each
/// pool (when the filter has one).
///
/// Up to [`SMALL_FILL`] keys, every sample is one or more complete fills of a new filter (the
/// first sample of each method is a warm-up). Beyond, one filter is filled in chunks, each
/// chunk timed and given to one method in turn, so every method's samples are spread over the
/// whole fill, from empty to the design load; at most [`MAX_ONE_BY_ONE_CHUNKS`] chunks go one
/// key at a time (the slowest way) when there is a parallel insert to fill the rest. With
/// `own` (filters past [`SMALL_FILL`] only), each chunk a pool inserts is also split as that
/// pool's tasks would take it, and every thread of the pool inserts its share into a filter of
/// its own, timed: the ceiling of that pool, before or after the bulk insert in turn, so the
/// two share the machine's state of the moment; so is the first of the pool's bulk-insert
/// tasks, alone on this thread.
fn timed_fill(
    make: &dyn Fn() -> Result<Box<dyn Subject>>,
    items: usize,
    config: &ReportConfig,
    pools: &[(usize, rayon::ThreadPool)],
    own: Option<&OwnFilters>,
) -> Result<Fill> {
    let seed = config.seed;
    let first = make()?;
    let pools: Vec<(usize, &rayon::ThreadPool)> = if first.has_parallel_insert() {
        pools.iter().map(|(t, p)| (*t, p)).collect()
    } else {
        Vec::new()
    };
    if items <= SMALL_FILL {
        let hashes: Vec<u64> = (0..items as u64).map(|i| key_hash(seed, 0, i)).collect();
        let mut first = Some(first);
        let mut repeated = |method: Method<'_>| -> Result<(Stat, Box<dyn Subject>, u64)> {
            let mut last = None;
            let samples = sample_runs(config.sampling(), items, || {
                let mut s = match first.take() {
                    Some(s) => s,
                    None => make()?,
                };
                let (refused, took) = timed_insert(method, &mut s, black_box(&hashes))?;
                let started = Instant::now();
                s.finish()?;
                last = Some((s, refused));
                Ok(took + started.elapsed())
            })?;
            let (s, refused) = last.expect("at least one fill");
            Ok((Stat::from_samples(&samples).expect("reps >= 1"), s, refused))
        };
        let (insert, subject, refused) = repeated(Method::OneByOne)?;
        let bulk = pools
            .iter()
            .map(|&(_, pool)| repeated(Method::Parallel(pool)).map(|(stat, _, _)| Some(stat)))
            .collect::<Result<Vec<_>>>()?;
        return Ok(Fill {
            insert,
            samples: "complete fills",
            bulk,
            ceiling: Vec::new(),
            one_task: Vec::new(),
            subject,
            refused,
        });
    }

    let mut s = first;
    let methods = 1 + pools.len();
    // Small enough that every method gets several chunks, large enough to time.
    let chunk = (items / (4 * methods)).clamp(1 << 16, CHUNK);
    let chunks = items.div_ceil(chunk);
    let one_by_one = if pools.is_empty() {
        chunks
    } else {
        (chunks / methods).clamp(1, MAX_ONE_BY_ONE_CHUNKS)
    };
    let mut insert_samples = Vec::new();
    let mut bulk_samples = vec![Vec::new(); pools.len()];
    let mut ceiling_samples = vec![Vec::new(); pools.len()];
    let mut task_samples = vec![Vec::new(); pools.len()];
    let mut next_pool = 0;
    let mut buffer = Vec::with_capacity(chunk);
    let (mut refused, mut total) = (0, Duration::ZERO);
    for j in 0..chunks {
        let (start, end) = (j * chunk, ((j + 1) * chunk).min(items));
        buffer.clear();
        buffer.extend((start as u64..end as u64).map(|i| key_hash(seed, 0, i)));
        // Spreads the one-key-at-a-time chunks evenly over the fill (Bresenham).
        let method = if (j * one_by_one) % chunks < one_by_one {
            None
        } else {
            next_pool += 1;
            Some((next_pool - 1) % pools.len())
        };
        let how = match method {
            None => Method::OneByOne,
            Some(p) => Method::Parallel(pools[p].1),
        };
        let mut bounds = |p: usize| {
            if let Some(own) = own {
                let (threads, pool) = pools[p];
                let shares = own.shares(&buffer, threads);
                let ceiling = own.fill(pool, &shares);
                ceiling_samples[p].push(ns_per_op(ceiling, end - start));
                let task = own.one_task(&buffer, threads);
                task_samples[p].push(ns_per_op(task, end - start));
            }
        };
        if let (Some(p), true) = (method, j % 2 == 1) {
            bounds(p);
        }
        let (refused_now, elapsed) = timed_insert(how, &mut s, black_box(&buffer))?;
        if let (Some(p), false) = (method, j % 2 == 1) {
            bounds(p);
        }
        refused += refused_now;
        total += elapsed;
        let ns = ns_per_op(elapsed, end - start);
        match method {
            None => insert_samples.push(ns),
            Some(p) => bulk_samples[p].push(ns),
        }
    }
    let started = Instant::now();
    s.finish()?;
    total += started.elapsed();
    // A static filter does its work in `finish`; its only honest sample is the whole build.
    let (insert_samples, kind) = if s.is_static() {
        (vec![ns_per_op(total, items)], "one complete build")
    } else {
        (insert_samples, "chunks spread over one fill")
    };
    Ok(Fill {
        insert: Stat::from_samples(&insert_samples).expect("at least one chunk"),
        samples: kind,
        bulk: bulk_samples.iter().map(|v| Stat::from_samples(v)).collect(),
        ceiling: ceiling_samples
            .iter()
            .map(|v| Stat::from_samples(v))
            .collect(),
        one_task: task_samples.iter().map(|v| Stat::from_samples(v)).collect(),
        subject: s,
        refused,
    })
}

/// Salt of the stream that picks which inserted keys the hit lookups ask for.
const HIT_PICK: u64 = 0x6869_745f_7069_636b;

/// Insert, lookup and bulk-insert figures of one filter at one size.
pub fn measure_speed(
    c: Contender,
    target_bytes: usize,
    config: &ReportConfig,
    pools: &[(usize, rayon::ThreadPool)],
    limit: &MemoryLimit,
) -> Result<(SpeedRow, Vec<BulkRow>)> {
    let items = config.items_for(target_bytes);
    let make = || build_subject(c, items, config.bits_per_key, config.seed);
    let blocked = c == Contender::Ours(FilterKind::Blocked);
    // The ceiling's filters, for a blocked filter filled in chunks: one per thread of the
    // largest pool, alive during the fill (the sweep's memory check allows for them).
    let own = match pools.iter().map(|(t, _)| *t).max() {
        Some(threads) if blocked && items > SMALL_FILL => {
            Some(OwnFilters::new(items, config, threads)?)
        }
        _ => None,
    };
    let fill = timed_fill(&make, items, config, pools, own.as_ref())?;
    drop(own);
    let subject = fill.subject;
    let bytes = subject.size_bytes();
    let sampling = config.sampling();
    let n = config.lookups;

    let hits: Vec<u64> = (0..n as u64)
        .map(|j| key_hash(config.seed, 0, reduce(mix64(j ^ HIT_PICK), items) as u64))
        .collect();
    let misses: Vec<u64> = (0..n as u64).map(|j| key_hash(config.seed, 1, j)).collect();
    let hits_not_found = n as u64 - subject.count_each(&hits);
    let false_positives = subject.count_each(&misses);

    let hit = sample_batch(sampling, n, || subject.count_each(black_box(&hits)));
    let miss = sample_batch(sampling, n, || subject.count_each(black_box(&misses)));
    let mut out = vec![false; n];
    let (batched_hit, batched_miss) = match subject.count_batched(&hits, &mut out) {
        None => (None, None),
        Some(Err(e)) => return Err(e),
        Some(Ok(_)) => {
            let mut batched = |probe: &[u64]| {
                sample_batch(sampling, n, || {
                    subject
                        .count_batched(black_box(probe), &mut out)
                        .and_then(|r| r.ok())
                        .unwrap_or(0)
                })
            };
            (Some(batched(&hits)), Some(batched(&misses)))
        }
    };

    // The ceilings timed during the fill, per pool (none for filters filled whole).
    let mut ceilings = fill.ceiling.into_iter();
    let mut tasks = fill.one_task.into_iter();
    let mut bulk: Vec<BulkRow> = pools
        .iter()
        .zip(fill.bulk)
        .map(|(pool, stat)| {
            (
                pool,
                stat,
                ceilings.next().flatten(),
                tasks.next().flatten(),
            )
        })
        .filter_map(|((threads, _), stat, ceiling, one_task)| {
            stat.map(|stat| BulkRow {
                filter: c.name().to_string(),
                target_bytes,
                bytes,
                items,
                threads: *threads,
                mkeys_per_s: stat.mops(),
                speedup: 1.0,
                insert: stat,
                ceiling,
                ceiling_speedup: None,
                one_task,
                one_task_bound: None,
                par_miss: None,
                par_miss_speedup: None,
            })
        })
        .collect();
    let base = bulk.first().map_or(1.0, |b| b.mkeys_per_s);
    for b in &mut bulk {
        b.speedup = b.mkeys_per_s / base;
    }
    // The parallel batched lookup on each pool, the same never-inserted keys.
    if subject.par_count_batched(&misses, &mut out).is_some() {
        for b in &mut bulk {
            if let Some((_, pool)) = pools.iter().find(|(t, _)| *t == b.threads) {
                b.par_miss = Some(sample_batch(sampling, n, || {
                    pool.install(|| {
                        subject
                            .par_count_batched(black_box(&misses), &mut out)
                            .and_then(|r| r.ok())
                            .unwrap_or(0)
                    })
                }));
            }
        }
        let par_base = bulk
            .first()
            .and_then(|b| b.par_miss.as_ref())
            .map_or(1.0, Stat::mops);
        for b in &mut bulk {
            b.par_miss_speedup = b.par_miss.as_ref().map(|p| p.mops() / par_base);
        }
    }

    let mut row = SpeedRow {
        filter: c.name().to_string(),
        peer: c.is_peer(),
        params: subject.params(),
        target_bytes,
        bytes,
        items,
        bits_per_key: bytes as f64 * 8.0 / items as f64,
        insert_samples: fill.samples.to_string(),
        hit_ratio: 0.0,
        miss_ratio: 0.0,
        batched_hit_ratio: None,
        batched_miss_ratio: None,
        insert: fill.insert,
        hit,
        miss,
        batched_hit,
        batched_miss,
        limit_ns: 0.0,
        measured_fpr: false_positives as f64 / n as f64,
        model_fpr: subject.model_fpr((items as u64).saturating_sub(fill.refused)),
        hits_not_found,
        insert_failures: fill.refused,
        huge_page_bytes: subject.huge_page_bytes(),
        simd_path: if c.is_peer() {
            String::new()
        } else {
            linebloom::simd_path().name().to_string()
        },
        build: machine::build_kind(),
    };
    row.set_limit(limit);
    if blocked && !bulk.is_empty() {
        // Filters filled whole get their ceiling and one-task bound now, the filter measured
        // above freed first (the ceiling holds one filter per thread).
        drop(subject);
        for b in bulk.iter_mut().filter(|b| b.ceiling.is_none()) {
            if let Some((threads, pool)) = pools.iter().find(|(t, _)| *t == b.threads) {
                let (ceiling, one_task) = refill_bounds(items, config, *threads, pool)?;
                (b.ceiling, b.one_task) = (Some(ceiling), Some(one_task));
            }
        }
        let ceiling_base = bulk[0].ceiling.as_ref().map_or(1.0, Stat::mops);
        let task_base = bulk[0].one_task.as_ref().map_or(1.0, Stat::mops);
        for b in &mut bulk {
            b.ceiling_speedup = b.ceiling.as_ref().map(|c| c.mops() / ceiling_base);
            b.one_task_bound = b.one_task.as_ref().map(|t| t.mops() / task_base);
        }
    }
    Ok((row, bulk))
}
