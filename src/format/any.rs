//! [`AnyFilter`], a filter of a kind known only once its bytes are read, and [`read_any`],
//! which reads one. Every method delegates to the filter inside.

use alloc::string::ToString;
use alloc::vec::Vec;
#[cfg(feature = "std")]
use std::io::Write;

use super::header::read_header;
use crate::error::{Error, Result};
use crate::filter::{Filter, FilterKind, Sizing};
use crate::hash::Key;
use crate::{
    BlockedBloom, ClassicBloom, CountingBlockedBloom, CuckooFilter, ScalableBlockedBloom,
    SplitBlockBloom,
};

/// Reads a serialized filter of any kind: the CLI's way to open a file it knows nothing about.
pub fn read_any(bytes: &[u8]) -> Result<AnyFilter> {
    match read_header(bytes)?.kind() {
        FilterKind::Blocked => BlockedBloom::from_bytes(bytes).map(AnyFilter::Blocked),
        FilterKind::Classic => ClassicBloom::from_bytes(bytes).map(AnyFilter::Classic),
        FilterKind::Cuckoo => CuckooFilter::from_bytes(bytes).map(AnyFilter::Cuckoo),
        FilterKind::Counting => CountingBlockedBloom::from_bytes(bytes).map(AnyFilter::Counting),
        FilterKind::Scalable => ScalableBlockedBloom::from_bytes(bytes).map(AnyFilter::Scalable),
        FilterKind::SplitBlock => SplitBlockBloom::from_bytes(bytes).map(AnyFilter::SplitBlock),
    }
}

/// A filter of any kind: what [`read_any`] returns and the CLI works with. Implements
/// [`Filter`] by delegating to the filter inside.
///
/// ```
/// use linebloom::{AnyFilter, CuckooFilter, Filter, FilterKind};
///
/// let mut cuckoo = CuckooFilter::with_fpr(1_000, 0.01)?;
/// cuckoo.insert("k")?;
/// let bytes = cuckoo.to_bytes();
/// // A reader that does not know the kind:
/// let any = AnyFilter::from_bytes(&bytes)?;
/// assert_eq!(any.kind(), FilterKind::Cuckoo);
/// assert!(any.contains("k"));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyFilter {
    /// A register-blocked Bloom filter.
    Blocked(BlockedBloom),
    /// A classic Bloom filter.
    Classic(ClassicBloom),
    /// A cuckoo filter.
    Cuckoo(CuckooFilter),
    /// A counting blocked Bloom filter.
    Counting(CountingBlockedBloom),
    /// A scalable blocked Bloom filter.
    Scalable(ScalableBlockedBloom),
    /// A Parquet split-block Bloom filter.
    SplitBlock(SplitBlockBloom),
}

impl AnyFilter {
    /// An empty filter of `kind` for `items` keys: `hashes` fixes the probes per key (Bloom
    /// filters) or the fingerprint bits (cuckoo) instead of the sizing's choice. A scalable
    /// filter starts at `items` keys and needs an FPR (its bound) and no `hashes`. A split-block
    /// filter takes no `hashes` or seed (it sets 8 bits and hashes as Parquet does); sized by
    /// an FPR it is sized as Parquet writers size one ([`SplitBlockBloom::with_ndv_fpp`]).
    pub fn new(
        kind: FilterKind,
        items: u64,
        sizing: Sizing,
        hashes: Option<u32>,
        seed: u64,
    ) -> Result<Self> {
        Ok(match kind {
            FilterKind::Blocked => {
                let b = BlockedBloom::builder(items).seed(seed).sizing(sizing);
                AnyFilter::Blocked(
                    match hashes {
                        Some(k) => b.k(k),
                        None => b,
                    }
                    .build()?,
                )
            }
            FilterKind::Classic => {
                let b = ClassicBloom::builder(items).seed(seed).sizing(sizing);
                AnyFilter::Classic(
                    match hashes {
                        Some(k) => b.k(k),
                        None => b,
                    }
                    .build()?,
                )
            }
            FilterKind::Cuckoo => {
                let b = CuckooFilter::builder(items).seed(seed).sizing(sizing);
                AnyFilter::Cuckoo(
                    match hashes {
                        Some(f) => b.fingerprint_bits(f),
                        None => b,
                    }
                    .build()?,
                )
            }
            FilterKind::Counting => {
                let b = CountingBlockedBloom::builder(items)
                    .seed(seed)
                    .sizing(sizing);
                AnyFilter::Counting(
                    match hashes {
                        Some(k) => b.k(k),
                        None => b,
                    }
                    .build()?,
                )
            }
            FilterKind::Scalable => {
                let fpr = match (sizing, hashes) {
                    (Sizing::Fpr(p), None) => p,
                    (Sizing::BitsPerKey(_), _) => {
                        return Err(Error::InvalidParameter {
                            name: "sizing",
                            value: "bits per key".into(),
                            allowed: "an FPR for a scalable filter (its bound as it grows)",
                        });
                    }
                    (_, Some(k)) => {
                        return Err(Error::InvalidParameter {
                            name: "hashes",
                            value: k.to_string(),
                            allowed: "none for a scalable filter (each part takes its best)",
                        });
                    }
                };
                AnyFilter::Scalable(
                    ScalableBlockedBloom::builder(items)
                        .fpr(fpr)
                        .seed(seed)
                        .build()?,
                )
            }
            FilterKind::SplitBlock => {
                if let Some(k) = hashes.filter(|&k| k != 8) {
                    return Err(Error::InvalidParameter {
                        name: "hashes",
                        value: k.to_string(),
                        allowed: "8 (or none) for a split-block filter (the layout sets 8 bits)",
                    });
                }
                AnyFilter::SplitBlock(match sizing {
                    Sizing::Fpr(p) => SplitBlockBloom::with_fpr(items, p)?,
                    Sizing::BitsPerKey(bits) => SplitBlockBloom::with_bits_per_key(items, bits)?,
                })
            }
        })
    }

    /// Reads a serialized filter of any kind (the same as [`read_any`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        read_any(bytes)
    }

    /// The filter as a trait object.
    pub fn as_filter(&self) -> &dyn Filter {
        match self {
            AnyFilter::Blocked(f) => f,
            AnyFilter::Classic(f) => f,
            AnyFilter::Cuckoo(f) => f,
            AnyFilter::Counting(f) => f,
            AnyFilter::Scalable(f) => f,
            AnyFilter::SplitBlock(f) => f,
        }
    }

    /// The filter as a mutable trait object.
    pub fn as_filter_mut(&mut self) -> &mut dyn Filter {
        match self {
            AnyFilter::Blocked(f) => f,
            AnyFilter::Classic(f) => f,
            AnyFilter::Cuckoo(f) => f,
            AnyFilter::Counting(f) => f,
            AnyFilter::Scalable(f) => f,
            AnyFilter::SplitBlock(f) => f,
        }
    }

    /// Adds a key; only a cuckoo filter can fail ([`Error::Full`], having lost nothing).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        let hash = self.hash_key(key);
        self.as_filter_mut().insert_hash(hash)
    }

    /// Whether the key may have been inserted.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.as_filter().contains_hash(self.hash_key(key))
    }

    /// The hash this filter gives `key`: [`Key::hash_with_seed`] with its seed, or for the
    /// split-block filter [`Key::hash_xxh64`] (the Parquet hash).
    pub fn hash_key<K: Key + ?Sized>(&self, key: &K) -> u64 {
        match self {
            AnyFilter::SplitBlock(_) => key.hash_xxh64(),
            _ => key.hash_with_seed(self.seed()),
        }
    }

    /// The serialized bytes ([`BlockedBloom::to_bytes`] and its siblings).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            AnyFilter::Blocked(f) => f.to_bytes(),
            AnyFilter::Classic(f) => f.to_bytes(),
            AnyFilter::Cuckoo(f) => f.to_bytes(),
            AnyFilter::Counting(f) => f.to_bytes(),
            AnyFilter::Scalable(f) => f.to_bytes(),
            AnyFilter::SplitBlock(f) => f.to_bytes(),
        }
    }

    /// Writes the serialized bytes to `out`, recording 0 items for the Bloom filters.
    #[cfg(feature = "std")]
    pub fn write_to(&self, out: impl Write) -> Result<()> {
        self.write_to_with_items(0, out)
    }

    /// Writes the serialized bytes to `out`, recording `items` as the number of keys inserted
    /// for the Bloom filters (which do not count them); a cuckoo or scalable filter records its
    /// own `len` whatever `items` says.
    #[cfg(feature = "std")]
    pub fn write_to_with_items(&self, items: u64, out: impl Write) -> Result<()> {
        match self {
            AnyFilter::Blocked(f) => f.write_with_items(items, out),
            AnyFilter::Classic(f) => f.write_with_items(items, out),
            AnyFilter::Cuckoo(f) => f.write_to(out),
            AnyFilter::Counting(f) => f.write_with_items(items, out),
            AnyFilter::Scalable(f) => f.write_to(out),
            AnyFilter::SplitBlock(f) => f.write_with_items(items, out),
        }
    }

    /// Share of the filter in use: set bits over all bits for the Bloom filters (non-zero
    /// counters for the counting filter, set bits of all its filters for the scalable one),
    /// occupied slots over all slots (the load factor) for the cuckoo filter.
    pub fn fill_ratio(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.fill_ratio(),
            AnyFilter::Classic(f) => f.fill_ratio(),
            AnyFilter::Cuckoo(f) => f.load_factor(),
            AnyFilter::Counting(f) => f.fill_ratio(),
            AnyFilter::Scalable(f) => f.fill_ratio(),
            AnyFilter::SplitBlock(f) => f.fill_ratio(),
        }
    }

    /// Distinct keys inserted, estimated from the fill for the Bloom filters (see
    /// [`BlockedBloom::estimated_items`]); exact (stored fingerprints) for the cuckoo filter.
    pub fn estimated_items(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.estimated_items(),
            AnyFilter::Classic(f) => f.estimated_items(),
            AnyFilter::Cuckoo(f) => f.len() as f64,
            AnyFilter::Counting(f) => f.estimated_items(),
            AnyFilter::Scalable(f) => f.len() as f64,
            AnyFilter::SplitBlock(f) => f.estimated_items(),
        }
    }

    /// The false-positive rate expected from the filter as it is now (see
    /// [`BlockedBloom::current_fpr`]; for the cuckoo filter, the model at its current load).
    pub fn current_fpr(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.current_fpr(),
            AnyFilter::Classic(f) => f.current_fpr(),
            AnyFilter::Cuckoo(f) => f.expected_fpr(f.len() as u64),
            AnyFilter::Counting(f) => f.current_fpr(),
            AnyFilter::Scalable(f) => f.current_fpr(),
            AnyFilter::SplitBlock(f) => f.current_fpr(),
        }
    }
}

impl From<BlockedBloom> for AnyFilter {
    fn from(f: BlockedBloom) -> Self {
        AnyFilter::Blocked(f)
    }
}

impl From<ClassicBloom> for AnyFilter {
    fn from(f: ClassicBloom) -> Self {
        AnyFilter::Classic(f)
    }
}

impl From<CountingBlockedBloom> for AnyFilter {
    fn from(f: CountingBlockedBloom) -> Self {
        AnyFilter::Counting(f)
    }
}

impl From<ScalableBlockedBloom> for AnyFilter {
    fn from(f: ScalableBlockedBloom) -> Self {
        AnyFilter::Scalable(f)
    }
}

impl From<SplitBlockBloom> for AnyFilter {
    fn from(f: SplitBlockBloom) -> Self {
        AnyFilter::SplitBlock(f)
    }
}

impl From<CuckooFilter> for AnyFilter {
    fn from(f: CuckooFilter) -> Self {
        AnyFilter::Cuckoo(f)
    }
}

impl Filter for AnyFilter {
    fn kind(&self) -> FilterKind {
        self.as_filter().kind()
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        self.as_filter_mut().insert_hash(hash)
    }
    fn contains_hash(&self, hash: u64) -> bool {
        self.as_filter().contains_hash(hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        self.as_filter().contains_hashes(hashes, out)
    }
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        self.as_filter_mut().insert_hashes(hashes)
    }
    fn size_bytes(&self) -> usize {
        self.as_filter().size_bytes()
    }
    fn k(&self) -> Option<u32> {
        self.as_filter().k()
    }
    fn seed(&self) -> u64 {
        self.as_filter().seed()
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        self.as_filter().expected_fpr(items)
    }
}
