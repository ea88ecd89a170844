//! Inserts into the blocked filter: one by one, batched with prefetch, and rayon bulk with all
//! threads, at sizes from in-L1 to far past the last-level cache (10 bits/key); and, for
//! filters of 32 MiB and more, building a new filter from all its keys in one call,
//! sequential, rayon, rayon with the partitioned insert's buffers kept, and a fill in 1 Mi-key
//! pieces. Quick run:
//! `LINEBLOOM_BENCH_MAX_MIB=16 cargo bench --bench insert`.

mod common;

use common::*;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use linebloom::{BlockedBloom, BuildBuffers};

/// One pool of every available thread for the whole run, the bench thread pinned once it is
/// built: threads inherit their creator's CPU affinity, so a pool built after pinning would run
/// on one core.
fn pool_then_pin() -> &'static (usize, rayon::ThreadPool) {
    static POOL: std::sync::OnceLock<(usize, rayon::ThreadPool)> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pin_thread();
        (threads, pool)
    })
}

fn insert(c: &mut Criterion) {
    let &(threads, ref pool) = pool_then_pin();
    for bytes in sizes() {
        let items = items_for(bytes, 10.0);
        // Large filters insert a sample of keys so one iteration stays short; the sample still
        // spreads over every line, so each insert is a cache miss as in a full build.
        let batch = items.min(1 << 22);
        let hs = hashes(0, 0..batch as u64);
        let mut filter = BlockedBloom::with_bits_per_key(items as u64, 10.0).unwrap();
        let mut group = c.benchmark_group(format!("insert/{}", size_label(bytes)));
        group.throughput(Throughput::Elements(batch as u64));
        group.sample_size(10);
        group.bench_function(BenchmarkId::new("scalar", batch), |b| {
            b.iter(|| hs.iter().for_each(|&h| filter.insert_hash(h)))
        });
        group.bench_function(BenchmarkId::new("batched", batch), |b| {
            b.iter(|| filter.insert_hashes(&hs))
        });
        group.bench_function(
            BenchmarkId::new(format!("rayon_{threads}threads"), batch),
            |b| b.iter(|| pool.install(|| filter.par_insert_hashes(&hs))),
        );
        group.finish();
    }
}

/// A new filter built from all its keys in one call, each iteration on a fresh filter (page
/// faults included, as a build pays them). With at least 4 keys per line into at least
/// 32 MiB, `par_insert_hashes` takes the partitioned insert on 4 threads or more, and
/// `par_insert_hashes_with` on 2 or more, its `BuildBuffers` kept from iteration to iteration
/// (as a storage engine building filter after filter keeps them), as does `par_fill` fed
/// 1 Mi keys at a time with the same buffers; `insert_hashes` keeps the keys in input order.
fn build(c: &mut Criterion) {
    let &(threads, ref pool) = pool_then_pin();
    for bytes in sizes().into_iter().filter(|&b| b >= 32 << 20) {
        let items = items_for(bytes, 10.0);
        let hs = hashes(0, 0..items as u64);
        let empty = || BlockedBloom::with_bits_per_key(items as u64, 10.0).unwrap();
        let mut group = c.benchmark_group(format!("build/{}", size_label(bytes)));
        group.throughput(Throughput::Elements(items as u64));
        group.sample_size(10);
        group.bench_function(BenchmarkId::new("insert_hashes", items), |b| {
            b.iter_batched(empty, |mut f| f.insert_hashes(&hs), BatchSize::PerIteration)
        });
        group.bench_function(
            BenchmarkId::new(format!("par_insert_hashes_{threads}threads"), items),
            |b| {
                b.iter_batched(
                    empty,
                    |mut f| pool.install(|| f.par_insert_hashes(&hs)),
                    BatchSize::PerIteration,
                )
            },
        );
        let mut buffers = BuildBuffers::new();
        group.bench_function(
            BenchmarkId::new(format!("par_insert_hashes_with_{threads}threads"), items),
            |b| {
                b.iter_batched(
                    empty,
                    |mut f| pool.install(|| f.par_insert_hashes_with(&hs, &mut buffers)),
                    BatchSize::PerIteration,
                )
            },
        );
        group.bench_function(
            BenchmarkId::new(format!("par_fill_1Mi_{threads}threads"), items),
            |b| {
                b.iter_batched(
                    empty,
                    |mut f| {
                        pool.install(|| {
                            let mut fill = f.par_fill(items, &mut buffers);
                            hs.chunks(1 << 20).for_each(|piece| fill.push(piece));
                        })
                    },
                    BatchSize::PerIteration,
                )
            },
        );
        group.finish();
    }
}

criterion_group!(benches, insert, build);
criterion_main!(benches);
