//! The growth and tightening of `ScalableBlockedBloom`, measured: for each pair, the chain is
//! grown from 1,000 keys to 1,000,000 (1000x) at a 1 % target, then its bits per key, its
//! measured FPR (on 1,000,000 never-inserted keys) and the time of a lookup that misses (one at
//! a time, and batched) are printed, beside `growable-bloom-filter` (growth 2, tightening 0.85,
//! `new(0.01, 1000)`) and one blocked filter sized for the final count.
//!
//! `cargo run --release -p linebloom-cli --example scalable_tuning`

use std::hint::black_box;
use std::time::Instant;

use linebloom::hash::mix64;
use linebloom::{BlockedBloom, ScalableBlockedBloom};

const INITIAL: usize = 1_000;
const FINAL: u64 = 1_000_000;
const PROBES: u64 = 1_000_000;
const TARGET: f64 = 0.01;

fn probe(i: u64) -> u64 {
    mix64(i | 1 << 50)
}

fn ns_per(ops: u64, f: impl FnOnce() -> usize) -> (f64, usize) {
    let start = Instant::now();
    let r = black_box(f());
    (start.elapsed().as_secs_f64() * 1e9 / ops as f64, r)
}

fn main() {
    println!(
        "| growth | tightening | filters | bits/key | measured FPR | bound | miss ns | batched miss ns |"
    );
    println!("|--:|--:|--:|--:|--:|--:|--:|--:|");
    let probes: Vec<u64> = (0..PROBES).map(probe).collect();
    let mut out = vec![false; probes.len()];
    for growth in [2.0, 4.0] {
        for tightening in [0.5, 0.7, 0.8, 0.85, 0.9] {
            let mut f = ScalableBlockedBloom::builder(INITIAL as u64)
                .fpr(TARGET)
                .growth(growth)
                .tightening(tightening)
                .build()
                .unwrap();
            for i in 0..FINAL {
                f.insert_hash(mix64(i));
            }
            let (miss_ns, fp) = ns_per(PROBES, || {
                probes.iter().filter(|&&h| f.contains_hash(h)).count()
            });
            let (batched_ns, _) = ns_per(PROBES, || {
                f.contains_hashes(&probes, &mut out).unwrap();
                out.iter().filter(|&&b| b).count()
            });
            println!(
                "| {growth} | {tightening} | {} | {:.2} | {:.3} % | {:.3} % | {miss_ns:.1} | {batched_ns:.1} |",
                f.filters(),
                f.size_bytes() as f64 * 8.0 / FINAL as f64,
                fp as f64 / PROBES as f64 * 100.0,
                f.bound_fpr() * 100.0
            );
        }
    }
    // One blocked filter sized for the final count, for the lookup-time ratio.
    let mut one = BlockedBloom::with_fpr(FINAL, TARGET).unwrap();
    (0..FINAL).for_each(|i| one.insert_hash(mix64(i)));
    let (miss_ns, fp) = ns_per(PROBES, || {
        probes.iter().filter(|&&h| one.contains_hash(h)).count()
    });
    let (batched_ns, _) = ns_per(PROBES, || {
        one.contains_hashes(&probes, &mut out).unwrap();
        out.iter().filter(|&&b| b).count()
    });
    println!(
        "| one blocked filter for 1 M | | 1 | {:.2} | {:.3} % | | {miss_ns:.1} | {batched_ns:.1} |",
        one.size_bytes() as f64 * 8.0 / FINAL as f64,
        fp as f64 / PROBES as f64 * 100.0
    );
    // growable-bloom-filter 2: its insert asks first, as ours does.
    let mut g = growable_bloom_filter::GrowableBloom::new(TARGET, INITIAL);
    let mut stored = 0u64;
    for i in 0..FINAL {
        if g.insert(mix64(i)) {
            stored += 1;
        }
    }
    let (miss_ns, fp) = ns_per(PROBES, || probes.iter().filter(|&&h| g.contains(h)).count());
    println!(
        "| growable-bloom-filter | 0.85 (x2) | | | {:.3} % | | {miss_ns:.1} | |",
        fp as f64 / PROBES as f64 * 100.0
    );
    println!(
        "growable-bloom-filter stored {stored} of {FINAL} distinct keys ({:.2} % never stored)",
        (FINAL - stored) as f64 / FINAL as f64 * 100.0
    );
}
