//! The software-prefetch hint every batched path uses (blocked, classic and cuckoo lookups and
//! inserts, and the report's memory probe): the crate's one `unsafe` block for it.

/// Hints the processor to start loading the cache line that holds `value`. A no-op on targets
/// other than x86-64.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is only a hint: it never faults and has no architectural effect,
    // and the pointer comes from a live reference anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(value as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
