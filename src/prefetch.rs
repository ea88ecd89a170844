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

/// Walks `items` in order with every item's cache line hinted `distance` items before it is
/// used: `step(Some(a), None)` for the first `distance` items (prefetch `a`), then
/// `step(Some(a), Some(b))` (prefetch `a`, use `b`, `distance` places behind it), then
/// `step(None, Some(b))` for the last `distance`. One closure does both, so it may hold the
/// data mutably (an insert). The batched lookups and inserts of the blocked filter and the
/// report's memory probe share this walk, so the probe measures exactly their access pattern.
#[inline(always)]
pub fn prefetch_ahead<T: Copy>(
    items: &[T],
    distance: usize,
    mut step: impl FnMut(Option<T>, Option<T>),
) {
    let head = items.len().min(distance);
    items[..head].iter().for_each(|&a| step(Some(a), None));
    for w in items.windows(distance + 1) {
        step(Some(w[distance]), Some(w[0]));
    }
    let tail = &items[items.len().saturating_sub(distance)..];
    tail.iter().for_each(|&b| step(None, Some(b)));
}
