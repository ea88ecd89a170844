//! The shape all filters share, so measurement code (the CLI, the report, the tests) can treat
//! them alike. Each filter also has inherent methods of the same names; this trait adds nothing
//! but a common door.

use crate::error::{Error, Result};

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

impl std::fmt::Display for FilterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for FilterKind {
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
    /// Bytes of filter data.
    fn size_bytes(&self) -> usize;
    /// Probes per key (Bloom filters) or fingerprint bits (cuckoo filter).
    fn hashes(&self) -> u32;
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
    fn size_bytes(&self) -> usize {
        crate::BlockedBloom::size_bytes(self)
    }
    fn hashes(&self) -> u32 {
        crate::BlockedBloom::hashes(self)
    }
    fn seed(&self) -> u64 {
        crate::BlockedBloom::seed(self)
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        crate::BlockedBloom::expected_fpr(self, items)
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

/// The `hashes` (probes per key, within `$range`, into the builder's `hashes: Option<u32>`) and
/// `seed` (into `seed: u64`) setters of the Bloom-filter builders.
macro_rules! probe_setters {
    ($range:literal) => {
        /// Fix the number of probes per key instead of the model's optimum, within
        #[doc = $range]
        pub fn hashes(mut self, hashes: u32) -> Self {
            self.hashes = Some(hashes);
            self
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
