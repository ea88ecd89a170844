//! The classic scattered Bloom filter: the reference layout the blocked engine is measured
//! against.
//!
//! This module owns [`ClassicBloom`], its builder, and all of its paths (scalar, batched with
//! prefetch, rayon bulk insert). It does not own key hashing ([`crate::hash`]) or the FPR
//! formulas ([`crate::model`]).
//!
//! ## Layout
//! `m` bits in one array of 64-bit words: bit `b` is bit `b % 64` of word `b / 64`. `m` is any
//! number from 1 up, not rounded to a whole word or a power of two (the bits past `m` in the last
//! word stay zero), so a filter sized for `c` bits per key has exactly `c` bits per key. A key sets
//! `k` bits (1..=64) anywhere in the array, so a lookup of a present key in a filter larger than
//! the cache costs up to `k` cache misses; removing that cost is the point of
//! [`BlockedBloom`](crate::BlockedBloom). A lookup of an absent key stops at its first zero bit
//! (about two probes at the optimal `k`).
//!
//! ## Probe positions
//! One 64-bit hash per key. Its `k` probe values come from enhanced double hashing
//! ([`DoubleHash`]): `h1 + i·h2 + (i³ − i)/6` for `i = 0..k` (mod 2^64), with `h1` the hash and
//! `h2` its two 32-bit halves swapped and made odd ([`DoubleHash::second`]). Kirsch and
//! Mitzenmacher, "Less hashing, same performance: building a better Bloom filter" (2006), prove that two hash values give the FPR of `k` independent ones
//! as `m` grows; the cubic term is that of Dillinger and Manolios, "Bloom filters in
//! probabilistic verification" (2004). Each probe value is mapped onto `0..m` with [`reduce`],
//! multiply-shift on its high bits (`(p · m) >> 64`): no division on the hot path and any `m`.
//! The cubic term is meant for probes reduced modulo `m`, where it keeps a second hash that is
//! a multiple of `m` from putting every probe on the same bit; under `reduce` it is all but
//! inert: at most (63³ − 63)/6 = 41,664 against 2^64, it moves a position with probability
//! below 41,664 · m / 2^64 (2.3e-9 per probe at m = 10^9). It stays because it is part of
//! which bits a key sets (the format's hash scheme 2), and costs nothing where the probes are
//! computed directly (the inserts into filters of up to 8 MiB).
//!
//! ## Speed of the scalar paths
//! `insert_hash` and `contains_hash` are level with or ahead of `fastbloom`'s pre-hashed path
//! (same probe count, same bits per key) in `linebloom report --items 1000000,100000000
//! --filters classic,fastbloom --fpr-bits 10 --fpr-items 1000000 --fpr-probes 1000000
//! --threads 1`. Five choices get them there, each kept because that command shows it pays:
//! - The probe loop is written out instead of `DoubleHash::take(k).all(..)`, whose early exit
//!   compiles to a three-state flag with `setae`/`cmove` per probe; the first probe is tested
//!   before `h2` is computed; lookups skip the bounds check. Lookups of present keys run about
//!   1.5x faster for it. A lookup of a big filter runs at the memory's pace only if the
//!   processor can look many keys ahead, so every instruction per probe counts there too.
//! - `h2` swaps the hash's halves instead of remixing it with `mix64` (two dependent
//!   multiplies before every probe after the first): about 1.15x on every path. The FPR is
//!   the same either way (within ±2 % of the model; `tests/classic.rs` checks it), and the
//!   swap is part of which bits a key sets (hash scheme 2).
//! - The probe count is a literal for k = 1..=16 (`with_fixed_hashes!`), so the loops unroll
//!   completely; otherwise LLVM unrolls them by four with a remainder loop, and inserts run
//!   about 1.1x slower.
//! - Bounds checks stay on the chained inserts and go from lookups and the direct inserts (see
//!   `word`, `words_mut` and `words_mut_unchecked`).
//! - Inserts into filters of up to 8 MiB compute each probe from the hash directly instead of
//!   from the probe before it, about 1.07x faster at 1.19 MiB; the chain stays past 8 MiB,
//!   where it is faster (see `DIRECT_PROBES_MAX_WORDS`).
//!
//! ## Model
//! After `n` keys a bit is still zero with probability `(1 − 1/m)^{kn} ≈ e^{−k/c}`, `c = m/n`;
//! a key never inserted finds its `k` bits set with probability `(1 − e^{−k/c})^k`
//! ([`model::classic_fpr`], Bloom 1970). It is smallest at `k = c ln 2`, where
//! `c = −ln p / (ln 2)²` bits per key reach an FPR of `p` ([`model::classic_bits_per_key`]).
//! `tests/classic.rs` checks the measured FPR against the model over `c` in 2..32 and `k` in
//! 1..24.
//!
//! ## Concurrency
//! The words are [`AtomicU64`] so that [`ClassicBloom::par_insert_hashes`] can let rayon's
//! threads OR bits into shared words: a key's `k` bits are scattered, so the input cannot be
//! partitioned by word range as the blocked engine's is. Paths that hold `&mut self` use
//! `get_mut` (plain loads and stores), and lookups use `Relaxed` loads, which are plain loads on
//! x86-64 and AArch64, so the sequential paths run as fast as over `u64`.
//!
//! ```
//! use linebloom::ClassicBloom;
//!
//! let mut filter = ClassicBloom::with_fpr(10_000, 0.01)?;
//! for i in 0..10_000u64 {
//!     filter.insert(&i);
//! }
//! assert!((0..10_000u64).all(|i| filter.contains(&i)));
//! // 9.59 bits and 7 probes per key: about 1 % of keys never inserted are false positives.
//! assert_eq!(filter.hashes(), 7);
//! let false_positives = (10_000..110_000u64).filter(|i| filter.contains(i)).count();
//! assert!(false_positives < 1_500);
//! # Ok::<(), linebloom::Error>(())
//! ```

use crate::prefetch::prefetch;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::error::{Error, Result, check_bits_per_key, check_items, units_for};
use crate::filter::{Filter, FilterKind, Sizing};
use crate::hash::{DEFAULT_SEED, DoubleHash, Key, reduce};
use crate::model::{self, CLASSIC_MAX_HASHES};

/// Evaluates `$body` with `$k` bound to the filter's number of probes `$hashes` as a literal
/// for the common counts (1..=16, the optimum from 1.5 up to 23 bits per key), and as a
/// variable beyond: the probe loops of the `#[inline(always)]` functions it calls are then
/// unrolled completely, with no loop counter, exit branch or remainder loop. The price is code
/// size at each call site of `insert_hash`/`contains_hash` (a jump table and 17 short loops); an
/// `#[inline]` version is not inlined into callers' loops and costs a call per key (misses
/// about 1.25x slower at 1 M keys). Against only k = 7 as a literal, the jump table costs up
/// to 5 % at k = 7, which buys the same unrolling for every common k (`linebloom report
/// --items 1000000 --filters classic --threads 1`).
macro_rules! with_fixed_hashes {
    ($hashes:expr, |$k:ident| $body:expr) => {
        with_fixed_hashes!(@arms $hashes, $k, $body; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
    };
    (@arms $hashes:expr, $k:ident, $body:expr; $($fixed:literal)*) => {
        match $hashes {
            $($fixed => {
                let $k: u32 = $fixed;
                $body
            })*
            $k => $body,
        }
    };
}

/// Bits in one storage word.
const WORD_BITS: u64 = 64;

/// Keys whose first probe words are computed and prefetched together before any is tested in a
/// batched lookup, and how many probes of each are prefetched. A key that is absent stops at its
/// first zero bit, on average after about two probes at the optimal k (half the bits are set),
/// so the first two cover most of its misses. On a filter of about 128 MiB at k = 7, two probes
/// of 16 keys make lookups of absent keys about 1.55x faster than one key at a time, ahead of
/// one probe of 16 keys (1.4x) and all seven probes of 8 keys (1.2x, which is best for present
/// keys); lookups in a storage engine's filter are mostly of absent keys (`linebloom report
/// --items 100000000 --filters classic --threads 1`).
const GROUP: usize = 16;
/// Probes per key whose words a batched lookup prefetches (see [`GROUP`]).
const LOOKUP_PREFETCH_PROBES: usize = 2;

/// How many probe words a batched insert prefetches at once (keys per group times k). Every
/// probe of an insert is touched, so the group shrinks as k grows: 9 keys at k = 7. Measured as
/// for [`GROUP`] (inserts, k = 7): 64 words in flight are about 1.9x faster than none, ahead
/// of 32 (1.4x) and 128 (1.75x).
const INSERT_PREFETCHES: usize = 64;

/// Below this many hashes the bulk insert runs on the calling thread: spawning would cost more
/// than the threads win.
const PAR_MIN_HASHES: usize = 1 << 14;

/// Below this many words (32 MiB, the size of a large L3 cache) the bulk insert runs on the
/// calling thread: a filter the caches hold is written faster by one core with plain stores
/// than by several with locked ORs that pass its cache lines back and forth. 2 threads against
/// 1: 0.45x at 1 MiB, 0.87x at 16 MiB, 1.32x at 256 MiB (`linebloom report --filters classic
/// --threads 1,2`).
const PAR_MIN_WORDS: usize = 1 << 22;

/// Hashes per rayon task in the bulk insert: large enough to amortise the task, small enough to
/// balance the load.
const PAR_CHUNK: usize = 1 << 12;

/// Up to this many words (8 MiB) the inserts compute each probe from the hash directly
/// ([`probe`]); past it they chain them ([`DoubleHash::step`]), each from the one before. Same
/// bits either way. With the words in cache a probe's store is quick and the chain of two-cycle
/// additions (probe `i` waits on `i` of them) held back one key's accesses, so the direct form
/// is faster there; past the cache each probe waits on memory, and the chain's fewer
/// instructions let the processor keep more keys in flight. One-by-one inserts at k = 7 and 10
/// bits/key, direct against chained: about 1.07x faster at 1.19 MiB and 1.2x at 4 MiB, about
/// 1.05x slower at 119 MiB (`linebloom report --items 1000000,3355443,100000000 --filters
/// classic --threads 1`). Lookups keep the chain at every size: the direct form makes them
/// about 5 % slower at 1.19 MiB, since a miss usually stops after a probe or two.
const DIRECT_PROBES_MAX_WORDS: usize = 1 << 20;

/// A classic Bloom filter: `m` bits in one array, `k` bits anywhere in it per key.
///
/// ```
/// use linebloom::ClassicBloom;
///
/// let mut filter = ClassicBloom::with_bits_per_key(1_000, 10.0)?;
/// filter.insert("apple");
/// filter.insert(&42u64);
/// assert!(filter.contains("apple"));
/// assert!(filter.contains(&42u64));
/// assert_eq!((filter.num_bits(), filter.hashes()), (10_000, 7));
/// # Ok::<(), linebloom::Error>(())
/// ```
pub struct ClassicBloom {
    /// `num_bits.div_ceil(64)` words; the bits past `num_bits` are always zero.
    words: Vec<AtomicU64>,
    /// `m`, at least 1. A `usize` because [`reduce`] maps onto `0..usize`; the constructors
    /// reject sizes that do not fit.
    num_bits: usize,
    hashes: u32,
    seed: u64,
}

/// Builds a [`ClassicBloom`] from an expected item count and a size (a target FPR or a number of
/// bits per key), optionally fixing the number of probes and the hash seed.
///
/// ```
/// use linebloom::ClassicBloom;
///
/// let filter = ClassicBloom::builder(1_000_000).bits_per_key(12.0).hashes(6).seed(7).build()?;
/// assert_eq!((filter.num_bits(), filter.hashes(), filter.seed()), (12_000_000, 6, 7));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClassicBloomBuilder {
    items: usize,
    size: Sizing,
    hashes: Option<u32>,
    seed: u64,
}

impl ClassicBloomBuilder {
    /// Size the filter for this false-positive rate (the default is 1 %).
    pub fn fpr(mut self, fpr: f64) -> Self {
        self.size = Sizing::Fpr(fpr);
        self
    }

    /// Size the filter at this many bits per expected item.
    pub fn bits_per_key(mut self, bits_per_key: f64) -> Self {
        self.size = Sizing::BitsPerKey(bits_per_key);
        self
    }

    /// Size the filter by either measure (what [`fpr`](Self::fpr) and
    /// [`bits_per_key`](Self::bits_per_key) do).
    pub fn sizing(mut self, sizing: Sizing) -> Self {
        self.size = sizing;
        self
    }

    /// Fix the number of probes per key (1..=64) instead of the model's optimum.
    pub fn hashes(mut self, hashes: u32) -> Self {
        self.hashes = Some(hashes);
        self
    }

    /// Use this hash seed (default [`DEFAULT_SEED`]).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Builds the empty filter, or says which parameter is out of range.
    pub fn build(self) -> Result<ClassicBloom> {
        let items = self.items as u64;
        check_items(items)?;
        let bits_per_key = match self.size {
            Sizing::Fpr(p) => model::classic_bits_per_key(p)?,
            Sizing::BitsPerKey(b) => b,
        };
        check_bits_per_key(bits_per_key)?;
        // The shared check for sizes that overflow or cannot be addressed; the filter itself is
        // sized to the bit, not to whole words.
        units_for(items, bits_per_key, WORD_BITS)?;
        // At least 1, since items >= 1 and bits_per_key >= 1, and no more bits than the words
        // `units_for` counted hold (it divides the same product by 64, which is exact).
        let num_bits = (items as f64 * bits_per_key).ceil() as u64;
        let hashes = self
            .hashes
            .unwrap_or_else(|| model::classic_optimal_hashes(bits_per_key));
        check_hashes(hashes)?;
        ClassicBloom::allocate(num_bits, hashes, self.seed).ok_or(Error::TooLarge {
            items,
            bits_per_key,
        })
    }
}

impl ClassicBloom {
    /// A filter for `items` keys with a false-positive rate of about `fpr`: `−ln p / (ln 2)²`
    /// bits and the optimal number of probes per key.
    pub fn with_fpr(items: usize, fpr: f64) -> Result<Self> {
        Self::builder(items).fpr(fpr).build()
    }

    /// A filter for `items` keys at `bits_per_key` bits each, with the optimal number of probes.
    pub fn with_bits_per_key(items: usize, bits_per_key: f64) -> Result<Self> {
        Self::builder(items).bits_per_key(bits_per_key).build()
    }

    /// A builder for `items` expected keys (1 % FPR unless told otherwise).
    pub fn builder(items: usize) -> ClassicBloomBuilder {
        ClassicBloomBuilder {
            items,
            size: Sizing::Fpr(0.01),
            hashes: None,
            seed: DEFAULT_SEED,
        }
    }

    /// An empty filter of exactly `num_bits` bits (any number from 1 up) and `hashes` probes per
    /// key (1..=64).
    pub fn with_bits(num_bits: u64, hashes: u32, seed: u64) -> Result<Self> {
        check_hashes(hashes)?;
        if num_bits == 0 {
            return Err(Error::InvalidParameter {
                name: "num_bits",
                value: "0".into(),
                allowed: "at least 1",
            });
        }
        Self::allocate(num_bits, hashes, seed).ok_or_else(|| Error::InvalidParameter {
            name: "num_bits",
            value: num_bits.to_string(),
            allowed: "a number of bits that fits in memory",
        })
    }

    /// Rebuilds a filter from its raw words (as [`words`](Self::words) returns them) and
    /// parameters, checking that they agree: one word per 64 bits and no bit set past
    /// `num_bits`. Deserialisation (`crate::format`) builds filters through it.
    pub(crate) fn from_parts(
        words: Vec<u64>,
        num_bits: u64,
        hashes: u32,
        seed: u64,
    ) -> Result<Self> {
        check_hashes(hashes)?;
        let expected = num_bits.div_ceil(WORD_BITS);
        if num_bits == 0 || words.len() as u64 != expected {
            return Err(Error::Corrupt(format!(
                "{} words cannot hold a filter of {num_bits} bits (it takes {expected}, and 1 bit \
                 at least)",
                words.len()
            )));
        }
        let num_bits = usize::try_from(num_bits).map_err(|_| {
            Error::Corrupt(format!(
                "{num_bits} bits do not fit in this machine's address space"
            ))
        })?;
        let tail = num_bits as u64 % WORD_BITS;
        if tail != 0 && words[words.len() - 1] >> tail != 0 {
            return Err(Error::Corrupt(format!(
                "bits are set past the filter's {num_bits} bits"
            )));
        }
        let mut atomics = Vec::new();
        atomics
            .try_reserve_exact(words.len())
            .map_err(|_| Error::InvalidParameter {
                name: "num_bits",
                value: num_bits.to_string(),
                allowed: "a number of bits that fits in memory",
            })?;
        atomics.extend(words.into_iter().map(AtomicU64::new));
        Ok(Self {
            words: atomics,
            num_bits,
            hashes,
            seed,
        })
    }

    /// Zeroed storage for `num_bits` bits, or `None` when it cannot be addressed or allocated.
    fn allocate(num_bits: u64, hashes: u32, seed: u64) -> Option<Self> {
        let num_bits = usize::try_from(num_bits).ok()?;
        let len = num_bits.div_ceil(WORD_BITS as usize);
        let mut words = Vec::new();
        // Reserving first turns an allocation failure into an error instead of an abort. The
        // zeroes are written eagerly: `AtomicU64` is not `bytemuck::Zeroable` without bytemuck's
        // `zeroable_atomics` feature, which would let `try_zeroed_vec` get pre-zeroed pages.
        words.try_reserve_exact(len).ok()?;
        words.resize_with(len, || AtomicU64::new(0));
        Some(Self {
            words,
            num_bits,
            hashes,
            seed,
        })
    }

    /// Adds a key.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(key.hash_with_seed(self.seed));
    }

    /// Whether the key may have been inserted (false: it certainly was not).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_with_seed(self.seed))
    }

    /// Adds a key given by its 64-bit hash (well mixed; see [`crate::hash`]).
    #[inline(always)]
    pub fn insert_hash(&mut self, hash: u64) {
        with_fixed_hashes!(self.hashes, |k| self.insert_probes(hash, k))
    }

    /// Whether a key given by its 64-bit hash may have been inserted. Stops at the first probe
    /// that finds a zero bit; the first probe is the hash itself, so it is tested before the
    /// second hash is even computed (half of all absent keys stop there at the optimal k).
    #[inline(always)]
    pub fn contains_hash(&self, hash: u64) -> bool {
        with_fixed_hashes!(self.hashes, |k| self.contains_probes(hash, k))
    }

    /// [`insert_hash`](Self::insert_hash) for `k` probes (a constant where it is inlined).
    #[inline(always)]
    fn insert_probes(&mut self, hash: u64, k: u32) {
        let m = self.num_bits;
        let h2 = DoubleHash::second(hash);
        if self.words.len() <= DIRECT_PROBES_MAX_WORDS {
            for i in 0..u64::from(k) {
                let (word, bit) = locate(reduce(probe(hash, h2, i), m));
                *self.words_mut_unchecked(word) |= bit;
            }
            return;
        }
        let (mut h1, mut h2) = (hash, h2);
        let (word, bit) = locate(reduce(h1, m));
        *self.words_mut(word) |= bit;
        for i in 1..u64::from(k) {
            (h1, h2) = DoubleHash::step(h1, h2, i);
            let (word, bit) = locate(reduce(h1, m));
            *self.words_mut(word) |= bit;
        }
    }

    /// [`contains_hash`](Self::contains_hash) for `k` probes (a constant where it is inlined).
    #[inline(always)]
    fn contains_probes(&self, hash: u64, k: u32) -> bool {
        let m = self.num_bits;
        let (word, bit) = locate(reduce(hash, m));
        if self.word(word) & bit == 0 {
            return false;
        }
        let (mut h1, mut h2) = (hash, DoubleHash::second(hash));
        for i in 1..u64::from(k) {
            (h1, h2) = DoubleHash::step(h1, h2, i);
            let (word, bit) = locate(reduce(h1, m));
            if self.word(word) & bit == 0 {
                return false;
            }
        }
        true
    }

    /// Word `index` (a [`locate`] of a [`reduce`] onto `num_bits`), read without a bounds check:
    /// with the check, lookups of present keys run about 1.07x slower at 1 M keys and k = 7, and
    /// misses about 1.03x (`linebloom report --items 1000000 --filters classic --threads 1`).
    #[inline(always)]
    fn word(&self, index: usize) -> u64 {
        debug_assert!(index < self.words.len());
        // SAFETY: `index` is `reduce(p, num_bits) / 64` for some `p`; `reduce` returns less than
        // `num_bits`, so `index < num_bits.div_ceil(64) == words.len()`, which every constructor
        // establishes and nothing changes afterwards (the vector is never resized).
        unsafe { self.words.get_unchecked(index) }.load(Relaxed)
    }

    /// Word `index` for writing, bounds-checked: the inserts past [`DIRECT_PROBES_MAX_WORDS`]
    /// take it. Without the check they run slower (the compiler schedules the loop worse),
    /// about 1.05x at 256 MiB (`linebloom report --filters classic,fastbloom --threads 1`).
    #[inline(always)]
    fn words_mut(&mut self, index: usize) -> &mut u64 {
        self.words[index].get_mut()
    }

    /// Word `index` for writing (as for [`word`](Self::word)), without a bounds check: the
    /// inserts up to [`DIRECT_PROBES_MAX_WORDS`] take it. With the check they run about 1.12x
    /// slower at 16 KiB and level at 1 M keys (`linebloom report --items 10000,1000000
    /// --filters classic,fastbloom --threads 1`).
    #[inline(always)]
    fn words_mut_unchecked(&mut self, index: usize) -> &mut u64 {
        debug_assert!(index < self.words.len());
        // SAFETY: `index` is `reduce(p, num_bits) / 64` for some `p`, below `words.len()` for
        // the reason given in `word`; `&mut self` makes the access exclusive.
        unsafe { self.words.get_unchecked_mut(index) }.get_mut()
    }

    /// Looks up many pre-hashed keys at once: `out[i] = self.contains_hash(hashes[i])`.
    /// Faster than a loop over [`contains_hash`](Self::contains_hash) on filters larger than the
    /// cache: the words of each key's first two probes are prefetched for a group of keys before
    /// any is tested, so their misses overlap (an absent key usually stops after one or two).
    /// An error (and nothing written) when the two slices differ in length.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        if hashes.len() != out.len() {
            return Err(Error::InvalidParameter {
                name: "output length",
                value: out.len().to_string(),
                allowed: "equal to the number of hashes",
            });
        }
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
        if rayon::current_num_threads() <= 1
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

    /// Probes per key.
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of bits, `m`.
    pub fn num_bits(&self) -> u64 {
        self.num_bits as u64
    }

    /// Bytes of filter data (8 per 64-bit word).
    pub fn size_bytes(&self) -> usize {
        self.words.len() * std::mem::size_of::<u64>()
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.iter_words().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        for word in &mut self.words {
            *word.get_mut() = 0;
        }
    }

    /// The FPR the model expects after `items` distinct keys were inserted (0 for none).
    pub fn expected_fpr(&self, items: u64) -> f64 {
        if items == 0 {
            return 0.0;
        }
        model::classic_fpr(self.num_bits as f64 / items as f64, self.hashes)
    }

    /// A copy of the filter's bits as 64-bit words, `num_bits().div_ceil(64)` of them: bit `b`
    /// is bit `b % 64` of word `b / 64`.
    pub fn words(&self) -> Vec<u64> {
        self.iter_words().collect()
    }

    /// The filter's bits as 64-bit words, as [`words`](Self::words) without the copy.
    pub fn iter_words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.words.iter().map(|w| w.load(Relaxed))
    }
}

/// The cubic terms `(i³ − i)/6` of [`DoubleHash`] for every probe a classic filter may have.
const CUBIC: [u64; CLASSIC_MAX_HASHES as usize] = {
    let mut t = [0u64; CLASSIC_MAX_HASHES as usize];
    let mut i = 0;
    while i < t.len() {
        let j = i as u64;
        t[i] = (j * j * j - j) / 6;
        i += 1;
    }
    t
};

/// Probe `i` of `hash` directly, `h2` being [`DoubleHash::second`]`(hash)`: the value the
/// [`DoubleHash`] iterator yields `i`-th, `hash + i·h2 + (i³ − i)/6`, with the cubic term from
/// [`CUBIC`]: with the unrolled loops' constant `i` it folds into the address arithmetic, where
/// dividing by 6 keeps LLVM from unrolling them. `i` is below the filter's probe count, at most
/// `CLASSIC_MAX_HASHES`.
#[inline(always)]
fn probe(hash: u64, h2: u64, i: u64) -> u64 {
    hash.wrapping_add(i.wrapping_mul(h2))
        .wrapping_add(CUBIC[i as usize])
}

/// The word index and the single-bit mask of bit `bit` (no division: both are powers of two).
#[inline(always)]
fn locate(bit: usize) -> (usize, u64) {
    (bit / WORD_BITS as usize, 1 << (bit % WORD_BITS as usize))
}

/// Keys per prefetch group in the inserts for `k` probes each.
#[inline]
fn insert_group(k: usize) -> usize {
    (INSERT_PREFETCHES / k.max(1)).max(1)
}

fn check_hashes(hashes: u32) -> Result<()> {
    if !(1..=CLASSIC_MAX_HASHES).contains(&hashes) {
        return Err(Error::InvalidHashes {
            hashes,
            min: 1,
            max: CLASSIC_MAX_HASHES,
        });
    }
    Ok(())
}

impl Clone for ClassicBloom {
    fn clone(&self) -> Self {
        Self {
            words: self.iter_words().map(AtomicU64::new).collect(),
            num_bits: self.num_bits,
            hashes: self.hashes,
            seed: self.seed,
        }
    }
}

impl PartialEq for ClassicBloom {
    /// Same shape, seed and bits.
    fn eq(&self, other: &Self) -> bool {
        self.num_bits == other.num_bits
            && self.hashes == other.hashes
            && self.seed == other.seed
            && self.iter_words().eq(other.iter_words())
    }
}

impl Eq for ClassicBloom {}

impl std::fmt::Debug for ClassicBloom {
    /// The parameters and the number of set bits; the bits themselves would be megabytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassicBloom")
            .field("num_bits", &self.num_bits)
            .field("hashes", &self.hashes)
            .field("seed", &self.seed)
            .field("ones", &self.count_ones())
            .finish()
    }
}

impl Filter for ClassicBloom {
    fn kind(&self) -> FilterKind {
        FilterKind::Classic
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        ClassicBloom::insert_hash(self, hash);
        Ok(())
    }
    fn contains_hash(&self, hash: u64) -> bool {
        ClassicBloom::contains_hash(self, hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        ClassicBloom::contains_hashes(self, hashes, out)
    }
    fn size_bytes(&self) -> usize {
        ClassicBloom::size_bytes(self)
    }
    fn hashes(&self) -> u32 {
        ClassicBloom::hashes(self)
    }
    fn seed(&self) -> u64 {
        ClassicBloom::seed(self)
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        ClassicBloom::expected_fpr(self, items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    #[test]
    fn sizes_follow_bits_per_key() {
        let f = ClassicBloom::with_bits_per_key(1000, 10.0).unwrap();
        assert_eq!(
            (f.num_bits(), f.hashes(), f.seed()),
            (10_000, 7, DEFAULT_SEED)
        );
        assert_eq!(f.size_bytes(), 157 * 8);
        assert_eq!(f.words().len(), 157);
        assert_eq!(f.count_ones(), 0);
        // 1 %: 9.585 bits per key, rounded up to the bit.
        let f = ClassicBloom::with_fpr(1000, 0.01).unwrap();
        assert_eq!((f.num_bits(), f.hashes()), (9586, 7));
        let f = ClassicBloom::with_bits_per_key(1, 1.0).unwrap();
        assert_eq!((f.num_bits(), f.hashes(), f.size_bytes()), (1, 1, 8));
    }

    #[test]
    fn bits_stay_below_num_bits() {
        for m in [1u64, 2, 63, 64, 65, 100, 1000] {
            let mut f = ClassicBloom::with_bits(m, 5, 9).unwrap();
            for i in 0..10_000 {
                f.insert_hash(mix64(i));
            }
            let words = f.words();
            assert_eq!(words.len() as u64, m.div_ceil(64));
            let tail = m % 64;
            if tail != 0 {
                assert_eq!(words[words.len() - 1] >> tail, 0, "m = {m}");
            }
            // With 50 000 probes every one of at most 1000 bits is hit.
            assert_eq!(f.count_ones(), m, "m = {m}");
        }
    }

    #[test]
    fn from_parts_round_trips_and_checks() {
        let mut f = ClassicBloom::with_bits(1000, 4, 3).unwrap();
        (0..100).for_each(|i| f.insert_hash(mix64(i)));
        let back = ClassicBloom::from_parts(f.words(), 1000, 4, 3).unwrap();
        assert_eq!(back, f);
        assert!(matches!(
            ClassicBloom::from_parts(f.words(), 1100, 4, 3),
            Err(Error::Corrupt(_))
        ));
        assert!(matches!(
            ClassicBloom::from_parts(vec![], 0, 4, 3),
            Err(Error::Corrupt(_))
        ));
        assert!(matches!(
            ClassicBloom::from_parts(f.words(), 1000, 0, 3),
            Err(Error::InvalidHashes { .. })
        ));
        // 1000 bits use 40 bits of the last word; bit 40 is past the end.
        let mut words = f.words();
        *words.last_mut().unwrap() |= 1 << 40;
        assert!(matches!(
            ClassicBloom::from_parts(words, 1000, 4, 3),
            Err(Error::Corrupt(_))
        ));
    }

    #[test]
    fn clear_clone_and_equality() {
        let mut f = ClassicBloom::with_bits(777, 3, 1).unwrap();
        f.insert("a");
        let g = f.clone();
        assert_eq!(f, g);
        assert!(g.contains("a"));
        f.clear();
        assert_eq!(f.count_ones(), 0);
        assert_ne!(f, g);
        assert_ne!(ClassicBloom::with_bits(777, 3, 2).unwrap(), f);
        assert!(format!("{g:?}").contains("num_bits: 777"));
    }

    #[test]
    fn model_and_trait_agree_with_inherent_methods() {
        let mut f = ClassicBloom::with_bits_per_key(100, 10.0).unwrap();
        assert_eq!(f.expected_fpr(0), 0.0);
        assert_eq!(f.expected_fpr(100), model::classic_fpr(10.0, 7));
        let dyn_f: &mut dyn Filter = &mut f;
        assert_eq!(dyn_f.kind(), FilterKind::Classic);
        dyn_f.insert_hash(42).unwrap();
        assert!(dyn_f.contains_hash(42));
        assert_eq!(
            (dyn_f.hashes(), dyn_f.seed(), dyn_f.size_bytes()),
            (7, DEFAULT_SEED, 16 * 8)
        );
        let mut out = [false; 2];
        dyn_f.contains_hashes(&[42, 42], &mut out).unwrap();
        assert_eq!(out, [true, true]);
        assert!(dyn_f.contains_hashes(&[42], &mut out).is_err());
    }

    /// The unrolled scalar paths against the plain `DoubleHash` iterator, for every probe count
    /// that `with_fixed_hashes!` turns into a literal and some beyond.
    #[test]
    fn scalar_paths_set_and_test_the_double_hash_bits() {
        for k in (1..=20).chain([31, 64]) {
            let m = 10_007;
            let mut f = ClassicBloom::with_bits(m, k, 5).unwrap();
            let mut reference = vec![0u64; (m as usize).div_ceil(64)];
            for i in 0..300 {
                let h = mix64(i);
                f.insert_hash(h);
                for probe in DoubleHash::new(h).take(k as usize) {
                    let (word, bit) = locate(reduce(probe, m as usize));
                    reference[word] |= bit;
                }
                assert_eq!(f.words(), reference, "k = {k}, key {i}");
            }
            // Past `DIRECT_PROBES_MAX_WORDS` the inserts chain their probes: the same bits.
            let big = (DIRECT_PROBES_MAX_WORDS as u64 + 1) * 64 + 13;
            let mut g = ClassicBloom::with_bits(big, k, 5).unwrap();
            let mut set = std::collections::BTreeSet::new();
            for i in 0..300 {
                let h = mix64(i);
                g.insert_hash(h);
                set.extend(
                    DoubleHash::new(h)
                        .take(k as usize)
                        .map(|p| reduce(p, big as usize)),
                );
            }
            let got: std::collections::BTreeSet<usize> = g
                .words()
                .iter()
                .enumerate()
                .flat_map(|(w, &word)| {
                    (0..64)
                        .filter(move |b| word >> b & 1 == 1)
                        .map(move |b| w * 64 + b)
                })
                .collect();
            assert_eq!(got, set, "k = {k}, chained probes");
            for i in 0..5_000 {
                let h = mix64(i);
                let expected = DoubleHash::new(h).take(k as usize).all(|probe| {
                    let (word, bit) = locate(reduce(probe, m as usize));
                    reference[word] & bit != 0
                });
                assert_eq!(f.contains_hash(h), expected, "k = {k}, key {i}");
            }
        }
    }

    #[test]
    fn probe_is_the_iterators_value() {
        for h in [0u64, 1, 0x1234_5678_9abc_def0, u64::MAX] {
            let h2 = DoubleHash::second(h);
            for (i, p) in DoubleHash::new(h).take(40).enumerate() {
                assert_eq!(probe(h, h2, i as u64), p, "h={h:x} i={i}");
            }
        }
    }

    #[test]
    fn insert_groups_are_never_empty() {
        assert_eq!(insert_group(1), 64);
        assert_eq!(insert_group(7), 9);
        assert_eq!(insert_group(64), 1);
        assert_eq!(insert_group(0), 64);
    }
}
