//! Whole-batch builds of the blocked filter: every key of a filter in one call, as a storage
//! engine builds the filter of a file it has just written. The bulk-insert table times large
//! filters in chunks of 1 Mi keys (filling a filter piece by piece, where each call holds less
//! than one key per line); on 4 threads or more, a batch of several keys per line into a
//! filter past the cache takes the partitioned insert instead (`blocked/partition.rs`), and
//! from 2 threads on with its buffers kept from call to call (`par_insert_hashes_with`, one
//! `BuildBuffers` per pool kept from rep to rep, as a storage engine building filter after
//! filter keeps them). This table measures every way against the same keys inserted in input
//! order.
//!
//! Each sample builds a new filter whose lines were touched before the clock starts, so the
//! figures hold the partitioned insert's own buffers' page faults but not the filter's. A
//! virtual machine may report freed memory to its host, which takes it back (Firecracker's
//! balloon does): touching such memory again costs a fault in the host too, and whether a
//! fresh mapping gets reported or still-held pages depends on how long ago the memory was
//! freed. There, a 256 MiB build that follows the 2-3 s input-order one takes
//! 7.6-7.7 ns per key against 4.9-5.0 after another partitioned build: the same code, on
//! memory in another state. So the ways take turns within each round, the partitioned ones
//! each coming first (right after the input-order build that ends every round) as often as
//! the others, so they share the host's moments and the memory's states alike.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use super::config::ReportConfig;
use super::keys::key_hash;
use super::measure::{Stat, ns_per_op, thread_pool, unpinned};
use linebloom::blocked::BuildBuffers;
use linebloom::error::{Error, Result};

/// Keys per call of the input-order way: the bulk-insert table's chunk.
const PIECE: usize = 1 << 20;

/// One way of building one blocked filter from all its keys.
#[derive(Clone, Debug, Serialize)]
pub struct BuildRow {
    /// The size the sweep asked for, in bytes.
    pub target_bytes: usize,
    /// The filter's actual size, in bytes.
    pub bytes: usize,
    /// Keys inserted.
    pub items: usize,
    /// `insert_hashes per 1 Mi keys` (input order), `insert_hashes whole batch`,
    /// `par_insert_hashes whole batch`, `par_insert_hashes_with whole batch (buffers kept)` or
    /// `par_fill per 1 Mi keys (buffers kept)` (one [`BuildBuffers`] per pool for both, kept
    /// from rep to rep: the first rep of the two pays their allocation).
    pub method: String,
    /// Threads: 1 for `insert_hashes` (a pool of one pinned thread), else the pool's.
    pub threads: usize,
    /// Whether this call went through the partitioned insert.
    pub partitioned: bool,
    /// ns per key, wall clock.
    pub insert: Stat,
    /// Millions of keys per second at the median.
    pub mkeys_per_s: f64,
    /// Throughput relative to `insert_hashes whole batch` (the sequential rate).
    pub speedup: f64,
}

/// The builds of a blocked filter of `items` keys: see the module docs. An error where the
/// keys, the filter and the partitioned insert's buffers would not fit in half the machine's
/// memory (`memory`, when known).
pub fn measure_builds(
    items: usize,
    target_bytes: usize,
    config: &ReportConfig,
    pools: &[(usize, rayon::ThreadPool)],
    memory: Option<u64>,
) -> Result<Vec<BuildRow>> {
    let empty = || config.empty_blocked(items);
    let bytes = empty()?.size_bytes();
    // The keys, the filter being built and the partitioned insert's buffers (up to twice its
    // size), and the buffers each pool's kept ways hold from one rep to the next.
    let needed = (items as u64 * 8).saturating_add(bytes as u64 * (3 + 2 * pools.len() as u64));
    if let Some(memory) = memory
        && needed > memory / 2
    {
        return Err(Error::InvalidParameter {
            name: "size",
            value: super::byte_size::format_byte_size(target_bytes),
            allowed: "keys of a whole-batch build that fit in half of this machine's memory",
        });
    }
    let keys: Vec<u64> = (0..items as u64)
        .map(|i| key_hash(config.seed, 0, i))
        .collect();
    let lines = bytes / size_of::<linebloom::blocked::Line>();
    let mut ways = vec![
        Way::new(How::Pieces, 1, false),
        Way::new(How::Whole, 1, false),
    ];
    for (p, (threads, _)) in pools.iter().enumerate() {
        let partitioned = |kept| linebloom::internals::partitions(lines, items, *threads, kept);
        ways.push(Way::new(How::Par(p), *threads, partitioned(false)));
        if *threads > 1 {
            ways.push(Way::new(How::ParKept(p), *threads, partitioned(true)));
            let fills = linebloom::internals::partitioned_fill(lines, *threads);
            ways.push(Way::new(How::Fill(p), *threads, fills));
        }
    }
    // One set of buffers per pool, kept from rep to rep and shared by its two ways that keep
    // them, as a storage engine would keep one.
    let mut kept: Vec<BuildBuffers> = pools.iter().map(|_| BuildBuffers::new()).collect();
    // Every way runs on a pool's pinned threads, the sequential ones on a pool of one, while
    // the measuring thread waits unpinned, as in `examples/bulk_scaling.rs` (`whole`), so the
    // two measure the same thing.
    let one = thread_pool(1)?;
    let mut samples = vec![Vec::new(); ways.len()];
    for rep in 0..config.reps {
        // The partitioned ways take turns to come first, after the last round's input-order
        // build, which ends each round: see the module docs.
        let turns = ways.len() - 1;
        let order = (0..turns).map(|j| 1 + (j + rep) % turns);
        for i in order.chain([0]) {
            let mut filter = empty()?;
            // Touched before the clock starts: see the module docs.
            filter.clear();
            let keys = black_box(&keys);
            let took = unpinned(|| {
                let started = Instant::now();
                match ways[i].how {
                    How::Pieces => one.install(|| {
                        keys.chunks(PIECE)
                            .for_each(|piece| filter.insert_hashes(piece))
                    }),
                    How::Whole => one.install(|| filter.insert_hashes(keys)),
                    How::Par(p) => pools[p].1.install(|| filter.par_insert_hashes(keys)),
                    How::ParKept(p) => {
                        let buffers = &mut kept[p];
                        pools[p]
                            .1
                            .install(|| filter.par_insert_hashes_with(keys, buffers))
                    }
                    How::Fill(p) => {
                        let buffers = &mut kept[p];
                        pools[p].1.install(|| {
                            let mut fill = filter.par_fill(items, buffers);
                            keys.chunks(PIECE).for_each(|piece| fill.push(piece));
                        })
                    }
                }
                started.elapsed()
            });
            samples[i].push(ns_per_op(took, items));
        }
    }
    let stats: Vec<Stat> = samples
        .iter()
        .map(|s| Stat::from_samples(s).expect("reps >= 1"))
        .collect();
    let base = stats[1].mops();
    Ok(ways
        .into_iter()
        .zip(stats)
        .map(|(way, insert)| BuildRow {
            target_bytes,
            bytes,
            items,
            method: way.how.method().into(),
            threads: way.threads,
            partitioned: way.partitioned,
            mkeys_per_s: insert.mops(),
            speedup: insert.mops() / base,
            insert,
        })
        .collect())
}

/// How a way builds the filter; the pools by their index.
#[derive(Clone, Copy)]
enum How {
    /// `insert_hashes`, 1 Mi keys per call, on one thread.
    Pieces,
    /// `insert_hashes` of the whole batch, on one thread.
    Whole,
    /// `par_insert_hashes` of the whole batch.
    Par(usize),
    /// `par_insert_hashes_with` of the whole batch, the pool's buffers kept.
    ParKept(usize),
    /// `par_fill`, 1 Mi keys per push, the pool's buffers kept.
    Fill(usize),
}

impl How {
    /// The way's name in the table.
    fn method(self) -> &'static str {
        match self {
            How::Pieces => "insert_hashes per 1 Mi keys",
            How::Whole => "insert_hashes whole batch",
            How::Par(_) => "par_insert_hashes whole batch",
            How::ParKept(_) => "par_insert_hashes_with whole batch (buffers kept)",
            How::Fill(_) => "par_fill per 1 Mi keys (buffers kept)",
        }
    }
}

/// One way of building the filter, as the table shows it.
struct Way {
    how: How,
    threads: usize,
    partitioned: bool,
}

impl Way {
    fn new(how: How, threads: usize, partitioned: bool) -> Self {
        Way {
            how,
            threads,
            partitioned,
        }
    }
}
