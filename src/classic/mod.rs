//! The classic scattered Bloom filter: the reference layout the blocked engine is measured
//! against.
//!
//! This module owns [`ClassicBloom`], its builder, and all of its paths (scalar, batched with
//! prefetch, rayon bulk insert). It does not own key hashing ([`crate::hash`]) or the FPR
//! formulas ([`crate::model`]). This file holds the type and its scalar paths; `builder.rs`
//! the builder and the parameter checks; `batch.rs` the batched lookups and inserts and the
//! rayon bulk insert; `tests.rs` the unit tests of the internals.
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
//! (`DoubleHash`): `h1 + i·h2 + (i³ − i)/6` for `i = 0..k` (mod 2^64), with `h1` the hash and
//! `h2` its two 32-bit halves swapped and made odd (`DoubleHash::second`). Kirsch and
//! Mitzenmacher, "Less hashing, same performance: building a better Bloom filter" (2006),
//! prove that two hash values give the FPR of `k` independent ones as `m` grows; the cubic
//! term is that of Dillinger and Manolios, "Bloom filters in probabilistic verification"
//! (2004). Each probe value is mapped onto `0..m` with [`reduce`],
//! multiply-shift on its high bits (`(p · m) >> 64`): no division on the hot path and any `m`.
//! The cubic term is meant for probes reduced modulo `m`, where it keeps a second hash that is
//! a multiple of `m` from putting every probe on the same bit; under `reduce` it is all but
//! inert: at most (63³ − 63)/6 = 41,664 against 2^64, it moves a position with probability
//! below 41,664 · m / 2^64 (2.3e-9 per probe at m = 10^9). It stays because it is part of
//! which bits a key sets (the format's hash scheme 2), and costs nothing where the probes are
//! computed directly (the inserts into filters of up to 8 MiB).
//!
//! ## Speed of the scalar paths
//! `docs/performance.md` compares `insert_hash` and `contains_hash` with `fastbloom`'s
//! pre-hashed path (same probe count, same bits per key). Five choices shape them, each kept
//! because it pays (the figures are in `docs/performance.md`, Levers tried):
//! - The probe loop is written out instead of `DoubleHash::take(k).all(..)`, whose early exit
//!   compiles to a three-state flag with `setae`/`cmove` per probe; the first probe is tested
//!   before `h2` is computed; lookups skip the bounds check. Lookups of present keys, which run
//!   every probe, gain most. A lookup of a big filter runs at the memory's pace only if the
//!   processor can look many keys ahead, so every instruction per probe counts there too.
//! - `h2` swaps the hash's halves instead of remixing it with `mix64` (two dependent
//!   multiplies before every probe after the first), which every path gains from. The FPR is
//!   the same either way (within ±2 % of the model; `tests/classic.rs` checks it), and the
//!   swap is part of which bits a key sets (hash scheme 2).
//! - The probe count is a literal for k = 1..=16 (`with_fixed_hashes!`), so the loops unroll
//!   completely; otherwise LLVM unrolls them by four with a remainder loop, whose counter and
//!   branches slow the inserts.
//! - Bounds checks stay on the chained inserts and go from lookups and the direct inserts (see
//!   `word`, `words_mut` and `words_mut_unchecked`).
//! - Inserts into filters of up to 8 MiB compute each probe from the hash directly instead of
//!   from the probe before it, which is faster while the words are in cache; the chain stays
//!   past 8 MiB, where it is faster (see `DIRECT_PROBES_MAX_WORDS`).
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
//! assert_eq!(filter.k(), 7);
//! let false_positives = (10_000..110_000u64).filter(|i| filter.contains(i)).count();
//! assert!(false_positives < 1_500);
//! # Ok::<(), linebloom::Error>(())
//! ```

mod batch;
mod builder;
#[cfg(test)]
mod tests;

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
pub use builder::ClassicBloomBuilder;

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::error::{Error, Result};
use crate::filter::{Filter, FilterKind};
use crate::hash::{DoubleHash, Key, reduce};
use crate::model::{self, CLASSIC_MAX_K};
use builder::check_k;

/// Evaluates `$body` with `$k` bound to the filter's number of probes `$hashes` as a literal
/// for the common counts (1..=16, the optimum from 1.5 up to 23 bits per key), and as a
/// variable beyond: the probe loops of the `#[inline(always)]` functions it calls are then
/// unrolled completely, with no loop counter, exit branch or remainder loop. The price is code
/// size at each call site of `insert_hash`/`contains_hash` (a jump table and 17 short loops); an
/// `#[inline]` version is not inlined into callers' loops and costs a call per key, more than
/// the jump table. Against only k = 7 as a literal, the jump table costs a little at k = 7,
/// which buys the same unrolling for every common k.
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
pub(super) const WORD_BITS: u64 = 64;

/// Up to this many words (8 MiB) the inserts compute each probe from the hash directly
/// ([`probe`]); past it they chain them ([`DoubleHash::step`]), each from the one before. Same
/// bits either way. With the words in cache a probe's store is quick and the chain of two-cycle
/// additions (probe `i` waits on `i` of them) holds back one key's accesses, so the direct form
/// is faster there; past the cache each probe waits on memory, and the chain's fewer
/// instructions let the processor keep more keys in flight (measured in `docs/performance.md`,
/// Levers tried). Lookups keep the chain at every size: the direct form makes them slower even
/// in cache, since a miss usually stops after a probe or two and has little chain to shorten.
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
/// assert_eq!((filter.num_bits(), filter.k()), (10_000, 7));
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

impl ClassicBloom {
    /// A filter for `items` keys with a false-positive rate of about `fpr`: `−ln p / (ln 2)²`
    /// bits and the optimal number of probes per key.
    pub fn with_fpr(items: u64, fpr: f64) -> Result<Self> {
        Self::builder(items).fpr(fpr).build()
    }

    /// A filter for `items` keys at `bits_per_key` bits each, with the optimal number of probes.
    pub fn with_bits_per_key(items: u64, bits_per_key: f64) -> Result<Self> {
        Self::builder(items).bits_per_key(bits_per_key).build()
    }

    /// A builder for `items` expected keys (1 % FPR unless told otherwise).
    pub fn builder(items: u64) -> ClassicBloomBuilder {
        ClassicBloomBuilder::new(items)
    }

    /// An empty filter of exactly `shape`, the exact-size constructor every kind shares (a
    /// builder's `shape()` plans one; ``with_bits`` is the same by its parts); an error for another
    /// kind's shape.
    pub fn with_shape(shape: crate::format::Shape, seed: u64) -> Result<Self> {
        match shape {
            crate::format::Shape::Classic { bits, k } => Self::with_bits(bits, k, seed),
            other => Err(crate::format::wrong_shape(FilterKind::Classic, other)),
        }
    }

    /// An empty filter of exactly `num_bits` bits (any number from 1 up) and `k` probes per
    /// key (1..=64).
    pub fn with_bits(num_bits: u64, k: u32, seed: u64) -> Result<Self> {
        check_k(k)?;
        if num_bits == 0 {
            return Err(Error::InvalidParameter {
                name: "num_bits",
                value: "0".into(),
                allowed: "at least 1",
            });
        }
        Self::allocate(num_bits, k, seed).ok_or_else(|| Error::InvalidParameter {
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
        check_k(hashes)?;
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
    pub(super) fn allocate(num_bits: u64, hashes: u32, seed: u64) -> Option<Self> {
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
    /// the check is a compare and branch per probe, which slows lookups, most of all those of
    /// present keys, which run every probe.
    #[inline(always)]
    fn word(&self, index: usize) -> u64 {
        debug_assert!(index < self.words.len());
        // SAFETY: `index` is `reduce(p, num_bits) / 64` for some `p`; `reduce` returns less than
        // `num_bits`, so `index < num_bits.div_ceil(64) == words.len()`, which every constructor
        // establishes and nothing changes afterwards (the vector is never resized).
        unsafe { self.words.get_unchecked(index) }.load(Relaxed)
    }

    /// Word `index` for writing, bounds-checked: the inserts past [`DIRECT_PROBES_MAX_WORDS`]
    /// take it. Without the check they run slower: the compiler schedules the loop worse.
    #[inline(always)]
    fn words_mut(&mut self, index: usize) -> &mut u64 {
        self.words[index].get_mut()
    }

    /// Word `index` for writing (as for [`word`](Self::word)), without a bounds check: the
    /// inserts up to [`DIRECT_PROBES_MAX_WORDS`] take it. With the check they run slower in L1,
    /// where the check is a visible share of each probe's work, and level once the words come
    /// from further out.
    #[inline(always)]
    fn words_mut_unchecked(&mut self, index: usize) -> &mut u64 {
        debug_assert!(index < self.words.len());
        // SAFETY: `index` is `reduce(p, num_bits) / 64` for some `p`, below `words.len()` for
        // the reason given in `word`; `&mut self` makes the access exclusive.
        unsafe { self.words.get_unchecked_mut(index) }.get_mut()
    }

    /// Probes per key.
    pub fn k(&self) -> u32 {
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
        self.words.len() * core::mem::size_of::<u64>()
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
const CUBIC: [u64; CLASSIC_MAX_K as usize] = {
    let mut t = [0u64; CLASSIC_MAX_K as usize];
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
/// `CLASSIC_MAX_K`.
#[inline(always)]
pub(super) fn probe(hash: u64, h2: u64, i: u64) -> u64 {
    hash.wrapping_add(i.wrapping_mul(h2))
        .wrapping_add(CUBIC[i as usize])
}

/// The word index and the single-bit mask of bit `bit` (no division: both are powers of two).
#[inline(always)]
pub(super) fn locate(bit: usize) -> (usize, u64) {
    (bit / WORD_BITS as usize, 1 << (bit % WORD_BITS as usize))
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

impl core::fmt::Debug for ClassicBloom {
    /// The parameters and the number of set bits; the bits themselves would be megabytes.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
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
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        ClassicBloom::insert_hashes(self, hashes);
        Ok(())
    }
    fn size_bytes(&self) -> usize {
        ClassicBloom::size_bytes(self)
    }
    fn k(&self) -> Option<u32> {
        Some(ClassicBloom::k(self))
    }
    fn seed(&self) -> u64 {
        ClassicBloom::seed(self)
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        ClassicBloom::expected_fpr(self, items)
    }
}
