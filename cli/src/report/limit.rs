//! The physical-limit probe: what reading one random 64-byte line costs on this machine, from a
//! buffer the size of the filter, so every lookup figure can be read as a ratio to what the
//! memory system allows.
//!
//! Three figures per buffer size, all ns per line read:
//! - **independent**: the sum of loads at precomputed random line indices. The loads do not
//!   depend on each other, so the core overlaps as many misses as its fill buffers hold: the
//!   throughput ceiling of any one-line-per-key lookup loop (the blocked filter's floor).
//! - **prefetched**: each line is prefetched into L2 `PREFETCH_AHEAD` (256) reads before it is
//!   loaded and into L1 `NEAR` (8) reads before, the blocked filter's batched lookups' access
//!   pattern without the bit tests (`engine/prefetch.rs`). A prefetch retires at once, so far more
//!   misses are in flight than the out-of-order window allows plain loads: from a buffer far
//!   past the last-level cache, prefetched reads cost about half the ns per line of
//!   independent ones (the report's memory-limit table shows both).
//! - **hashed ring**: each line index hashed inline from a counter (no index stream to read),
//!   kept in a ring of `RING` (256) computed indices; the line is prefetched into L2 when its
//!   index is computed and into L1 `NEAR` reads before it is read, then one word of it is read.
//!   The leanest loop found that keeps the most misses in flight, so the tightest ceiling.
//! - **dependent**: each load's address depends on the previous load's value, so misses do not
//!   overlap: the memory latency, which a lookup whose caller waits for each answer pays.
//!
//! The report probes each size before and after measuring its filters and keeps the faster of
//! the two for each figure ([`MemoryLimit::faster`]): on a shared host the memory system's
//! speed drifts over minutes, and a limit is meant as a ceiling.
//!
//! The buffer is allocated as the blocked filter's lines are (on transparent huge pages from
//! 8 MiB up, where the kernel gives them), so the limit is the one the engine itself faces; a
//! peer on ordinary heap memory pays its TLB misses on top. This module owns the buffer and
//! the three loops. It does not own the timing loop (`measure.rs`).

use linebloom::internals::{Level, NEAR, hint_step, prefetch_ahead, prefetch_to};
use linebloom::internals::{LineBuf, PREFETCH_AHEAD, line_words_mut, zeroed_lines};
use std::hint::black_box;

use serde::Serialize;

use super::keys::key_hash;
use super::measure::{Sampling, Stat, sample_batch};
use linebloom::hash::{mix64, reduce};

/// Computed line indices the hashed-ring probe keeps ahead of its reads (a power of two).
const RING: usize = 256;

/// The memory system's figures for one buffer size.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryLimit {
    /// The buffer's size in bytes (the filter's size, rounded up to whole lines).
    pub bytes: usize,
    /// Independent loads from precomputed random indices.
    pub independent: Stat,
    /// Each line prefetched a fixed distance ahead of its load.
    pub prefetched: Stat,
    /// Indices hashed inline into a ring, prefetched to L2 when computed and to L1 just before.
    pub ring: Stat,
    /// Each load's address depends on the previous load (latency).
    pub dependent: Stat,
}

impl MemoryLimit {
    /// Each figure the faster (lower median) of two probes of the same buffer size: the report
    /// probes before and after a size's filters, so a limit taken at a fast moment of a
    /// shared host is not lost to one taken at a slow one.
    pub fn faster(self, other: MemoryLimit) -> MemoryLimit {
        let pick = |a: Stat, b: Stat| if b.median_ns < a.median_ns { b } else { a };
        MemoryLimit {
            bytes: self.bytes,
            independent: pick(self.independent, other.independent),
            prefetched: pick(self.prefetched, other.prefetched),
            ring: pick(self.ring, other.ring),
            dependent: pick(self.dependent, other.dependent),
        }
    }

    /// The best the memory system allows for independent one-line reads: the fastest of the
    /// independent, prefetched and hashed-ring figures. Lookup figures are divided by this.
    pub fn best_ns(&self) -> f64 {
        self.independent
            .median_ns
            .min(self.prefetched.median_ns)
            .min(self.ring.median_ns)
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
    let mut buffer: LineBuf = match zeroed_lines(lines) {
        Ok(buffer) => buffer,
        // The filter of this size was allocated the same way a moment ago; if even the probe's
        // copy cannot be had, measure on the heap rather than not at all.
        Err(_) => vec![Default::default(); lines].into(),
    };
    for (line, &n) in buffer.iter_mut().zip(&next) {
        let words = line_words_mut(line);
        words[0] = n as u32;
        words[1] = (n >> 32) as u32;
    }
    drop(next);
    // A plain slice, so the loops below keep its pointer and length in registers.
    let lines_of = &buffer[..];
    let at = |i: usize| {
        let words = lines_of[i].words();
        u64::from(words[0]) | u64::from(words[1]) << 32
    };
    let indices: Vec<usize> = (0..ops as u64)
        .map(|i| reduce(key_hash(seed, 3, i), lines))
        .collect();
    let ops = ops.max(1);

    let independent = sample_batch(sampling, ops, || {
        let indices = black_box(&indices[..]);
        indices.iter().fold(0u64, |sum, &i| sum.wrapping_add(at(i)))
    });
    let prefetched = sample_batch(sampling, ops, || {
        let indices = black_box(&indices[..]);
        let mut sum = 0u64;
        prefetch_ahead(indices, PREFETCH_AHEAD, NEAR, |to_l2, to_l1, now| {
            hint_step(to_l2, to_l1, |i| &lines_of[i]);
            if let Some(i) = now {
                sum = sum.wrapping_add(at(i));
            }
        });
        sum
    });
    let ring = sample_batch(sampling, ops, || {
        // Index i + RING is computed (and hinted to L2) as index i is read; index i + NEAR is
        // hinted to L1 then. The ring is a power of two, so its slots are a mask away.
        let mut ring = [0usize; RING];
        let salt = black_box(seed);
        let index = |i: u64| reduce(mix64(i ^ salt), lines);
        for (i, slot) in ring.iter_mut().enumerate() {
            *slot = index(i as u64);
            prefetch_to(Level::L2, &lines_of[*slot]);
        }
        let mut sum = 0u64;
        for i in 0..ops {
            let slot = i & (RING - 1);
            prefetch_to(Level::L1, &lines_of[ring[(i + NEAR) & (RING - 1)]]);
            sum = sum.wrapping_add(lines_of[ring[slot]].words()[0] as u64);
            let next = index((i + RING) as u64);
            ring[slot] = next;
            prefetch_to(Level::L2, &lines_of[next]);
        }
        sum
    });
    let dependent = sample_batch(sampling, ops, || {
        // The next address is this load's value: no two misses overlap, and the only work
        // between loads is the bounds check.
        let mut i = black_box(0usize);
        for _ in 0..ops {
            i = at(i) as usize;
        }
        i as u64
    });
    MemoryLimit {
        bytes: lines * 64,
        independent,
        prefetched,
        ring,
        dependent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Two samples of at least 50 µs: enough to exercise the probes.
    const SHORT: Sampling = Sampling {
        reps: 2,
        min_sample: Duration::from_micros(50),
    };

    #[test]
    fn probes_a_small_buffer() {
        let m = probe_memory(1000, 4096, SHORT, 1);
        assert_eq!(m.bytes, 1024);
        assert!(m.best_ns() > 0.0);
        assert!(m.dependent.median_ns > 0.0);
    }

    #[test]
    fn faster_keeps_the_lower_median_of_each_figure() {
        let a = probe_memory(4096, 4096, SHORT, 1);
        let b = probe_memory(4096, 4096, SHORT, 2);
        let m = a.clone().faster(b.clone());
        let figures = |l: &MemoryLimit| {
            [&l.independent, &l.prefetched, &l.ring, &l.dependent].map(|s| s.median_ns)
        };
        for ((got, x), y) in figures(&m).into_iter().zip(figures(&a)).zip(figures(&b)) {
            assert_eq!(got, x.min(y));
        }
        assert!(m.best_ns() <= a.best_ns().min(b.best_ns()));
    }
}
