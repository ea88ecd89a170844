//! This crate's filters against the peers on crates.io, at the same bits per key (10) where a
//! peer lets one choose: fastbloom, sbbf-rs (Parquet split-block), bloomfilter, cuckoofilter,
//! xorf BinaryFuse8. Every filter is driven through `linebloom::report::subject` (the same
//! adapters and loops the report uses) with the same pre-hashed keys.
//!
//! Before measuring, each size prints every filter's actual bits per key, measured FPR and
//! model FPR, since a speed means little without them.
//!
//! ```sh
//! cargo bench --features peers --bench peers                       # n = 1M
//! LINEBLOOM_BENCH_LARGE=1 cargo bench --features peers --bench peers   # also n = 100M (minutes, ~4 GB)
//! cargo bench --features peers --bench peers -- 'peers/1M/miss'    # one group
//! cargo bench --features peers --bench peers -- 'sbbf-rs'          # one filter
//! ```

mod common;

use common::pin_thread;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use linebloom::report::fpr::key_hash;
use linebloom::report::subject::{Contender, Subject, build_subject};
use linebloom::report::write::fpr_md;
use std::hint::black_box;

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
    pin_thread();
    for (n, label) in sizes() {
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
            // Building: the first 1M keys (all of them at n = 1M) into a new filter.
            group.throughput(Throughput::Elements(inserts.len() as u64));
            group.bench_function(BenchmarkId::new("build", contender.name()), |b| {
                b.iter_batched(
                    || build_subject(contender, n, BITS_PER_KEY, SEED).expect("builds"),
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
    }
}

criterion_group!(benches, peers);
criterion_main!(benches);
