//! The value behind a `BF.*` key: a chain of blocked filters that grows as RedisBloom's does.
//!
//! This module owns [`BloomChain`] (its parameters, its layers, insert and lookup on hashes) and
//! nothing of Redis: the commands, the data type callbacks and the byte encodings live beside
//! it and call it.
//!
//! A chain starts with one [`BlockedBloom`] sized for `capacity` keys. A scaling chain adds a
//! layer when the newest is full: `expansion` times the keys of the one before, sized for half
//! its error rate; the first layer is sized for half the asked rate. So the layers' rates sum
//! to `error_rate * (1/2 + 1/4 + ...)`, under the rate asked however far the chain grows (the
//! same rule as RedisBloom's, whose scaling filters also tighten their first layer). A
//! non-scaling chain is one layer at the asked rate, and refuses a new key once it holds
//! `capacity`.
//!
//! Every layer takes the same 64-bit hash of an item (xxh3 with the chain's seed), so a command
//! hashes each item once however many layers it visits. Below the blocked model's floor
//! ([`linebloom::model::BLOCKED_MIN_FPR`], 1e-10) a layer is sized for the floor.

use std::sync::atomic::{AtomicU64, Ordering};

use linebloom::model::{BLOCKED_MIN_FPR, blocked_bits_per_key};
use linebloom::{BlockedBloom, Key};

/// The error rate of a filter that `BF.ADD`, `BF.MADD` or `BF.INSERT` creates unasked.
pub const DEFAULT_ERROR_RATE: f64 = 0.01;
/// The capacity of a filter created unasked.
pub const DEFAULT_CAPACITY: u64 = 100;
/// The expansion of a scaling filter when none is given.
pub const DEFAULT_EXPANSION: u64 = 2;
/// Each new layer is sized for this fraction of the error rate of the one before.
pub const TIGHTENING: f64 = 0.5;
/// The hash seed of every chain this module creates: the same items hash alike on a primary,
/// its replicas and after a reload, so their bits (and `DEBUG DIGEST`) agree.
pub const SEED: u64 = linebloom::hash::DEFAULT_SEED;

/// The most bytes one filter's bits may take: the machine's memory, set when the module loads.
/// A filter larger than the machine can never fill (the kernel would end the server as its
/// pages are touched), so asking for one is an error reply instead.
static MAX_FILTER_BYTES: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets the most bytes one filter's bits may take.
pub fn set_max_filter_bytes(bytes: u64) {
    MAX_FILTER_BYTES.store(bytes, Ordering::Relaxed);
}

/// The most bytes one filter's bits may take ([`set_max_filter_bytes`]).
pub fn max_filter_bytes() -> u64 {
    MAX_FILTER_BYTES.load(Ordering::Relaxed)
}

/// An error when a filter of `bytes` bytes of bits is larger than `max`.
pub fn check_filter_bytes(bytes: u64, max: u64) -> Result<(), String> {
    if bytes > max {
        return Err(format!(
            "a filter of {bytes} bytes is more than this machine's memory ({max} bytes)"
        ));
    }
    Ok(())
}

/// What a chain was created with: `BF.RESERVE`'s arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The false-positive rate asked for, above 0 and below 1.
    pub error_rate: f64,
    /// Keys the first layer holds, at least 1.
    pub capacity: u64,
    /// Growth factor between layers, at least 1; 0 for a non-scaling chain.
    pub expansion: u64,
}

impl Params {
    /// The parameters of a filter created without `BF.RESERVE`.
    pub const DEFAULT: Params = Params {
        error_rate: DEFAULT_ERROR_RATE,
        capacity: DEFAULT_CAPACITY,
        expansion: DEFAULT_EXPANSION,
    };

    /// Whether the chain may add layers.
    pub fn scaling(&self) -> bool {
        self.expansion != 0
    }

    /// Keys layer `i` holds: `capacity * expansion^i`, saturating.
    pub fn layer_capacity(&self, i: usize) -> u64 {
        let mut capacity = self.capacity;
        for _ in 0..i {
            capacity = capacity.saturating_mul(self.expansion.max(1));
        }
        capacity
    }

    /// The FPR layer `i` is sized for (before the model's floor).
    pub fn layer_error_rate(&self, i: usize) -> f64 {
        if self.scaling() {
            self.error_rate * TIGHTENING.powi(i.min(4096) as i32 + 1)
        } else {
            self.error_rate
        }
    }

    /// Whether the parameters are ones `BF.RESERVE` accepts.
    pub fn is_valid(&self) -> bool {
        self.error_rate > 0.0 && self.error_rate < 1.0 && self.capacity > 0
    }
}

/// One blocked filter of a chain and the keys it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// The bits.
    pub filter: BlockedBloom,
    /// Keys added to this layer (new keys only).
    pub items: u64,
}

/// Why a new key was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// A non-scaling chain holds its capacity.
    Full,
    /// The next layer could not be allocated (or its size is past what one filter can be).
    NoMemory,
}

impl InsertError {
    /// The error reply, in RedisBloom's words.
    pub fn message(self) -> &'static str {
        match self {
            InsertError::Full => "ERR non scaling filter is full",
            InsertError::NoMemory => "ERR problem inserting into filter",
        }
    }
}

/// A scalable (or fixed) chain of blocked filters with RedisBloom's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BloomChain {
    params: Params,
    seed: u64,
    layers: Vec<Layer>,
}

impl BloomChain {
    /// A chain with its first layer allocated, or a message saying why it cannot be built.
    pub fn new(params: Params) -> Result<Self, String> {
        if !params.is_valid() {
            return Err(format!("invalid filter parameters {params:?}"));
        }
        let first = Self::allocate_layer(&params, 0, SEED, 0)?;
        Ok(BloomChain {
            params,
            seed: SEED,
            layers: vec![Layer {
                filter: first,
                items: 0,
            }],
        })
    }

    /// A chain from layers that were saved (RDB, `BF.LOADCHUNK`); the caller checked them.
    pub fn from_layers(params: Params, seed: u64, layers: Vec<Layer>) -> Self {
        BloomChain {
            params,
            seed,
            layers,
        }
    }

    /// The empty blocked filter layer `i` of a chain with these parameters is, or why it
    /// cannot be had (beside `existing` bytes of the layers before it).
    fn allocate_layer(
        params: &Params,
        i: usize,
        seed: u64,
        existing: usize,
    ) -> Result<BlockedBloom, String> {
        let capacity = params.layer_capacity(i);
        let fpr = params.layer_error_rate(i).max(BLOCKED_MIN_FPR);
        let bits_per_key = blocked_bits_per_key(fpr).map_err(|e| e.to_string())?;
        let bytes = capacity as f64 * bits_per_key / 8.0 + existing as f64;
        check_filter_bytes(bytes.min(u64::MAX as f64) as u64, max_filter_bytes())?;
        BlockedBloom::builder(capacity)
            .fpr(fpr)
            .seed(seed)
            .build()
            .map_err(|e| e.to_string())
    }

    /// The hash every layer of this chain uses for `item`.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> u64 {
        item.hash_with_seed(self.seed)
    }

    /// Whether an item (by its hash) may be present: the newest layer, which holds the most
    /// keys, is asked first.
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.layers
            .iter()
            .rev()
            .any(|l| l.filter.contains_hash(hash))
    }

    /// Batched lookup: `out[i] = contains_hash(hashes[i])`, through each layer's batched,
    /// prefetching lookup in turn, the newest first.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        debug_assert_eq!(hashes.len(), out.len());
        let Some((newest, older)) = self.layers.split_last() else {
            out.fill(false);
            return;
        };
        // Both slices have the same length, the one thing the batched lookup checks.
        let _ = newest.filter.contains_hashes(hashes, out);
        if older.is_empty() {
            return;
        }
        let mut part = [false; 256];
        for (hashes, out) in hashes.chunks(part.len()).zip(out.chunks_mut(part.len())) {
            let part = &mut part[..hashes.len()];
            for layer in older.iter().rev() {
                let _ = layer.filter.contains_hashes(hashes, part);
                for (o, p) in out.iter_mut().zip(part.iter()) {
                    *o |= *p;
                }
            }
        }
    }

    /// Adds one item by its hash: `Ok(true)` when it was new (no layer held all its bits).
    pub fn insert_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        self.insert_new(hash).map(|()| true)
    }

    /// Adds items by their hashes, in order, as `insert_hash` one after another would, and
    /// returns each one's answer up to the first that could not be added (with its error).
    ///
    /// The batch is first looked up in every layer with the batched lookup (an item found
    /// there stays found: bits are only ever set). The items it did not find are then checked
    /// again, one by one, in the layers this batch can have written (the newest at the start
    /// and any added since), and inserted: the lookup has just brought their lines into the
    /// cache, and each answer must count the items before it (`BF.MADD k a a` is `[1, 0]`).
    pub fn insert_hashes(&mut self, hashes: &[u64]) -> (Vec<bool>, Option<InsertError>) {
        let mut found = vec![false; hashes.len()];
        self.contains_hashes(hashes, &mut found);
        let written_from = self.layers.len() - 1;
        let mut answers = Vec::with_capacity(hashes.len());
        for (&hash, &found) in hashes.iter().zip(&found) {
            if found
                || self.layers[written_from..]
                    .iter()
                    .any(|l| l.filter.contains_hash(hash))
            {
                answers.push(false);
                continue;
            }
            match self.insert_new(hash) {
                Ok(()) => answers.push(true),
                Err(e) => return (answers, Some(e)),
            }
        }
        (answers, None)
    }

    /// Adds an item no layer holds: into the newest layer, after adding a layer when it is
    /// full (or refusing, for a non-scaling chain).
    fn insert_new(&mut self, hash: u64) -> Result<(), InsertError> {
        let newest = self.layers.len() - 1;
        if self.layers[newest].items >= self.params.layer_capacity(newest) {
            if !self.params.scaling() {
                return Err(InsertError::Full);
            }
            let filter =
                Self::allocate_layer(&self.params, newest + 1, self.seed, self.bits_bytes())
                    .map_err(|_| InsertError::NoMemory)?;
            self.layers.push(Layer { filter, items: 0 });
        }
        let layer = self.layers.last_mut().expect("a chain has a layer");
        layer.filter.insert_hash(hash);
        layer.items += 1;
        Ok(())
    }

    /// The parameters it was created with.
    pub fn params(&self) -> Params {
        self.params
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The layers, writable (for loading saved bits).
    pub fn layers_mut(&mut self) -> &mut [Layer] {
        &mut self.layers
    }

    /// Keys added (`BF.CARD`): the new ones, over all layers.
    pub fn items(&self) -> u64 {
        self.layers.iter().map(|l| l.items).sum()
    }

    /// Keys the layers built so far hold together (`BF.INFO`'s Capacity).
    pub fn capacity(&self) -> u64 {
        (0..self.layers.len())
            .map(|i| self.params.layer_capacity(i))
            .fold(0u64, u64::saturating_add)
    }

    /// Bytes of all layers' bits.
    pub fn bits_bytes(&self) -> usize {
        self.layers.iter().map(|l| l.filter.size_bytes()).sum()
    }

    /// Bytes this value takes in memory: the bits and the structures around them
    /// (`MEMORY USAGE`, `BF.INFO`'s Size).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.layers.len() * std::mem::size_of::<Layer>()
            + self.bits_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(from: u64, to: u64) -> Vec<Vec<u8>> {
        (from..to)
            .map(|i| format!("key:{i}").into_bytes())
            .collect()
    }

    fn measured_fpr(chain: &BloomChain, probes: u64) -> f64 {
        let hashes: Vec<u64> = keys(1 << 40, (1 << 40) + probes)
            .iter()
            .map(|k| chain.hash(k))
            .collect();
        let mut out = vec![false; hashes.len()];
        chain.contains_hashes(&hashes, &mut out);
        out.iter().filter(|&&f| f).count() as f64 / probes as f64
    }

    #[test]
    fn layers_grow_by_expansion_and_tighten_by_half() {
        let params = Params {
            error_rate: 0.01,
            capacity: 100,
            expansion: 3,
        };
        let mut chain = BloomChain::new(params).unwrap();
        let hashes: Vec<u64> = keys(0, 1_000).iter().map(|k| chain.hash(k)).collect();
        let (answers, error) = chain.insert_hashes(&hashes);
        assert_eq!(error, None);
        assert_eq!(answers.iter().filter(|&&a| a).count() as u64, chain.items());
        // 100 + 300 + 900 >= 1000 new keys.
        assert_eq!(chain.layers().len(), 3);
        assert_eq!(chain.capacity(), 1_300);
        assert_eq!(params.layer_error_rate(0), 0.005);
        assert_eq!(params.layer_error_rate(2), 0.00125);
        assert!(hashes.iter().all(|&h| chain.contains_hash(h)));
    }

    #[test]
    fn batched_inserts_answer_as_one_by_one_inserts() {
        let params = Params {
            error_rate: 0.05,
            capacity: 50,
            expansion: 2,
        };
        let mut batched = BloomChain::new(params).unwrap();
        let mut single = BloomChain::new(params).unwrap();
        // Duplicates inside one batch, and batches that cross layer boundaries.
        let items: Vec<Vec<u8>> = (0..2_000u64)
            .map(|i| format!("k{}", i % 1_300).into_bytes())
            .collect();
        for batch in items.chunks(137) {
            let hashes: Vec<u64> = batch.iter().map(|k| batched.hash(k)).collect();
            let (answers, error) = batched.insert_hashes(&hashes);
            assert_eq!(error, None);
            let one_by_one: Vec<bool> = hashes
                .iter()
                .map(|&h| single.insert_hash(h).unwrap())
                .collect();
            assert_eq!(answers, one_by_one);
        }
        assert_eq!(batched, single);
        let (answers, _) = batched.insert_hashes(&[batched.hash(b"x"), batched.hash(b"x")]);
        assert_eq!(answers, [true, false]);
    }

    #[test]
    fn non_scaling_chain_refuses_new_keys_when_full() {
        let params = Params {
            error_rate: 0.01,
            capacity: 3,
            expansion: 0,
        };
        let mut chain = BloomChain::new(params).unwrap();
        let hashes: Vec<u64> = keys(0, 5).iter().map(|k| chain.hash(k)).collect();
        let (answers, error) = chain.insert_hashes(&hashes);
        assert_eq!(answers, [true, true, true]);
        assert_eq!(error, Some(InsertError::Full));
        assert_eq!(chain.items(), 3);
        // A key already present still answers 0 on a full filter.
        assert_eq!(chain.insert_hash(hashes[0]), Ok(false));
        assert_eq!(chain.insert_hash(hashes[4]), Err(InsertError::Full));
        assert_eq!(chain.layers().len(), 1);
    }

    /// The rate asked for holds, within sampling noise, for a chain grown to four layers and for
    /// a full non-scaling filter: items and probes are fixed, so the measurement is the same on
    /// every run.
    #[test]
    fn measured_fpr_stays_under_the_rate_asked() {
        for (expansion, capacity, items) in [(2, 10_000, 100_000), (0, 100_000, 100_000)] {
            for error_rate in [0.01, 0.001] {
                let params = Params {
                    error_rate,
                    capacity,
                    expansion,
                };
                let mut chain = BloomChain::new(params).unwrap();
                let hashes: Vec<u64> = keys(0, items).iter().map(|k| chain.hash(k)).collect();
                let (_, error) = chain.insert_hashes(&hashes);
                assert_eq!(error, None);
                let fpr = measured_fpr(&chain, 1_000_000);
                // At capacity the model's FPR is the rate asked for, so a measurement lands on
                // either side of it by a few per cent (the sample, the keys); a filter that
                // misplaced bits would miss by far more.
                assert!(
                    fpr < error_rate * 1.05,
                    "expansion {expansion}, rate {error_rate}: measured {fpr} with {} layers",
                    chain.layers().len()
                );
            }
        }
    }

    #[test]
    fn rates_below_the_model_floor_are_sized_at_the_floor() {
        let params = Params {
            error_rate: 1e-12,
            capacity: 10,
            expansion: 2,
        };
        let chain = BloomChain::new(params).unwrap();
        assert!(chain.bits_bytes() > 0);
    }

    #[test]
    fn impossible_sizes_are_errors() {
        let huge = Params {
            error_rate: 0.01,
            capacity: u64::MAX,
            expansion: 2,
        };
        assert!(BloomChain::new(huge).is_err());
        let mut chain = BloomChain::new(Params {
            error_rate: 0.01,
            capacity: 1,
            expansion: u64::MAX,
        })
        .unwrap();
        assert_eq!(chain.insert_hash(1), Ok(true));
        assert_eq!(chain.insert_hash(2), Err(InsertError::NoMemory));
        assert_eq!(chain.items(), 1);
    }
}
