//! The counting filter on each SIMD path this CPU has: one-key inserts, hits, misses and
//! removes, the batched lookup (misses) and the batched insert, the filter sized for 1 % FPR;
//! then the atomic blocked filter's one-key inserts, hits and misses at 10 bits per key (one
//! thread). Hashes are computed beforehand.
//!
//! ```sh
//! RUSTFLAGS= cargo run --release --example counting_paths -- [KEYS] [ROUNDS]
//! ```
//!
//! (default 1 M keys, 3 rounds.) `RUSTFLAGS=` (set and empty) replaces this repository's
//! `-C target-cpu=native`, so the binary is what a crate depending on linebloom builds by
//! default; run it without to see the native build. The path is chosen once per process, so
//! each path runs in a child process of its own (`LINEBLOOM_SIMD`); the rounds visit the paths
//! in turn, so a noisy moment touches every path alike. Each figure is the fastest of the
//! rounds (each child times every operation three times), in ns per key. The last column is a
//! digest of the filter's counters after the inserts: every path must print the same.
//!
//! A build that enables AVX-512 itself (the native build here) runs the counting filter's
//! one-key calls on the AVX-512 kernel whatever `LINEBLOOM_SIMD` says; its batched calls and
//! the atomic filter's lookups follow the variable.

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use linebloom::hash::mix64;
use linebloom::{AtomicBlockedBloom, CountingBlockedBloom, SimdPath};

const OPS: [&str; 9] = [
    "insert",
    "hit",
    "miss",
    "remove",
    "contains_hashes (miss)",
    "insert_hashes",
    "atomic insert",
    "atomic hit",
    "atomic miss",
];

fn ns(t: Instant, n: usize) -> f64 {
    t.elapsed().as_secs_f64() * 1e9 / n as f64
}

/// This process's path: the fastest of three passes of each operation, and the digest.
fn measure(n: usize) -> ([f64; 9], u64) {
    let inserted: Vec<u64> = (0..n as u64).map(mix64).collect();
    let absent: Vec<u64> = (n as u64..2 * n as u64).map(mix64).collect();
    let mut best = [f64::MAX; 9];
    let mut digest = 0;
    for _ in 0..3 {
        let mut f = CountingBlockedBloom::with_fpr(n as u64, 0.01).unwrap();
        let t = Instant::now();
        for &h in &inserted {
            f.insert_hash(h);
        }
        let insert = ns(t, n);
        digest = f
            .lines()
            .iter()
            .flat_map(|l| bytemuck::cast::<_, [u64; 8]>(*l))
            .fold(0u64, |d, w| mix64(d ^ w));
        let t = Instant::now();
        let hits = inserted.iter().filter(|&&h| f.contains_hash(h)).count();
        let hit = ns(t, n);
        assert_eq!(hits, n, "a false negative");
        let t = Instant::now();
        black_box(absent.iter().filter(|&&h| f.contains_hash(h)).count());
        let miss = ns(t, n);
        let mut out = vec![false; n];
        let t = Instant::now();
        f.contains_hashes(&absent, &mut out).unwrap();
        let batched = ns(t, n);
        black_box(&out);
        let mut g = CountingBlockedBloom::with_fpr(n as u64, 0.01).unwrap();
        let t = Instant::now();
        g.insert_hashes(&inserted);
        let bulk = ns(t, n);
        assert!(g == f, "the batched insert sets the counters of one by one");
        let t = Instant::now();
        let removed = inserted.iter().filter(|&&h| f.remove_hash(h)).count();
        let remove = ns(t, n);
        assert_eq!(removed, n, "a member's remove refused");
        let a = AtomicBlockedBloom::with_bits_per_key(n as u64, 10.0).unwrap();
        let t = Instant::now();
        for &h in &inserted {
            a.insert_hash(h);
        }
        let a_insert = ns(t, n);
        let t = Instant::now();
        let hits = inserted.iter().filter(|&&h| a.contains_hash(h)).count();
        let a_hit = ns(t, n);
        assert_eq!(hits, n, "a false negative");
        let t = Instant::now();
        black_box(absent.iter().filter(|&&h| a.contains_hash(h)).count());
        let a_miss = ns(t, n);
        let ops = [
            insert, hit, miss, remove, batched, bulk, a_insert, a_hit, a_miss,
        ];
        for (b, x) in best.iter_mut().zip(ops) {
            *b = b.min(x);
        }
    }
    (best, digest)
}

fn main() {
    if let Ok(n) = std::env::var("COUNTING_PATHS_CHILD") {
        let (row, digest) = measure(n.parse().unwrap());
        let cells: Vec<String> = row.iter().map(|x| format!("{x:.2}")).collect();
        println!("{} {digest:016x}", cells.join(" "));
        return;
    }
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().expect("KEYS"));
    let rounds: usize = args.next().map_or(3, |a| a.parse().expect("ROUNDS"));
    let me = std::env::current_exe().unwrap();
    let paths = SimdPath::available();
    let mut best = vec![[f64::MAX; 9]; paths.len()];
    let mut digests = vec![String::new(); paths.len()];
    for _ in 0..rounds {
        for (p, path) in paths.iter().enumerate() {
            let out = Command::new(&me)
                .env("COUNTING_PATHS_CHILD", n.to_string())
                .env("LINEBLOOM_SIMD", path.name())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let row = String::from_utf8_lossy(&out.stdout);
            let cells: Vec<&str> = row.split_whitespace().collect();
            for (b, c) in best[p].iter_mut().zip(&cells) {
                *b = b.min(c.parse().unwrap());
            }
            digests[p] = cells[OPS.len()].to_string();
        }
    }
    println!("{n} keys, ns per key (best of {rounds} rounds):\n");
    println!("| path | {} | digest |", OPS.join(" | "));
    println!("|---|{}---|", "---:|".repeat(OPS.len()));
    for (p, path) in paths.iter().enumerate() {
        let cells: Vec<String> = best[p].iter().map(|x| format!("{x:.2}")).collect();
        println!("| {path} | {} | {} |", cells.join(" | "), digests[p]);
    }
    assert!(
        digests.iter().all(|d| *d == digests[0]),
        "the paths' filters differ"
    );
}
