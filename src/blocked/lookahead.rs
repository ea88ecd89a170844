//! How far the batched paths look ahead, and the filter size below which they do not.
//!
//! Both the portable batched loops (`batch.rs`) and the hand-written AVX-512 ones
//! (`batch_asm/`) follow these two figures. They live here, apart from either loop, so that
//! `batch.rs` calls `batch_asm/` and neither imports the other's constants: data flows one
//! way. It owns no code, only the measured choices.

/// How many keys ahead the batched paths prefetch into L2: the misses they keep in flight; each
/// line also comes up into L1 [`NEAR`](crate::prefetch::NEAR) keys before its use
/// (`prefetch.rs`). A prefetch retires without waiting for its line, so the misses in flight
/// are not bounded by how many lookups the out-of-order window holds. On a 119 MiB filter,
/// batched miss lookups 256 keys ahead run about 3.5x faster than the plain loop and about 2.5x
/// faster than 8 keys ahead, level with 128 and 512, close to the report's memory probe
/// (random lines read with the same hints): `linebloom report --items 100000000 --filters
/// blocked`.
pub(crate) const AHEAD: usize = 256;

/// Filters this small live in the cache, where there are few misses to overlap: the plain loop
/// is faster than prefetching ahead, which pays the line index twice (once for the prefetch)
/// and, for lookups, a store per answer. One bound for lookups and inserts. Measured with
/// `linebloom report --filters blocked --threads 1` on a machine with a 1 MiB L2 and a 32 MiB
/// L3, the plain loop against prefetching:
/// - inserts about 1.1x faster one by one up to 4.77 MiB, and slower from 9.54 MiB;
/// - misses about 1.2x faster one at a time up to 1.19 MiB, and slower from 2.38 MiB.
///
/// 2 MiB keeps a margin for machines with a smaller last-level cache. The bulk insert's tasks
/// keep prefetching: their plain loop, with the index checked against the task's run, runs
/// about 1.1x slower (2 threads on 1.19 MiB).
pub(crate) const CACHED_BYTES: usize = 2 << 20;
