//! The two questions of the counting and scalable filters, each against the filter a caller
//! would otherwise pick:
//!
//! - `delete/<n>`: filters that remove keys, the counting blocked filter against this crate's
//!   cuckoo filter, both sized for n keys at a 1 % FPR target (`with_fpr`): insert (a new
//!   filter filled with all n keys), lookups of inserted (hit) and never-inserted (miss) keys
//!   one at a time, and remove (every inserted key removed from a full filter).
//! - `growth`: filters that grow, the scalable blocked filter against growable-bloom-filter
//!   2.1 (`GrowableBloom::new`, growth 2, tightening 0.85), both started at 1,000 keys with a
//!   1 % target and grown to 1,000,000 (1000x): insert (the whole growth, from empty), and
//!   lookups hit and miss in the grown filters. growable-bloom-filter takes `Hash` keys only,
//!   so it hashes each u64 again; ours takes the hash as it is.
//!
//! Before measuring, each group prints the filters' bits per key and measured FPR.
//!
//! ```sh
//! cargo bench --bench delete_growth                       # both groups
//! cargo bench --bench delete_growth -- 'delete/1M/miss'   # one figure
//! LINEBLOOM_BENCH_LARGE=1 cargo bench --bench delete_growth  # also delete at n = 16M
//! ```

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use growable_bloom_filter::GrowableBloom;
use linebloom::{CountingBlockedBloom, CuckooFilter, ScalableBlockedBloom};
use linebloom_cli::report::figures::fpr_md;
use linebloom_cli::report::keys::key_hash;
use linebloom_cli::report::measure::pin_current_thread;
use std::hint::black_box;
use std::time::Duration;

const SEED: u64 = 0x6465_6c67; // "delg"
const FPR: f64 = 0.01;
/// Keys per lookup batch.
const LOOKUPS: usize = 1 << 20;
/// The growth group: from this many keys ...
const GROWTH_START: usize = 1_000;
/// ... to this many (1000x).
const GROWTH_END: usize = 1_000_000;

fn delete_sizes() -> Vec<(usize, &'static str)> {
    let mut sizes = vec![(1_000_000, "1M")];
    if std::env::var("LINEBLOOM_BENCH_LARGE").is_ok_and(|v| v == "1") {
        sizes.push((16_000_000, "16M"));
    } else {
        eprintln!("delete at n = 16M skipped: set LINEBLOOM_BENCH_LARGE=1 to run it");
    }
    sizes
}

fn keys(stream: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| key_hash(SEED, stream, i)).collect()
}

/// Lookup keys: inserted ones in a scattered order, and never-inserted ones.
fn probes(n: usize) -> (Vec<u64>, Vec<u64>) {
    let hits = (0..LOOKUPS as u64)
        .map(|j| key_hash(SEED, 0, j * 7919 % n as u64))
        .collect();
    (hits, keys(1, LOOKUPS))
}

fn rate(found: usize) -> String {
    fpr_md(found as f64 / LOOKUPS as f64)
}

fn counting(n: usize, inserts: &[u64]) -> CountingBlockedBloom {
    let mut f = CountingBlockedBloom::builder(n as u64)
        .fpr(FPR)
        .seed(SEED)
        .build()
        .expect("a counting filter of this size");
    f.insert_hashes(inserts);
    f
}

fn cuckoo(n: usize, inserts: &[u64]) -> CuckooFilter {
    let mut f = CuckooFilter::builder(n as u64)
        .fpr(FPR)
        .seed(SEED)
        .build()
        .expect("a cuckoo filter of this size");
    for &h in inserts {
        f.insert_hash(h)
            .expect("a cuckoo filter sized for n holds n keys");
    }
    f
}

fn delete(c: &mut Criterion) {
    eprintln!("{}", pin_current_thread().note);
    for (n, label) in delete_sizes() {
        let inserts = keys(0, n);
        let (hits, misses) = probes(n);
        let full_counting = counting(n, &inserts);
        let full_cuckoo = cuckoo(n, &inserts);
        eprintln!("\ndelete, n = {label}, FPR target {}:", fpr_md(FPR));
        for (name, bytes, fp) in [
            (
                "counting",
                full_counting.size_bytes(),
                misses
                    .iter()
                    .filter(|&&h| full_counting.contains_hash(h))
                    .count(),
            ),
            (
                "cuckoo",
                full_cuckoo.size_bytes(),
                misses
                    .iter()
                    .filter(|&&h| full_cuckoo.contains_hash(h))
                    .count(),
            ),
        ] {
            eprintln!(
                "  {name:<9} {:>6.2} bits/key, FPR {}",
                bytes as f64 * 8.0 / n as f64,
                rate(fp)
            );
        }
        let mut group = c.benchmark_group(format!("delete/{label}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("insert", "counting"), |b| {
            b.iter_batched(
                || {
                    CountingBlockedBloom::builder(n as u64)
                        .fpr(FPR)
                        .seed(SEED)
                        .build()
                        .unwrap()
                },
                |mut f| {
                    f.insert_hashes(black_box(&inserts));
                    f
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("insert", "cuckoo"), |b| {
            b.iter_batched(
                || {
                    CuckooFilter::builder(n as u64)
                        .fpr(FPR)
                        .seed(SEED)
                        .build()
                        .unwrap()
                },
                |mut f| {
                    for &h in black_box(&inserts) {
                        let _ = f.insert_hash(h);
                    }
                    f
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("remove", "counting"), |b| {
            b.iter_batched(
                || full_counting.clone(),
                |mut f| {
                    let removed = black_box(&inserts)
                        .iter()
                        .filter(|&&h| f.remove_hash(h))
                        .count();
                    (f, removed)
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("remove", "cuckoo"), |b| {
            b.iter_batched(
                || full_cuckoo.clone(),
                |mut f| {
                    let removed = black_box(&inserts)
                        .iter()
                        .filter(|&&h| f.remove_hash(h))
                        .count();
                    (f, removed)
                },
                BatchSize::PerIteration,
            )
        });
        group.throughput(Throughput::Elements(LOOKUPS as u64));
        for (what, probe) in [("hit", &hits), ("miss", &misses)] {
            group.bench_function(BenchmarkId::new(what, "counting"), |b| {
                b.iter(|| {
                    black_box(probe)
                        .iter()
                        .filter(|&&h| full_counting.contains_hash(h))
                        .count()
                })
            });
            group.bench_function(BenchmarkId::new(what, "cuckoo"), |b| {
                b.iter(|| {
                    black_box(probe)
                        .iter()
                        .filter(|&&h| full_cuckoo.contains_hash(h))
                        .count()
                })
            });
        }
        group.finish();
    }
}

fn scalable(inserts: &[u64]) -> ScalableBlockedBloom {
    let mut f = ScalableBlockedBloom::builder(GROWTH_START as u64)
        .fpr(FPR)
        .seed(SEED)
        .build()
        .expect("a scalable filter");
    f.insert_hashes(inserts);
    f
}

fn growable(inserts: &[u64]) -> GrowableBloom {
    let mut f = GrowableBloom::new(FPR, GROWTH_START);
    for &h in inserts {
        f.insert(h);
    }
    f
}

fn growth(c: &mut Criterion) {
    let inserts = keys(0, GROWTH_END);
    let (hits, misses) = probes(GROWTH_END);
    let ours = scalable(&inserts);
    let theirs = growable(&inserts);
    eprintln!(
        "\ngrowth {GROWTH_START} -> {GROWTH_END} keys, FPR target {}:\n  scalable  {:.2} bits/key \
         in {} filters, FPR {}\n  growable-bloom-filter: FPR {}, {} of {GROWTH_END} keys \
         stored (its size: `linebloom report --filters growable-bloom-filter`)",
        fpr_md(FPR),
        ours.size_bytes() as f64 * 8.0 / GROWTH_END as f64,
        ours.filters(),
        rate(misses.iter().filter(|&&h| ours.contains_hash(h)).count()),
        rate(misses.iter().filter(|&&h| theirs.contains(h)).count()),
        theirs.len(),
    );
    let mut group = c.benchmark_group("growth");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(GROWTH_END as u64));
    group.bench_function(BenchmarkId::new("insert", "scalable"), |b| {
        b.iter(|| scalable(black_box(&inserts)))
    });
    group.bench_function(BenchmarkId::new("insert", "growable-bloom-filter"), |b| {
        b.iter(|| growable(black_box(&inserts)))
    });
    group.throughput(Throughput::Elements(LOOKUPS as u64));
    for (what, probe) in [("hit", &hits), ("miss", &misses)] {
        group.bench_function(BenchmarkId::new(what, "scalable"), |b| {
            b.iter(|| {
                black_box(probe)
                    .iter()
                    .filter(|&&h| ours.contains_hash(h))
                    .count()
            })
        });
        group.bench_function(BenchmarkId::new(what, "growable-bloom-filter"), |b| {
            b.iter(|| {
                black_box(probe)
                    .iter()
                    .filter(|&&h| theirs.contains(h))
                    .count()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, delete, growth);
criterion_main!(benches);
