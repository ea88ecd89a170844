//! Engine internals the measuring code of `linebloom-cli` (the tuning report) reaches: line
//! buffers allocated as the filters allocate theirs, the batched lookup's prefetch distances and
//! hints, the partitioned insert's thresholds, and the argument checks the constructors use.
//!
//! Not a stable API: compiled only with the `internals` feature, hidden from the documentation,
//! and free to change with the engine.

use crate::error::Result;

pub use crate::engine::mask::{Mask, SALTS, lookup_mask_for, mask_for};
pub use crate::engine::prefetch::{Level, NEAR, hint_step, prefetch_ahead, prefetch_to};
pub use crate::engine::storage::LineBuf;

/// How many keys ahead the batched paths prefetch a key's line.
pub const PREFETCH_AHEAD: usize = crate::engine::lookahead::AHEAD;
/// Filters up to this many bytes take the batched paths' plain (unprefetched) loops.
pub const PLAIN_LOOP_BYTES: usize = crate::engine::lookahead::CACHED_BYTES;
/// The fewest threads with which `par_insert_hashes` partitions a batch.
pub const PARTITION_MIN_THREADS: usize = crate::blocked::PARTITION_MIN_THREADS;
/// The fewest threads with which `par_insert_hashes_with` (kept buffers) partitions a batch.
pub const PARTITION_MIN_THREADS_KEPT: usize = crate::blocked::PARTITION_MIN_THREADS_KEPT;

/// `n` zeroed lines allocated as a filter's are (huge pages for large buffers).
pub fn zeroed_lines(n: usize) -> Result<LineBuf> {
    crate::engine::storage::zeroed_lines(n)
}

/// Whether a batch of `keys` into `lines` lines on `threads` threads takes the partitioned
/// insert (`kept`: with buffers kept between builds).
pub fn partitions(lines: usize, keys: usize, threads: usize, kept: bool) -> bool {
    crate::blocked::partitions(lines, keys, threads, kept)
}

/// Whether the partitioned insert's threads also fill (zero) the lines they own.
pub fn partitioned_fill(lines: usize, threads: usize) -> bool {
    crate::blocked::partitioned_fill(lines, threads)
}

/// The constructors' check of an item count.
pub fn check_items(items: u64) -> Result<()> {
    crate::error::check_items(items)
}

/// The constructors' check of a target FPR.
pub fn check_fpr(fpr: f64) -> Result<()> {
    crate::error::check_fpr(fpr)
}

/// The constructors' check of bits per key.
pub fn check_bits_per_key(bits_per_key: f64) -> Result<()> {
    crate::error::check_bits_per_key(bits_per_key)
}

/// Units of `unit_bits` bits that give `items` keys `bits_per_key` bits each.
pub fn units_for(items: u64, bits_per_key: f64, unit_bits: u64) -> Result<usize> {
    crate::error::units_for(items, bits_per_key, unit_bits)
}

/// Whether `line` holds every bit of `mask` (the lookup's test of one line).
pub fn line_test(line: &crate::blocked::Line, mask: Mask) -> bool {
    line.test(mask)
}

/// Mutable access to a line's words, for measuring code that fills lines with its own data.
pub fn line_words_mut(line: &mut crate::blocked::Line) -> &mut [u32; 16] {
    &mut line.0
}
