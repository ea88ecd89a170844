//! The blocked filter's side of the engine's bulk-insert seam ([`Slots`]): its 64-byte lines,
//! the line of a hash, and the bits a hash sets in its line on the chosen SIMD path. The
//! engine's scanning tasks and prefetched insert (`engine/bulk.rs`) run on it.

use super::arch::{self, SimdPath};
use super::line_index;
use super::simd::{Line, Probes};
use crate::engine::bulk::Slots;

/// The blocked filter's lines, with `k` bits per key, set on the chosen SIMD path: slot
/// `(hash * total) >> 64`.
pub(crate) struct Lines {
    k: Probes,
    path: SimdPath,
}

impl Lines {
    /// The lines of a filter with `k` probes per key.
    pub(crate) fn new(k: Probes) -> Self {
        Self::on(arch::simd_path(), k)
    }

    /// [`Self::new`] on `path` (an available one).
    pub(crate) fn on(path: SimdPath, k: Probes) -> Self {
        Lines { k, path }
    }
}

impl Slots for Lines {
    type Slot = Line;
    #[inline(always)]
    fn index(hash: u64, total: usize) -> usize {
        line_index(hash, total)
    }
    /// `(h * n) >> 64 >= f` exactly when `h >= ceil(f * 2^64 / n)`.
    fn first_hash(slot: usize, total: usize) -> u128 {
        ((slot as u128) << 64).div_ceil(total as u128)
    }
    #[inline(always)]
    fn set(&self, slot: &mut Line, hash: u64) {
        arch::set_on(self.path, slot, hash, self.k);
    }
}

#[cfg(test)]
mod tests {
    use super::Lines;
    use crate::engine::bulk::check_hash_range;

    #[test]
    fn hash_range_holds_exactly_the_hashes_of_its_lines() {
        check_hash_range::<Lines>(&[2, 3, 7, 1000, 1 << 20, 3 << 40]);
    }
}
