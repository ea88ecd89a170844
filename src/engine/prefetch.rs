//! The software-prefetch hints and the walk every batched path runs them in.
//!
//! [`prefetch_to`] hints one line to a cache level; [`prefetch_walk`] and [`prefetch_ahead`]
//! walk a batch with each item's line hinted twice before it is used: into L2 far ahead, then
//! into L1 a few items before its use (blocked and cuckoo batched lookups and inserts, and the
//! report's memory probe, which mirrors them). [`prefetch`] hints into L1 at once (the classic
//! filter's groups, the partitioned insert's next range), and [`prefetch_stream`] hints the
//! bulk insert's input as read-once data. One `unsafe` block behind all of them.
//!
//! Why two levels: the far hint, 256 items ahead, goes into L2 (`prefetcht1`) rather than L1
//! (`prefetcht0`), since a hint into L1 holds one of the core's few L1 miss buffers until its
//! line arrives from memory, while a hint into L2 holds only an L2 one, of which there are
//! several times more, so more lines come in at once (`prefetchnta` behaves as `prefetcht0`,
//! `prefetcht2` as `prefetcht1`; the report's memory probe measures the same walk). A batched
//! lookup with only the far hint into L2 then waits on L2 for each line, so its line is also
//! hinted into L1 [`NEAR`] (8) keys before use: close enough that the line is still in L1
//! when used, far enough to cover L2's latency; 16 keys before does as well and 32 worse.
//! Both are measured in `docs/performance.md`, Levers tried.

/// The cache level a hint brings its line to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `prefetcht1` on x86-64: into L2, for lines wanted hundreds of items later.
    L2,
    /// `prefetcht0` on x86-64: into L1, for lines wanted a few items later.
    L1,
}

/// How far ahead the walks hint into L1: lines hinted into L2 earlier come up to L1 this many
/// items before their use (see the module's notes).
pub const NEAR: usize = 8;

/// Hints the processor to start loading the cache line that holds `value` into L1. A no-op on
/// targets other than x86-64.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    hint::<T0, T>(value);
}

/// Hints the processor to start loading the cache line that holds `value` to `level`. A no-op
/// on targets other than x86-64.
#[inline(always)]
pub fn prefetch_to<T>(level: Level, value: &T) {
    match level {
        Level::L2 => hint::<T1, T>(value),
        Level::L1 => hint::<T0, T>(value),
    }
}

/// Hints the lines of one step of a walk (`prefetch_walk`): `to_l2`'s into L2 and `to_l1`'s
/// into L1, `line` giving each item's line. The blocked filter's batched lookups and the
/// report's memory probe share it, so the probe measures exactly their pattern.
#[inline(always)]
pub fn hint_step<'a, T: Copy, U: 'a>(
    to_l2: Option<T>,
    to_l1: Option<T>,
    line: impl Fn(T) -> &'a U,
) {
    if let Some(a) = to_l2 {
        prefetch_to(Level::L2, line(a));
    }
    if let Some(a) = to_l1 {
        prefetch_to(Level::L1, line(a));
    }
}

/// Hints the processor to load the cache line that holds `value` as data read once
/// (`prefetchnta`: on x86-64 the line comes close to the core but is not kept in the outer
/// caches as ordinary data is). A no-op on targets other than x86-64.
#[inline(always)]
pub fn prefetch_stream<T>(value: &T) {
    hint::<NTA, T>(value);
}

/// The locality hints `hint` takes (`_MM_HINT_T0`, `_MM_HINT_T1` and `_MM_HINT_NTA` on x86-64).
#[cfg(target_arch = "x86_64")]
const T0: i32 = core::arch::x86_64::_MM_HINT_T0;
#[cfg(target_arch = "x86_64")]
const T1: i32 = core::arch::x86_64::_MM_HINT_T1;
#[cfg(target_arch = "x86_64")]
const NTA: i32 = core::arch::x86_64::_MM_HINT_NTA;
#[cfg(not(target_arch = "x86_64"))]
const T0: i32 = 0;
#[cfg(not(target_arch = "x86_64"))]
const T1: i32 = 1;
#[cfg(not(target_arch = "x86_64"))]
const NTA: i32 = 2;

/// `_mm_prefetch` with the locality hint `HINT` on `value`'s cache line: the crate's one
/// `unsafe` block for prefetching. A no-op on targets other than x86-64.
#[inline(always)]
fn hint<const HINT: i32, T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is only a hint: it never faults and has no architectural effect,
    // and the pointer comes from a live reference anyway.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<HINT>(value as *const T as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Walks `items` in order with every item's line hinted into L2 `far` items before it is used
/// and into L1 `near` items before (`near` < `far`), all in one call: see `prefetch_walk`.
#[inline(always)]
pub fn prefetch_ahead<T: Copy>(
    items: &[T],
    far: usize,
    near: usize,
    step: impl FnMut(Option<T>, Option<T>, Option<T>),
) {
    prefetch_walk(items, far, near, 0, true, step);
}

/// Walks `items` in order, calling `step(to_l2, to_l1, now)`: hint `to_l2`'s line into L2,
/// hint `to_l1`'s into L1, then use `now` (test or set its bits). Each item comes as `to_l2`
/// `far` items before it comes as `now`, and as `to_l1` `near` items before (a batch shorter
/// than that has its hints first). One closure does all three, so it may hold the data
/// mutably (an insert), and it is called from only three places, so it is inlined whole (with
/// a closure per kind of step, called from seven, a cuckoo lookup's is not, and its batched
/// lookups pay a call per key). A caller may ignore `to_l1` (one level only). For a walk that
/// goes on in a later call: the first `ready` items were hinted by the call before (into L2,
/// and the first `near` of them into L1), and unless `drain`, the last `far` items are hinted
/// but not used, so the next call gets them first, with `ready` = `far`, and the pipeline of
/// hints never runs dry in between. Returns how many items were used (from the front).
#[inline(always)]
pub fn prefetch_walk<T: Copy>(
    items: &[T],
    far: usize,
    near: usize,
    ready: usize,
    drain: bool,
    mut step: impl FnMut(Option<T>, Option<T>, Option<T>),
) -> usize {
    debug_assert!(near < far, "the L1 hint comes after the L2 one");
    let len = items.len();
    let near = near.min(far);
    // The head: L2 hints for the items the call before did not hint, L1 hints likewise.
    let l1_from = ready.min(near);
    for (i, &a) in items.iter().enumerate().take(len.min(far)) {
        let to_l2 = (i >= ready).then_some(a);
        let to_l1 = (i >= l1_from && i < near).then_some(a);
        if to_l2.is_some() || to_l1.is_some() {
            step(to_l2, to_l1, None);
        }
    }
    for w in items.windows(far + 1) {
        step(Some(w[far]), Some(w[near]), Some(w[0]));
    }
    let used = len.saturating_sub(far);
    if !drain {
        return used;
    }
    for (j, &b) in items.iter().enumerate().skip(used) {
        step(None, items.get(j + near).copied(), Some(b));
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item is hinted into L2 once, then into L1 once, then used once, in order, whether
    /// the walk runs in one call or carries its tail across rounds of any size.
    #[test]
    fn a_walk_in_rounds_hints_each_item_to_l2_then_l1_then_uses_it_once_in_order() {
        for (far, near) in [(1, 0), (3, 1), (8, 2), (8, 7), (16, 8)] {
            for len in [0, 1, 2, 7, 8, 9, 30, 100] {
                for round in [far + 1, far + 5, 4 * far + 3, len.max(1)] {
                    let items: Vec<usize> = (0..len).collect();
                    let (mut l2, mut l1, mut used) = (Vec::new(), Vec::new(), Vec::new());
                    let mut step = |to_l2: Option<usize>, to_l1: Option<usize>, now| {
                        l2.extend(to_l2);
                        if let Some(a) = to_l1 {
                            assert!(l2.contains(&a), "{a} into L1 before L2");
                            l1.push(a);
                        }
                        if let Some(b) = now {
                            assert!(l1.contains(&b), "{b} used before its L1 hint");
                            used.push(b);
                        }
                    };
                    // Rounds of `round` new items after the carried ones, as a bulk task runs.
                    let (mut start, mut ready) = (0, 0);
                    while start + ready < len {
                        let end = (start + ready + round).min(len);
                        let drain = end == len;
                        let done =
                            prefetch_walk(&items[start..end], far, near, ready, drain, &mut step);
                        (start, ready) = (start + done, end - start - done);
                    }
                    if ready > 0 {
                        let done =
                            prefetch_walk(&items[start..], far, near, ready, true, &mut step);
                        assert_eq!(done, ready);
                    }
                    let at = format!("far {far} near {near} len {len} round {round}");
                    assert_eq!(l2, items, "{at}");
                    let mut sorted = l1.clone();
                    sorted.sort_unstable();
                    assert_eq!(sorted, items, "{at}");
                    assert_eq!(used, items, "{at}");
                }
            }
        }
        let mut calls = 0;
        prefetch_ahead(&[1, 2, 3], 2, 1, |_, _, _| calls += 1);
        assert_eq!(calls, 5);
    }

    /// In the steady part of a walk, an item's L2 hint comes `far` items before its use and
    /// its L1 hint `near` items before.
    #[test]
    fn the_l1_hint_comes_near_items_before_use() {
        let items: Vec<usize> = (0..50).collect();
        let mut log = Vec::new();
        let mut uses = 0;
        prefetch_ahead(&items, 10, 3, |to_l2, to_l1, now| {
            log.extend(to_l2.map(|a| (a, 2, uses)));
            log.extend(to_l1.map(|a| (a, 1, uses)));
            uses += usize::from(now.is_some());
        });
        for &(item, level, uses_before) in &log {
            if item >= 10 {
                let ahead = if level == 2 { 10 } else { 3 };
                assert_eq!(uses_before, item - ahead, "item {item} into L{level}");
            }
        }
    }
}
