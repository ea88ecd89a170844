//! The bulk insert's tasks, generic over the [`Slots`] seam: the blocked filter's 64-byte lines
//! (`blocked/slots.rs`) and the split-block filter's 32-byte blocks (`sbbf/block.rs`) implement
//! it in their own modules, and this file names neither. Each rayon task owns a disjoint,
//! contiguous run of slots, scans the whole input, picks the hashes of its run (a slot index
//! monotonic in the hash makes a run of slots a range of hashes) and inserts them with the
//! batched inserts' prefetching. No line has two writers and OR is commutative, so the result
//! is bit-identical to inserting the same hashes one by one. [`insert_prefetched`] is also the
//! one-thread batched insert past the cache of the filters that implement the seam.

use crate::engine::line::line_index;
use crate::engine::lookahead::{AHEAD, CACHED_BYTES};
use crate::engine::prefetch::{
    Level, NEAR, hint_step, prefetch_stream, prefetch_to, prefetch_walk,
};

/// A filter's storage as the bulk insert sees it: slots (lines or blocks) of which a hash picks
/// one by an index monotonic in the hash, and the bits a hash sets in its slot.
pub(crate) trait Slots {
    /// One line or block.
    type Slot;
    /// The slot of `hash` among `total`; never smaller for a larger hash. By default the
    /// engine's line of the hash ([`line_index`]), as for every filter of 64-byte lines.
    #[inline(always)]
    fn index(hash: u64, total: usize) -> usize {
        line_index(hash, total)
    }
    /// The least hash whose slot is `slot` or later (2^64 for `slot == total`). By default
    /// that of [`line_index`]: `(h * n) >> 64 >= f` exactly when `h >= ceil(f * 2^64 / n)`.
    fn first_hash(slot: usize, total: usize) -> u128 {
        ((slot as u128) << 64).div_ceil(total as u128)
    }
    /// Sets `hash`'s bits in `slot`, its slot.
    fn set(&self, slot: &mut Self::Slot, hash: u64);
}

/// Hashes a bulk-insert task holds before inserting them (32 KiB on its stack).
const SCAN_BUF: usize = 4096;

/// How far ahead (in groups of 8 hashes, one 64-byte line each) a bulk-insert task hints its
/// input as read-once data (`prefetch_stream`). Each task reads the whole input; streamed in
/// as ordinary data it takes cache room from the lines the task's inserts prefetch. Past the
/// cache the hint speeds the bulk insert (`docs/performance.md`, Levers tried); 128 groups
/// ahead are level with 64, and `prefetcht0` or `prefetcht2` at the same distance gain nothing.
/// Filters of up to [`CACHED_BYTES`] go without it: there the filter's lines stay cached
/// whatever the input does, so the hints cost the tasks more than they spare.
const INPUT_AHEAD: usize = 64;

/// One task of the bulk insert: `lines` are the filter's lines `first..first + lines.len()` of
/// `total`; scans all of `hashes` and inserts those whose line is among them, keeping them in a
/// small buffer (32 at a time, branch-free: [`pick32`]) that it inserts whenever it fills.
/// Past [`CACHED_BYTES`] of filter, where the inserts prefetch, it also hints the input ahead
/// as read-once data (see [`INPUT_AHEAD`]), and each round of inserts hints the input the
/// next scan will read (see [`insert_prefetched`]).
#[inline(always)]
pub(crate) fn insert_task<S: Slots>(
    slots: &S,
    lines: &mut [S::Slot],
    first: usize,
    total: usize,
    hashes: &[u64],
) {
    let stream_input = total * size_of::<S::Slot>() > CACHED_BYTES;
    // The line index is monotonic in the hash, so a run of lines is a range of hashes, and
    // picking a task's hashes takes a subtraction and a compare.
    let (lo, width) = hash_range::<S>(first, lines.len(), total);
    // Room for one more step of 32 past a full buffer.
    let mut buf = [0u64; SCAN_BUF + 32];
    // The front `carried` hashes of `buf` are left from the last round, their lines already
    // prefetched.
    let (mut held, mut carried) = (0, 0);
    // Steps of input scanned since the last round of inserts.
    let mut scanned = 0;
    let (steps, rest) = hashes.as_chunks::<32>();
    for (at, step) in steps.iter().enumerate() {
        if let (true, Some(ahead)) = (stream_input, steps.get(at + INPUT_AHEAD / 4)) {
            ahead.as_chunks::<8>().0.iter().for_each(prefetch_stream);
        }
        if let Some(into) = buf[held..].first_chunk_mut::<32>() {
            held += pick32(step, lo, width, into);
        }
        scanned += 1;
        if held >= SCAN_BUF {
            // The last `AHEAD` hashes stay for the next round, their lines on their way,
            // instead of the round draining its prefetches; past the cache, the round hints
            // as much of the input as this scan read.
            let next = &steps[at + 1..][..scanned.min(steps.len() - at - 1)];
            let upcoming = Some(next.as_flattened().as_chunks::<8>().0);
            let done = if stream_input {
                insert_prefetched::<S, true>(
                    slots,
                    lines,
                    first,
                    total,
                    &buf[..held],
                    carried,
                    upcoming,
                )
            } else {
                insert_prefetched::<S, false>(
                    slots,
                    lines,
                    first,
                    total,
                    &buf[..held],
                    carried,
                    upcoming,
                )
            };
            buf.copy_within(done..held, 0);
            (held, carried, scanned) = (held - done, held - done, 0);
        }
    }
    for &h in rest {
        buf[held] = h;
        held += usize::from(h.wrapping_sub(lo) < width);
    }
    insert_prefetched::<S, false>(slots, lines, first, total, &buf[..held], carried, DRAIN);
}

/// The hashes whose slot (`S::index(h, total)`) lies in `first..first + lines`, as
/// `lo..lo + width` ([`Slots::first_hash`] of both ends). Needs `lines < total` (so the range
/// is narrower than 2^64) and `first + lines <= total`.
fn hash_range<S: Slots>(first: usize, lines: usize, total: usize) -> (u64, u64) {
    let bound = |line: usize| S::first_hash(line, total);
    let (lo, hi) = (bound(first), bound(first + lines));
    (lo as u64, (hi - lo) as u64)
}

/// Inserts `hashes` into `lines`, which hold the filter's lines `first..first + lines.len()` of
/// `total` in all; every hash must fall in that range (the bulk insert's tasks make sure of it).
/// Prefetches [`AHEAD`] keys ahead, as the batched lookups do; `ready` is that of
/// [`prefetch_walk`], so a bulk-insert task carries its last `AHEAD` hashes, lines already
/// prefetched, into its next round. `upcoming` is [`DRAIN`] for a last round (every hash
/// inserted), or else `Some` of the input the task will scan next (groups of 8 hashes, one
/// line each), hinted into L2 one line at a time, spread evenly over the round's inserts,
/// which then leave the last `AHEAD` hashes for the next round. Returns how many of `hashes`
/// it inserted.
///
/// Why a round hints the next scan's input: a task scans its input between two rounds of
/// inserts, where only the carried prefetches are in flight, so without the hint its input
/// misses wait alone, where those of `insert_hashes` overlap its line misses. With the hint,
/// and picking 32 hashes per step ([`pick32`]), a task's scan overlaps its input misses with
/// the inserts' line misses and takes less time per scanned key (`docs/performance.md`, Levers
/// tried).
///
/// `HINT` false leaves the hints out of the loop: the inserts with nothing to hint
/// (`insert_hashes`, a task's last round, the tasks of a filter in cache) count nothing (with
/// the count in it, `insert_hashes` pays a counter and a branch per key for nothing).
#[inline(always)]
pub(crate) fn insert_prefetched<S: Slots, const HINT: bool>(
    slots: &S,
    lines: &mut [S::Slot],
    first: usize,
    total: usize,
    hashes: &[u64],
    ready: usize,
    upcoming: Upcoming,
) -> usize {
    let (drain, upcoming) = match upcoming {
        Some(groups) => (false, groups),
        None => (true, &[][..]),
    };
    let at = |h: u64| S::index(h, total) - first;
    // One hint of input per `every` inserts.
    let every = hashes.len().saturating_sub(AHEAD) / upcoming.len().max(1);
    let (mut upcoming, mut since) = (upcoming.iter(), 0);
    // A filter in cache (the bulk insert's tasks there) takes one hint per key, into L1: there
    // the line needs no early L2 hint, and a second hint per key only slows the tasks. Past
    // the cache, the two-level hint of the batched lookups (`hint_step`).
    let in_cache = total * size_of::<S::Slot>() <= CACHED_BYTES;
    prefetch_walk(hashes, AHEAD, NEAR, ready, drain, |to_l2, to_l1, now| {
        if in_cache {
            if let Some(h) = to_l2 {
                prefetch_to(Level::L1, &lines[at(h)]);
            }
        } else {
            hint_step(to_l2, to_l1, |h| &lines[at(h)]);
        }
        if let Some(h) = now {
            slots.set(&mut lines[at(h)], h);
            if HINT {
                since += 1;
                if since >= every {
                    since = 0;
                    if let Some(group) = upcoming.next() {
                        prefetch_to(Level::L2, group);
                    }
                }
            }
        }
    })
}

/// What a round of [`insert_prefetched`] does at its end: `Some(groups)` leaves its last
/// [`AHEAD`] hashes for the next round and hints `groups` of input meanwhile; [`DRAIN`]
/// inserts every hash.
pub(crate) type Upcoming<'a> = Option<&'a [[u64; 8]]>;

/// The last round of [`insert_prefetched`]: every hash inserted.
pub(crate) const DRAIN: Upcoming<'static> = None;

/// [`pick8`] four groups at a time: writes the hashes of `step` that lie in `lo..lo + width`
/// to the front of `into`, in order, and returns how many. Four groups per step take less
/// loop overhead per hash than one; see [`insert_prefetched`] for what that gives the bulk
/// insert.
#[inline(always)]
fn pick32(step: &[u64; 32], lo: u64, width: u64, into: &mut [u64; 32]) -> usize {
    let mut picked = [[0u64; 8]; 4];
    let mut counts = [0usize; 4];
    let (groups, _) = step.as_chunks::<8>();
    for ((group, to), count) in groups.iter().zip(&mut picked).zip(&mut counts) {
        *count = pick8(group, lo, width, to);
    }
    let mut held = 0;
    for (group, count) in picked.iter().zip(counts) {
        // `held` is at most 24 here, so eight slots are always left.
        if let Some(to) = into[held..].first_chunk_mut::<8>() {
            *to = *group;
        }
        held += count;
    }
    held
}

/// Writes the hashes of `group` that lie in `lo..lo + width` to the front of `into`, in
/// order, and returns how many; the rest of `into` is left with any values. With AVX-512 one
/// compare and one compress pick all eight, which lets the bulk insert on 2 threads of a
/// filter in cache scale far better than the scalar pick (`docs/performance.md`, Levers
/// tried); past the cache, where the threads wait on memory, it makes no measurable
/// difference.
#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
#[inline(always)]
fn pick8(group: &[u64; 8], lo: u64, width: u64, into: &mut [u64; 8]) -> usize {
    use core::arch::x86_64::{
        __m512i, _mm512_cmplt_epu64_mask, _mm512_maskz_compress_epi64, _mm512_set1_epi64,
        _mm512_sub_epi64,
    };
    let v: __m512i = bytemuck::cast(*group);
    // SAFETY: these intrinsics need AVX-512F, and this function is compiled only when the
    // build enables it (`cfg(target_feature = "avx512f")`), so every CPU the binary may run
    // on has it. They take and return values only (no pointers).
    let (keep, packed) = unsafe {
        let offset = _mm512_sub_epi64(v, _mm512_set1_epi64(lo as i64));
        let keep = _mm512_cmplt_epu64_mask(offset, _mm512_set1_epi64(width as i64));
        (keep, _mm512_maskz_compress_epi64(keep, v))
    };
    *into = bytemuck::cast(packed);
    keep.count_ones() as usize
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
use pick8_scalar as pick8;

/// [`pick8`] one hash at a time, branch-free: the path of builds without AVX-512, and the
/// reference the AVX-512 path is tested against.
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "avx512f"),
    allow(dead_code)
)]
fn pick8_scalar(group: &[u64; 8], lo: u64, width: u64, into: &mut [u64; 8]) -> usize {
    let mut held = 0;
    for &h in group {
        into[held & 7] = h;
        held += usize::from(h.wrapping_sub(lo) < width);
    }
    held
}

/// Checks [`hash_range`] for `S` against [`Slots::index`]: for each of `totals`, and runs of
/// slots at both ends and in the middle, a hash lies in the range exactly when its slot lies in
/// the run. Each filter's seam implementation runs it on its own slots.
#[cfg(test)]
pub(crate) fn check_hash_range<S: Slots>(totals: &[usize]) {
    use crate::hash::mix64;
    for &total in totals {
        for (first, lines) in [(0, 1), (1, 1), (0, total - 1), (total / 3, total / 3 + 1)] {
            let (lo, width) = hash_range::<S>(first, lines, total);
            let inside = |h: u64| h.wrapping_sub(lo) < width;
            let probes = (0..2000u64).map(mix64).chain([
                0,
                u64::MAX,
                lo,
                lo.wrapping_sub(1),
                lo.wrapping_add(width),
                lo.wrapping_add(width).wrapping_sub(1),
            ]);
            for h in probes {
                let slot = S::index(h, total);
                assert_eq!(
                    inside(h),
                    (first..first + lines).contains(&slot),
                    "total {total} first {first} lines {lines} h {h:#x}"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    #[test]
    fn pick8_keeps_exactly_the_hashes_in_range_in_order() {
        let ranges = [
            (0, 0),
            (0, u64::MAX),
            (1 << 63, 1 << 62),
            (u64::MAX - 5, 100),
            (7, 1),
        ];
        for (lo, width) in ranges {
            for g in 0..2000u64 {
                let mut group: [u64; 8] = core::array::from_fn(|i| mix64(g * 8 + i as u64));
                // Hashes at and around both ends of the range too.
                group[g as usize % 8] = lo.wrapping_add(width);
                group[(g as usize + 3) % 8] = lo;
                group[(g as usize + 5) % 8] = lo.wrapping_sub(1);
                let want: Vec<u64> = group
                    .iter()
                    .copied()
                    .filter(|h| h.wrapping_sub(lo) < width)
                    .collect();
                let (mut fast, mut plain) = ([0u64; 8], [0u64; 8]);
                let n = pick8(&group, lo, width, &mut fast);
                let m = pick8_scalar(&group, lo, width, &mut plain);
                assert_eq!(&fast[..n], &want[..], "lo {lo:#x} width {width:#x}");
                assert_eq!(&plain[..m], &want[..], "lo {lo:#x} width {width:#x}");
            }
        }
    }

    #[test]
    fn pick32_keeps_exactly_the_hashes_in_range_in_order() {
        for (lo, width) in [
            (0, 0),
            (0, u64::MAX),
            (1 << 63, 1 << 62),
            (u64::MAX - 5, 100),
        ] {
            for s in 0..500u64 {
                let mut step: [u64; 32] = core::array::from_fn(|i| mix64(s * 32 + i as u64));
                // Runs of kept and dropped hashes, so that some groups keep all or none.
                for (i, h) in step.iter_mut().enumerate().take(s as usize % 33) {
                    *h = lo.wrapping_add(i as u64 % width.max(1));
                }
                let want: Vec<u64> = step
                    .iter()
                    .copied()
                    .filter(|h| h.wrapping_sub(lo) < width)
                    .collect();
                let mut got = [0u64; 32];
                let n = pick32(&step, lo, width, &mut got);
                assert_eq!(&got[..n], &want[..], "lo {lo:#x} width {width:#x}");
            }
        }
    }
}
