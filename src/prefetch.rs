//! The software-prefetch hints: [`prefetch`], which every batched path uses (blocked, classic
//! and cuckoo lookups and inserts, and the report's memory probe), and [`prefetch_stream`],
//! for the blocked bulk insert's scan of its input; one `unsafe` block behind both.

/// Hints the processor to start loading the cache line that holds `value`. A no-op on targets
/// other than x86-64.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    hint::<T0, T>(value);
}

/// Hints the processor to load the cache line that holds `value` as data read once
/// (`prefetchnta`: on x86-64 the line comes close to the core but is not kept in the outer
/// caches as ordinary data is). A no-op on targets other than x86-64.
#[inline(always)]
pub fn prefetch_stream<T>(value: &T) {
    hint::<NTA, T>(value);
}

/// The locality hints `hint` takes (`_MM_HINT_T0` and `_MM_HINT_NTA` on x86-64).
#[cfg(target_arch = "x86_64")]
const T0: i32 = std::arch::x86_64::_MM_HINT_T0;
#[cfg(target_arch = "x86_64")]
const NTA: i32 = std::arch::x86_64::_MM_HINT_NTA;
#[cfg(not(target_arch = "x86_64"))]
const T0: i32 = 0;
#[cfg(not(target_arch = "x86_64"))]
const NTA: i32 = 0;

/// `_mm_prefetch` with the locality hint `HINT` on `value`'s cache line: the crate's one
/// `unsafe` block for prefetching. A no-op on targets other than x86-64.
#[inline(always)]
fn hint<const HINT: i32, T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is only a hint: it never faults and has no architectural effect,
    // and the pointer comes from a live reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<HINT>(value as *const T as *const i8)
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
    step: impl FnMut(Option<T>, Option<T>),
) {
    prefetch_walk(items, distance, 0, true, step);
}

/// [`prefetch_ahead`] for a walk that goes on in a later call: the first `ready` items were
/// hinted by the call before (no `step(Some(a), None)` for them), and unless `drain`, the last
/// `distance` items are hinted but not used, so the next call gets them first, with `ready` =
/// `distance`, and the pipeline of hints never runs dry in between. Returns how many items
/// were used (from the front).
#[inline(always)]
pub fn prefetch_walk<T: Copy>(
    items: &[T],
    distance: usize,
    ready: usize,
    drain: bool,
    mut step: impl FnMut(Option<T>, Option<T>),
) -> usize {
    let head = items.len().min(distance);
    for &a in items.get(ready..head).unwrap_or_default() {
        step(Some(a), None);
    }
    for w in items.windows(distance + 1) {
        step(Some(w[distance]), Some(w[0]));
    }
    if !drain {
        return items.len().saturating_sub(distance);
    }
    let tail = &items[items.len().saturating_sub(distance)..];
    tail.iter().for_each(|&b| step(None, Some(b)));
    items.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item is hinted once, used once, in order, and hinted before it is used, whether
    /// the walk runs in one call or carries its tail across rounds of any size.
    #[test]
    fn a_walk_in_rounds_hints_and_uses_each_item_once_in_order() {
        for distance in [1, 3, 8] {
            for len in [0, 1, 2, 7, 8, 9, 30, 100] {
                for round in [distance + 1, distance + 5, 4 * distance + 3, len.max(1)] {
                    let items: Vec<usize> = (0..len).collect();
                    let (mut hinted, mut used) = (Vec::new(), Vec::new());
                    let mut step = |a: Option<usize>, b: Option<usize>| {
                        hinted.extend(a);
                        if let Some(b) = b {
                            assert!(hinted.contains(&b), "{b} used before its hint");
                            used.push(b);
                        }
                    };
                    // Rounds of `round` new items after the carried ones, as a bulk task runs.
                    let (mut start, mut ready) = (0, 0);
                    while start + ready < len {
                        let end = (start + ready + round).min(len);
                        let drain = end == len;
                        let done =
                            prefetch_walk(&items[start..end], distance, ready, drain, &mut step);
                        (start, ready) = (start + done, end - start - done);
                    }
                    if ready > 0 {
                        let done = prefetch_walk(&items[start..], distance, ready, true, &mut step);
                        assert_eq!(done, ready);
                    }
                    assert_eq!(hinted, items, "d {distance} len {len} round {round}");
                    assert_eq!(used, items, "d {distance} len {len} round {round}");
                }
            }
        }
        let mut calls = 0;
        prefetch_ahead(&[1, 2, 3], 2, |_, _| calls += 1);
        assert_eq!(calls, 5);
    }
}
