//! A counting filter's lookup past the cache, one key at a time, beside the blocked and cuckoo
//! filters' for the same keys.
//!
//! ```sh
//! cargo run --release --example counting_lookup -- [MILLION_KEYS]
//! ```
//!
//! (default 64 M keys.) Every filter holds the same n keys; each loop asks 2 Mi never-inserted
//! hashes one at a time (misses) and 2 Mi inserted ones (hits); the best of seven passes is
//! printed in ns per key, three rounds. The rows:
//! - `blocked 10 bits/key`: the blocked filter at about 1 % FPR;
//! - `counting 1 %`: the counting filter sized for the same FPR (about 44 bits per key: four
//!   times the blocked filter's bytes);
//! - `counting 10 bits/key`: the counting filter in the blocked filter's bytes (2.5 counters per
//!   key, a useless FPR), the same lines as the blocked filter: what the lookup's work costs
//!   apart from its size;
//! - `counting 1 %, 1 load`: the counting filter's line of each key read (the engine's line
//!   choice), no test: its lookup's memory alone;
//! - `cuckoo 1 %`: the cuckoo filter sized for the same FPR (12-bit fingerprints, two buckets).
//!
//! One at a time, lookups past the cache are bound by how many the core keeps in flight, so a
//! row's time grows with the lines it touches (and the TLB entries they need) and with the
//! instructions each key takes.

use linebloom::hash::{mix64, reduce};
use linebloom::{BlockedBloom, CountingBlockedBloom, CuckooFilter};
use std::hint::black_box;
use std::time::Instant;

const PROBES: usize = 2 << 20;

/// Best ns per key of seven passes.
fn best(mut pass: impl FnMut() -> u64) -> f64 {
    let mut best = f64::MAX;
    let mut sink = 0u64;
    for _ in 0..7 {
        let start = Instant::now();
        sink ^= pass();
        best = best.min(start.elapsed().as_secs_f64() * 1e9 / PROBES as f64);
    }
    black_box(sink);
    best
}

fn main() -> linebloom::Result<()> {
    let millions: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(64);
    let n = millions * 1_000_000;
    let key = |i: u64| mix64(i ^ 0x636f_756e);
    let mut blocked = BlockedBloom::with_bits_per_key(n, 10.0)?;
    let mut counting = CountingBlockedBloom::with_fpr(n, 0.01)?;
    let mut counting_small = CountingBlockedBloom::with_bits_per_key(n, 10.0)?;
    let mut cuckoo = CuckooFilter::with_fpr(n, 0.01)?;
    for i in 0..n as u64 {
        let h = key(i);
        blocked.insert_hash(h);
        counting.insert_hash(h);
        counting_small.insert_hash(h);
        cuckoo.insert_hash(h)?;
    }
    let misses: Vec<u64> = (0..PROBES as u64).map(|j| key(j | 1 << 60)).collect();
    let hits: Vec<u64> = (0..PROBES as u64)
        .map(|j| key(reduce(mix64(j), n) as u64))
        .collect();
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    println!(
        "{millions} M keys: blocked {:.0} MiB, counting 1 % {:.0} MiB ({:.1} bits/key, k = {}), \
         counting 10 bits/key {:.0} MiB, cuckoo {:.0} MiB",
        mib(blocked.size_bytes()),
        mib(counting.size_bytes()),
        counting.size_bytes() as f64 * 8.0 / n as f64,
        counting.k(),
        mib(counting_small.size_bytes()),
        mib(cuckoo.size_bytes()),
    );
    let lines = counting.lines();
    for round in 1..=3 {
        println!("round {round}: ns per key (miss, hit)");
        for (name, keys) in [("miss", &misses), ("hit", &hits)] {
            let rows = [
                (
                    "blocked 10 bits/key",
                    best(|| keys.iter().filter(|&&h| blocked.contains_hash(h)).count() as u64),
                ),
                (
                    "counting 1 %",
                    best(|| keys.iter().filter(|&&h| counting.contains_hash(h)).count() as u64),
                ),
                (
                    "counting 10 bits/key",
                    best(|| {
                        keys.iter()
                            .filter(|&&h| counting_small.contains_hash(h))
                            .count() as u64
                    }),
                ),
                (
                    "counting 1 %, 1 load",
                    best(|| {
                        keys.iter()
                            .map(|&h| u64::from(lines[reduce(h, lines.len())].words()[0]))
                            .fold(0, |a, w| a ^ w)
                    }),
                ),
                (
                    "cuckoo 1 %",
                    best(|| keys.iter().filter(|&&h| cuckoo.contains_hash(h)).count() as u64),
                ),
            ];
            for (row, ns) in rows {
                println!("  {name:<4} {row:<22} {ns:>7.2}");
            }
        }
    }
    Ok(())
}
