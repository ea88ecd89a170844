//! The ceiling for a parallel bulk insert on this machine: every thread fills a filter of its
//! own with the batched sequential insert (`insert_hashes`: prefetched read-modify-writes of
//! random lines), with no work shared, so nothing but the memory system limits how the rate
//! grows with threads. `par_insert_hashes` on one shared filter cannot scale better than this.
//!
//! ```sh
//! cargo run --release --example insert_ceiling            # 100 M keys per thread (~2.4 GB)
//! cargo run --release --example insert_ceiling -- 20000000
//! ```

use linebloom::BlockedBloom;
use linebloom::hash::mix64;
use std::time::Instant;

fn main() {
    let keys: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000_000);
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let max_threads = cores.len().max(1);
    println!("{keys} keys per thread, 10 bits/key, threads pinned to distinct cores");
    let hashes: Vec<Vec<u64>> = (0..max_threads as u64)
        .map(|t| (0..keys as u64).map(|i| mix64(i ^ (t << 48))).collect())
        .collect();
    let mut threads = 1;
    let mut one = 0.0;
    while threads <= max_threads {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let mut filters: Vec<BlockedBloom> = (0..threads)
                .map(|_| BlockedBloom::with_bits_per_key(keys, 10.0).expect("fits in memory"))
                .collect();
            // First touch (page faults, huge-page zeroing) outside the timing.
            for (f, hs) in filters.iter_mut().zip(&hashes) {
                f.insert_hashes(hs);
                f.clear();
            }
            let started = Instant::now();
            std::thread::scope(|s| {
                for (i, (f, hs)) in filters.iter_mut().zip(&hashes).enumerate() {
                    let core = cores.get(i).copied();
                    s.spawn(move || {
                        if let Some(core) = core {
                            core_affinity::set_for_current(core);
                        }
                        f.insert_hashes(hs);
                    });
                }
            });
            best = best.min(started.elapsed().as_secs_f64() * 1e9 / (keys * threads) as f64);
        }
        if threads == 1 {
            one = best;
        }
        println!(
            "{threads} thread(s): {best:.2} ns per key overall, {:.2}x one thread",
            one / best
        );
        threads *= 2;
    }
}
