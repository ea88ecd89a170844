//! Lookups in the blocked filter: hit and miss, scalar and batched, at sizes from in-L1 to far
//! past the last-level cache (10 bits/key). Run one group quickly with e.g.
//! `LINEBLOOM_BENCH_MAX_MIB=16 cargo bench --bench lookup -- miss`.

mod common;

use common::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use linebloom::BlockedBloom;
use std::hint::black_box;

const PROBES: usize = 1 << 20;

fn lookup(c: &mut Criterion) {
    pin_thread();
    for bytes in sizes() {
        let items = items_for(bytes, 10.0);
        let mut filter = BlockedBloom::with_bits_per_key(items as u64, 10.0).unwrap();
        for start in (0..items as u64).step_by(1 << 22) {
            let end = (start + (1 << 22)).min(items as u64);
            filter.par_insert_hashes(&hashes(0, start..end));
        }
        let hits = hit_hashes(items, PROBES);
        let misses = hashes(1, 0..PROBES as u64);
        let mut group = c.benchmark_group(format!("lookup/{}", size_label(bytes)));
        group.throughput(Throughput::Elements(PROBES as u64));
        group.sample_size(10);
        for (name, probe) in [("hit", &hits), ("miss", &misses)] {
            group.bench_with_input(BenchmarkId::new("scalar", name), probe, |b, probe| {
                b.iter(|| probe.iter().filter(|&&h| filter.contains_hash(h)).count())
            });
            let mut out = vec![false; PROBES];
            group.bench_with_input(BenchmarkId::new("batched", name), probe, |b, probe| {
                b.iter(|| {
                    filter.contains_hashes(probe, &mut out).unwrap();
                    black_box(&out);
                })
            });
            group.bench_with_input(
                BenchmarkId::new("batched_count", name),
                probe,
                |b, probe| b.iter(|| filter.count_contained_hashes(probe)),
            );
        }
        group.finish();
    }
}

criterion_group!(benches, lookup);
criterion_main!(benches);
