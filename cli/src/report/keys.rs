//! The keys every measurement inserts and probes: streams of distinct pseudo-random 64-bit
//! hashes, the same for the report, `linebloom fpr`, `tune` and the benches, so their figures
//! describe the same keys. This module owns the streams; it measures nothing.

use linebloom::hash::mix64;

/// The hash of the `i`-th key of a stream of distinct pseudo-random keys. Inserted keys come
/// from stream 0 and probes from stream 1, so no probe was ever inserted. `seed` varies the keys.
pub fn key_hash(seed: u64, stream: u64, i: u64) -> u64 {
    mix64(mix64(seed ^ (stream << 62)).wrapping_add(i))
}

/// The most keys per buffer of generated hashes (and per timed chunk of a large fill): a
/// measurement never holds more than this many probes at once.
pub const CHUNK: usize = 1 << 20;
