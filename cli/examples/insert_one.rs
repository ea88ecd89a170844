//! One-at-a-time inserts past the cache, the hash in the loop: the blocked filter against
//! sbbf-rs (Parquet's split-block layout) on the same keys and the same hash function.
//!
//! ```sh
//! cargo run --release -p linebloom-cli --example insert_one -- [MILLION_KEYS]
//! ```
//!
//! (default 100 M keys at 10 bits per key: 119 MiB for each filter, both on the memory the
//! blocked filter allocates: huge pages where the kernel gives them.) Each round fills an
//! empty filter of each kind (its memory written beforehand, off the clock, so no page fault
//! is timed) with the same `u64` keys, one call per key, four ways:
//! - `blocked insert(&key)`: the crate's `Key` hash of the key, then its line's bits set;
//! - `sbbf-rs insert(hash(key))`: the same hash in the loop, then sbbf-rs's `insert`;
//! - `blocked insert_hash` and `sbbf-rs insert`: the same with the hashes computed beforehand.
//!
//! As in the report, the keys come in chunks of 1 Mi, made (and hashed) off the clock; each
//! chunk goes into all four filters in turn, so that each way sees the same moments of a
//! shared host. Five rounds (each a complete fill of four new filters); it prints the median
//! ns per key and the ratio of each blocked way to its sbbf-rs twin.

use std::hint::black_box;
use std::time::Instant;

use linebloom::blocked::Line;
use linebloom::hash::mix64;
use linebloom::internals::zeroed_lines;
use linebloom::{BlockedBloom, Key};

/// Keys per chunk.
const CHUNK: usize = 1 << 20;

fn main() {
    let millions: usize = std::env::args()
        .nth(1)
        .map_or(100, |a| a.parse().expect("MILLION_KEYS"));
    let n = millions * 1_000_000;
    let new_blocked = || {
        let mut filter = BlockedBloom::with_bits_per_key(n as u64, 10.0).expect("the filter");
        filter.clear();
        filter
    };
    // The same bits per key: whole 32-byte blocks, two per 64-byte line. sbbf-rs's buffer is
    // 64-byte aligned lines, allocated as the blocked filter's are.
    let blocks = (n * 10).div_ceil(256);
    let new_sbbf = || {
        let mut lines = zeroed_lines(blocks.div_ceil(2)).expect("the buffer");
        lines.fill(Line::ZERO);
        lines
    };
    let seed = new_blocked().seed();
    let f = sbbf_rs::FilterFn::new();
    let names = [
        "blocked insert(&key)",
        "sbbf-rs insert(hash(key))",
        "blocked insert_hash",
        "sbbf-rs insert",
    ];
    let mut times = [const { Vec::new() }; 4];
    let (mut keys, mut hashes) = (vec![0u64; CHUNK], vec![0u64; CHUNK]);
    for _ in 0..5 {
        let (mut hashing, mut hashed) = (new_blocked(), new_blocked());
        let (mut sbbf_hashing, mut sbbf_hashed) = (new_sbbf(), new_sbbf());
        let mut took = [0f64; 4];
        for first in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - first);
            let (keys, hashes) = (&mut keys[..len], &mut hashes[..len]);
            for (i, (k, h)) in keys.iter_mut().zip(hashes.iter_mut()).enumerate() {
                *k = mix64((first + i) as u64);
                *h = k.hash_with_seed(seed);
            }
            let (keys, hashes) = (black_box(&*keys), black_box(&*hashes));
            let mut time = |way: usize, insert: &mut dyn FnMut()| {
                let t = Instant::now();
                insert();
                took[way] += t.elapsed().as_secs_f64();
            };
            time(0, &mut || keys.iter().for_each(|k| hashing.insert(k)));
            let buf = sbbf_hashing.as_mut_ptr() as *mut u8;
            time(1, &mut || {
                for k in keys {
                    // SAFETY: `buf` holds `blocks * 32` bytes or more (whole lines, 64-byte
                    // aligned), what `FilterFn::insert` writes; nothing else uses them.
                    unsafe { f.insert(buf, blocks, k.hash_with_seed(seed)) };
                }
            });
            time(2, &mut || {
                hashes.iter().for_each(|&h| hashed.insert_hash(h))
            });
            let buf = sbbf_hashed.as_mut_ptr() as *mut u8;
            time(3, &mut || {
                for &h in hashes {
                    // SAFETY: as above.
                    unsafe { f.insert(buf, blocks, h) };
                }
            });
        }
        assert_eq!(hashing.count_ones(), hashed.count_ones());
        assert!(
            sbbf_hashing
                .iter()
                .zip(sbbf_hashed.iter())
                .all(|(a, b)| a == b)
        );
        for (t, s) in times.iter_mut().zip(took) {
            t.push(s * 1e9 / n as f64);
        }
    }
    let medians = times.map(|mut t| {
        t.sort_by(f64::total_cmp);
        (t[t.len() / 2], t[0], t[t.len() - 1])
    });
    println!(
        "{n} keys: blocked and sbbf-rs {:.0} MiB each",
        (blocks * 32) as f64 / (1 << 20) as f64
    );
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
