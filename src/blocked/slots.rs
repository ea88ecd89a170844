//! The blocked filter's side of the engine's bulk-insert seam ([`Slots`]): its 64-byte lines,
//! the line of a hash, and the bits a hash sets in its line on the chosen SIMD path. The
//! engine's scanning tasks and prefetched insert (`engine/bulk.rs`) run on it.

use core::marker::PhantomData;

use crate::engine::arch::{Kernel, Place};
use crate::engine::bulk::Slots;
use crate::engine::mask::{Line, Probes};

/// The blocked filter's lines, with the bits of `k` (its probes and placement `P`) set by path
/// `K`'s kernel: slot `(hash * total) >> 64`. Typed by path and placement, so the engine's
/// loops compiled for one of each branch on neither per key.
pub(crate) struct Lines<K, P> {
    k: Probes,
    kernel: PhantomData<fn() -> (K, P)>,
}

impl<K: Kernel, P: Place> Lines<K, P> {
    /// The lines of a filter with probes `k` (of placement `P`).
    ///
    /// # Safety
    /// The CPU has `K`'s path (`SimdPath::is_available`): [`Slots::set`] runs its kernel.
    pub(crate) unsafe fn new(k: Probes) -> Self {
        Lines {
            k,
            kernel: PhantomData,
        }
    }
}

impl<K: Kernel, P: Place> Slots for Lines<K, P> {
    type Slot = Line;
    #[inline(always)]
    fn set(&self, slot: &mut Line, hash: u64) {
        // SAFETY: `new`'s caller promised that the CPU has `K`'s path.
        unsafe { P::set::<K>(slot, hash, self.k) }
    }
}

#[cfg(test)]
mod tests {
    use super::Lines;
    use crate::engine::arch::{Portable, ShiftedPlace};
    use crate::engine::bulk::check_hash_range;

    #[test]
    fn hash_range_holds_exactly_the_hashes_of_its_lines() {
        check_hash_range::<Lines<Portable, ShiftedPlace<false>>>(&[
            2,
            3,
            7,
            1000,
            1 << 20,
            3 << 40,
        ]);
    }
}
