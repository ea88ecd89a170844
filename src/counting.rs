//! The counting blocked Bloom filter: delete on one cache line.
//!
//! A [`CountingBlockedBloom`] is the blocked filter with a 4-bit counter in place of each bit:
//! a 64-byte line holds 128 counters, seen as eight 64-bit words of sixteen. A key's k counters
//! (k at most 8) all live in its one line, one per word, placed as the engine places its bits:
//! probe `i` in word `(i + r) mod 8` (`r` three bits of the hash), and in that word the counter
//! given by the top 4 bits of `x * salt[word]` (`x` the hash's low 32 bits, the engine's salts).
//! Because a key never has two counters in one word, its counters are always distinct.
//!
//! - `insert` adds 1 to each of the key's counters; a counter at 15 stays at 15 (saturated).
//! - `contains` asks whether all of them are non-zero.
//! - `remove` first checks that all of them are non-zero (otherwise the key cannot be present:
//!   it refuses and changes nothing), then subtracts 1 from each one that is not saturated.
//! - `remove_exact` also refuses when one of them is saturated, so that what it subtracts is
//!   exactly what one insert of the key added.
//!
//! Each operation is a handful of vector instructions on the whole line. The portable path
//! is `u64x8` (`wide`) code: the key's counters as a vector of nibble increments, the test
//! "all non-zero" as a fold of each nibble's four bits, and saturation as a fold of the same
//! bits with AND. Every x86-64 build also carries AVX2 and AVX-512 paths (`counting/kernel.rs`),
//! chosen at run time as the engine's are ([`simd_path`]); every path gives the same counters.
//!
//! Memory: 4 bits per counter, so "bits per key" counts 4 per counter (40 bits per key is 10
//! counters per key). [`counting_fpr`] is the exact model of the layout.
//!
//! # Remove only keys that were inserted
//! A saturated counter is never decremented (its true count is lost), so removing keys that
//! were inserted, each at most as often as it was inserted, never brings a counter that another
//! inserted key relies on to zero: no inserted key is lost. Removing a key that was never
//! inserted is another matter. Where it reads absent, `remove` refuses and nothing changes; but
//! where it reads present (a false positive, at the filter's FPR) nothing in the filter tells it
//! from a member, and the remove decrements counters that only other keys put there, which can
//! make those keys answer "no". Every counting Bloom filter (and every cuckoo filter) has this
//! hazard, and no check inside the filter can prevent it: only the caller knows what it
//! inserted. Measured (`non_member_removes_lose_inserted_keys` in this module's tests): a
//! filter sized for 100,000 keys at 1 % holds 100,000 keys; `remove` of 1,000,000 keys never
//! inserted then accepts 7,232 of them (the 1 % FPR, falling as counters drop), after which
//! 24,223 of the 100,000 inserted keys answer "no". `remove_exact` accepts the same 7,232.
//!
//! So remove a key only when the caller knows it is in the filter: a cache removes the keys it
//! evicts, a memtable the keys it holds. Code that removes is best tested against a shadow
//! count of what was inserted (a `HashMap<key, u32>` in the test), asserting before each remove
//! that the key is held; this module's tests do so.

#[cfg(not(feature = "std"))]
use crate::math::Float;
use alloc::string::ToString;
use core::marker::PhantomData;
use wide::{u32x16, u64x8};

use crate::engine::arch::{per_path, simd_path};
use crate::engine::bulk::{DRAIN, Slots, insert_prefetched};
use crate::engine::line::{Line, Run, line_for, line_for_mut};
use crate::engine::lookup::{Probe, contains_each};
use crate::engine::mask::SALTS;
use crate::engine::prefetch::prefetch;
use crate::engine::storage::LineBuf;
use crate::error::{Error, Result, check_bits_per_key, check_fpr, check_items, units_for};
use crate::filter::{Filter, FilterKind, Sizing};
use crate::hash::{DEFAULT_SEED, Key};

/// Counters in one line.
pub const LINE_COUNTERS: u32 = 128;
/// The largest number of counters per key (one in each 64-bit word of the line).
pub const MAX_COUNTING_K: u32 = 8;
/// The largest value a counter holds; a counter there is saturated and stays there.
pub const COUNTER_MAX: u8 = 15;

/// The low bit of every nibble.
const NIBBLE_LOW: u64 = 0x1111_1111_1111_1111;

/// The false-positive rate of a [`CountingBlockedBloom`] with `counters_per_key` counters per
/// key (4 bits each) and `k` counters per key set: the chance that all of a never-inserted
/// key's counters are non-zero. Keys per line are Poisson; each key that shares the line puts
/// one counter in each of its k words (a rotation of the query's), uniformly among 16.
///
/// ```
/// use linebloom::counting::counting_fpr;
///
/// let p = counting_fpr(10.0, 6);
/// assert!(p > 0.01 && p < 0.02);
/// ```
pub fn counting_fpr(counters_per_key: f64, k: u32) -> f64 {
    let k = k.clamp(1, MAX_COUNTING_K) as usize;
    let lambda = f64::from(LINE_COUNTERS) / counters_per_key;
    // Inclusion-exclusion over the query's counters (in words 0..k by symmetry): the chance
    // that a set S of them is all zero is exp(-lambda * (1 - g(S))), g(S) the chance that one
    // key in the line misses all of S: the average over its rotation r of (15/16)^|S & W_r|,
    // W_r the words a key with rotation r uses.
    let used: [u32; 8] = core::array::from_fn(|r| {
        (0..k)
            .filter(|&w| (w + 8 - r) % 8 < k)
            .fold(0u32, |m, w| m | 1 << w)
    });
    let miss: [f64; 9] = core::array::from_fn(|n| (15.0f64 / 16.0).powi(n as i32));
    let mut sum = 0.0;
    for subset in 0u32..(1 << k) {
        let g = used
            .iter()
            .map(|&w| miss[(subset & w).count_ones() as usize])
            .sum::<f64>()
            / 8.0;
        let sign = if subset.count_ones() % 2 == 0 {
            1.0
        } else {
            -1.0
        };
        sum += sign * (-lambda * (1.0 - g)).exp();
    }
    sum.clamp(0.0, 1.0)
}

/// The k in `1..=8` that minimises [`counting_fpr`] at `counters_per_key`.
pub fn counting_optimal_k(counters_per_key: f64) -> u32 {
    (1..=MAX_COUNTING_K)
        .min_by(|&a, &b| {
            counting_fpr(counters_per_key, a).total_cmp(&counting_fpr(counters_per_key, b))
        })
        .unwrap_or(1)
}

/// The fewest bits per key (4 per counter) at which the model, with its best k, reaches `fpr`.
pub fn counting_bits_per_key(fpr: f64) -> Result<f64> {
    check_fpr(fpr)?;
    let best = |c: f64| counting_fpr(c, counting_optimal_k(c));
    let (mut lo, mut hi) = (0.5f64, 256.0f64);
    if best(hi) > fpr {
        return Err(Error::InvalidParameter {
            name: "fpr",
            value: crate::error::Readable(fpr).to_string(),
            allowed: "a rate a counting blocked filter reaches (at least about 1e-7)",
        });
    }
    // 40 halvings of 256 counters: far finer than a line's 128 counters can tell apart.
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if best(mid) <= fpr { hi = mid } else { lo = mid }
    }
    Ok(hi * 4.0)
}

/// The bit offset of the counter the key uses in each word (lane w: word w), whether it uses
/// the word or not.
#[inline(always)]
fn offsets(hash: u64) -> u64x8 {
    // Lane w's high half is x * salt[w]; its top 4 bits pick the counter in word w.
    let prod: u64x8 = bytemuck::cast(u32x16::splat(hash as u32) * SALT_HIGH);
    (prod >> 60u64) << 2u64
}

/// The rotation of a key's words, and the row of `ENABLE` for `hashes` counters.
#[inline(always)]
fn enable_row(hash: u64, hashes: u32) -> &'static [u64; 8] {
    let r = ((hash >> 32) & 7) as usize;
    &ENABLE[hashes.clamp(1, MAX_COUNTING_K) as usize][r]
}

/// The counters one key touches, as nibble increments: 1 in the low bit of each of its
/// counters, one counter in each of its k words.
#[inline(always)]
fn increments(hash: u64, hashes: u32) -> u64x8 {
    (u64x8::splat(1) << offsets(hash)) & u64x8::new(*enable_row(hash, hashes))
}

/// Whether all of a key's counters are non-zero in `line`: the lookup's own test, which masks
/// each counter's whole nibble instead of folding the line's nibbles (`all_present`), some
/// 8 fewer vector instructions per key on AVX2. A word the key does not use passes: its lane
/// of the line is ORed with all ones (`!ENABLE`) before the test.
#[inline(always)]
fn key_present(line: u64x8, hash: u64, hashes: u32) -> bool {
    let nibbles = u64x8::splat(0xF) << offsets(hash);
    let unused = !u64x8::new(*enable_row(hash, hashes));
    !((line | unused) & nibbles).simd_eq(u64x8::ZERO).any()
}

/// The engine's first eight salts in the high half of each 64-bit lane.
const SALT_HIGH: u32x16 = {
    let mut out = [0u32; 16];
    let mut w = 0;
    while w < 8 {
        let hi = if cfg!(target_endian = "little") {
            2 * w + 1
        } else {
            2 * w
        };
        out[hi] = SALTS[w];
        w += 1;
    }
    u32x16::new(out)
};

/// `ENABLE[k][r]`: all ones in the words a key with k counters and rotation `r` uses (words
/// `(i + r) mod 8` for `i < k`), zero in the others.
static ENABLE: [[[u64; 8]; 8]; 9] = {
    let mut out = [[[0u64; 8]; 8]; 9];
    let mut k = 0;
    while k <= 8 {
        let mut r = 0;
        while r < 8 {
            let mut i = 0;
            while i < k {
                out[k][r][(i + r) % 8] = u64::MAX;
                i += 1;
            }
            r += 1;
        }
        k += 1;
    }
    out
};

/// Whether every nibble of `inc` (1 in the low bit of each counter asked about) is non-zero in
/// `line`.
#[inline(always)]
fn all_present(line: u64x8, inc: u64x8) -> bool {
    let folded: u64x8 = line | (line >> 1u64) | (line >> 2u64) | (line >> 3u64);
    // As the engine's test: a lane compare and one mask test, no scalar loop over the lanes.
    let missing: u32x16 = bytemuck::cast(inc & !folded);
    missing.simd_eq(u32x16::ZERO).all()
}

/// The counters of `line` that are saturated, as 1 in the low bit of each.
#[inline(always)]
fn saturated(line: u64x8) -> u64x8 {
    line & (line >> 1u64) & (line >> 2u64) & (line >> 3u64) & u64x8::splat(NIBBLE_LOW)
}

/// The portable path's insert (`CountKernel::insert`).
#[inline(always)]
fn insert_portable(line: &mut Line, hash: u64, k: u32) {
    let value = load(line);
    let inc = increments(hash, k);
    store(line, value + (inc & !saturated(value)));
}

/// The portable path's lookup.
#[inline(always)]
fn contains_portable(line: &Line, hash: u64, k: u32) -> bool {
    key_present(load(line), hash, k)
}

/// The portable path's remove.
#[inline(always)]
fn remove_portable(line: &mut Line, hash: u64, k: u32) -> bool {
    let value = load(line);
    let inc = increments(hash, k);
    if !all_present(value, inc) {
        return false;
    }
    store(line, value - (inc & !saturated(value)));
    true
}

/// The portable path's exact remove.
#[inline(always)]
fn remove_exact_portable(
    line: &mut Line,
    hash: u64,
    k: u32,
) -> core::result::Result<(), RemoveRefused> {
    let value = load(line);
    let inc = increments(hash, k);
    if !all_present(value, inc) {
        return Err(RemoveRefused::Absent);
    }
    if !(saturated(value) & inc).simd_eq(u64x8::ZERO).all() {
        return Err(RemoveRefused::Saturated);
    }
    // Every counter of the key is in 1..=14: a plain subtraction, no borrow.
    store(line, value - inc);
    Ok(())
}

#[inline(always)]
fn load(line: &Line) -> u64x8 {
    bytemuck::cast(*line)
}

#[inline(always)]
fn store(line: &mut Line, value: u64x8) {
    *line = bytemuck::cast(value);
}

/// A counting blocked Bloom filter: the blocked filter's one-line layout with 4-bit counters,
/// so keys can be removed.
///
/// Remove only keys that were inserted (and not yet removed as often as inserted): removing
/// such keys never makes another inserted key answer "no". Removing a key that was never
/// inserted but passes the filter (a false positive) decrements counters other keys rely on and
/// can make inserted keys answer "no"; the filter cannot tell such a key from a member (see the
/// [module docs](self#remove-only-keys-that-were-inserted) for the measurement).
///
/// ```
/// use linebloom::CountingBlockedBloom;
///
/// // The keys of a cache on disk: the filter answers "maybe cached" without a read.
/// let mut filter = CountingBlockedBloom::with_fpr(1_000, 0.01)?;
/// for key in ["apple", "pear", "plum"] {
///     filter.insert(key);
/// }
/// assert!(filter.contains("apple"));
/// // The cache evicts "pear": it knows "pear" was inserted, so removing it is safe.
/// assert!(filter.remove("pear"));
/// assert!(!filter.contains("pear"));
/// assert!(filter.contains("apple") && filter.contains("plum"));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CountingBlockedBloom {
    lines: LineBuf,
    hashes: u32,
    seed: u64,
}

/// Builds a [`CountingBlockedBloom`] with any of its parameters fixed.
///
/// ```
/// use linebloom::CountingBlockedBloom;
///
/// let filter = CountingBlockedBloom::builder(10_000).bits_per_key(48.0).k(7).seed(1).build()?;
/// assert_eq!(filter.k(), 7);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CountingBlockedBloomBuilder {
    items: u64,
    size: Sizing,
    hashes: Option<u32>,
    seed: u64,
}

impl CountingBlockedBloomBuilder {
    crate::filter::sizing_setters!(
        size,
        "Size for this false-positive rate (the default is 1 %).",
        "Size at this many bits per key (4 per counter)."
    );

    crate::filter::probe_setters!("`1..=8` (each probe is one counter).");

    /// The filter, or an error for parameters out of range.
    pub fn build(self) -> Result<CountingBlockedBloom> {
        let (lines, k) = self.sized()?;
        CountingBlockedBloom::with_lines(lines, k, self.seed)
    }

    /// The shape [`build`](Self::build) gives (lines and k), without taking memory: the
    /// sizing rule, for planning.
    pub fn shape(&self) -> Result<crate::format::Shape> {
        let (lines, k) = self.sized()?;
        Ok(crate::format::Shape::Counting {
            lines: lines as u64,
            k,
        })
    }

    /// The lines and counters per key the builder asks for, checked.
    fn sized(&self) -> Result<(usize, u32)> {
        check_items(self.items)?;
        let bits_per_key = match self.size {
            Sizing::BitsPerKey(b) => {
                check_bits_per_key(b)?;
                b
            }
            Sizing::Fpr(fpr) => counting_bits_per_key(fpr)?,
        };
        let hashes = self
            .hashes
            .unwrap_or_else(|| counting_optimal_k(bits_per_key / 4.0));
        let lines = units_for(self.items, bits_per_key, 512)?;
        check_k(hashes)?;
        Ok((lines, hashes))
    }
}

impl CountingBlockedBloom {
    /// A filter for `items` keys at false-positive rate `fpr`, with the model's best k.
    pub fn with_fpr(items: u64, fpr: f64) -> Result<Self> {
        Self::builder(items).fpr(fpr).build()
    }

    /// A filter for `items` keys at `bits_per_key` bits each (4 per counter), with the
    /// model's best k.
    pub fn with_bits_per_key(items: u64, bits_per_key: f64) -> Result<Self> {
        Self::builder(items).bits_per_key(bits_per_key).build()
    }

    /// A builder for `items` keys.
    pub fn builder(items: u64) -> CountingBlockedBloomBuilder {
        CountingBlockedBloomBuilder {
            items,
            size: Sizing::Fpr(0.01),
            hashes: None,
            seed: DEFAULT_SEED,
        }
    }

    /// An empty filter of exactly `shape`, the exact-size constructor every kind shares (a
    /// builder's `shape()` plans one; ``with_lines`` is the same by its parts); an error for another
    /// kind's shape.
    pub fn with_shape(shape: crate::format::Shape, seed: u64) -> Result<Self> {
        match shape {
            crate::format::Shape::Counting { lines, k } => {
                Self::with_lines(crate::format::count_of(lines, "lines")?, k, seed)
            }
            other => Err(crate::format::wrong_shape(FilterKind::Counting, other)),
        }
    }

    /// A filter of exactly `lines` lines (128 counters each) and `k` counters per key.
    pub fn with_lines(lines: usize, k: u32, seed: u64) -> Result<Self> {
        check_k(k)?;
        // The one-key calls read the SIMD path without making the choice (`kernel`).
        simd_path();
        Ok(CountingBlockedBloom {
            lines: crate::engine::storage::zeroed_lines(lines)?,
            hashes: k,
            seed,
        })
    }

    /// Rebuilds a filter from its lines (the format's reader).
    pub(crate) fn from_parts(lines: LineBuf, hashes: u32, seed: u64) -> Result<Self> {
        check_k(hashes)?;
        if lines.is_empty() {
            return Err(Error::Corrupt("a counting filter with no lines".into()));
        }
        // As in `with_lines`: the choice made before any one-key call.
        simd_path();
        Ok(CountingBlockedBloom {
            lines,
            hashes,
            seed,
        })
    }

    /// Adds a key.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.insert_hash(key.hash_with_seed(self.seed));
    }

    /// Whether a key may be present.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_with_seed(self.seed))
    }

    /// Removes one insert of a key: `false`, changing nothing, when the key cannot be present
    /// (one of its counters is zero); `true` when it may have been present and one insert of
    /// it was removed (each of its counters lowered by 1, except saturated ones, which stay).
    ///
    /// Safe only for a key that was inserted and not yet removed as often as it was inserted:
    /// then no other inserted key is lost. Removing a key that was never inserted but passes
    /// the filter (a false positive, so `true` here) decrements counters other keys rely on
    /// and can make inserted keys answer "no". `true` does not mean the key was a member.
    ///
    /// In tests, keep a shadow count of what was inserted and remove only what it holds:
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use linebloom::CountingBlockedBloom;
    ///
    /// let mut filter = CountingBlockedBloom::with_fpr(1_000, 0.01)?;
    /// let mut inserted: HashMap<u64, u32> = HashMap::new();
    /// for key in [1u64, 2, 2, 3] {
    ///     filter.insert(&key);
    ///     *inserted.entry(key).or_default() += 1;
    /// }
    /// for key in [2u64, 3, 2] {
    ///     let held = inserted.get_mut(&key).filter(|n| **n > 0);
    ///     *held.expect("removing a key that is not in the filter") -= 1;
    ///     assert!(filter.remove(&key));
    /// }
    /// assert!(filter.contains(&1u64));
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.remove_hash(key.hash_with_seed(self.seed))
    }

    /// Removes one insert of a key only if that can be done exactly: `Ok(())` when each of
    /// the key's counters was between 1 and 14 and is now 1 lower; otherwise the filter is
    /// unchanged and the error says why ([`RemoveRefused::Absent`]: a counter is zero, the key
    /// cannot be present; [`RemoveRefused::Saturated`]: a counter is stuck at 15).
    ///
    /// What it guarantees: it never lowers a saturated counter nor one at zero, and when it
    /// succeeds on a key that was inserted, it takes away exactly what one insert of that key
    /// added (a counter below 15 has never saturated, so that insert raised it by 1). Where
    /// [`remove`](Self::remove) meets a saturated counter it leaves it at 15 and lowers the
    /// others, which is safe but leaves the key's trace: `Saturated` tells the caller so (the
    /// key may keep reading present; `remove` is still the right call for a member).
    ///
    /// What it cannot guarantee: that the key was inserted. A false positive whose counters
    /// are all between 1 and 14 is accepted like a member, with the same hazard as
    /// [`remove`](Self::remove): remove only keys that were inserted.
    ///
    /// ```
    /// use linebloom::CountingBlockedBloom;
    /// use linebloom::counting::RemoveRefused;
    ///
    /// let mut filter = CountingBlockedBloom::with_fpr(1_000, 0.01)?;
    /// filter.insert("apple");
    /// assert_eq!(filter.remove_exact("apple"), Ok(()));
    /// assert_eq!(filter.remove_exact("apple"), Err(RemoveRefused::Absent));
    ///
    /// for _ in 0..20 {
    ///     filter.insert("hot"); // its counters saturate at 15
    /// }
    /// assert_eq!(filter.remove_exact("hot"), Err(RemoveRefused::Saturated));
    /// assert!(filter.remove("hot")); // lowers nothing saturated: safe for a member
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn remove_exact<K: Key + ?Sized>(
        &mut self,
        key: &K,
    ) -> core::result::Result<(), RemoveRefused> {
        self.remove_hash_exact(key.hash_with_seed(self.seed))
    }

    /// Adds a pre-hashed key: 1 more in each of its counters, except those saturated at 15.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let k = self.hashes;
        // The engine's line choice, without a bounds check (a filter has at least one line).
        let Some(line) = line_for_mut(&mut self.lines, hash) else {
            return;
        };
        kernel::insert(line, hash, k);
    }

    /// Whether a pre-hashed key may be present: all its counters are non-zero.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        kernel::contains(line_for(&self.lines, hash), hash, self.hashes)
    }

    /// Removes one insert of a pre-hashed key: 1 less in each of its counters that is not
    /// saturated. `false`, changing nothing, when one of its counters is zero (the key cannot
    /// be present).
    ///
    /// Safe only for a key that was inserted and not yet removed as often as it was inserted;
    /// removing a never-inserted key that passes the filter (a false positive) can make
    /// inserted keys answer "no". See [`remove`](Self::remove).
    #[inline]
    pub fn remove_hash(&mut self, hash: u64) -> bool {
        let k = self.hashes;
        let Some(line) = line_for_mut(&mut self.lines, hash) else {
            return false;
        };
        kernel::remove(line, hash, k)
    }

    /// [`remove_exact`](Self::remove_exact) for a pre-hashed key: 1 less in each of its
    /// counters when all are between 1 and 14, else no change and the reason. Like
    /// [`remove_hash`](Self::remove_hash), safe only for a key that was inserted.
    #[inline]
    pub fn remove_hash_exact(&mut self, hash: u64) -> core::result::Result<(), RemoveRefused> {
        let k = self.hashes;
        let Some(line) = line_for_mut(&mut self.lines, hash) else {
            return Err(RemoveRefused::Absent);
        };
        kernel::remove_exact(line, hash, k)
    }

    crate::filter::keyed_batch!(unit);

    /// Inserts many pre-hashed keys, with each line prefetched ahead: a few keys ahead into
    /// L1, and in filters of more than 32 MiB by the engine's walk (far ahead into L2, then
    /// into L1), as the blocked filter's batched insert does. Bit-identical to inserting one
    /// at a time: a saturating increment by one commutes with itself.
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        insert_loop(simd_path(), &mut self.lines, self.hashes, hashes);
    }

    /// Batched lookup: `out[i] = contains_hash(hashes[i])`, each line prefetched ahead as
    /// [`insert_hashes`](Self::insert_hashes) does. An error when the lengths differ.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        crate::error::check_same_len(hashes.len(), out.len())?;
        contains_loop(simd_path(), &self.lines, self.hashes, hashes, out);
        Ok(())
    }

    /// Sets every counter to zero (and writes every byte of the filter's memory).
    pub fn clear(&mut self) {
        self.lines.fill(Line::ZERO);
    }

    /// Counters per key set.
    pub fn k(&self) -> u32 {
        self.hashes
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Lines of 128 counters.
    pub fn num_lines(&self) -> usize {
        self.lines.len()
    }

    /// The lines, as stored (each 64-bit word holds 16 counters, counter `j` in bits
    /// `4j..4j + 4`).
    pub fn lines(&self) -> &[Line] {
        &self.lines
    }

    /// Bytes of counters.
    pub fn size_bytes(&self) -> usize {
        self.lines.len() * 64
    }

    /// The value of counter `j` (0..128) of line `line`; `None` where either is out of range.
    pub fn counter(&self, line: usize, j: usize) -> Option<u8> {
        let words: [u64; 8] = bytemuck::cast(*self.lines.get(line)?);
        (j < 128).then(|| ((words[j / 16] >> (4 * (j % 16))) & 0xf) as u8)
    }

    /// The FPR the model expects once `items` keys are in the filter.
    pub fn expected_fpr(&self, items: u64) -> f64 {
        if items == 0 {
            return 0.0;
        }
        let counters_per_key = self.lines.len() as f64 * f64::from(LINE_COUNTERS) / items as f64;
        counting_fpr(counters_per_key, self.hashes)
    }

    /// The share of counters that are non-zero.
    pub fn fill_ratio(&self) -> f64 {
        let nonzero: u64 = self
            .lines
            .iter()
            .map(|l| {
                let words: [u64; 8] = bytemuck::cast(*l);
                words
                    .iter()
                    .map(|&w| ((w | w >> 1 | w >> 2 | w >> 3) & NIBBLE_LOW).count_ones() as u64)
                    .sum::<u64>()
            })
            .sum();
        nonzero as f64 / (self.lines.len() as f64 * f64::from(LINE_COUNTERS))
    }

    /// The FPR a key never inserted meets now, read from the counters rather than predicted
    /// from an item count: exact in expectation over random keys, skewed line loads included.
    ///
    /// Such a key picks a uniform line and rotation `r`, and one uniform counter in each of the
    /// k words `W_r` of that rotation, so it is a false positive with probability
    /// `Π_{w ∈ W_r} z_w / 16`, `z_w` the non-zero counters of word `w`. This averages that over
    /// all lines and the 8 rotations. (The fill ratio to the power k would ignore that keys
    /// crowd some lines more than others, and read low.)
    pub fn current_fpr(&self) -> f64 {
        let k = self.hashes.clamp(1, MAX_COUNTING_K) as usize;
        let mut sum = 0.0;
        for line in self.lines.iter() {
            let words: [u64; 8] = bytemuck::cast(*line);
            let share: [f64; 8] = core::array::from_fn(|w| {
                let x = words[w];
                f64::from(((x | x >> 1 | x >> 2 | x >> 3) & NIBBLE_LOW).count_ones()) / 16.0
            });
            let per_line: f64 = (0..8)
                .map(|r| (0..k).map(|i| share[(i + r) % 8]).product::<f64>())
                .sum();
            sum += per_line / 8.0;
        }
        sum / self.lines.len().max(1) as f64
    }

    /// Distinct keys inserted (and not removed), estimated from the share of non-zero
    /// counters: each key makes k of its line's 128 counters non-zero, so `n = -(128 L / k)
    /// ln(1 - fill)`. Infinite when every counter is non-zero.
    pub fn estimated_items(&self) -> f64 {
        let fill = self.fill_ratio();
        let counters = self.lines.len() as f64 * f64::from(LINE_COUNTERS);
        (-counters / f64::from(self.hashes) * (1.0 - fill).ln()).max(0.0)
    }

    /// Counters at 15, which no remove lowers.
    pub fn saturated_counters(&self) -> u64 {
        self.lines
            .iter()
            .map(|l| {
                let words: [u64; 8] = bytemuck::cast(*l);
                words
                    .iter()
                    .map(|&w| (w & w >> 1 & w >> 2 & w >> 3 & NIBBLE_LOW).count_ones() as u64)
                    .sum::<u64>()
            })
            .sum()
    }
}

impl Filter for CountingBlockedBloom {
    fn kind(&self) -> FilterKind {
        FilterKind::Counting
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        CountingBlockedBloom::insert_hash(self, hash);
        Ok(())
    }
    fn contains_hash(&self, hash: u64) -> bool {
        CountingBlockedBloom::contains_hash(self, hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        CountingBlockedBloom::contains_hashes(self, hashes, out)
    }
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        CountingBlockedBloom::insert_hashes(self, hashes);
        Ok(())
    }
    fn size_bytes(&self) -> usize {
        CountingBlockedBloom::size_bytes(self)
    }
    fn k(&self) -> Option<u32> {
        Some(CountingBlockedBloom::k(self))
    }
    fn seed(&self) -> u64 {
        CountingBlockedBloom::seed(self)
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        CountingBlockedBloom::expected_fpr(self, items)
    }
}

/// Why [`CountingBlockedBloom::remove_exact`] changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RemoveRefused {
    /// One of the key's counters is zero: the key cannot be present (never inserted, or
    /// removed as often as it was inserted).
    Absent,
    /// None of the key's counters is zero but one is saturated at 15, whose true count is
    /// lost: the remove cannot be exact. [`CountingBlockedBloom::remove`] would leave that
    /// counter at 15 and lower the others, which is safe for a key that was inserted.
    Saturated,
}

impl core::fmt::Display for RemoveRefused {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RemoveRefused::Absent => write!(
                f,
                "the key cannot be present (one of its counters is 0): nothing was removed"
            ),
            RemoveRefused::Saturated => write!(
                f,
                "one of the key's counters is saturated at {COUNTER_MAX}, so the remove cannot \
                 be exact: nothing was removed"
            ),
        }
    }
}

impl core::error::Error for RemoveRefused {}

/// Keys between a line's prefetch and its use in the batched forms of filters of up to
/// [`FAR_BYTES`].
const AHEAD: usize = 16;

/// Past this many bytes the batched forms take the engine's walk (`engine/lookup.rs`,
/// `engine/bulk.rs`) instead of the short prefetch above. A counting key costs more
/// instructions than a blocked one, so 16 keys ahead keep enough misses in flight while the
/// lines come from the last-level cache, and the walk's second hint per key costs more than
/// it gains there; once they come from memory the walk leads (`docs/performance.md`, Levers
/// tried). 32 MiB is a large last-level cache, as for the partitioned insert.
const FAR_BYTES: usize = 32 << 20;

/// Whether `lines` are past [`FAR_BYTES`].
fn far(lines: &[Line]) -> bool {
    core::mem::size_of_val(lines) > FAR_BYTES
}

/// The batched insert's loop on kernel `K`: the engine's walk past [`FAR_BYTES`], else the
/// short prefetch.
///
/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn insert_with<K: CountKernel>(lines: &mut [Line], k: u32, hashes: &[u64]) {
    if far(lines) {
        let total = lines.len();
        // SAFETY: the caller's contract.
        let slots = unsafe { Counters::<K>::new(k) };
        insert_prefetched::<_, false>(&slots, lines, 0, total, hashes, 0, DRAIN);
        return;
    }
    for (i, &h) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(i + AHEAD) {
            prefetch(line_for(lines, ahead));
        }
        if let Some(line) = line_for_mut(lines, h) {
            // SAFETY: the caller's contract.
            unsafe { K::insert(line, h, k) };
        }
    }
}

/// The batched lookup's loop on kernel `K`, for slices of equal length: the engine's walk
/// past [`FAR_BYTES`], else the short prefetch.
///
/// # Safety
/// The CPU has `K`'s path.
#[inline(always)]
unsafe fn contains_with<K: CountKernel>(lines: &[Line], k: u32, hashes: &[u64], out: &mut [bool]) {
    if far(lines)
        && let Some(run) = Run::new(lines)
    {
        // SAFETY: the caller's contract.
        let probe = unsafe { Counters::<K>::new(k) };
        contains_each(&(probe, run), hashes, out);
        return;
    }
    for (i, (&h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
        if let Some(&ahead) = hashes.get(i + AHEAD) {
            prefetch(line_for(lines, ahead));
        }
        // SAFETY: the caller's contract.
        *o = unsafe { K::contains(line_for(lines, h), h, k) };
    }
}

per_path! {
    /// The batched insert on one path (an available one).
    fn insert_loop(lines: &mut [Line], k: u32, hashes: &[u64]) = insert_with;
}

per_path! {
    /// The batched lookup on one path (an available one).
    fn contains_loop(lines: &[Line], k: u32, hashes: &[u64], out: &mut [bool]) = contains_with;
}

/// The counting filter's lines as the engine's seams see them: the line of a hash
/// (multiply-shift, as every filter on the engine), its counters incremented ([`Slots`]) or
/// tested ([`Probe`], with the lines) by path `K`'s kernel.
struct Counters<K> {
    k: u32,
    kernel: PhantomData<fn() -> K>,
}

impl<K: CountKernel> Counters<K> {
    /// # Safety
    /// The CPU has `K`'s path: the seams run its kernel.
    #[inline(always)]
    unsafe fn new(k: u32) -> Self {
        Counters {
            k,
            kernel: PhantomData,
        }
    }
}

impl<K: CountKernel> Slots for Counters<K> {
    type Slot = Line;
    #[inline(always)]
    fn set(&self, slot: &mut Line, hash: u64) {
        // SAFETY: `new`'s caller promised that the CPU has `K`'s path.
        unsafe { K::insert(slot, hash, self.k) }
    }
}

impl<K: CountKernel> Probe for (Counters<K>, Run<'_>) {
    type Slot = Line;
    #[inline(always)]
    fn slot(&self, hash: u64) -> &Line {
        self.1.line(hash)
    }
    #[inline(always)]
    fn test(&self, line: &Line, hash: u64) -> bool {
        // SAFETY: `Counters::new`'s caller promised that the CPU has `K`'s path.
        unsafe { K::contains(line, hash, self.0.k) }
    }
    #[inline(always)]
    fn bytes(&self) -> usize {
        self.1.bytes()
    }
}

fn check_k(k: u32) -> Result<()> {
    if !(1..=MAX_COUNTING_K).contains(&k) {
        return Err(Error::InvalidK {
            k,
            min: 1,
            max: MAX_COUNTING_K,
        });
    }
    Ok(())
}

/// The counters a key touches, one probe at a time with plain integer code: the reference the
/// SIMD path is tested against.
#[cfg(test)]
fn counters_scalar(hash: u64, hashes: u32) -> Vec<usize> {
    let x = hash as u32;
    let r = ((hash >> 32) & 7) as u32;
    (0..hashes)
        .map(|i| {
            let word = ((i + r) & 7) as usize;
            let nibble = (x.wrapping_mul(SALTS[word]) >> 28) as usize;
            word * 16 + nibble
        })
        .collect()
}

mod kernel;
use kernel::CountKernel;

#[cfg(test)]
mod tests;
