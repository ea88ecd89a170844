//! The concurrent blocked filter: inserts through `&self`, for a memtable that many writer
//! threads fill while readers query it.
//!
//! This module owns [`AtomicBlockedBloom`] and its conversions to and from [`BlockedBloom`]. The
//! line and mask of a key are the engine's (`line_index`, the placement's mask), so a key sets
//! exactly the bits it sets in the owned filter, and converting back gives a bit-identical
//! filter whatever order the threads inserted in (OR is commutative and idempotent). A lookup
//! reads the line's eight words and tests them on the engine's SIMD path (`engine::arch::test`, chosen
//! at run time), branch-free; an insert builds the mask on that path too (set into an empty
//! line) and ORs its words one atomic word at a time, whose locked ORs set its speed.
//!
//! The memory-ordering guarantees are documented on [`AtomicBlockedBloom`].

use alloc::string::ToString;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::{BlockedBloom, BlockedBloomBuilder, check_k, line_index};
use crate::engine::arch::test;
use crate::engine::mask::{LINE_BITS, Line, Placement, Probes};
use crate::error::{Error, Result};
use crate::filter::Sizing;
use crate::hash::Key;
use crate::model;

/// One line of the concurrent filter: eight 64-bit words, 64-byte aligned like [`Line`]. Word
/// `w` holds the same bits as words `2w` (low half) and `2w + 1` (high half) of a [`Line`].
#[repr(C, align(64))]
struct AtomicLine([AtomicU64; 8]);

impl AtomicLine {
    fn from_line(line: &Line) -> Self {
        AtomicLine(core::array::from_fn(|w| {
            AtomicU64::new(u64::from(line.0[2 * w]) | u64::from(line.0[2 * w + 1]) << 32)
        }))
    }

    fn to_line(&self) -> Line {
        let mut line = Line::ZERO;
        for (w, word) in self.0.iter().enumerate() {
            let word = word.load(Relaxed);
            line.0[2 * w] = word as u32;
            line.0[2 * w + 1] = (word >> 32) as u32;
        }
        line
    }
}

/// The mask of `hash` as eight 64-bit words, in [`AtomicLine`]'s word order: set into an empty
/// line by the one-key path (the chosen SIMD kernel, not the portable one).
#[inline(always)]
fn mask_words(hash: u64, probes: Probes) -> [u64; 8] {
    let mut mask = Line::ZERO;
    crate::engine::arch::set(&mut mask, hash, probes);
    core::array::from_fn(|w| u64::from(mask.0[2 * w]) | u64::from(mask.0[2 * w + 1]) << 32)
}

/// A blocked Bloom filter whose inserts take `&self`: share it between threads (`Arc`, scoped
/// threads) and insert and query concurrently, lock-free. Bit for bit the same filter as a
/// [`BlockedBloom`] with the same keys.
///
/// # Memory ordering
/// An insert ORs each non-zero 64-bit word of the key's mask into its line with a `Relaxed`
/// `fetch_or`; a lookup loads the line's eight words with `Relaxed` loads. That gives:
/// - on one thread, a `contains` after an `insert` of the same key returns `true` (each word is
///   one atomic location, and a thread always sees its own latest writes to it);
/// - on another thread, a `contains` returns `true` for every key whose `insert` *happened
///   before* it: the inserting thread was joined, or handed over through a channel, mutex or any
///   Release/Acquire pair after the insert returned. The filter adds no ordering of its own;
/// - a `contains` racing with an `insert` of the same key may return either answer (it may see
///   some of the key's words and not others), as if it ran before or after.
///
/// The filter is not a synchronisation primitive: a `contains` that returns `true` does not make
/// the inserting thread's other writes visible. Publish data through the caller's own
/// Release/Acquire (or lock) and the filter's bits come along with it. `Relaxed` keeps an insert
/// at one locked OR per touched word (at most `min(k, 8)`) and a lookup at eight plain loads.
///
/// ```
/// use linebloom::{AtomicBlockedBloom, BlockedBloom};
///
/// let filter = AtomicBlockedBloom::from(BlockedBloom::with_fpr(10_000, 0.01)?);
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let filter = &filter;
///         s.spawn(move || (0..1_000u64).for_each(|i| filter.insert(&(t * 1_000 + i))));
///     }
/// });
/// assert!((0..4_000u64).all(|i| filter.contains(&i)));
/// let owned: BlockedBloom = filter.into_blocked();
/// assert!(owned.contains(&42u64));
/// # Ok::<(), linebloom::Error>(())
/// ```
pub struct AtomicBlockedBloom {
    lines: Vec<AtomicLine>,
    probes: Probes,
    seed: u64,
}

/// Builds an [`AtomicBlockedBloom`] with the setters of [`BlockedBloomBuilder`]; the filter it
/// builds is the one that builder builds, made shareable.
///
/// ```
/// use linebloom::AtomicBlockedBloom;
///
/// let filter = AtomicBlockedBloom::builder(10_000).bits_per_key(12.0).k(8).seed(3).build()?;
/// assert_eq!((filter.k(), filter.seed()), (8, 3));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct AtomicBlockedBloomBuilder(BlockedBloomBuilder);

impl AtomicBlockedBloomBuilder {
    /// Size the filter for this false-positive rate (the default is 1 %).
    pub fn fpr(self, fpr: f64) -> Self {
        Self(self.0.fpr(fpr))
    }

    /// Size the filter at this many bits per expected item.
    pub fn bits_per_key(self, bits_per_key: f64) -> Self {
        Self(self.0.bits_per_key(bits_per_key))
    }

    /// Size the filter as this sizing says.
    pub fn sizing(self, sizing: Sizing) -> Self {
        Self(self.0.sizing(sizing))
    }

    /// Fix the probe count k (1..=16) instead of the model's optimum.
    pub fn k(self, k: u32) -> Self {
        Self(self.0.k(k))
    }

    /// Place each key's bits with `placement` ([`BlockedBloomBuilder::placement`]).
    pub fn placement(self, placement: Placement) -> Self {
        Self(self.0.placement(placement))
    }

    /// Use this hash seed.
    pub fn seed(self, seed: u64) -> Self {
        Self(self.0.seed(seed))
    }

    /// Builds the empty filter, or says which parameter is out of range.
    pub fn build(self) -> Result<AtomicBlockedBloom> {
        self.0.build().map(AtomicBlockedBloom::from)
    }
}

impl AtomicBlockedBloom {
    /// A builder for `items` keys (1 % FPR unless set).
    pub fn builder(items: u64) -> AtomicBlockedBloomBuilder {
        AtomicBlockedBloomBuilder(BlockedBloom::builder(items))
    }

    /// An empty filter for `items` keys with a false-positive rate of about `fpr`, as
    /// [`BlockedBloom::with_fpr`].
    pub fn with_fpr(items: u64, fpr: f64) -> Result<Self> {
        BlockedBloom::with_fpr(items, fpr).map(Self::from)
    }

    /// An empty filter for `items` keys at `bits_per_key` bits each, as
    /// [`BlockedBloom::with_bits_per_key`].
    pub fn with_bits_per_key(items: u64, bits_per_key: f64) -> Result<Self> {
        BlockedBloom::with_bits_per_key(items, bits_per_key).map(Self::from)
    }

    /// An empty filter of exactly `lines` lines and `k` probes per key (1..=16), placed by
    /// [`Placement::Shifted`].
    pub fn with_lines(lines: usize, k: u32, seed: u64) -> Result<Self> {
        check_k(k)?;
        if lines == 0 {
            return Err(Error::InvalidParameter {
                name: "lines",
                value: "0".into(),
                allowed: "at least 1",
            });
        }
        let mut out = Vec::new();
        out.try_reserve_exact(lines)
            .map_err(|_| Error::InvalidParameter {
                name: "lines",
                value: lines.to_string(),
                allowed: "a number whose 64-byte lines fit in memory",
            })?;
        out.resize_with(lines, || AtomicLine::from_line(&Line::ZERO));
        Ok(Self {
            lines: out,
            probes: Probes::new(k, Placement::Shifted),
            seed,
        })
    }

    /// Adds a key; callable from many threads at once.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) {
        self.insert_hash(key.hash_with_seed(self.seed));
    }

    /// Adds a key given by its 64-bit hash; callable from many threads at once.
    #[inline]
    pub fn insert_hash(&self, hash: u64) {
        let line = &self.lines[line_index(hash, self.lines.len())];
        for (word, bits) in line.0.iter().zip(mask_words(hash, self.probes)) {
            // A plain load first: in a filling filter many words already hold the key's bits,
            // and skipping their locked OR keeps the line shared instead of pulling it
            // exclusive into this core.
            if bits != 0 && word.load(Relaxed) & bits != bits {
                word.fetch_or(bits, Relaxed);
            }
        }
    }

    /// Whether the key may have been inserted (see the type's docs for what "inserted" means
    /// across threads).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_with_seed(self.seed))
    }

    /// Whether a key given by its 64-bit hash may have been inserted.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        // All eight words, then one vector test: a word-by-word test that stops at the first
        // word missing a bit branches on the line's contents, which a branch predictor cannot
        // learn, and loads no less memory (the words share one cache line).
        let line = self.lines[line_index(hash, self.lines.len())].to_line();
        test(&line, hash, self.probes)
    }

    /// Adds many keys given by their hashes; callable from many threads at once.
    pub fn insert_hashes(&self, hashes: &[u64]) {
        hashes.iter().for_each(|&h| self.insert_hash(h));
    }

    /// Looks up many keys given by their hashes: `out[i] = contains_hash(hashes[i])`. An error
    /// (nothing written) when the two slices differ in length.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        crate::error::check_same_len(hashes.len(), out.len())?;
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = self.contains_hash(h);
        }
        Ok(())
    }

    crate::filter::keyed_batch!(shared);

    /// A copy as an owned [`BlockedBloom`]. While other threads insert, the copy holds every
    /// insert that happened before this call and possibly some racing ones.
    pub fn to_blocked(&self) -> BlockedBloom {
        BlockedBloom {
            lines: self.lines.iter().map(AtomicLine::to_line).collect(),
            probes: self.probes,
            seed: self.seed,
        }
    }

    /// The owned [`BlockedBloom`] with the same bits.
    pub fn into_blocked(self) -> BlockedBloom {
        self.to_blocked()
    }

    /// Removes every key (needs exclusive access, so no insert races with it).
    pub fn clear(&mut self) {
        for line in &mut self.lines {
            for word in &mut line.0 {
                *word.get_mut() = 0;
            }
        }
    }

    /// Probes per key.
    pub fn k(&self) -> u32 {
        self.probes.k
    }

    /// Where each key's bits go in its line.
    pub fn placement(&self) -> Placement {
        self.probes.placement
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of lines.
    pub fn num_lines(&self) -> usize {
        self.lines.len()
    }

    /// Number of bits (512 per line).
    pub fn num_bits(&self) -> u64 {
        self.lines.len() as u64 * LINE_BITS as u64
    }

    /// Bytes of filter data (64 per line).
    pub fn size_bytes(&self) -> usize {
        core::mem::size_of_val(&self.lines[..])
    }

    /// The FPR the model expects after `items` distinct keys, as
    /// [`BlockedBloom::expected_fpr`].
    pub fn expected_fpr(&self, items: u64) -> f64 {
        if items == 0 {
            return 0.0;
        }
        model::blocked_fpr(self.num_bits() as f64 / items as f64, self.probes.k)
    }
}

impl From<BlockedBloom> for AtomicBlockedBloom {
    /// The same filter, ready for concurrent inserts (one copy of the lines).
    fn from(filter: BlockedBloom) -> Self {
        AtomicBlockedBloom {
            lines: filter.lines.iter().map(AtomicLine::from_line).collect(),
            probes: filter.probes,
            seed: filter.seed,
        }
    }
}

impl From<AtomicBlockedBloom> for BlockedBloom {
    fn from(filter: AtomicBlockedBloom) -> Self {
        filter.into_blocked()
    }
}

impl core::fmt::Debug for AtomicBlockedBloom {
    // The lines can be gigabytes: print the shape, not the contents.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicBlockedBloom")
            .field("lines", &self.lines.len())
            .field("k", &self.probes.k)
            .field("placement", &self.probes.placement)
            .field("seed", &self.seed)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    #[test]
    fn atomic_line_round_trips_and_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<AtomicLine>(), 64);
        assert_eq!(std::mem::align_of::<AtomicLine>(), 64);
        let line = Line(std::array::from_fn(|i| mix64(i as u64) as u32));
        assert_eq!(AtomicLine::from_line(&line).to_line(), line);
    }

    #[test]
    fn sequential_inserts_match_the_owned_filter() {
        for k in 1..=16 {
            let mut owned = BlockedBloom::with_lines(9, k, 5).unwrap();
            let atomic = AtomicBlockedBloom::with_lines(9, k, 5).unwrap();
            for i in 0..300 {
                owned.insert_hash(mix64(i));
                atomic.insert_hash(mix64(i));
            }
            for i in 0..3000 {
                assert_eq!(
                    atomic.contains_hash(mix64(i)),
                    owned.contains_hash(mix64(i))
                );
            }
            assert_eq!(atomic.to_blocked(), owned);
        }
    }

    #[test]
    fn every_simd_path_answers_as_the_word_by_word_test() {
        // In cache (64 lines) and past 2 MiB (40,000 lines), fixed keys: each path's test of
        // the loaded line against each word tested on its own, and the public calls (on the
        // chosen path) against the owned filter.
        for (lines, n) in [(64usize, 2_000u64), (40_000, 100_000)] {
            for (k, placement) in [1, 6, 8, 11, 16]
                .into_iter()
                .flat_map(|k| [(k, Placement::Shifted), (k, Placement::Salted)])
            {
                let mut owned = BlockedBloom::with_lines_placed(lines, k, placement, 9).unwrap();
                let atomic = AtomicBlockedBloom::from(owned.clone());
                let probes_of = Probes::new(k, placement);
                let keys: Vec<u64> = (0..n).map(|i| mix64(i ^ 0xa7)).collect();
                owned.insert_hashes(&keys);
                atomic.insert_hashes(&keys);
                assert_eq!(atomic.to_blocked(), owned);
                let probes: Vec<u64> = (0..2 * n).map(|i| mix64(i ^ 0x5e)).collect();
                let word_by_word: Vec<bool> = probes
                    .iter()
                    .map(|&h| {
                        let line = &atomic.lines[line_index(h, lines)];
                        line.0
                            .iter()
                            .zip(mask_words(h, probes_of))
                            .all(|(word, bits)| word.load(Relaxed) & bits == bits)
                    })
                    .collect();
                assert!(word_by_word.contains(&true) && word_by_word.contains(&false));
                for path in crate::engine::arch::SimdPath::available() {
                    for (&h, &want) in probes.iter().zip(&word_by_word) {
                        let line = atomic.lines[line_index(h, lines)].to_line();
                        let got = crate::engine::arch::test_on(path, &line, h, probes_of);
                        assert_eq!(got, want, "{path}, {lines} lines, k {k}");
                    }
                }
                let mut got = vec![false; probes.len()];
                atomic.contains_hashes(&probes, &mut got).unwrap();
                assert_eq!(got, word_by_word);
                let mut want = vec![false; probes.len()];
                owned.contains_hashes(&probes, &mut want).unwrap();
                assert_eq!(got, want);
            }
        }
    }
}
