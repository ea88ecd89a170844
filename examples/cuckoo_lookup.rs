//! What one cuckoo lookup costs far past the cache, part by part.
//!
//! ```sh
//! cargo run --release --features internals --example cuckoo_lookup -- [MILLION_KEYS]
//! ```
//!
//! (default 100 M keys: a cuckoo filter of 8-bit fingerprints at 10 bits per key, 100 MB.) Each
//! loop goes over 2 Mi never-inserted hashes one key at a time; the best of seven passes is
//! printed in ns per key, three rounds. The rows:
//! - `contains_hash`: the crate's lookup (both buckets, the vector test);
//! - `buckets + 2 loads`: the same two buckets (`buckets_of`, the crate's own arithmetic) read
//!   and folded together, no test: the lookup's loads with its index arithmetic;
//! - `2 loads`: the same two buckets from pairs computed beforehand, no arithmetic at all;
//! - `1 load`: the first bucket alone from those pairs, one random line per key;
//! - `2 loads + 8 adds`, `+ 16 adds` (x86-64): `2 loads` with a chain of 8 or 16 `add`
//!   instructions per key in inline assembly beside the loads (on the first bucket's index,
//!   folded into the sum): work that waits on no load, to see what one more instruction per
//!   key costs when the loads miss;
//! - `contains_hashes`: the batched lookup (prefetching 64 keys ahead);
//! - `blocked contains_hash`: a blocked filter of the same keys at 10 bits per key, one line
//!   per key and its test.
//!
//! One at a time, lookups far past the cache are bound by how many the core keeps in flight,
//! so a row's time grows with the work each key takes, not only with its lines.

use linebloom::hash::mix64;
use linebloom::{BlockedBloom, CuckooFilter};
use std::time::Instant;

/// `x` plus `N` after `N` one-instruction `add`s that the compiler cannot fold (1 on other
/// architectures, where the rows that use it are not printed).
#[inline(always)]
fn adds<const N: usize>(x: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut y = x;
        for _ in 0..N {
            // SAFETY: one `add` on a register the block owns; no memory, no stack, no flags
            // anyone reads.
            unsafe {
                std::arch::asm!("add {y}, 1", y = inout(reg) y, options(nomem, nostack, pure))
            };
        }
        y
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        x + 1
    }
}

/// Best ns per key of seven passes of `pass` over `keys` keys.
fn best(keys: usize, mut pass: impl FnMut() -> u64) -> f64 {
    let mut best = f64::MAX;
    let mut sink = 0u64;
    for _ in 0..7 {
        let start = Instant::now();
        sink ^= pass();
        best = best.min(start.elapsed().as_secs_f64() * 1e9 / keys as f64);
    }
    std::hint::black_box(sink);
    best
}

fn main() {
    let million: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 100,
        Some(Ok(m)) if m > 0 => m,
        Some(_) => {
            eprintln!("usage: cuckoo_lookup [MILLION_KEYS > 0]");
            std::process::exit(2);
        }
    };
    let items = million * 1_000_000;
    let inserted: Vec<u64> = (0..items as u64).map(mix64).collect();
    let mut cuckoo = CuckooFilter::with_bits_per_key(items as u64, 10.0).expect("cuckoo filter");
    for &h in &inserted {
        cuckoo
            .insert_hash(h)
            .expect("a filter sized for its keys holds them");
    }
    let mut blocked = BlockedBloom::with_bits_per_key(items as u64, 10.0).expect("blocked filter");
    blocked.insert_hashes(&inserted);
    drop(inserted);
    assert_eq!(
        cuckoo.fingerprint_bits(),
        8,
        "10 bits per key gives 8-bit fingerprints"
    );

    let probes = 1 << 21;
    let missing: Vec<u64> = (0..probes as u64).map(|i| mix64(i | 1 << 62)).collect();
    let pairs: Vec<(usize, usize)> = missing.iter().map(|&h| cuckoo.buckets_of(h)).collect();
    // 8-bit fingerprints: bucket b is the 4 bytes at 4 * b, read here as the b-th u32 of the
    // filter's own table (64-byte aligned, so the cast cannot fail).
    let words: &[u32] = bytemuck::cast_slice(cuckoo.table_bytes());
    let mut out = vec![false; probes];
    println!(
        "{million} M keys, cuckoo table {:.1} MiB, {probes} lookups one at a time, ns per key",
        cuckoo.size_bytes() as f64 / (1 << 20) as f64
    );
    for _ in 0..3 {
        let lookup = best(probes, || {
            missing
                .iter()
                .map(|&h| u64::from(cuckoo.contains_hash(h)))
                .sum()
        });
        let arithmetic = best(probes, || {
            missing.iter().fold(0, |acc, &h| {
                let (i1, i2) = cuckoo.buckets_of(h);
                acc ^ u64::from(words[i1] | words[i2])
            })
        });
        let two = best(probes, || {
            pairs
                .iter()
                .fold(0, |acc, &(i1, i2)| acc ^ u64::from(words[i1] | words[i2]))
        });
        let one = best(probes, || {
            pairs
                .iter()
                .fold(0, |acc, &(i1, _)| acc ^ u64::from(words[i1]))
        });
        let plus = |n: usize| {
            best(probes, || {
                pairs.iter().fold(0, |acc, &(i1, i2)| {
                    let pad = if n == 8 {
                        adds::<8>(i1 as u64)
                    } else {
                        adds::<16>(i1 as u64)
                    };
                    acc ^ pad ^ u64::from(words[i1] | words[i2])
                })
            })
        };
        let (plus8, plus16) = (plus(8), plus(16));
        let batched = best(probes, || {
            cuckoo
                .contains_hashes(&missing, &mut out)
                .expect("equal lengths");
            out.iter().map(|&b| u64::from(b)).sum()
        });
        let line = best(probes, || {
            missing
                .iter()
                .map(|&h| u64::from(blocked.contains_hash(h)))
                .sum()
        });
        println!(
            "contains_hash {lookup:.2} | buckets + 2 loads {arithmetic:.2} | 2 loads {two:.2} \
             | 1 load {one:.2} | contains_hashes {batched:.2} | blocked contains_hash {line:.2}"
        );
        if cfg!(target_arch = "x86_64") {
            println!("  2 loads + 8 adds {plus8:.2} | 2 loads + 16 adds {plus16:.2}");
        }
    }
}
