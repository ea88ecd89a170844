//! The scalable blocked Bloom filter: growth when the number of keys is not known in advance.
//!
//! A [`ScalableBlockedBloom`] is a chain of [`BlockedBloom`] filters (Almeida, Baquero,
//! Preguiça and Hutchison, "Scalable Bloom Filters", 2007). The first is sized for
//! `initial_items` keys; when the newest is full, a new one is added, `growth` times larger and
//! sized for an FPR `tightening` times lower. With a target `fpr` P, filter `i` is sized for
//! `P (1 - r) r^i` (r the tightening), so however far the chain grows, the sum of its filters'
//! rates, and so its false-positive rate, stays under `P (1 - r) / (1 - r) = P`.
//!
//! - `insert` first asks every filter: a key that any of them reports present is not stored
//!   again (it would add nothing a lookup can see), and `insert` returns `false`.
//! - Lookups ask the newest filter first (it holds the most keys) and stop at the first yes.
//! - Every filter uses the same 64-bit hash of a key (one hash per key, however long the
//!   chain); each takes its own line from it, so the filters' answers are independent.
//!
//! The defaults, growth 2 and tightening 0.9, come from the tuning table in
//! `docs/performance.md` (Growth): grown a thousandfold at a 1 % target, they give the fewest
//! bits per key of the growths (2, 4) and tightenings (0.5 to 0.9) measured, with the FPR
//! under the target; growth 4 halves the filters a miss visits for more bits per key.

use crate::blocked::{BlockedBloom, Placement};
use crate::error::{Error, Result, check_bits_per_key, check_fpr, check_items};
use crate::filter::Sizing;
use crate::filter::{Filter, FilterKind};
use crate::hash::{DEFAULT_SEED, Key};
#[cfg(not(feature = "std"))]
use crate::math::Float;
use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

/// The default growth: each new filter holds twice the keys of the one before.
pub const DEFAULT_GROWTH: f64 = 2.0;
/// The default tightening: each new filter is sized for 0.9 times the FPR of the one before.
pub const DEFAULT_TIGHTENING: f64 = 0.9;

/// A chain of blocked Bloom filters that grows as keys arrive, its FPR bounded by the target.
///
/// ```
/// use linebloom::ScalableBlockedBloom;
///
/// let mut filter = ScalableBlockedBloom::with_fpr(100, 0.01)?;
/// for i in 0..10_000u64 {
///     filter.insert(&i);
/// }
/// assert!((0..10_000u64).all(|i| filter.contains(&i)));
/// assert!(filter.filters() > 1);
/// assert!(filter.bound_fpr() <= 0.01);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, PartialEq, Debug)]
pub struct ScalableBlockedBloom {
    /// The chain, oldest first.
    filters: Vec<Part>,
    initial_items: u64,
    fpr: f64,
    growth: f64,
    tightening: f64,
    seed: u64,
    placement: Placement,
}

/// One filter of the chain with the keys it holds and was sized for.
#[derive(Clone, PartialEq, Debug)]
struct Part {
    filter: BlockedBloom,
    capacity: u64,
    len: u64,
    fpr: f64,
}

/// Builds a [`ScalableBlockedBloom`] with its FPR bound (or the bits per key whose blocked-filter
/// FPR is the bound), growth, tightening or seed fixed.
///
/// ```
/// use linebloom::ScalableBlockedBloom;
///
/// let filter =
///     ScalableBlockedBloom::builder(1_000).fpr(0.001).growth(4.0).tightening(0.5).build()?;
/// assert_eq!(filter.growth(), 4.0);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ScalableBlockedBloomBuilder {
    initial_items: u64,
    fpr: f64,
    bits_per_key: Option<f64>,
    growth: f64,
    tightening: f64,
    seed: u64,
    placement: Placement,
}

impl ScalableBlockedBloomBuilder {
    /// Bound the chain's FPR by this rate (the default is 1 %).
    pub fn fpr(mut self, fpr: f64) -> Self {
        self.fpr = fpr;
        self.bits_per_key = None;
        self
    }

    /// Bound the chain's FPR by that of a blocked filter at this many bits per key (its
    /// optimal k); the chain itself takes more bits per key, as its later filters tighten.
    pub fn bits_per_key(mut self, bits_per_key: f64) -> Self {
        self.bits_per_key = Some(bits_per_key);
        self
    }

    /// Bound the chain's FPR as this sizing says ([`fpr`](Self::fpr) or
    /// [`bits_per_key`](Self::bits_per_key)).
    pub fn sizing(self, sizing: Sizing) -> Self {
        match sizing {
            Sizing::Fpr(fpr) => self.fpr(fpr),
            Sizing::BitsPerKey(b) => self.bits_per_key(b),
        }
    }

    /// How many times larger each new filter is than the one before (at least 1.1, at most
    /// 64; default [`DEFAULT_GROWTH`]).
    pub fn growth(mut self, growth: f64) -> Self {
        self.growth = growth;
        self
    }

    /// How many times lower each new filter's FPR is than the one before (above 0, below 1;
    /// default [`DEFAULT_TIGHTENING`]).
    pub fn tightening(mut self, tightening: f64) -> Self {
        self.tightening = tightening;
        self
    }

    /// The hash seed (default [`DEFAULT_SEED`]).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Place each key's bits with `placement` in every filter of the chain
    /// ([`Placement::Shifted`] unless set; see [`crate::BlockedBloomBuilder::placement`]).
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// The filter (its first part allocated), or an error for parameters out of range.
    pub fn build(mut self) -> Result<ScalableBlockedBloom> {
        if let Some(b) = self.bits_per_key.take() {
            check_bits_per_key(b)?;
            self.fpr = crate::model::blocked_fpr(b, crate::model::blocked_optimal_k(b));
        }
        self.check()?;
        let mut filter = ScalableBlockedBloom {
            filters: Vec::new(),
            initial_items: self.initial_items,
            fpr: self.fpr,
            growth: self.growth,
            tightening: self.tightening,
            seed: self.seed,
            placement: self.placement,
        };
        filter.grow()?;
        Ok(filter)
    }

    fn check(&self) -> Result<()> {
        check_items(self.initial_items)?;
        check_fpr(self.fpr)?;
        if !(1.1..=64.0).contains(&self.growth) {
            return Err(Error::InvalidParameter {
                name: "growth",
                value: self.growth.to_string(),
                allowed: "from 1.1 to 64",
            });
        }
        if !(self.tightening > 0.0 && self.tightening < 1.0) {
            return Err(Error::InvalidParameter {
                name: "tightening",
                value: self.tightening.to_string(),
                allowed: "above 0 and below 1",
            });
        }
        Ok(())
    }
}

impl ScalableBlockedBloom {
    /// A chain whose first filter holds `initial_items` keys, its FPR under `fpr` however
    /// many keys it grows to, with the default growth and tightening.
    pub fn with_fpr(initial_items: u64, fpr: f64) -> Result<Self> {
        Self::builder(initial_items).fpr(fpr).build()
    }

    /// A chain whose first filter holds `initial_items` keys, its FPR under that of a blocked
    /// filter at `bits_per_key` bits per key ([`ScalableBlockedBloomBuilder::bits_per_key`]).
    pub fn with_bits_per_key(initial_items: u64, bits_per_key: f64) -> Result<Self> {
        Self::builder(initial_items)
            .bits_per_key(bits_per_key)
            .build()
    }

    /// A builder for a chain starting at `initial_items` keys, its FPR bound 1 % unless set.
    pub fn builder(initial_items: u64) -> ScalableBlockedBloomBuilder {
        ScalableBlockedBloomBuilder {
            initial_items,
            fpr: 0.01,
            bits_per_key: None,
            growth: DEFAULT_GROWTH,
            tightening: DEFAULT_TIGHTENING,
            seed: DEFAULT_SEED,
            placement: Placement::default(),
        }
    }

    /// Adds a key; `true` when it was new (no filter of the chain reported it present).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(key.hash_with_seed(self.seed))
    }

    /// Whether a key may be present.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_with_seed(self.seed))
    }

    /// Adds a pre-hashed key; `true` when it was new. A new key goes into the newest filter,
    /// after a new filter is added if the newest is full. Adding one needs memory; where that
    /// cannot be had the key still goes into the newest filter (over its size, so above its
    /// FPR), never lost.
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        if self.contains_hash(hash) {
            return false;
        }
        if self.newest().len >= self.newest().capacity {
            // On failure (no memory), the full filter takes the key: a higher FPR, no loss.
            let _ = self.grow();
        }
        let part = self.newest_mut();
        part.filter.insert_hash(hash);
        part.len += 1;
        true
    }

    /// Whether a pre-hashed key may be present: the newest filter is asked first.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.filters
            .iter()
            .rev()
            .any(|p| p.filter.contains_hash(hash))
    }

    /// Inserts many pre-hashed keys, one after another (each first asks the chain, so the
    /// order matters); returns how many were new.
    pub fn insert_hashes(&mut self, hashes: &[u64]) -> usize {
        hashes.iter().filter(|&&h| self.insert_hash(h)).count()
    }

    crate::filter::keyed_batch!(count);

    /// Batched lookup: `out[i] = contains_hash(hashes[i])`, each filter's batched, prefetching
    /// lookup in turn, newest first. An error when the lengths differ.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        let (newest, older) = self
            .filters
            .split_last()
            .expect("a chain is built with its first filter and never loses one");
        newest.filter.contains_hashes(hashes, out)?;
        // The older filters answer a chunk at a time into a buffer on the stack, ORed in.
        let mut part_out = [false; 1024];
        for (hashes, out) in hashes.chunks(1024).zip(out.chunks_mut(1024)) {
            let part_out = &mut part_out[..hashes.len()];
            for part in older.iter().rev() {
                part.filter.contains_hashes(hashes, part_out)?;
                for (o, p) in out.iter_mut().zip(part_out.iter()) {
                    *o |= *p;
                }
            }
        }
        Ok(())
    }

    /// Empties the chain: back to its first filter, cleared (every byte of it written).
    pub fn clear(&mut self) {
        self.filters.truncate(1);
        if let Some(first) = self.filters.first_mut() {
            first.filter.clear();
            first.len = 0;
        }
    }

    /// Keys stored (inserts that returned `true`).
    pub fn len(&self) -> u64 {
        self.filters.iter().map(|p| p.len).sum()
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys the filters built so far are sized for, together.
    pub fn capacity(&self) -> u64 {
        self.filters.iter().map(|p| p.capacity).sum()
    }

    /// Filters in the chain.
    pub fn filters(&self) -> usize {
        self.filters.len()
    }

    /// The filters, oldest first.
    pub fn parts(&self) -> impl Iterator<Item = &BlockedBloom> {
        self.filters.iter().map(|p| &p.filter)
    }

    /// The FPR bound: the target given at construction.
    pub fn fpr(&self) -> f64 {
        self.fpr
    }

    /// Growth between consecutive filters.
    pub fn growth(&self) -> f64 {
        self.growth
    }

    /// Tightening between consecutive filters.
    pub fn tightening(&self) -> f64 {
        self.tightening
    }

    /// Keys the first filter is sized for.
    pub fn initial_items(&self) -> u64 {
        self.initial_items
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Bytes of all filters' lines.
    pub fn size_bytes(&self) -> usize {
        self.filters.iter().map(|p| p.filter.size_bytes()).sum()
    }

    /// Set bits over all bits, across the filters.
    pub fn fill_ratio(&self) -> f64 {
        let bits: f64 = self
            .filters
            .iter()
            .map(|p| p.filter.num_bits() as f64)
            .sum();
        let set: f64 = self
            .filters
            .iter()
            .map(|p| p.filter.fill_ratio() * p.filter.num_bits() as f64)
            .sum();
        set / bits
    }

    /// The sum of the FPRs the filters were sized for: what the chain's FPR stays under when
    /// every filter is full; always below [`fpr`](Self::fpr).
    pub fn bound_fpr(&self) -> f64 {
        self.filters.iter().map(|p| p.fpr).sum()
    }

    /// The FPR the models expect from the chain as it is now: a key is a false positive when
    /// any filter says yes.
    pub fn current_fpr(&self) -> f64 {
        1.0 - self
            .filters
            .iter()
            .map(|p| 1.0 - p.filter.expected_fpr(p.len))
            .product::<f64>()
    }

    /// The FPR the models expect once `items` keys are stored: the keys fill the filters in
    /// order (the ones not yet built as the chain would build them, each at the FPR it is
    /// sized for once full).
    pub fn expected_fpr(&self, items: u64) -> f64 {
        let mut left = items;
        let mut miss = 1.0;
        let mut i = 0;
        while left > 0 {
            let (capacity, fpr) = self.part_size(i);
            let take = left.min(capacity);
            miss *= 1.0
                - match self.filters.get(i) {
                    Some(p) => p.filter.expected_fpr(take),
                    None => {
                        // As `grow` would size it: the blocked model at its bits per key.
                        let sized = fpr.max(crate::model::BLOCKED_MIN_FPR);
                        let bits = crate::model::blocked_bits_per_key(sized).unwrap_or(64.0);
                        let k = crate::model::blocked_optimal_k(bits);
                        crate::model::blocked_fpr(bits * capacity as f64 / take as f64, k)
                    }
                };
            left -= take;
            i += 1;
            if i > 4096 {
                break;
            }
        }
        1.0 - miss
    }

    /// Rebuilds a chain from its parts (the format's reader), checking that they are the
    /// chain these parameters build.
    pub(crate) fn from_parts(
        initial_items: u64,
        fpr: f64,
        growth: f64,
        tightening: f64,
        seed: u64,
        parts: Vec<(BlockedBloom, u64)>,
    ) -> Result<Self> {
        let corrupt = |why: &str| Error::Corrupt(format!("scalable filter: {why}"));
        // The parameters are checked as the builder checks them, without building anything:
        // the parts come from the bytes.
        let params = ScalableBlockedBloomBuilder {
            initial_items,
            fpr,
            bits_per_key: None,
            growth,
            tightening,
            seed,
            placement: Placement::default(),
        };
        params.check().map_err(|e| corrupt(&e.to_string()))?;
        let Some(placement) = parts.first().map(|(f, _)| f.placement()) else {
            return Err(corrupt("no filters"));
        };
        let mut chain = ScalableBlockedBloom {
            filters: Vec::with_capacity(parts.len()),
            initial_items,
            fpr,
            growth,
            tightening,
            seed,
            placement,
        };
        for (i, (filter, len)) in parts.into_iter().enumerate() {
            let (capacity, part_fpr) = chain.part_size(i);
            if filter.seed() != seed {
                return Err(corrupt("a filter with another seed"));
            }
            if filter.placement() != placement {
                return Err(corrupt("filters of different placements"));
            }
            chain.filters.push(Part {
                filter,
                capacity,
                len,
                fpr: part_fpr,
            });
        }
        Ok(chain)
    }

    /// Where each key's bits go in its filter's line: the same in every filter of the chain
    /// (a chain read from bytes keeps the placement it was written with as it grows).
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// The number of keys stored in each filter, oldest first (for the format).
    pub(crate) fn part_lens(&self) -> impl Iterator<Item = u64> + '_ {
        self.filters.iter().map(|p| p.len)
    }

    /// Keys and FPR filter `i` of the chain is sized for.
    fn part_size(&self, i: usize) -> (u64, f64) {
        let scale = self.growth.powi(i as i32);
        let capacity = (self.initial_items as f64 * scale)
            .ceil()
            .min(u64::MAX as f64 / 2.0) as u64;
        let fpr = self.fpr * (1.0 - self.tightening) * self.tightening.powi(i as i32);
        (capacity.max(1), fpr)
    }

    /// Adds the next filter of the chain.
    fn grow(&mut self) -> Result<()> {
        let (capacity, fpr) = self.part_size(self.filters.len());
        // Past the model's lowest FPR the chain cannot tighten further: the later filters stay
        // at that rate (their sum then grows past the bound only after about 10^10 filters'
        // worth of keys, far past any memory).
        let sized_fpr = fpr.max(crate::model::BLOCKED_MIN_FPR);
        let filter = BlockedBloom::builder(capacity)
            .fpr(sized_fpr)
            .seed(self.seed)
            .placement(self.placement())
            .build()?;
        self.filters.push(Part {
            filter,
            capacity,
            len: 0,
            fpr,
        });
        Ok(())
    }

    fn newest(&self) -> &Part {
        // A chain is built with its first filter and never loses one.
        &self.filters[self.filters.len() - 1]
    }

    fn newest_mut(&mut self) -> &mut Part {
        let last = self.filters.len() - 1;
        &mut self.filters[last]
    }
}

// Every f64 field is checked finite when the chain is built or read (a NaN would have been
// refused), so equality is an equivalence relation.
impl Eq for ScalableBlockedBloom {}

impl Filter for ScalableBlockedBloom {
    fn kind(&self) -> FilterKind {
        FilterKind::Scalable
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        ScalableBlockedBloom::insert_hash(self, hash);
        Ok(())
    }
    fn contains_hash(&self, hash: u64) -> bool {
        ScalableBlockedBloom::contains_hash(self, hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        ScalableBlockedBloom::contains_hashes(self, hashes, out)
    }
    fn size_bytes(&self) -> usize {
        ScalableBlockedBloom::size_bytes(self)
    }
    /// The probes per key of the newest filter.
    fn k(&self) -> Option<u32> {
        Some(self.newest().filter.k())
    }
    fn seed(&self) -> u64 {
        ScalableBlockedBloom::seed(self)
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        ScalableBlockedBloom::expected_fpr(self, items)
    }
}

#[cfg(test)]
mod tests;
