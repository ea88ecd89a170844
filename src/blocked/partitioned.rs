//! The blocked filter's side of the engine's partitioned insert (`engine/partition.rs`): a
//! large batch sorted by range of lines into kept or per-call [`BuildBuffers`], then each
//! range's lines take their keys through the filter's [`Lines`] seam on the chosen SIMD path,
//! compiled once per path and placement.

use super::BlockedBloom;
use super::slots::Lines;
use crate::engine::arch::{Kernel, per_path, placed, simd_path};
use crate::engine::mask::{Line, Probes};
use crate::engine::partition::{BuildBuffers, Ranges, chunk_len, insert_ranges, range_shift};

impl BlockedBloom {
    /// Inserts `hashes` through partitions on `threads` threads (rayon's, when more than one),
    /// in chunks of 16 keys per line, sorting them into `buffers` (grown
    /// where too small, kept for the caller). Returns `false`, having inserted nothing, where
    /// the partitions cannot be allocated. Never inlined: `insert_hashes` and
    /// `par_insert_hashes` share this one compiled copy (inlined into a caller with one thread
    /// known, the same partitioned insert runs slower in some binaries and not in others: code
    /// placement, not the algorithm, which one copy takes out of the picture).
    #[inline(never)]
    pub(super) fn insert_partitioned(
        &mut self,
        hashes: &[u64],
        threads: usize,
        buffers: &mut BuildBuffers,
    ) -> bool {
        let shift = range_shift(self.lines.len());
        self.insert_partitioned_in(hashes, threads, buffers, shift)
    }

    /// [`insert_partitioned`](Self::insert_partitioned) in ranges of `1 << shift` lines (the
    /// tests take every range size through small filters).
    fn insert_partitioned_in(
        &mut self,
        hashes: &[u64],
        threads: usize,
        buffers: &mut BuildBuffers,
        shift: u32,
    ) -> bool {
        let total = self.lines.len();
        let chunk = chunk_len(hashes.len(), total);
        if buffers.prepare(threads, total, shift, chunk).is_none() {
            return false;
        }
        for piece in hashes.chunks(chunk) {
            buffers.fill::<ByLine>(piece, total, shift);
            insert_held(&mut self.lines, buffers, shift, self.probes);
        }
        true
    }
}

/// The blocked filter's slot of a hash, for sorting a batch by range of lines: the index of
/// [`Lines`] under every path and placement.
pub(super) type ByLine = Lines<crate::engine::arch::Portable, crate::engine::arch::SaltedPlace>;

/// Inserts what `buffers` hold (sorted in ranges of `1 << shift` lines) into `lines` with
/// probes `k`, each thread a run of whole ranges on the chosen SIMD path, and empties them.
pub(super) fn insert_held(lines: &mut [Line], buffers: &mut BuildBuffers, shift: u32, k: Probes) {
    let (total, path) = (lines.len(), simd_path());
    buffers.insert_into(lines, shift, |run, first, parts| {
        insert_run(path, run, first, total, shift, k, parts)
    });
}

per_path! {
    /// Inserts the keys of `parts` whose line lies in `lines`, the filter's lines `first..` of
    /// `total` in ranges of `1 << shift` lines, on one path (the engine's `insert_ranges`).
    fn insert_run(
        lines: &mut [Line],
        first: usize,
        total: usize,
        shift: u32,
        k: Probes,
        parts: Ranges<'_>,
    ) = insert_run_with;
}

/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn insert_run_with<K: Kernel>(
    lines: &mut [Line],
    first: usize,
    total: usize,
    shift: u32,
    k: Probes,
    parts: Ranges<'_>,
) {
    placed!(k, P => {
        // SAFETY: the caller's contract.
        let slots = unsafe { Lines::<K, P>::new(k) };
        insert_ranges(&slots, lines, first, total, shift, parts)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocked::Placement;
    use crate::engine::partition::RANGE_SHIFT;
    use crate::hash::mix64;

    fn filter(lines: usize) -> BlockedBloom {
        BlockedBloom::with_lines(lines, 7, 0).unwrap()
    }

    /// On one thread and several, in one chunk and many, with uniform hashes and with batches
    /// skewed into one range (small integers: all in line 0) or mixed, the partitioned insert
    /// sets exactly the bits of inserting one key at a time.
    #[test]
    fn partitioned_inserts_set_exactly_the_bits_of_one_by_one_inserts() {
        let uniform: Vec<u64> = (0..200_000).map(mix64).collect();
        let skewed: Vec<u64> = (0..70_000).collect();
        let mixed: Vec<u64> = (0..90_000u64)
            .map(|i| if i % 3 == 0 { i } else { mix64(i) })
            .chain([0, u64::MAX, 1 << 63, (1 << 63) - 1])
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // Buffers kept across every call below: other filters, batches and thread counts,
        // their pools grown, reused larger than needed, and holding older calls' hashes.
        let mut kept = BuildBuffers::new();
        // One range, a range and a bit, several ranges with a short last one; chunks of
        // 16 keys per line, so the larger batches take several.
        for lines in [1, 100, 4097, 3 * 4096 + 5, 20_000] {
            for hashes in [&uniform, &skewed, &mixed] {
                let mut want = filter(lines);
                hashes.iter().for_each(|&h| want.insert_hash(h));
                for threads in [1, 2, 3, 5] {
                    for buffers in [&mut BuildBuffers::new(), &mut kept] {
                        let mut got = filter(lines);
                        let done =
                            pool.install(|| got.insert_partitioned(hashes, threads, buffers));
                        assert!(done);
                        assert!(got == want, "{lines} lines, {threads} threads");
                    }
                    // The larger ranges of large filters, through the same small ones.
                    let mut got = filter(lines);
                    let shift = RANGE_SHIFT + 1;
                    let done = pool
                        .install(|| got.insert_partitioned_in(hashes, threads, &mut kept, shift));
                    assert!(done);
                    assert!(
                        got == want,
                        "{lines} lines, {threads} threads, shift {shift}"
                    );
                }
            }
        }
        let mut empty = filter(10);
        assert!(empty.insert_partitioned(&[], 2, &mut BuildBuffers::new()));
        assert!(empty == filter(10));
        // The salted placement, and k > 8, through the same insert.
        for (k, placement) in [
            (7, Placement::Salted),
            (11, Placement::Shifted),
            (11, Placement::Salted),
        ] {
            let lines = 3 * 4096 + 5;
            let mut want = BlockedBloom::with_lines_placed(lines, k, placement, 0).unwrap();
            uniform.iter().for_each(|&h| want.insert_hash(h));
            let mut got = BlockedBloom::with_lines_placed(lines, k, placement, 0).unwrap();
            assert!(pool.install(|| got.insert_partitioned(&uniform, 3, &mut kept)));
            assert!(got == want, "{placement} k {k}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// One set of buffers kept through a random sequence of builds (filter sizes, batch
        /// sizes, thread counts, range sizes): every build sets exactly the bits of inserting
        /// its keys one at a time, whatever earlier builds left in the buffers.
        #[test]
        fn kept_buffers_never_change_the_bits(
            builds in proptest::collection::vec(
                (1usize..20_000, 0usize..60_000, 1usize..6, 0u32..2, proptest::prelude::any::<u64>()),
                1..4,
            )
        ) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let mut kept = BuildBuffers::new();
            for (lines, keys, threads, wider, seed) in builds {
                let hashes: Vec<u64> = (0..keys as u64).map(|i| mix64(seed ^ i)).collect();
                let mut want = filter(lines);
                hashes.iter().for_each(|&h| want.insert_hash(h));
                let mut got = filter(lines);
                let shift = RANGE_SHIFT + wider;
                let done = pool
                    .install(|| got.insert_partitioned_in(&hashes, threads, &mut kept, shift));
                proptest::prop_assert!(done);
                proptest::prop_assert!(got == want, "{} lines, {} keys, {} threads", lines, keys, threads);
            }
        }
    }

    /// Kept buffers grow to what a call needs and are reused as they are by a call that needs
    /// no more; a new one holds nothing.
    #[test]
    fn kept_buffers_grow_once_and_are_reused() {
        let hashes: Vec<u64> = (0..50_000).map(mix64).collect();
        let mut buffers = BuildBuffers::new();
        assert_eq!(buffers.size_bytes(), 0);
        let mut f = filter(3 * 4096);
        assert!(f.insert_partitioned(&hashes, 2, &mut buffers));
        let grown = buffers.size_bytes();
        assert!(grown >= hashes.len() * 8, "{grown}");
        assert!(f.insert_partitioned(&hashes[..10_000], 2, &mut buffers));
        assert_eq!(buffers.size_bytes(), grown);
        assert!(format!("{buffers:?}").contains("partitions: 2"));
        // One thread needs one partition: the other is let go.
        assert!(f.insert_partitioned(&hashes[..100], 1, &mut buffers));
        assert!(buffers.size_bytes() < grown);
    }
}

/// The partitioned build on one and two pinned threads beside input order and the scanning
/// tasks, on any thread count (`par_insert_hashes` partitions only from [`MIN_THREADS`]):
/// `cargo test --release -p linebloom --lib partitioned_build_times -- --ignored --nocapture`
/// (100 M keys into 119 MiB, seven rounds, the ways taking turns to come first; `N=...` for
/// other sizes).
/// Prints the median and range of ns per key for each.
#[cfg(test)]
mod timing {
    use super::*;
    use crate::hash::mix64;
    use std::time::Instant;

    #[test]
    #[ignore]
    fn partitioned_build_times() {
        let n: usize = std::env::var("N").map_or(100_000_000, |v| v.parse().unwrap());
        let keys: Vec<u64> = (0..n as u64).map(mix64).collect();
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        let (one, two) = (pool(1), pool(2));
        let names = [
            "input order, 1 thread",
            "partitioned, 1 thread",
            "tasks, 2 threads",
            "partitioned, 2 threads",
            "partitioned, kept, 2",
        ];
        let mut kept = BuildBuffers::new();
        let mut ns = vec![Vec::new(); names.len()];
        for round in 0..7 {
            for j in 0..names.len() {
                let way = (j + round) % names.len();
                let mut f = BlockedBloom::with_lines(n * 10 / 512, 7, 0).unwrap();
                f.clear();
                let started = Instant::now();
                match way {
                    0 => one.install(|| f.insert_hashes(&keys)),
                    1 => assert!(one.install(|| f.insert_partitioned(
                        &keys,
                        1,
                        &mut BuildBuffers::new()
                    ))),
                    2 => two.install(|| f.par_insert_hashes(&keys)),
                    3 => assert!(two.install(|| f.insert_partitioned(
                        &keys,
                        2,
                        &mut BuildBuffers::new()
                    ))),
                    _ => two.install(|| f.par_insert_hashes_with(&keys, &mut kept)),
                }
                ns[way].push(started.elapsed().as_secs_f64() * 1e9 / n as f64);
            }
        }
        for (name, v) in names.iter().zip(&mut ns) {
            v.sort_by(f64::total_cmp);
            let (low, mid, high) = (v[0], v[v.len() / 2], v[v.len() - 1]);
            eprintln!("{name:<24} {mid:.2} ({low:.2}-{high:.2}) ns per key");
        }
    }
}
