//! One-at-a-time inserts past the cache, the hash in the loop: the blocked filter against
//! sbbf-rs (Parquet's split-block layout) on the same keys and the same hash function.
//!
//! ```sh
//! cargo run --release -p linebloom-cli --example insert_one -- [MILLION_KEYS]
//! ```
//!
//! (default 100 M keys at 10 bits per key: 119 MiB for each filter.) Each round fills an empty
//! filter of each kind (its memory touched beforehand, off the clock) with the same `u64` keys,
//! one call per key, four ways:
//! - `blocked insert(&key)`: the crate's `Key` hash of the key, then its line's bits set;
//! - `sbbf-rs insert(hash(key))`: the same hash in the loop, then sbbf-rs's `insert`;
//! - `blocked insert_hash` and `sbbf-rs insert`: the same with the hashes computed beforehand.
//!
//! Five rounds alternate the ways so that each sees the same moments of a shared host; it
//! prints the median ns per key and the ratio of each blocked way to its sbbf-rs twin.

use std::hint::black_box;
use std::time::Instant;

use linebloom::hash::mix64;
use linebloom::{BlockedBloom, Key};

/// sbbf-rs's buffer: 64-byte aligned lines, two 32-byte blocks each.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

fn main() {
    let millions: usize = std::env::args()
        .nth(1)
        .map_or(100, |a| a.parse().expect("MILLION_KEYS"));
    let n = millions * 1_000_000;
    let keys: Vec<u64> = (0..n as u64).map(mix64).collect();
    let empty = BlockedBloom::with_bits_per_key(n, 10.0).expect("the filter");
    let seed = empty.seed();
    let hashes: Vec<u64> = keys.iter().map(|k| k.hash_with_seed(seed)).collect();
    // The same bits per key: whole 32-byte blocks, two per 64-byte line.
    let blocks = (n * 10).div_ceil(256);
    let f = sbbf_rs::FilterFn::new();
    println!(
        "{n} keys: blocked {:.0} MiB (k = {}), sbbf-rs {:.0} MiB",
        empty.size_bytes() as f64 / (1 << 20) as f64,
        empty.hashes(),
        (blocks * 32) as f64 / (1 << 20) as f64
    );
    let per_key = |t: Instant| t.elapsed().as_secs_f64() * 1e9 / n as f64;
    let blocked = |insert: &dyn Fn(&mut BlockedBloom)| {
        let mut filter = empty.clone();
        let t = Instant::now();
        insert(&mut filter);
        let took = per_key(t);
        black_box(filter.count_ones());
        took
    };
    let sbbf = |hashed_in_loop: bool| {
        let mut lines = vec![Line([0; 64]); blocks.div_ceil(2)];
        let buf = lines.as_mut_ptr() as *mut u8;
        let t = Instant::now();
        for (k, &h) in black_box(&keys).iter().zip(black_box(&hashes)) {
            let h = if hashed_in_loop {
                k.hash_with_seed(seed)
            } else {
                h
            };
            // SAFETY: `lines` holds `blocks * 32` bytes or more (whole lines, 64-byte aligned
            // by `Line`'s type), what `FilterFn::insert` writes, and nothing else uses them
            // meanwhile.
            unsafe { f.insert(buf, blocks, h) };
        }
        let took = per_key(t);
        black_box(&lines);
        took
    };
    let mut times = [const { Vec::new() }; 4];
    for _ in 0..5 {
        times[0].push(blocked(&|f| keys.iter().for_each(|k| f.insert(k))));
        times[1].push(sbbf(true));
        times[2].push(blocked(&|f| hashes.iter().for_each(|&h| f.insert_hash(h))));
        times[3].push(sbbf(false));
    }
    let medians = times.map(|mut t| {
        t.sort_by(f64::total_cmp);
        (t[t.len() / 2], t[0], t[t.len() - 1])
    });
    let names = [
        "blocked insert(&key)",
        "sbbf-rs insert(hash(key))",
        "blocked insert_hash",
        "sbbf-rs insert",
    ];
    for (name, (m, lo, hi)) in names.iter().zip(medians) {
        println!("{name:>26}: {m:6.2} ns per key ({lo:.2}-{hi:.2})");
    }
    println!(
        "blocked / sbbf-rs: {:.2}x with the hash in the loop, {:.2}x with hashes computed \
         beforehand",
        medians[0].0 / medians[1].0,
        medians[2].0 / medians[3].0
    );
}
