//! The shape all filters share, so measurement code (the CLI, the report, the tests) can treat
//! them alike. Each filter also has inherent methods of the same names; this trait adds nothing
//! but a common door.

use crate::error::{Error, Result};
use alloc::string::ToString;

/// Which filter layout.
///
/// ```
/// use linebloom::FilterKind;
///
/// let kind: FilterKind = "cuckoo".parse()?;
/// assert_eq!(kind, FilterKind::Cuckoo);
/// assert_eq!(kind.to_string(), "cuckoo");
/// assert!("bloom".parse::<FilterKind>().is_err());
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterKind {
    /// [`crate::BlockedBloom`]: one cache line per key.
    Blocked,
    /// [`crate::ClassicBloom`]: k bits anywhere in the array.
    Classic,
    /// [`crate::CuckooFilter`]: fingerprints in 4-slot buckets, with delete.
    Cuckoo,
    /// [`crate::CountingBlockedBloom`]: 4-bit counters on one cache line per key, with delete.
    Counting,
    /// [`crate::ScalableBlockedBloom`]: a chain of blocked filters that grows with its keys.
    Scalable,
    /// [`crate::SplitBlockBloom`]: the Parquet split-block layout (32-byte blocks, XXH64).
    SplitBlock,
}

impl FilterKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [FilterKind; 6] = [
        FilterKind::Blocked,
        FilterKind::Classic,
        FilterKind::Cuckoo,
        FilterKind::Counting,
        FilterKind::Scalable,
        FilterKind::SplitBlock,
    ];

    /// The short name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            FilterKind::Blocked => "blocked",
            FilterKind::Classic => "classic",
            FilterKind::Cuckoo => "cuckoo",
            FilterKind::Counting => "counting",
            FilterKind::Scalable => "scalable",
            FilterKind::SplitBlock => "split-block",
        }
    }
}

impl core::fmt::Display for FilterKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for FilterKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "blocked" => Ok(FilterKind::Blocked),
            "classic" => Ok(FilterKind::Classic),
            "cuckoo" => Ok(FilterKind::Cuckoo),
            "counting" => Ok(FilterKind::Counting),
            "scalable" => Ok(FilterKind::Scalable),
            "split-block" | "sbbf" => Ok(FilterKind::SplitBlock),
            other => Err(Error::InvalidParameter {
                name: "filter",
                value: other.to_string(),
                allowed: "one of blocked, classic, cuckoo, counting, scalable, split-block",
            }),
        }
    }
}

/// What every filter in the crate offers at the hash level.
///
/// ```
/// use linebloom::{BlockedBloom, ClassicBloom, CuckooFilter, Filter};
///
/// let mut filters: Vec<Box<dyn Filter>> = vec![
///     Box::new(BlockedBloom::with_fpr(1_000, 0.01)?),
///     Box::new(ClassicBloom::with_fpr(1_000, 0.01)?),
///     Box::new(CuckooFilter::with_fpr(1_000, 0.01)?),
/// ];
/// for filter in &mut filters {
///     filter.insert_hash(42)?;
///     assert!(filter.contains_hash(42), "{}", filter.kind());
/// }
/// # Ok::<(), linebloom::Error>(())
/// ```
pub trait Filter: Send + Sync {
    /// The layout.
    fn kind(&self) -> FilterKind;
    /// Adds a pre-hashed key. Bloom filters always succeed; a cuckoo filter returns
    /// [`Error::Full`] (having lost nothing) when it cannot place the key.
    fn insert_hash(&mut self, hash: u64) -> Result<()>;
    /// Whether a pre-hashed key may be present.
    fn contains_hash(&self, hash: u64) -> bool;
    /// Batched lookup: `out[i] = contains_hash(hashes[i])`; an error if the lengths differ.
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()>;
    /// Adds many pre-hashed keys, in order, through the kind's batched insert; stops at the
    /// first key refused ([`Error::Full`], cuckoo only), with every key before it in.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        hashes.iter().try_for_each(|&h| self.insert_hash(h))
    }
    /// Bytes of filter data.
    fn size_bytes(&self) -> usize;
    /// The probe count k, bits set per key (Bloom filters); `None` for the cuckoo filter, which
    /// stores a fingerprint per key instead (`CuckooFilter::fingerprint_bits`).
    fn k(&self) -> Option<u32>;
    /// The hash seed (0 for the split-block filter, whose hash is XXH64 with seed 0).
    fn seed(&self) -> u64;
    /// The FPR the model expects once `items` distinct keys are in the filter.
    fn expected_fpr(&self, items: u64) -> f64;
}

impl Filter for crate::BlockedBloom {
    fn kind(&self) -> FilterKind {
        FilterKind::Blocked
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        crate::BlockedBloom::insert_hash(self, hash);
        Ok(())
    }
    fn contains_hash(&self, hash: u64) -> bool {
        crate::BlockedBloom::contains_hash(self, hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        crate::BlockedBloom::contains_hashes(self, hashes, out)
    }
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        crate::BlockedBloom::insert_hashes(self, hashes);
        Ok(())
    }
    fn size_bytes(&self) -> usize {
        crate::BlockedBloom::size_bytes(self)
    }
    fn k(&self) -> Option<u32> {
        Some(crate::BlockedBloom::k(self))
    }
    fn seed(&self) -> u64 {
        crate::BlockedBloom::seed(self)
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        crate::BlockedBloom::expected_fpr(self, items)
    }
}

/// The atomic filter answers as the blocked filter it shares its layout with
/// ([`FilterKind::Blocked`]); through the trait it inserts with `&mut self` like any other.
impl Filter for crate::AtomicBlockedBloom {
    fn kind(&self) -> FilterKind {
        FilterKind::Blocked
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        crate::AtomicBlockedBloom::insert_hash(self, hash);
        Ok(())
    }
    fn contains_hash(&self, hash: u64) -> bool {
        crate::AtomicBlockedBloom::contains_hash(self, hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        crate::AtomicBlockedBloom::contains_hashes(self, hashes, out)
    }
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        crate::AtomicBlockedBloom::insert_hashes(self, hashes);
        Ok(())
    }
    fn size_bytes(&self) -> usize {
        crate::AtomicBlockedBloom::size_bytes(self)
    }
    fn k(&self) -> Option<u32> {
        Some(crate::AtomicBlockedBloom::k(self))
    }
    fn seed(&self) -> u64 {
        crate::AtomicBlockedBloom::seed(self)
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        crate::AtomicBlockedBloom::expected_fpr(self, items)
    }
}

/// How big a filter should be: a target FPR or a number of bits per key.
///
/// ```
/// use linebloom::BlockedBloom;
/// use linebloom::filter::Sizing;
///
/// let by_rate = BlockedBloom::builder(1_000).sizing(Sizing::Fpr(0.01)).build()?;
/// let by_bits = BlockedBloom::builder(1_000).sizing(Sizing::BitsPerKey(10.0)).build()?;
/// assert!(by_rate.expected_fpr(1_000) <= 0.0101);
/// assert!(by_bits.size_bytes() * 8 >= 10 * 1_000);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sizing {
    /// Size for this false-positive rate.
    Fpr(f64),
    /// Size at this many bits per expected item.
    BitsPerKey(f64),
}

/// The sizing setters of the builders sized by a [`Sizing`] (`fpr`, `bits_per_key`,
/// `sizing`), written into the builder's field `$field`; the first two may take their own doc
/// lines.
macro_rules! sizing_setters {
    ($field:ident) => {
        $crate::filter::sizing_setters!(
            $field,
            "Size the filter for this false-positive rate (the default is 1 %).",
            "Size the filter at this many bits per expected item."
        );
    };
    ($field:ident, $fpr_doc:literal, $bits_doc:literal) => {
        #[doc = $fpr_doc]
        pub fn fpr(mut self, fpr: f64) -> Self {
            self.$field = $crate::filter::Sizing::Fpr(fpr);
            self
        }

        #[doc = $bits_doc]
        pub fn bits_per_key(mut self, bits_per_key: f64) -> Self {
            self.$field = $crate::filter::Sizing::BitsPerKey(bits_per_key);
            self
        }

        /// Size the filter by either measure (what [`fpr`](Self::fpr) and
        /// [`bits_per_key`](Self::bits_per_key) do).
        pub fn sizing(mut self, sizing: $crate::filter::Sizing) -> Self {
            self.$field = sizing;
            self
        }
    };
}
pub(crate) use sizing_setters;

/// The `k` (probes per key, within `$range`, into the builder's `hashes: Option<u32>`) and
/// `seed` (into `seed: u64`) setters of the Bloom-filter builders.
macro_rules! probe_setters {
    ($range:literal) => {
        /// Fix the probe count k (bits set per key) instead of the model's optimum, within
        #[doc = $range]
        pub fn k(mut self, k: u32) -> Self {
            self.hashes = Some(k);
            self
        }

        /// The former name of [`k`](Self::k).
        #[deprecated(note = "use `k`")]
        pub fn hashes(self, k: u32) -> Self {
            self.k(k)
        }

        /// Use this hash seed (default [`DEFAULT_SEED`](crate::hash::DEFAULT_SEED)); clients
        /// that hash keys themselves must use the same.
        pub fn seed(mut self, seed: u64) -> Self {
            self.seed = seed;
            self
        }
    };
}
pub(crate) use probe_setters;

/// `contains_keys` and `insert_keys` for a filter whose `contains_hashes` and `insert_hashes`
/// exist and whose keys hash with `self.seed`: the keys hashed 4096 at a time on the stack, each
/// round handed to the batched method, in order. `insert_keys` returns what `insert_hashes`
/// does: nothing (`unit`, or `shared` for `&self` inserts), the number of new keys (`count`), or
/// the first error, with every key before the refused one inserted (`result`).
macro_rules! keyed_batch {
    (@contains) => {
        /// Looks up many keys at once: `out[i] = contains(&keys[i])`, hashed 4096 at a time
        /// and looked up with `contains_hashes`. An error (nothing written) when the two
        /// slices differ in length.
        pub fn contains_keys<K: $crate::hash::Key>(
            &self,
            keys: &[K],
            out: &mut [bool],
        ) -> $crate::error::Result<()> {
            $crate::error::check_same_len(keys.len(), out.len())?;
            let seed = self.seed;
            $crate::hash::in_hashed_rounds(
                keys,
                |k| k.hash_with_seed(seed),
                |first, hashes| self.contains_hashes(hashes, &mut out[first..first + hashes.len()]),
            )
        }
    };
    (unit) => {
        $crate::filter::keyed_batch!(@contains);

        /// Inserts many keys: `insert` of each, hashed 4096 at a time and inserted with
        /// `insert_hashes`.
        pub fn insert_keys<K: $crate::hash::Key>(&mut self, keys: &[K]) {
            let seed = self.seed;
            $crate::hash::each_hashed_round(
                keys,
                |k| k.hash_with_seed(seed),
                |h| self.insert_hashes(h),
            );
        }
    };
    (shared) => {
        $crate::filter::keyed_batch!(@contains);

        /// Inserts many keys: `insert` of each, hashed 4096 at a time and inserted with
        /// `insert_hashes`; callable from many threads at once.
        pub fn insert_keys<K: $crate::hash::Key>(&self, keys: &[K]) {
            let seed = self.seed;
            $crate::hash::each_hashed_round(
                keys,
                |k| k.hash_with_seed(seed),
                |h| self.insert_hashes(h),
            );
        }
    };
    (count) => {
        $crate::filter::keyed_batch!(@contains);

        /// Inserts many keys: `insert` of each, hashed 4096 at a time and inserted with
        /// `insert_hashes`, in order; returns how many were new.
        pub fn insert_keys<K: $crate::hash::Key>(&mut self, keys: &[K]) -> usize {
            let seed = self.seed;
            let mut new = 0;
            $crate::hash::each_hashed_round(
                keys,
                |k| k.hash_with_seed(seed),
                |h| new += self.insert_hashes(h),
            );
            new
        }
    };
    (result) => {
        $crate::filter::keyed_batch!(@contains);

        /// Inserts many keys: `insert` of each, hashed 4096 at a time and inserted with
        /// `insert_hashes`, in order. Stops at the first key the filter refuses, with
        /// [`Error::Full`](crate::Error::Full): every key before it is in, it and those after
        /// it are not, and nothing inserted earlier is lost.
        pub fn insert_keys<K: $crate::hash::Key>(&mut self, keys: &[K]) -> $crate::error::Result<()> {
            let seed = self.seed;
            $crate::hash::in_hashed_rounds(
                keys,
                |k| k.hash_with_seed(seed),
                |_, h| self.insert_hashes(h),
            )
        }
    };
}
pub(crate) use keyed_batch;
