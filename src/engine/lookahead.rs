//! How far the batched paths look ahead, and the filter size below which they do not.
//!
//! Every batched path follows these two values: the engine's batched lookup (`lookup.rs`, which
//! the blocked and split-block filters run per path) and its bulk insert (`bulk.rs`). They live in the engine,
//! apart from every loop, so that data flows one way: the filters import them, and no filter
//! imports another's constants. It owns no code, only the measured choices.

/// How many keys ahead the batched paths prefetch into L2: the misses they keep in flight; each
/// line also comes up into L1 [`NEAR`](crate::engine::prefetch::NEAR) keys before its use
/// (`engine/prefetch.rs`). A prefetch retires without waiting for its line, so the misses in flight
/// are not bounded by how many lookups the out-of-order window holds. Far enough ahead that
/// the misses in flight cover the memory's latency at the pace the loop issues keys, so past
/// the cache the batched lookups run close to the report's memory probe (random lines read
/// with the same hints); 128 and 512 are level with it, a short distance or none leaves the
/// latency exposed (measured in `docs/performance.md`, Levers tried).
pub(crate) const AHEAD: usize = 256;

/// Filters this small live in the cache, where there are few misses to overlap: the plain loop
/// is faster than prefetching ahead, which pays the line index twice (once for the prefetch)
/// and, for lookups, a store per answer. One bound for lookups and inserts: the plain loop
/// stays ahead of prefetching for misses up to about the size of L2 and for inserts somewhat
/// further, and falls behind past them (`docs/performance.md`, Levers tried).
///
/// 2 MiB keeps a margin for machines with a smaller last-level cache. The bulk insert's tasks
/// keep prefetching: their plain loop, with the index checked against the task's run, runs
/// slower even below this size.
pub(crate) const CACHED_BYTES: usize = 2 << 20;
