//! The engine: a register-blocked Bloom filter.
//!
//! Every key touches exactly one 64-byte, 64-byte-aligned [`Line`]; all its k probe bits live in
//! that line, and are set and tested with one 512-bit mask. The line is chosen by
//! multiply-shift on the high bits of the key's 64-bit hash, the bits inside it from the low
//! bits (see the engine's `mask.rs` for the scheme and why it is the one, and
//! [`crate::model::blocked_fpr`] for its exact FPR model).
//!
//! This module owns the owned filter type, its builder and its scalar paths; `batch.rs` owns the
//! batched (prefetching) lookups and the rayon bulk insert (`partitioned.rs` its side of the
//! engine's partitioned insert of large batches, `slots.rs` the lines as the engine's bulk-insert seam),
//! `atomic.rs` the `&self`-insert variant, `view.rs` the zero-copy view over serialized bytes,
//! and `setops.rs` union, intersection and the estimates from the fill. The engine core
//! (`src/engine/`) owns what decides the speed: the line type and its storage, the mask and its
//! SIMD paths (`mask.rs` the portable one and the definition of the bits, `arch.rs` the AVX2
//! and AVX-512 kernels and the run-time choice), the prefetching walk, the prefetch distance and
//! the bulk insert's tasks; this module uses it, and it imports nothing from here. The byte
//! layout itself is `crate::format`'s.

mod atomic;
mod batch;
mod fill;
mod partitioned;
pub(crate) mod setops;

mod slots;
mod view;

pub use crate::engine::arch::{SimdPath, simd_path};
pub(crate) use crate::engine::mask::Probes;
pub use crate::engine::mask::{LINE_BITS, Line, MAX_K, Placement};
use alloc::vec::Vec;
pub use atomic::{AtomicBlockedBloom, AtomicBlockedBloomBuilder};
pub use view::{AlignedBytes, BlockedBloomRef};

pub(crate) use crate::engine::line::{Run, line_for, line_for_mut, line_index};
pub use crate::engine::partition::BuildBuffers;
#[cfg(feature = "internals")]
pub(crate) use crate::engine::partition::{
    MIN_THREADS as PARTITION_MIN_THREADS, MIN_THREADS_KEPT as PARTITION_MIN_THREADS_KEPT,
    fills as partitioned_fill, use_for as partitions,
};
pub use crate::engine::storage::{HUGE_PAGE_MIN_BYTES, huge_pages, set_huge_pages};
pub(crate) use crate::engine::storage::{LineBuf, check_line_count, zeroed_lines};
use crate::error::{Error, Result, check_bits_per_key, check_items, units_for};
use crate::filter::Sizing;
use crate::hash::{DEFAULT_SEED, Key};
use crate::model;
pub use fill::ParFill;

/// A register-blocked Bloom filter: one cache line per key.
///
/// ```
/// use linebloom::BlockedBloom;
///
/// let mut filter = BlockedBloom::with_fpr(1_000, 0.01)?;
/// filter.insert("apple");
/// filter.insert(&42u64);
/// assert!(filter.contains("apple"));
/// assert!(filter.contains(&42u64));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BlockedBloom {
    lines: LineBuf,
    probes: Probes,
    seed: u64,
}

/// Builds a [`BlockedBloom`] from an expected item count and a size (a target FPR or a number of
/// bits per key), optionally fixing the number of probes and the hash seed.
///
/// ```
/// use linebloom::BlockedBloom;
///
/// let filter = BlockedBloom::builder(1_000_000).bits_per_key(12.0).k(8).seed(7).build()?;
/// assert_eq!(filter.k(), 8);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct BlockedBloomBuilder {
    items: u64,
    size: Sizing,
    hashes: Option<u32>,
    seed: u64,
    placement: Placement,
}

impl BlockedBloomBuilder {
    crate::filter::sizing_setters!(size);
    crate::filter::probe_setters!("`1..=16`.");

    /// The shape [`build`](Self::build) gives (lines and k), without taking memory: the
    /// sizing rule, for planning.
    pub fn shape(&self) -> Result<crate::format::Shape> {
        let shape = BlockedBloom::shape_for(self.items, self.size, self.hashes)?;
        Ok(crate::format::Shape::Blocked {
            lines: shape.lines,
            k: shape.hashes,
        })
    }

    /// Builds the empty filter, or says which parameter is out of range.
    pub fn build(self) -> Result<BlockedBloom> {
        let shape = BlockedBloom::shape_for(self.items, self.size, self.hashes)?;
        let lines = zeroed_lines(shape.lines as usize)?;
        BlockedBloom::from_parts(lines, Probes::new(shape.hashes, self.placement), self.seed)
    }

    /// Place each key's bits with `placement` ([`Placement::Shifted`] unless set). Only for a
    /// reader that knows no other: [`Placement::Salted`] is what builds before the shifted
    /// placement read and write, and costs more instructions per key.
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }
}

/// The size and probes of a blocked filter, before any memory is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub lines: u64,
    pub hashes: u32,
}

impl BlockedBloom {
    /// The lines and probes a filter for `items` keys sized by `size` gets (the builder's
    /// rules), or which parameter is out of range.
    pub(crate) fn shape_for(items: u64, size: Sizing, hashes: Option<u32>) -> Result<Shape> {
        check_items(items)?;
        let bits_per_key = match size {
            Sizing::Fpr(p) => model::blocked_bits_per_key(p)?,
            Sizing::BitsPerKey(b) => {
                check_bits_per_key(b)?;
                b
            }
        };
        let lines = units_for(items, bits_per_key, LINE_BITS as u64)?;
        let hashes = hashes.unwrap_or_else(|| model::blocked_optimal_k(bits_per_key));
        check_k(hashes)?;
        Ok(Shape {
            lines: lines as u64,
            hashes,
        })
    }
}

impl BlockedBloom {
    /// A filter for `items` keys with a false-positive rate of about `fpr` (by the model; the
    /// measured rate is checked against it in `tests/`).
    pub fn with_fpr(items: u64, fpr: f64) -> Result<Self> {
        Self::builder(items).fpr(fpr).build()
    }

    /// A filter for `items` keys at `bits_per_key` bits each, with the optimal number of probes.
    pub fn with_bits_per_key(items: u64, bits_per_key: f64) -> Result<Self> {
        Self::builder(items).bits_per_key(bits_per_key).build()
    }

    /// A builder for `items` expected keys (1 % FPR unless told otherwise).
    pub fn builder(items: u64) -> BlockedBloomBuilder {
        BlockedBloomBuilder {
            items,
            size: Sizing::Fpr(0.01),
            hashes: None,
            seed: DEFAULT_SEED,
            placement: Placement::default(),
        }
    }

    /// An empty filter of exactly `shape`, the exact-size constructor every kind shares (a
    /// builder's `shape()` plans one; ``with_lines`` is the same by its parts); an error for another
    /// kind's shape.
    pub fn with_shape(shape: crate::format::Shape, seed: u64) -> Result<Self> {
        match shape {
            crate::format::Shape::Blocked { lines, k } => {
                Self::with_lines(crate::format::count_of(lines, "lines")?, k, seed)
            }
            other => Err(crate::format::wrong_shape(
                crate::FilterKind::Blocked,
                other,
            )),
        }
    }

    /// An empty filter of exactly `lines` lines (64 bytes each) and `k` probes per key, placed
    /// by [`Placement::Shifted`].
    pub fn with_lines(lines: usize, k: u32, seed: u64) -> Result<Self> {
        Self::with_lines_placed(lines, k, Placement::Shifted, seed)
    }

    /// [`with_lines`](Self::with_lines) with the bits placed by `placement`: for a host that
    /// keeps a filter's bits in its own encoding with their shape and placement, and writes
    /// them back through [`lines_mut`](Self::lines_mut).
    pub fn with_lines_placed(
        lines: usize,
        k: u32,
        placement: Placement,
        seed: u64,
    ) -> Result<Self> {
        check_k(k)?;
        Self::from_parts(zeroed_lines(lines)?, Probes::new(k, placement), seed)
    }

    /// An owned filter over bare lines (no linebloom header), with the probes per key
    /// (1..=16), placement and seed they were made with: the owned twin of
    /// [`BlockedBloomRef::from_lines`], for bits a storage engine keeps in its own blocks.
    /// Bare lines do not say their placement, so the caller does: the [`placement`](Self::placement)
    /// of the filter they came from (lines read with another placement lose keys).
    pub fn from_lines(lines: Vec<Line>, k: u32, placement: Placement, seed: u64) -> Result<Self> {
        check_k(k)?;
        Self::from_parts(lines, Probes::new(k, placement), seed)
    }

    /// Rebuilds a filter from its parts (used by deserialisation and the atomic variant).
    pub(crate) fn from_parts(lines: impl Into<LineBuf>, probes: Probes, seed: u64) -> Result<Self> {
        let lines = lines.into();
        check_k(probes.k)?;
        check_line_count(lines.len())?;
        Ok(Self {
            lines,
            probes,
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
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let i = line_index(hash, self.lines.len());
        // SAFETY: `i < lines.len()`, since a filter has at least one line (`from_parts`, which
        // every constructor goes through, refuses none, and nothing removes lines) and
        // `line_index(hash, n) < n` for every hash when `n >= 1`. No check of an empty run
        // here: it is three of about twenty-five instructions in a loop of one-key calls.
        let line = unsafe { self.lines.get_unchecked_mut(i) };
        crate::engine::arch::set(line, hash, self.probes);
    }

    /// Whether a key given by its 64-bit hash may have been inserted.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let i = line_index(hash, self.lines.len());
        // SAFETY: as in `insert_hash`.
        let line = unsafe { self.lines.get_unchecked(i) };
        crate::engine::arch::test(line, hash, self.probes)
    }

    /// Probes per key.
    pub fn k(&self) -> u32 {
        self.probes.k
    }

    /// Where each key's bits go in its line (the serialized form records it).
    pub fn placement(&self) -> Placement {
        self.probes.placement
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The filter's lines.
    pub fn lines(&self) -> &[Line] {
        &self.lines
    }

    /// The filter's lines, writable: for a host that keeps the bits in its own encoding and
    /// writes them back (the Redis module's RDB load and `BF.LOADCHUNK`). Any bits are a valid
    /// filter; bits that were not saved from a filter of this shape and [`Placement`] give
    /// wrong answers (lost keys), not UB: make the filter with
    /// [`with_lines_placed`](Self::with_lines_placed) and the placement saved with the bits.
    pub fn lines_mut(&mut self) -> &mut [Line] {
        &mut self.lines
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
        self.lines.len() * core::mem::size_of::<Line>()
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.lines.iter().map(|l| l.count_ones() as u64).sum()
    }

    /// Bytes of this filter the kernel backs with transparent huge pages right now (Linux with
    /// the feature `std`; `None` elsewhere). Filters of at least 8 MiB ask for them when
    /// allocated; the kernel may still decline (THP `never`, fragmented memory), and pages are
    /// only backed once touched. [`set_huge_pages`] turns the request off.
    pub fn huge_page_bytes(&self) -> Option<usize> {
        self.lines.huge_page_bytes()
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.lines.fill(Line::ZERO);
    }

    /// The FPR the model expects after `items` distinct keys were inserted.
    pub fn expected_fpr(&self, items: u64) -> f64 {
        if items == 0 {
            return 0.0;
        }
        model::blocked_fpr(self.num_bits() as f64 / items as f64, self.probes.k)
    }
}

pub(crate) fn check_k(k: u32) -> Result<()> {
    if !(1..=MAX_K).contains(&k) {
        return Err(Error::InvalidK {
            k,
            min: 1,
            max: MAX_K,
        });
    }
    Ok(())
}
