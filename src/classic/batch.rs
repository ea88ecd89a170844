//! The classic filter's batched paths: lookups that prefetch the first probes of a group of
//! keys before testing any, inserts that prefetch every probe of a few keys, and the rayon
//! bulk insert, whose threads OR bits into the shared atomic words. The bits are those of the
//! scalar paths in `mod.rs`, which these call or mirror.

use core::sync::atomic::Ordering::Relaxed;

use crate::par::*;

use super::{ClassicBloom, locate};
use crate::engine::prefetch::prefetch;
use crate::error::Result;
use crate::hash::{DoubleHash, reduce};

/// Keys whose first probe words are computed and prefetched together before any is tested in a
/// batched lookup, and how many probes of each are prefetched. A key that is absent stops at its
/// first zero bit, on average after about two probes at the optimal k (half the bits are set),
/// so the first two cover most of its misses. Two probes of 16 keys favour absent keys, which
/// most lookups in a storage engine's filter are: one probe leaves an absent key's second miss
/// exposed, and every probe of fewer keys, which suits present keys, overlaps the misses of
/// fewer absent ones (measured in `docs/performance.md`, Levers tried).
const GROUP: usize = 16;
/// Probes per key whose words a batched lookup prefetches (see [`GROUP`]).
const LOOKUP_PREFETCH_PROBES: usize = 2;

/// How many probe words a batched insert prefetches at once (keys per group times k). Every
/// probe of an insert is touched, so the group shrinks as k grows: 9 keys at k = 7. 64 words in
/// flight measured faster than 32 and than 128 at k = 7, past the cache; fewer overlap fewer
/// misses, and more add hints without adding misses in flight.
const INSERT_PREFETCHES: usize = 64;

/// Below this many hashes the bulk insert runs on the calling thread: spawning would cost more
/// than the threads win.
const PAR_MIN_HASHES: usize = 1 << 14;

/// Below this many words (32 MiB, the size of a large L3 cache) the bulk insert runs on the
/// calling thread: a filter the caches hold is written faster by one core with plain stores
/// than by several with locked ORs that pass its cache lines back and forth; past the cache
/// several threads keep more misses in flight, which outweighs the locked ORs (measured in
/// `docs/performance.md`, Levers tried).
const PAR_MIN_WORDS: usize = 1 << 22;

/// Hashes per rayon task in the bulk insert: large enough to amortise the task, small enough to
/// balance the load.
const PAR_CHUNK: usize = 1 << 12;

impl ClassicBloom {
    /// Looks up many pre-hashed keys at once: `out[i] = self.contains_hash(hashes[i])`.
    /// Faster than a loop over [`contains_hash`](Self::contains_hash) on filters larger than the
    /// cache: the words of each key's first two probes are prefetched for a group of keys before
    /// any is tested, so their misses overlap (an absent key usually stops after one or two).
    /// An error (and nothing written) when the two slices differ in length.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        crate::error::check_same_len(hashes.len(), out.len())?;
        let (m, k) = (self.num_bits, self.hashes as usize);
        for (hs, os) in hashes.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            for &h in hs {
                for probe in DoubleHash::new(h).take(LOOKUP_PREFETCH_PROBES.min(k)) {
                    prefetch(&self.words[locate(reduce(probe, m)).0]);
                }
            }
            for (o, &h) in os.iter_mut().zip(hs) {
                *o = self.contains_hash(h);
            }
        }
        Ok(())
    }

    crate::filter::keyed_batch!(unit);

    /// Inserts many pre-hashed keys on this thread, prefetching all the words of a few keys
    /// before setting their bits. Bit-identical to a loop over
    /// [`insert_hash`](Self::insert_hash).
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        let (m, k) = (self.num_bits, self.hashes as usize);
        for hs in hashes.chunks(insert_group(k)) {
            for &h in hs {
                for probe in DoubleHash::new(h).take(k) {
                    prefetch(&self.words[locate(reduce(probe, m)).0]);
                }
            }
            for &h in hs {
                self.insert_hash(h);
            }
        }
    }

    /// Inserts many pre-hashed keys with all of rayon's threads, which OR bits into the shared
    /// words atomically. Bit-identical to [`insert_hashes`](Self::insert_hashes), since OR is
    /// commutative and idempotent. Small inputs and small filters run on the calling thread.
    pub fn par_insert_hashes(&mut self, hashes: &[u64]) {
        if crate::par::current_num_threads() <= 1
            || hashes.len() < PAR_MIN_HASHES
            || self.words.len() < PAR_MIN_WORDS
        {
            self.insert_hashes(hashes);
            return;
        }
        let (words, m, k) = (&self.words[..], self.num_bits, self.hashes as usize);
        hashes.par_chunks(PAR_CHUNK).for_each(|chunk| {
            for hs in chunk.chunks(insert_group(k)) {
                for &h in hs {
                    for probe in DoubleHash::new(h).take(k) {
                        prefetch(&words[locate(reduce(probe, m)).0]);
                    }
                }
                for &h in hs {
                    for probe in DoubleHash::new(h).take(k) {
                        let (word, bit) = locate(reduce(probe, m));
                        let word = &words[word];
                        // A plain load first: as the filter fills, more and more bits are already
                        // set (half, at the optimal k), and skipping their locked OR saves the
                        // instruction and keeps the cache line shared instead of pulling it
                        // exclusive into this core.
                        if word.load(Relaxed) & bit == 0 {
                            word.fetch_or(bit, Relaxed);
                        }
                    }
                }
            }
        });
        // rayon's join at the end of `for_each` orders every thread's writes before this
        // function returns, so `Relaxed` is enough.
    }
}

/// Keys per prefetch group in the inserts for `k` probes each.
#[inline]
pub(super) fn insert_group(k: usize) -> usize {
    (INSERT_PREFETCHES / k.max(1)).max(1)
}
