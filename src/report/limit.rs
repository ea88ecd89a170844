//! The physical-limit probe: what reading one random 64-byte line costs on this machine, from a
//! buffer the size of the filter, so every lookup figure can be read as a ratio to what the
//! memory system allows.
//!
//! Three figures per buffer size, all ns per line read:
//! - **independent**: the sum of loads at precomputed random line indices. The loads do not
//!   depend on each other, so the core overlaps as many misses as its fill buffers hold: the
//!   throughput ceiling of any one-line-per-key lookup loop (the blocked filter's floor).
//! - **prefetched**: a group of hashes becomes line indices, each line is prefetched, then each
//!   is loaded, exactly the batched lookups' access pattern without the filter's bit tests.
//! - **dependent**: each load's address depends on the previous load's value, so misses do not
//!   overlap: the memory latency, which a lookup whose caller waits for each answer pays.
//!
//! This module owns the buffer and the three loops. It does not own the timing loop
//! (`measure.rs`).

use crate::prefetch::prefetch;
use std::hint::black_box;

use serde::Serialize;

use super::fpr::key_hash;
use super::measure::{Sampling, Stat, sample_batch};
use crate::hash::reduce;

/// One cache line of the probe buffer, aligned like the blocked filter's lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct CacheLine([u64; 8]);

/// Lines loaded per prefetch group: the same group size as the filters' batched lookups.
const GROUP: usize = 16;

/// The memory system's figures for one buffer size.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryLimit {
    /// The buffer's size in bytes (the filter's size, rounded up to whole lines).
    pub bytes: usize,
    /// Independent loads from precomputed random indices.
    pub independent: Stat,
    /// Indices computed from hashes in groups, prefetched, then loaded.
    pub prefetched: Stat,
    /// Each load's address depends on the previous load (latency).
    pub dependent: Stat,
}

impl MemoryLimit {
    /// The best the memory system allows for independent one-line reads: the faster of the
    /// independent and prefetched figures. Lookup figures are divided by this.
    pub fn best_ns(&self) -> f64 {
        self.independent.median_ns.min(self.prefetched.median_ns)
    }
}

/// Measures the three figures on a buffer of `bytes` bytes with `ops` reads per batch.
pub fn probe_memory(bytes: usize, ops: usize, sampling: Sampling, seed: u64) -> MemoryLimit {
    let lines = bytes.div_ceil(64).max(1);
    // Written, not only allocated, so every page is faulted in before any timing. Each line
    // holds the index of the next line of one random cycle through all lines (Sattolo's
    // algorithm), which the dependent chain follows.
    let mut next: Vec<u64> = (0..lines as u64).collect();
    for i in (1..lines).rev() {
        let j = reduce(key_hash(seed, 4, i as u64), i);
        next.swap(i, j);
    }
    let buffer: Vec<CacheLine> = next.iter().map(|&n| CacheLine([n; 8])).collect();
    drop(next);
    let hashes: Vec<u64> = (0..ops as u64).map(|i| key_hash(seed, 3, i)).collect();
    let indices: Vec<usize> = hashes.iter().map(|&h| reduce(h, lines)).collect();
    let ops = ops.max(1);

    let independent = sample_batch(sampling, ops, || {
        let (buffer, indices) = (black_box(&buffer[..]), black_box(&indices[..]));
        indices
            .iter()
            .fold(0u64, |sum, &i| sum.wrapping_add(buffer[i].0[0]))
    });
    let prefetched = sample_batch(sampling, ops, || {
        let (buffer, hashes) = (black_box(&buffer[..]), black_box(&hashes[..]));
        let mut sum = 0u64;
        for group in hashes.chunks(GROUP) {
            let mut idx = [0usize; GROUP];
            for (slot, &h) in idx.iter_mut().zip(group) {
                *slot = reduce(h, buffer.len());
                prefetch(&buffer[*slot]);
            }
            for &i in &idx[..group.len()] {
                sum = sum.wrapping_add(buffer[i].0[0]);
            }
        }
        sum
    });
    let dependent = sample_batch(sampling, ops, || {
        let buffer = black_box(&buffer[..]);
        // The next address is this load's value: no two misses overlap, and the only work
        // between loads is the bounds check.
        let mut at = black_box(0usize);
        for _ in 0..ops {
            at = buffer[at].0[0] as usize;
        }
        at as u64
    });
    MemoryLimit {
        bytes: lines * 64,
        independent,
        prefetched,
        dependent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn probes_a_small_buffer() {
        let sampling = Sampling {
            reps: 2,
            min_sample: Duration::from_micros(50),
        };
        let m = probe_memory(1000, 4096, sampling, 1);
        assert_eq!(m.bytes, 1024);
        assert!(m.best_ns() > 0.0);
        assert!(m.dependent.median_ns > 0.0);
    }
}
