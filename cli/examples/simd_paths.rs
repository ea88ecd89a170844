//! The blocked filter on each SIMD path this CPU has, beside sbbf-rs: one-key inserts, hits and
//! misses, the batched miss and the batched insert, at 1 M keys (1.19 MiB) and at a size past
//! the cache, 10 bits per key, hashes computed beforehand.
//!
//! ```sh
//! RUSTFLAGS= cargo run --release -p linebloom-cli --example simd_paths -- [KEYS...]
//! ```
//!
//! `RUSTFLAGS=` (set and empty) replaces this repository's `-C target-cpu=native`, so the
//! binary is what a crate depending on linebloom builds by default; run it without to see the
//! native build. The path is chosen once per process, so each path runs in a child process of
//! its own (`LINEBLOOM_SIMD`). Each figure is the fastest of five rounds, in ns per key.

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use linebloom::hash::mix64;
use linebloom::{BlockedBloom, SimdPath};

/// sbbf-rs wants its buffer aligned to 64 bytes.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Aligned([u8; 64]);

fn ns(t: Instant, n: usize) -> f64 {
    t.elapsed().as_secs_f64() * 1e9 / n as f64
}

/// One path's row (this process's path): the fastest of five rounds of each operation.
fn measure(n: usize) -> [f64; 6] {
    let inserted: Vec<u64> = (0..n as u64).map(mix64).collect();
    let absent: Vec<u64> = (n as u64..2 * n as u64).map(mix64).collect();
    let mut best = [f64::MAX; 6];
    for _ in 0..5 {
        let mut f = BlockedBloom::with_bits_per_key(n as u64, 10.0).unwrap();
        let t = Instant::now();
        for &h in &inserted {
            f.insert_hash(h);
        }
        let insert = ns(t, n);
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
        let mut g = BlockedBloom::with_bits_per_key(n as u64, 10.0).unwrap();
        let t = Instant::now();
        g.insert_hashes(&inserted);
        let bulk = ns(t, n);
        assert!(g == f, "the batched insert sets the bits of one by one");
        let sbbf = sbbf_rs::FilterFn::new();
        let mut buf = vec![Aligned([0; 64]); n * 10 / 8 / 64 + 1];
        let buckets = buf.len() * 2;
        let ptr = buf.as_mut_ptr().cast::<u8>();
        for &h in &inserted {
            // SAFETY: `ptr` is 64-byte aligned and holds `buckets` buckets of 32 bytes.
            unsafe { sbbf.insert(ptr, buckets, h) };
        }
        let t = Instant::now();
        // SAFETY: as above.
        let found = absent
            .iter()
            .filter(|&&h| unsafe { sbbf.contains(ptr, buckets, h) })
            .count();
        let sbbf_miss = ns(t, n);
        black_box(found);
        for (b, x) in best
            .iter_mut()
            .zip([insert, hit, miss, batched, bulk, sbbf_miss])
        {
            *b = b.min(x);
        }
    }
    best
}

fn main() {
    if let Ok(n) = std::env::var("SIMD_PATHS_CHILD") {
        let row = measure(n.parse().unwrap());
        let cells: Vec<String> = row.iter().map(|x| format!("{x:.2}")).collect();
        println!("{}", cells.join(" | "));
        return;
    }
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("KEYS are numbers"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000_000, 50_000_000]
    } else {
        sizes
    };
    println!(
        "RUSTFLAGS of this build: `{}`\n",
        option_env!("LINEBLOOM_RUSTFLAGS").unwrap_or("?")
    );
    println!("| keys | path | insert | hit | miss | batched miss | insert_hashes | sbbf-rs miss |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    let me = std::env::current_exe().unwrap();
    for &n in &sizes {
        for path in SimdPath::available() {
            let out = Command::new(&me)
                .env("SIMD_PATHS_CHILD", n.to_string())
                .env("LINEBLOOM_SIMD", path.name())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let row = String::from_utf8_lossy(&out.stdout);
            println!("| {n} | {path} | {} |", row.trim());
        }
    }
}
