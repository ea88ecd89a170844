//! One bucket as a register: the cuckoo filter's SWAR seam, and its alternate index.
//!
//! Everything here works on a bucket's 4 slots held in the low 4f bits of a u64, lane j = bits
//! j*f .. (j+1)*f: reading and writing a bucket in the table's bytes, matching a fingerprint in
//! every slot at once, the vector test of both buckets that every lookup runs, and the moves of
//! an insert (put, take, swap, make room). It owns no filter state: `mod.rs` owns the table and
//! decides which bucket a key goes to.

#[cfg(doc)]
use super::CuckooFilter;
use super::SLOTS_PER_BUCKET;
use crate::hash::reduce;
use wide::{u8x16, u16x8, u32x4, u64x2};

/// Bytes per bucket: 4, 6 or 8.
#[inline(always)]
pub(super) const fn bucket_bytes(f: u32) -> usize {
    (SLOTS_PER_BUCKET * f / 8) as usize
}

/// The bits of one slot.
#[inline(always)]
pub(super) const fn lane_mask(f: u32) -> u64 {
    (1 << f) - 1
}

/// The lowest bit of every slot: multiplying by it broadcasts a fingerprint to all four.
#[inline(always)]
pub(super) const fn lanes_low(f: u32) -> u64 {
    1 | 1 << f | 1 << (2 * f) | 1 << (3 * f)
}

/// The highest bit of every slot.
#[inline(always)]
const fn lanes_high(f: u32) -> u64 {
    lanes_low(f) << (f - 1)
}

/// The fingerprint: the low 32 bits of the hash mapped onto `1 ..= 2^F - 1` by multiply-shift,
/// so it is never 0 (empty) and every non-zero value is equally likely (to 2^-16).
#[inline(always)]
pub(super) fn fingerprint<const F: u32>(hash: u64) -> u64 {
    (((hash & 0xFFFF_FFFF) * lane_mask(F)) >> 32) + 1
}

/// The multiplier that spreads a fingerprint over the buckets for the alternate index: 2^64
/// divided by the golden ratio, made odd (Fibonacci hashing, Knuth TAOCP vol. 3, 6.4), so the
/// distinct fingerprints land on evenly spaced points of `0..2^64` before `reduce` maps them
/// onto the buckets. A full `mix64` here would cost two more multiplies per lookup for no gain
/// in spread: with at most 2^16 distinct fingerprints, `h(fp)` takes at most that many values
/// either way.
const ALT_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// The other bucket of fingerprint `fp` sitting in `bucket`: `(h(fp) - bucket) mod n`, an
/// involution for every `n` (see the module docs).
#[inline(always)]
pub(super) fn alt_bucket(bucket: usize, fp: u64, buckets: usize) -> usize {
    alt_from(alt_hash(fp, buckets), bucket, buckets)
}

/// `h(fp)`, the fingerprint's point on `0..buckets` that the alternate index reflects about.
#[inline(always)]
pub(super) fn alt_hash(fp: u64, buckets: usize) -> usize {
    reduce(fp.wrapping_mul(ALT_MULTIPLIER), buckets)
}

/// `(h - bucket) mod buckets`, for `h` and `bucket` below `buckets`.
#[inline(always)]
pub(super) fn alt_from(h: usize, bucket: usize, buckets: usize) -> usize {
    let d = h.wrapping_sub(bucket);
    if h < bucket {
        d.wrapping_add(buckets)
    } else {
        d
    }
}

/// Reads bucket `b`.
#[inline(always)]
pub(super) fn load<const F: u32>(t: &[u8], b: usize) -> u64 {
    let at = b * bucket_bytes(F);
    match F {
        8 => u64::from(u32::from_le_bytes(read::<4>(t, at))),
        12 => u64::from_le_bytes(read::<8>(t, at)) & ((1 << 48) - 1),
        _ => u64::from_le_bytes(read::<8>(t, at)),
    }
}

#[inline(always)]
fn read<const N: usize>(t: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&t[at..at + N]);
    out
}

/// Writes bucket `b`, touching only its own bytes.
#[inline(always)]
pub(super) fn store<const F: u32>(t: &mut [u8], b: usize, value: u64) {
    let n = bucket_bytes(F);
    let at = b * n;
    t[at..at + n].copy_from_slice(&value.to_le_bytes()[..n]);
}

/// A non-zero value iff some slot of `bucket` equals `fp` (`fp = 0`: some slot is empty); its
/// lowest set bit is the top bit of the first such slot. The classic "has a zero byte" test
/// (Mycroft) on `bucket ^ broadcast(fp)`, on F-bit lanes: a lane above a zero lane can be flagged
/// too (through the borrow), but never one below, so "any" and "first" are exact.
#[inline(always)]
pub(super) fn matches<const F: u32>(bucket: u64, fp: u64) -> u64 {
    let x = bucket ^ fp.wrapping_mul(lanes_low(F));
    x.wrapping_sub(lanes_low(F)) & !x & lanes_high(F)
}

/// Whether bucket `i1` or `i2` holds `fp`: the test of every lookup path.
///
/// Past the cache a one-at-a-time lookup is bound by how many lookups the core keeps in flight,
/// so what counts is how few instructions each one takes, above all those that wait on its two
/// loads. For 8- and 16-bit fingerprints both buckets go side by side into one 128-bit vector,
/// compared lane by lane with the fingerprint in one instruction (lanes past the two buckets are
/// 0, which no fingerprint equals). 12-bit slots do not fall on lane boundaries: both buckets
/// go into the two 64-bit lanes of one vector for the SWAR test ([`matches()`], on both at once).
/// The loads skip the bounds checks (six instructions per lookup). Past the cache, one at a
/// time, this beats two scalar SWAR tests with checked loads, for 8-bit and 12-bit
/// fingerprints alike, since it takes fewer instructions per lookup (measured in
/// `docs/performance.md`, Levers tried); in cache the 12-bit form also avoids the 8-wide
/// gathers LLVM makes of callers' loops of the scalar test, which are slower there.
///
/// # Safety
/// `t` is a filter's table (as [`CuckooFilter::lines_bytes`] gives it) and `i1`, `i2` are
/// buckets of that filter (below its bucket count), as [`CuckooFilter::candidates`] returns
/// them.
#[inline(always)]
pub(super) unsafe fn in_either<const F: u32>(t: &[u8], i1: usize, fp: u64, i2: usize) -> bool {
    // SAFETY: the caller's contract.
    let (a, b) = unsafe { (load_unchecked::<F>(t, i1), load_unchecked::<F>(t, i2)) };
    match F {
        8 => {
            let f = u8x16::splat(fp as u8);
            let a: u8x16 = bytemuck::cast(u32x4::new([a as u32, 0, 0, 0]));
            let b: u8x16 = bytemuck::cast(u32x4::new([b as u32, 0, 0, 0]));
            (a.simd_eq(f).to_bitmask() | b.simd_eq(f).to_bitmask()) != 0
        }
        16 => {
            let both: u16x8 = bytemuck::cast(u64x2::new([a, b]));
            both.simd_eq(u16x8::splat(fp as u16)).any()
        }
        _ => {
            let x = u64x2::new([a, b]) ^ u64x2::splat(fp.wrapping_mul(lanes_low(F)));
            let found = (x - u64x2::splat(lanes_low(F))) & !x & u64x2::splat(lanes_high(F));
            !found.simd_eq(u64x2::ZERO).all()
        }
    }
}

/// [`load`] without the bounds check.
///
/// # Safety
/// `t` is a filter's table and `b` one of its buckets: the table holds every bucket, and for
/// 12-bit fingerprints 2 bytes of padding past the last, so the 4 or 8 bytes read are inside it.
#[inline(always)]
unsafe fn load_unchecked<const F: u32>(t: &[u8], b: usize) -> u64 {
    let at = b * bucket_bytes(F);
    debug_assert!(at + if F == 8 { 4 } else { 8 } <= t.len());
    // SAFETY: by the contract, `at .. at + 4` (8-bit) or `at .. at + 8` (wider) lies inside `t`;
    // unaligned reads of plain bytes are always valid.
    unsafe {
        let p = t.as_ptr().add(at);
        match F {
            8 => u64::from(u32::from_le(p.cast::<u32>().read_unaligned())),
            12 => u64::from_le(p.cast::<u64>().read_unaligned()) & ((1 << 48) - 1),
            _ => u64::from_le(p.cast::<u64>().read_unaligned()),
        }
    }
}

/// The slot whose top bit is the lowest set bit of a non-zero [`matches()`] result.
#[inline(always)]
pub(super) fn first_slot<const F: u32>(found: u64) -> u32 {
    found.trailing_zeros() / F
}

/// Puts `fp` in the first empty slot of bucket `b`; false if it has none.
#[inline(always)]
pub(super) fn put<const F: u32>(t: &mut [u8], b: usize, fp: u64) -> bool {
    let bucket = load::<F>(t, b);
    let empty = matches::<F>(bucket, 0);
    if empty == 0 {
        return false;
    }
    store::<F>(t, b, bucket | fp << (first_slot::<F>(empty) * F));
    true
}

/// Empties the first slot of bucket `b` that holds `fp`; false if none does.
#[inline(always)]
pub(super) fn take<const F: u32>(t: &mut [u8], b: usize, fp: u64) -> bool {
    let bucket = load::<F>(t, b);
    let found = matches::<F>(bucket, fp);
    if found == 0 {
        return false;
    }
    store::<F>(
        t,
        b,
        bucket & !(lane_mask(F) << (first_slot::<F>(found) * F)),
    );
    true
}

/// Puts `fp` in slot `slot` of bucket `b` and returns what was there.
#[inline(always)]
pub(super) fn swap_slot<const F: u32>(t: &mut [u8], b: usize, slot: u32, fp: u64) -> u64 {
    let bucket = load::<F>(t, b);
    let shift = slot * F;
    store::<F>(t, b, bucket & !(lane_mask(F) << shift) | fp << shift);
    (bucket >> shift) & lane_mask(F)
}

/// Makes room for `fp` in the full bucket `b` by moving one of its residents to a free slot of
/// that resident's other bucket; false (and nothing changed) if no resident can move.
#[inline(always)]
pub(super) fn make_room_by_moving_a_resident<const F: u32>(
    t: &mut [u8],
    b: usize,
    fp: u64,
    buckets: usize,
) -> bool {
    let bucket = load::<F>(t, b);
    for slot in 0..SLOTS_PER_BUCKET {
        let resident = (bucket >> (slot * F)) & lane_mask(F);
        let other = alt_bucket(b, resident, buckets);
        // A resident whose buckets coincide finds `b` full and stays.
        if put::<F>(t, other, resident) {
            swap_slot::<F>(t, b, slot, fp);
            return true;
        }
    }
    false
}
