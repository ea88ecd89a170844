//! Where a batched lookup's time goes past the cache, next to the report's hashed-ring limit.
//!
//! ```sh
//! cargo run --release --features internals --example limit_gap -- [MILLION_KEYS]
//! ```
//!
//! Builds a blocked filter of 10 bits per key (default 100 M keys: 119 MiB, on huge pages) and
//! times 16 Mi never-inserted keys (misses) each way, in five alternating rounds so that each
//! sees the same moments of a shared host; prints the median ns per key and its ratio to the
//! ring. Every way hints a key's line into L2 256 keys ahead and into L1 8 keys ahead, as the
//! batched lookups do:
//! - `ring`: the report's hashed-ring probe on the filter's own lines: each line index hashed
//!   inline from a counter into a ring of 256, one word of the line read;
//! - `ring + input`: the same, also reading one `u64` per key from an array in order, as the
//!   batched lookup reads its hashes;
//! - `ring lookup + input`: keys read from an array, each hashed inline into the ring, and the
//!   whole lookup (the salted placement's mask and test) in place of the word: a fused
//!   hash-and-lookup of `u64` keys;
//! - `count_contained_hashes` and `contains_hashes`: the crate's batched lookup of hashes
//!   computed beforehand, counting, and writing one `bool` per key;
//! - `split-block count`: the split-block filter's `count_contained_hashes` on the same keys
//!   (32-byte blocks, 10 bits per key: also 119 MiB);
//! - `contains_keys`: the batched lookup of the `u64` keys themselves, hashed 4096 at a time
//!   inside the call.

use std::hint::black_box;
use std::time::Instant;

use linebloom::blocked::Line;
use linebloom::hash::{mix64, reduce};
use linebloom::internals::{line_test, mask_for};
use linebloom::{BlockedBloom, SplitBlockBloom};

const RING: usize = 256;
const NEAR: usize = 8;
const PROBES: usize = 16 << 20;

#[inline(always)]
fn hint<const L2: bool>(line: &Line) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _MM_HINT_T1, _mm_prefetch};
        let p = line as *const Line as *const i8;
        // SAFETY: a prefetch is a hint that reads nothing and cannot fault, and SSE (which it
        // needs) is part of every x86-64 CPU.
        unsafe {
            if L2 {
                _mm_prefetch::<_MM_HINT_T1>(p);
            } else {
                _mm_prefetch::<_MM_HINT_T0>(p);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = line;
}

/// Walks `ops` keys whose hashes `hash(i)` gives, a ring of `RING` hashes ahead: each hash's
/// line is hinted into L2 when it is computed and into L1 `NEAR` keys before `visit` gets it.
#[inline(always)]
fn ring_walk(
    lines: &[Line],
    ops: usize,
    hash: impl Fn(usize) -> u64,
    mut visit: impl FnMut(&Line, u64),
) {
    let n = lines.len();
    let mut ring = [0u64; RING];
    for (i, slot) in ring.iter_mut().enumerate() {
        *slot = hash(i);
        hint::<true>(&lines[reduce(*slot, n)]);
    }
    for i in 0..ops {
        let slot = i & (RING - 1);
        hint::<false>(&lines[reduce(ring[(i + NEAR) & (RING - 1)], n)]);
        let h = ring[slot];
        visit(&lines[reduce(h, n)], h);
        let next = hash(i + RING);
        ring[slot] = next;
        hint::<true>(&lines[reduce(next, n)]);
    }
}

fn main() {
    let millions: u64 = std::env::args()
        .nth(1)
        .map_or(100, |a| a.parse().expect("MILLION_KEYS"));
    let n = millions * 1_000_000;
    let mut filter = BlockedBloom::with_bits_per_key(n, 10.0).unwrap();
    let keys: Vec<u64> = (0..n).map(mix64).collect();
    filter.par_insert_hashes(&keys);
    let mut split = SplitBlockBloom::with_bits_per_key(n, 10.0).unwrap();
    split.par_insert_hashes(&keys);
    drop(keys);
    let k = filter.k();
    let lines = filter.lines();
    // Keys past the inserted ones (never inserted), with room for the ring's lookahead.
    let raw: Vec<u64> = (0..(PROBES + RING) as u64).map(|i| n + i).collect();
    let hashes: Vec<u64> = raw.iter().map(|&x| mix64(x)).collect();
    let mut out = vec![false; PROBES];
    let mut keyed = vec![false; PROBES];
    println!(
        "{} lines ({:.0} MiB), k = {k}, {PROBES} misses per pass",
        lines.len(),
        (lines.len() * 64) as f64 / (1 << 20) as f64
    );

    type Way<'a> = (&'a str, Box<dyn FnMut() -> u64 + 'a>);
    let ways: Vec<Way> = vec![
        (
            "ring",
            Box::new(|| {
                let mut sum = 0u64;
                ring_walk(
                    lines,
                    PROBES,
                    |i| mix64(n + i as u64),
                    |line, _| {
                        sum = sum.wrapping_add(u64::from(line.words()[0]));
                    },
                );
                sum
            }),
        ),
        (
            "ring + input",
            Box::new(|| {
                let input = black_box(&raw[..]);
                let mut sum = 0u64;
                let mut at = 0usize;
                ring_walk(
                    lines,
                    PROBES,
                    |i| mix64(n + i as u64),
                    |line, _| {
                        sum = sum.wrapping_add(u64::from(line.words()[0]) ^ input[at]);
                        at += 1;
                    },
                );
                sum
            }),
        ),
        (
            "ring lookup + input",
            Box::new(|| {
                let input = black_box(&raw[..]);
                let mut found = 0u64;
                ring_walk(
                    lines,
                    PROBES,
                    |i| mix64(input[i]),
                    |line, h| {
                        found += u64::from(line_test(line, mask_for(h, k)));
                    },
                );
                found
            }),
        ),
        (
            "count_contained_hashes",
            Box::new(|| filter.count_contained_hashes(black_box(&hashes[..PROBES])) as u64),
        ),
        (
            "split-block count",
            Box::new(|| split.count_contained_hashes(black_box(&hashes[..PROBES])) as u64),
        ),
        (
            "contains_keys",
            Box::new(|| {
                filter
                    .contains_keys(black_box(&raw[..PROBES]), &mut keyed)
                    .unwrap();
                keyed.iter().filter(|&&b| b).count() as u64
            }),
        ),
        (
            "contains_hashes",
            Box::new(|| {
                filter
                    .contains_hashes(black_box(&hashes[..PROBES]), &mut out)
                    .unwrap();
                out.iter().filter(|&&b| b).count() as u64
            }),
        ),
    ];
    let mut ways = ways;
    let mut times = vec![Vec::new(); ways.len()];
    for _ in 0..5 {
        for (way, t) in ways.iter_mut().zip(&mut times) {
            let started = Instant::now();
            black_box((way.1)());
            t.push(started.elapsed().as_secs_f64() * 1e9 / PROBES as f64);
        }
    }
    let median = |t: &mut Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let ring = median(&mut times[0].clone());
    for ((name, _), t) in ways.iter().zip(&mut times) {
        let m = median(t);
        println!(
            "{name:>24}: {m:6.2} ns per key ({:.2}-{:.2}), {:.2}x the ring",
            t[0],
            t[t.len() - 1],
            m / ring
        );
    }
}
