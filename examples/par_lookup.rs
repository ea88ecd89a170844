//! Batched lookups on one thread against `par_contains_hashes` on a pool of THREADS threads.
//!
//! ```sh
//! cargo run --release --example par_lookup -- [THREADS] [MILLION_KEYS]
//! ```
//!
//! (defaults: 2 threads, 100 M keys at 10 bits per key, a 119 MiB filter.) Looks up 16 Mi keys
//! never inserted (misses), alternating the two ways five times so each sees the same moments
//! of a shared host, and prints the median ns per key of each and the speedup.

use std::time::Instant;

use linebloom::BlockedBloom;
use linebloom::hash::mix64;

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().map_or(2, |a| a.parse().expect("THREADS"));
    let millions: u64 = args
        .next()
        .map_or(100, |a| a.parse().expect("MILLION_KEYS"));
    let n = millions * 1_000_000;
    let mut filter = BlockedBloom::with_bits_per_key(n, 10.0).unwrap();
    let keys: Vec<u64> = (0..n).map(mix64).collect();
    filter.par_insert_hashes(&keys);
    drop(keys);
    let probes: Vec<u64> = (0..16u64 << 20).map(|i| mix64(!i)).collect();
    let mut out = vec![false; probes.len()];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let per_key = |t: Instant| t.elapsed().as_secs_f64() * 1e9 / probes.len() as f64;
    let (mut one, mut par) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        filter.contains_hashes(&probes, &mut out).unwrap();
        one.push(per_key(t));
        let t = Instant::now();
        pool.install(|| filter.par_contains_hashes(&probes, &mut out).unwrap());
        par.push(per_key(t));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (one, par) = (median(&mut one), median(&mut par));
    println!(
        "{} MiB filter: contains_hashes {one:.2} ns/key, par_contains_hashes on {threads} \
         threads {par:.2} ns/key, {:.2}x",
        filter.size_bytes() >> 20,
        one / par
    );
}
