//! This crate's filters against the peers on crates.io, at the same bits per key (10) where a
//! peer lets one choose: fastbloom, sbbf-rs (Parquet split-block), bloomfilter, cuckoofilter,
//! xorf BinaryFuse8. Every filter is driven through `linebloom_cli::report::subject` (the same
//! adapters and loops the report uses) with the same pre-hashed keys.
//!
//! Before measuring, each size prints every filter's actual bits per key, measured FPR and
//! model FPR, since a speed means little without them, and what reading one random line from
//! a buffer of the blocked filter's size costs (the report's memory limit, `report::limit`),
//! so that the lookups of the same run can be read against it.
//!
//! Then, for the blocked filter, the group `builds/<n>` builds it from all n keys: in input
//! order on the pinned bench thread (`insert_hashes`), and on two pinned threads with
//! `par_insert_hashes`, with `par_insert_hashes_with` (one `BuildBuffers` kept from build to
//! build) and with `par_fill` fed 1 Mi keys at a time (the same buffers). Each build starts
//! from an empty filter whose lines were touched before the clock starts, as in the report's
//! build table, so these are the figures of target 3 (issue 6) in the same run as the rest.
//!
//! ```sh
//! cargo bench --bench peers                                  # n = 1M
//! LINEBLOOM_BENCH_LARGE=1 cargo bench --bench peers          # also n = 100M (minutes, ~4 GB)
//! cargo bench --bench peers -- 'peers/1M/miss'               # one group
//! cargo bench --bench peers -- 'sbbf-rs'                     # one filter
//! ```

use criterion::{
    BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use linebloom::{BlockedBloom, BuildBuffers};
use linebloom_cli::report::figures::fpr_md;
use linebloom_cli::report::keys::key_hash;
use linebloom_cli::report::limit::probe_memory;
use linebloom_cli::report::lineup::build_subject;
use linebloom_cli::report::measure::{Sampling, pin_current_thread, thread_pool};
use linebloom_cli::report::subject::{Contender, Subject};
use std::hint::black_box;
use std::time::{Duration, Instant};

const BITS_PER_KEY: f64 = 10.0;
const SEED: u64 = 0x7065_6572; // "peer"
/// Keys per lookup batch.
const LOOKUPS: usize = 1 << 20;
/// Keys per insert chunk while filling.
const CHUNK: usize = 1 << 20;

fn sizes() -> Vec<(usize, &'static str)> {
    let mut sizes = vec![(1_000_000, "1M")];
    if std::env::var("LINEBLOOM_BENCH_LARGE").is_ok_and(|v| v == "1") {
        sizes.push((100_000_000, "100M"));
    } else {
        eprintln!("n = 100M skipped: set LINEBLOOM_BENCH_LARGE=1 to run it (minutes, ~4 GB)");
    }
    sizes
}

fn filled(c: Contender, n: usize) -> Box<dyn Subject> {
    let mut s =
        build_subject(c, n, BITS_PER_KEY, SEED).expect("every contender builds at 10 bits/key");
    let mut buffer = Vec::with_capacity(CHUNK);
    for start in (0..n).step_by(CHUNK) {
        buffer.clear();
        buffer.extend((start as u64..(start + CHUNK).min(n) as u64).map(|i| key_hash(SEED, 0, i)));
        s.insert_each(&buffer).expect("the insert succeeds");
    }
    s.finish().expect("the build succeeds");
    s
}

fn peers(c: &mut Criterion) {
    // Built before the bench thread is pinned, and each of its threads pinned to a core of
    // its own (threads inherit their creator's affinity).
    let two = thread_pool(2).expect("a pool of two threads");
    eprintln!("{}", pin_current_thread().note);
    for (n, label) in sizes() {
        print_limit(n, label);
        let hits: Vec<u64> = (0..LOOKUPS as u64)
            .map(|j| key_hash(SEED, 0, j * 7919 % n as u64))
            .collect();
        let misses: Vec<u64> = (0..LOOKUPS as u64).map(|j| key_hash(SEED, 1, j)).collect();
        let inserts: Vec<u64> = (0..n.min(CHUNK) as u64)
            .map(|i| key_hash(SEED, 0, i))
            .collect();
        eprintln!("\nn = {label} at {BITS_PER_KEY} bits/key asked:");
        eprintln!(
            "  {:<13} {:<12} {:>9} {:>11} {:>11} {:>12}",
            "filter", "params", "bits/key", "FPR", "model FPR", "hits missed"
        );
        let mut group = c.benchmark_group(format!("peers/{label}"));
        group.sample_size(10);
        for contender in Contender::available() {
            let s = filled(contender, n);
            let fp = s.count_each(&misses);
            eprintln!(
                "  {:<13} {:<12} {:>9.2} {:>11} {:>11} {:>12}",
                contender.name(),
                s.params(),
                s.size_bytes() as f64 * 8.0 / n as f64,
                fpr_md(fp as f64 / LOOKUPS as f64),
                s.model_fpr(n as u64).map_or("—".into(), fpr_md),
                LOOKUPS as u64 - s.count_each(&hits),
            );
            group.throughput(Throughput::Elements(LOOKUPS as u64));
            for (what, probe) in [("hit", &hits), ("miss", &misses)] {
                group.bench_with_input(
                    BenchmarkId::new(what, contender.name()),
                    probe,
                    |b, probe| b.iter(|| s.count_each(black_box(probe))),
                );
            }
            let mut out = vec![false; LOOKUPS];
            if s.count_batched(&misses, &mut out).is_some() {
                group.bench_function(BenchmarkId::new("batched_miss", contender.name()), |b| {
                    b.iter(|| s.count_batched(black_box(&misses), &mut out))
                });
            }
            drop(s);
            // Building: the first 1M keys (all of them at n = 1M) into a new filter, its memory
            // written before the clock starts (`Subject::touch`), whichever filter it is.
            group.throughput(Throughput::Elements(inserts.len() as u64));
            group.bench_function(BenchmarkId::new("build", contender.name()), |b| {
                b.iter_batched(
                    || {
                        let mut s =
                            build_subject(contender, n, BITS_PER_KEY, SEED).expect("builds");
                        // Its memory written off the clock, as some constructors do anyway.
                        s.touch();
                        s
                    },
                    |mut s| {
                        s.insert_each(black_box(&inserts)).expect("inserts");
                        s.finish().expect("builds");
                        s
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
        builds(c, n, label, &two);
    }
}

/// The memory limit beside a blocked filter of `n` keys: see the module docs.
fn print_limit(n: usize, label: &str) {
    let bytes = BlockedBloom::with_bits_per_key(n as u64, BITS_PER_KEY)
        .expect("a blocked filter of this size")
        .size_bytes();
    let sampling = Sampling {
        reps: 5,
        min_sample: Duration::from_millis(20),
    };
    let limit = probe_memory(bytes, LOOKUPS, sampling, SEED);
    eprintln!(
        "\nn = {label}: one random 64-byte line of {bytes} bytes (the blocked filter's size) \
         costs {:.2} ns read independently, {:.2} prefetched as the batched lookups do \
         (the limit: {:.2}), {:.2} latency",
        limit.independent.median_ns,
        limit.prefetched.median_ns,
        limit.best_ns(),
        limit.dependent.median_ns
    );
}

/// The blocked filter built from all `n` keys, one thread against two: see the module docs.
fn builds(c: &mut Criterion, n: usize, label: &str, two: &rayon::ThreadPool) {
    let keys: Vec<u64> = (0..n as u64).map(|i| key_hash(SEED, 0, i)).collect();
    let mut filter = BlockedBloom::with_bits_per_key(n as u64, BITS_PER_KEY).expect("the filter");
    let mut buffers = BuildBuffers::new();
    let mut group = c.benchmark_group(format!("builds/{label}"));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(n as u64));
    // Each iteration empties the filter (touching its lines) off the clock, then times one
    // whole build.
    let mut time = |name: &str, build: &mut dyn FnMut(&mut BlockedBloom)| {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut took = Duration::ZERO;
                for _ in 0..iters {
                    filter.clear();
                    let started = Instant::now();
                    build(&mut filter);
                    took += started.elapsed();
                }
                took
            })
        });
    };
    let keys = black_box(&keys);
    time("insert_hashes, 1 thread", &mut |f| f.insert_hashes(keys));
    time("par_insert_hashes, 2 threads", &mut |f| {
        two.install(|| f.par_insert_hashes(keys))
    });
    time(
        "par_insert_hashes_with, 2 threads, buffers kept",
        &mut |f| two.install(|| f.par_insert_hashes_with(keys, &mut buffers)),
    );
    time(
        "par_fill 1 Mi keys per push, 2 threads, buffers kept",
        &mut |f| {
            two.install(|| {
                let mut fill = f.par_fill(n, &mut buffers);
                keys.chunks(CHUNK).for_each(|piece| fill.push(piece));
            })
        },
    );
    group.finish();
}

criterion_group!(benches, peers);
criterion_main!(benches);
