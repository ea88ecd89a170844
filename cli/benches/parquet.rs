//! The split-block filter against the two Rust implementations of the same layout, on
//! byte-identical filters: the `parquet` crate's `Sbbf` (values only: `check` hashes the value
//! with XXH64 and tests its block with a scalar loop) and sbbf-rs (pre-hashed keys, SIMD picked
//! at run time: called through its `FilterFn` held across calls, and with a `FilterFn` made per
//! batch, which lets the compiler inline the lookup). `n` distinct `i64` values go into a filter
//! sized as Parquet writers size one for 1 % FPR; lookups are one at a time, of written values
//! (`hit`) and of values never written (`miss`), and batched for linebloom; beside them, the memory limit (the report's
//! probe: one random line of a buffer of the filter's size).
//!
//! Then `parquet/file`: what `linebloom parquet query --column name` does per key over the four
//! row groups' filters of `tests/data/parquet/duckdb.parquet` (hash once, one batched lookup
//! per filter), against asking `Sbbf::check` of each filter in turn (stopping at the first
//! yes), on 1 Mi keys of which a quarter were written.
//!
//! ```sh
//! cargo bench -p linebloom-cli --bench parquet -- --warm-up-time 1 --measurement-time 2
//! LINEBLOOM_BENCH_LARGE=1 cargo bench -p linebloom-cli --bench parquet   # also n = 100M
//! ```

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use linebloom::hash::mix64;
use linebloom::{Key, SplitBlockBloom};
use parquet::bloom_filter::Sbbf;
use std::hint::black_box;

const LOOKUPS: usize = 1 << 20;
const FPP: f64 = 0.01;

/// sbbf-rs's buffer: 64-byte aligned lines, two 32-byte blocks each.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

fn sizes() -> Vec<(usize, &'static str)> {
    let mut sizes = vec![(1_000_000, "1M")];
    if std::env::var("LINEBLOOM_BENCH_LARGE").is_ok_and(|v| v == "1") {
        sizes.push((100_000_000, "100M"));
    }
    sizes
}

fn value(i: u64) -> i64 {
    mix64(i) as i64
}

fn parquet(c: &mut Criterion) {
    for (n, label) in sizes() {
        let mut ours = SplitBlockBloom::with_ndv_fpp(n as u64, FPP).expect("the filter");
        let values: Vec<i64> = (0..n as u64).map(value).collect();
        let hashes: Vec<u64> = values.iter().map(|v| v.hash_xxh64()).collect();
        ours.par_insert_hashes(&hashes);
        // The memory limit beside it: one random 64-byte line of a buffer of the filter's size
        // (the report's probe, `report::limit`).
        let sampling = linebloom_cli::report::measure::Sampling {
            reps: 5,
            min_sample: std::time::Duration::from_millis(20),
        };
        let limit =
            linebloom_cli::report::limit::probe_memory(ours.size_bytes(), LOOKUPS, sampling, 7);
        eprintln!(
            "n = {label}: {} bytes; one random line costs {:.2} ns prefetched, {:.2} independent \
             (the limit: {:.2})",
            ours.size_bytes(),
            limit.prefetched.median_ns,
            limit.independent.median_ns,
            limit.best_ns()
        );
        let theirs = Sbbf::from_bytes(&ours.to_parquet_bytes().expect("in range")).expect("reads");
        // sbbf-rs over a copy of the same bitset.
        let mut lines = vec![Line([0; 64]); ours.size_bytes().div_ceil(64)];
        let bitset = ours.bitset();
        for (line, chunk) in lines.iter_mut().zip(bitset.chunks(64)) {
            line.0[..chunk.len()].copy_from_slice(chunk);
        }
        let blocks = ours.num_blocks();
        let f = sbbf_rs::FilterFn::new();
        let sbbf_contains = |h: u64| -> bool {
            // SAFETY: `lines` holds `blocks * 32` bytes (whole lines, 64-byte aligned by
            // `Line`'s type), what `FilterFn::contains` reads; nothing writes them meanwhile.
            unsafe { f.contains(lines.as_ptr() as *const u8, blocks, h) }
        };
        let hit_values: Vec<i64> = (0..LOOKUPS as u64)
            .map(|j| value(j * 7919 % n as u64))
            .collect();
        let miss_values: Vec<i64> = (0..LOOKUPS as u64).map(|j| value(j + (1 << 40))).collect();
        for (what, probe) in [("hit", &hit_values), ("miss", &miss_values)] {
            let found = probe.iter().filter(|v| ours.contains(*v)).count();
            assert_eq!(found, probe.iter().filter(|v| theirs.check(*v)).count());
            let probe_hashes: Vec<u64> = probe.iter().map(|v| v.hash_xxh64()).collect();
            assert_eq!(
                found,
                probe_hashes.iter().filter(|&&h| sbbf_contains(h)).count()
            );
            eprintln!("n = {label}, {what}: {found} of {} answer yes", probe.len());

            let mut group = c.benchmark_group(format!("parquet/{label}/{what}"));
            group.sample_size(10);
            group.throughput(Throughput::Elements(LOOKUPS as u64));
            group.bench_function(BenchmarkId::new("value", "linebloom"), |b| {
                b.iter(|| {
                    black_box(probe)
                        .iter()
                        .filter(|v| ours.contains(*v))
                        .count()
                })
            });
            group.bench_function(BenchmarkId::new("value", "parquet-Sbbf"), |b| {
                b.iter(|| black_box(probe).iter().filter(|v| theirs.check(*v)).count())
            });
            group.bench_function(BenchmarkId::new("hash", "linebloom"), |b| {
                b.iter(|| {
                    black_box(&probe_hashes)
                        .iter()
                        .filter(|&&h| ours.contains_hash(h))
                        .count()
                })
            });
            group.bench_function(BenchmarkId::new("hash", "sbbf-rs"), |b| {
                b.iter(|| {
                    black_box(&probe_hashes)
                        .iter()
                        .filter(|&&h| sbbf_contains(h))
                        .count()
                })
            });
            group.bench_function(
                BenchmarkId::new("hash", "sbbf-rs, FilterFn per batch"),
                |b| {
                    b.iter(|| {
                        // The `FilterFn` made beside the loop, as the report's adapter makes it.
                        let f = sbbf_rs::FilterFn::new();
                        let buf = lines.as_ptr() as *const u8;
                        black_box(&probe_hashes)
                            .iter()
                            // SAFETY: as in `sbbf_contains`.
                            .filter(|&&h| unsafe { f.contains(buf, blocks, h) })
                            .count()
                    })
                },
            );
            group.bench_function(BenchmarkId::new("hash-batched", "linebloom"), |b| {
                b.iter(|| ours.count_contained_hashes(black_box(&probe_hashes)))
            });
            group.finish();
        }
        insert(c, label, &ours, &values, &hashes);
    }
}

/// `parquet/{n}/insert`: all `n` values into an empty filter of the same size, on one thread.
/// Each filter starts as a copy of an empty one (off the clock, so its pages are touched
/// before): linebloom's batched `insert_hashes` and its `insert_hash` loop against sbbf-rs's
/// `insert` loop on the same hashes, and linebloom's `insert` against `Sbbf::insert` on the
/// values.
fn insert(c: &mut Criterion, label: &str, ours: &SplitBlockBloom, values: &[i64], hashes: &[u64]) {
    let mut empty = ours.clone();
    empty.clear();
    let blocks = empty.num_blocks();
    let no_lines = vec![Line([0; 64]); empty.size_bytes().div_ceil(64)];
    let mut group = c.benchmark_group(format!("parquet/{label}/insert"));
    group.sample_size(10);
    group.throughput(Throughput::Elements(hashes.len() as u64));
    let batched = criterion::BatchSize::LargeInput;
    group.bench_function(BenchmarkId::new("hash-batched", "linebloom"), |b| {
        b.iter_batched_ref(
            || empty.clone(),
            |filter| filter.insert_hashes(black_box(hashes)),
            batched,
        )
    });
    group.bench_function(BenchmarkId::new("hash", "linebloom"), |b| {
        b.iter_batched_ref(
            || empty.clone(),
            |filter| {
                black_box(hashes)
                    .iter()
                    .for_each(|&h| filter.insert_hash(h))
            },
            batched,
        )
    });
    group.bench_function(BenchmarkId::new("hash", "sbbf-rs"), |b| {
        b.iter_batched_ref(
            || no_lines.clone(),
            |lines| {
                // Made beside the loop, so the compiler inlines its insert (see the lookups).
                let f = sbbf_rs::FilterFn::new();
                for &h in black_box(hashes) {
                    // SAFETY: `lines` holds `blocks * 32` bytes or more (whole lines, 64-byte
                    // aligned by `Line`'s type), what `FilterFn::insert` writes, and nothing
                    // else uses them meanwhile.
                    unsafe { f.insert(lines.as_mut_ptr() as *mut u8, blocks, h) };
                }
            },
            batched,
        )
    });
    group.bench_function(BenchmarkId::new("value", "linebloom"), |b| {
        b.iter_batched_ref(
            || empty.clone(),
            |filter| black_box(values).iter().for_each(|v| filter.insert(v)),
            batched,
        )
    });
    group.bench_function(BenchmarkId::new("value", "parquet-Sbbf"), |b| {
        b.iter_batched_ref(
            || Sbbf::new(empty.bitset()),
            |filter| black_box(values).iter().for_each(|v| filter.insert(v)),
            batched,
        )
    });
    group.finish();
}

fn file_query(c: &mut Criterion) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/parquet/duckdb.parquet");
    let bytes = std::fs::read(&path).expect("the fixture");
    let metadata = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&std::fs::File::open(&path).expect("the fixture"))
        .expect("its footer");
    let filters: Vec<&[u8]> = metadata
        .row_groups()
        .iter()
        .map(|rg| {
            let c = rg.column(0);
            let at = c.bloom_filter_offset().expect("a filter") as usize;
            &bytes[at..at + c.bloom_filter_length().expect("its length") as usize]
        })
        .collect();
    let ours: Vec<SplitBlockBloom> = filters
        .iter()
        .map(|b| SplitBlockBloom::from_parquet_bytes(b).expect("reads"))
        .collect();
    let theirs: Vec<Sbbf> = filters
        .iter()
        .map(|b| Sbbf::from_bytes(b).expect("reads"))
        .collect();
    let keys: Vec<String> = (0..LOOKUPS as u64)
        .map(|i| format!("user-{}", mix64(i) % 80_000))
        .collect();
    let mut group = c.benchmark_group("parquet/file");
    group.sample_size(10);
    group.throughput(Throughput::Elements(LOOKUPS as u64));
    let mut hashes = vec![0u64; LOOKUPS];
    let mut any = vec![false; LOOKUPS];
    let mut out = vec![false; LOOKUPS];
    group.bench_function("linebloom", |b| {
        b.iter(|| {
            for (h, k) in hashes.iter_mut().zip(black_box(&keys)) {
                *h = k.hash_xxh64();
            }
            any.fill(false);
            for f in &ours {
                f.contains_hashes(&hashes, &mut out).expect("same lengths");
                any.iter_mut().zip(&out).for_each(|(a, &o)| *a |= o);
            }
            any.iter().filter(|&&a| a).count()
        })
    });
    group.bench_function("parquet-Sbbf", |b| {
        b.iter(|| {
            black_box(&keys)
                .iter()
                .filter(|k| theirs.iter().any(|f| f.check(k.as_str())))
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, parquet, file_query);
criterion_main!(benches);
