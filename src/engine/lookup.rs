//! The batched lookup, once for every filter built on the engine: the answers or the count of
//! many hashes, each tested in its slot, with the slots of later hashes prefetched past the
//! cache.
//!
//! A filter implements [`Probe`] (the slot of a hash and the test of a hash in its slot) for a
//! kernel of one SIMD path (and, for the blocked filter, one placement), and calls
//! [`contains_each`] or [`count_each`] inside a function compiled for that path, so the test
//! inlines into the loop and nothing is chosen per key. On slots of up to [`CACHED_BYTES`] the
//! loops run plain; past that they walk the hashes with [`prefetch_ahead`]: a slot is hinted
//! into L2 [`AHEAD`] hashes before its test and into L1 [`NEAR`] before, so that many misses
//! are in flight whatever a test costs.

use super::lookahead::{AHEAD, CACHED_BYTES};
use super::prefetch::{NEAR, hint_step, prefetch_ahead};

/// A filter's side of the batched lookup: where a hash's slot lives and whether the hash's key
/// may be in it.
pub(crate) trait Probe {
    /// The unit a hash tests: a 64-byte line, a 32-byte block.
    type Slot;
    /// The slot of `hash` (hinted ahead, then tested).
    fn slot(&self, hash: u64) -> &Self::Slot;
    /// Whether `hash`'s key may be in `slot`, its slot.
    fn test(&self, slot: &Self::Slot, hash: u64) -> bool;
    /// The bytes of all the slots: up to [`CACHED_BYTES`] the loops run plain.
    fn bytes(&self) -> usize;
}

/// `out[i] = ` whether `hashes[i]`'s key may be in `probe`'s filter, for slices of equal
/// length (extra elements of either are left alone).
#[inline(always)]
pub(crate) fn contains_each<P: Probe>(probe: &P, hashes: &[u64], out: &mut [bool]) {
    if probe.bytes() <= CACHED_BYTES {
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = probe.test(probe.slot(h), h);
        }
        return;
    }
    let mut out = out.iter_mut();
    prefetch_ahead(hashes, AHEAD, NEAR, |to_l2, to_l1, now| {
        hint_step(to_l2, to_l1, |h| probe.slot(h));
        // Only a step that uses a hash takes an answer slot (the head's steps only hint).
        if let Some(h) = now
            && let Some(o) = out.next()
        {
            *o = probe.test(probe.slot(h), h);
        }
    });
}

/// How many of `hashes`' keys may be in `probe`'s filter.
#[inline(always)]
pub(crate) fn count_each<P: Probe>(probe: &P, hashes: &[u64]) -> usize {
    if probe.bytes() <= CACHED_BYTES {
        return hashes
            .iter()
            .filter(|&&h| probe.test(probe.slot(h), h))
            .count();
    }
    let mut found = 0;
    prefetch_ahead(hashes, AHEAD, NEAR, |to_l2, to_l1, now| {
        hint_step(to_l2, to_l1, |h| probe.slot(h));
        if let Some(h) = now {
            found += usize::from(probe.test(probe.slot(h), h));
        }
    });
    found
}
