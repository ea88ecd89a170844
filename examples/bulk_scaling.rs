//! Where the parallel bulk insert's time goes, against what the memory system gives threads.
//!
//! ```sh
//! cargo run --release --features internals --example bulk_scaling -- [THREADS] [MILLION_KEYS]
//! ```
//!
//! (defaults: 2 threads, 100 M keys at 10 bits per key, a 119 MiB filter.) The keys go in
//! chunks of 4 Mi, and each chunk is inserted six ways, one after the other, so that every
//! way sees the same moment of a shared host:
//! - `sequential`: `insert_hashes` on one thread (the prefetching insert);
//! - `par_insert`: `par_insert_hashes` on a pool of THREADS pinned threads, one shared filter;
//! - `ceiling`: every thread of the pool inserts the whole chunk into a filter of its own
//!   (nothing shared), ns per key counting each thread's keys;
//! - `pre-split`: the chunk split beforehand by the filter part each thread owns, and every
//!   thread inserting only its part into a full-size filter of its own, so that it writes the
//!   same run of lines as its task in `par_insert_hashes`: the bulk insert if picking its keys
//!   cost nothing (the bound of its design, and the report's ceiling; the row above, each
//!   thread writing twice the span its task writes, reads lower). Each thread's filter is of
//!   full size on purpose: a filter of its part's size would put the part's keys in a quarter
//!   of the lines, which a large L3 nearly holds, and the bound would read above the ceiling.
//! - `scan only`: every thread reading the whole chunk and counting the keys of its part, the
//!   picking `par_insert_hashes` does, without inserting;
//! - `one task`: what one of `par_insert_hashes`' THREADS tasks does (scan the whole chunk,
//!   insert the keys of its run of lines), alone on the thread `sequential` runs on.
//!   Its speedup over `sequential` is what the bulk insert's design would give if threads
//!   shared nothing (no memory bandwidth, no cache): every task reads the whole input, so
//!   this bounds `par_insert` whatever the machine, and it is steadier than two-thread
//!   figures on a shared host.
//!
//! Prints ns per key (all threads together) and the speedup over `sequential` of the same run,
//! after the first chunk (which pays the page faults).
//!
//! ```sh
//! cargo run --release --features internals --example bulk_scaling -- [THREADS] [MILLION_KEYS] whole
//! ```
//!
//! times building the filter from all its keys in one call instead, five times each way in
//! turn (a fresh filter each time, its lines touched before the clock starts): `insert_hashes`
//! fed 1 Mi keys at a time (the keys in input order, the prefetching insert), `insert_hashes`
//! of the whole batch (the same insert in one call), `par_insert_hashes` of the whole batch
//! on one pinned thread and on THREADS (partitioned from 4 threads on, for filters past
//! 32 MiB), `par_insert_hashes_with` on THREADS, one `BuildBuffers` kept from round to
//! round (partitioned from 2 threads on; its first round pays the buffers' first touch), and
//! `par_fill` fed 1 Mi keys at a time on THREADS, with the same buffers.
//! Prints the median and range of each, and each one's speedup over the one-call
//! `insert_hashes`.

use linebloom::hash::mix64;
use linebloom::{BlockedBloom, BuildBuffers};
use std::hint::black_box;
use std::sync::Mutex;
use std::time::Instant;

const CHUNK: usize = 1 << 22;
const WAYS: [&str; 6] = [
    "sequential",
    "par_insert",
    "ceiling",
    "pre-split",
    "scan only",
    "one task",
];

fn filter(items: usize) -> BlockedBloom {
    match BlockedBloom::builder(items).bits_per_key(10.0).build() {
        Ok(f) => f,
        Err(e) => panic!("cannot build a filter of {items} keys: {e}"),
    }
}

/// The part (0..threads) a hash's line falls in: lines are split in equal runs, and the line
/// is the high half of `hash * lines`, so the part is that of `hash` in equal hash ranges up
/// to rounding at the edges, which does not matter for timing.
fn part(hash: u64, threads: usize) -> usize {
    ((hash as u128 * threads as u128) >> 64) as usize
}

/// A pool of `threads` threads, thread i pinned to the i-th core (wrapping around).
fn pinned_pool(threads: usize) -> rayon::ThreadPool {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(move |i| {
            if let Some(&id) = cores.get(i % cores.len().max(1)) {
                core_affinity::set_for_current(id);
            }
        })
        .build()
        .expect("a thread pool")
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let threads = args.next().and_then(Result::ok).unwrap_or(2).max(1);
    let items = args.next().and_then(Result::ok).unwrap_or(100) * 1_000_000;
    let pool = pinned_pool(threads);
    if std::env::args().nth(3).as_deref() == Some("whole") {
        whole(&pool, threads, items);
        return;
    }
    let mut sequential = filter(items);
    let mut shared = filter(items);
    let mut alone = filter(items);
    let own: Vec<Mutex<BlockedBloom>> = (0..threads).map(|_| Mutex::new(filter(items))).collect();
    let split: Vec<Mutex<BlockedBloom>> = (0..threads).map(|_| Mutex::new(filter(items))).collect();
    let mut seconds = [0f64; WAYS.len()];
    let mut keys = 0;
    let mut chunk = Vec::with_capacity(CHUNK);
    for (round, start) in (0..items).step_by(CHUNK).enumerate() {
        let end = (start + CHUNK).min(items);
        chunk.clear();
        chunk.extend((start as u64..end as u64).map(mix64));
        // Exactly the keys each task takes, as the report's ceiling splits them.
        let parts = shared.task_shares(&chunk, threads);
        let mut took = [0f64; WAYS.len()];
        let timed = |f: &mut dyn FnMut()| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64()
        };
        took[0] = timed(&mut || sequential.insert_hashes(black_box(&chunk)));
        took[1] = timed(&mut || pool.install(|| shared.par_insert_hashes(black_box(&chunk))));
        took[2] = timed(&mut || {
            pool.broadcast(|c| {
                if let Ok(mut f) = own[c.index()].lock() {
                    f.insert_hashes(black_box(&chunk));
                }
            });
        }) / threads as f64;
        took[3] = timed(&mut || {
            pool.broadcast(|c| {
                if let Ok(mut f) = split[c.index()].lock() {
                    f.insert_hashes(black_box(&parts[c.index()]));
                }
            });
        });
        took[4] = timed(&mut || {
            let counts = pool.broadcast(|c| {
                let mine = c.index();
                chunk.iter().filter(|&&h| part(h, threads) == mine).count()
            });
            black_box(counts);
        });
        took[5] = timed(&mut || {
            alone.insert_hashes_as_task(black_box(&chunk), 0, threads);
        });
        // The first chunk touches every page of every filter.
        if round > 0 {
            keys += end - start;
            seconds.iter_mut().zip(took).for_each(|(s, t)| *s += t);
        }
    }
    if keys == 0 {
        println!("too few keys: need more than one chunk of {CHUNK}");
        return;
    }
    println!(
        "{threads} threads, {} M keys (119 MiB per 100 M), ns per key of all threads:",
        items / 1_000_000
    );
    for (way, s) in WAYS.iter().zip(seconds) {
        let speedup = if way == &"scan only" {
            String::new()
        } else {
            format!("  {:.2}x", seconds[0] / s)
        };
        println!("  {way:<11} {:6.2}{speedup}", s * 1e9 / keys as f64);
    }
}

/// One way of filling a new filter with all the keys.
type Build<'a> = dyn Fn(&mut BlockedBloom) + 'a;

/// Whole-batch builds: see the module docs.
fn whole(pool: &rayon::ThreadPool, threads: usize, items: usize) {
    let one = pinned_pool(1);
    let keys: Vec<u64> = (0..items as u64).map(mix64).collect();
    // Kept from round to round, as a storage engine building filter after filter keeps them.
    let buffers = std::sync::Mutex::new(BuildBuffers::new());
    let ways: [(&str, &Build); 6] = [
        ("insert_hashes, 1 Mi at a time", &|f| {
            one.install(|| keys.chunks(1 << 20).for_each(|c| f.insert_hashes(c)))
        }),
        ("insert_hashes, whole batch", &|f| {
            one.install(|| f.insert_hashes(&keys))
        }),
        ("par_insert_hashes, 1 thread", &|f| {
            one.install(|| f.par_insert_hashes(&keys))
        }),
        ("par_insert_hashes, THREADS", &|f| {
            pool.install(|| f.par_insert_hashes(&keys))
        }),
        ("par_insert_hashes_with, THREADS", &|f| {
            let kept: &mut BuildBuffers = &mut buffers.lock().unwrap();
            pool.install(|| f.par_insert_hashes_with(&keys, kept))
        }),
        ("par_fill, 1 Mi at a time, THREADS", &|f| {
            let kept: &mut BuildBuffers = &mut buffers.lock().unwrap();
            pool.install(|| {
                let mut fill = f.par_fill(items, kept);
                keys.chunks(1 << 20).for_each(|c| fill.push(c));
            })
        }),
    ];
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
    let mut first: Option<BlockedBloom> = None;
    for round in 0..5 {
        // As the report's builds table: the partitioned ways take turns to come first, the
        // input-order one ends each round, and the filter's lines are touched before the clock
        // starts (on a VM with free page reporting a fresh mapping's first touch costs more or
        // less, depending on when the memory was last freed; `cli/src/report/build.rs`).
        let turns = ways.len() - 1;
        let order = (0..turns).map(|j| 1 + (j + round) % turns).chain([0]);
        for i in order {
            let (name, way) = &ways[i];
            let mut f = filter(items);
            f.clear();
            let started = Instant::now();
            way(&mut f);
            ns[i].push(started.elapsed().as_secs_f64() * 1e9 / items as f64);
            match &first {
                Some(want) => assert!(&f == want, "{name} set other bits"),
                None => first = Some(f),
            }
        }
    }
    println!(
        "{} M keys in one call, {threads} threads; ns per key, median (min-max) of 5:",
        items / 1_000_000
    );
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let base = median(&mut ns[1]);
    for ((name, _), v) in ways.iter().zip(&mut ns) {
        let m = median(v);
        let name = name.replace("THREADS", &format!("{threads} threads"));
        println!(
            "  {name:<37} {m:6.2} ({:.2}-{:.2})  {:.2}x",
            v[0],
            v[v.len() - 1],
            base / m
        );
    }
}
