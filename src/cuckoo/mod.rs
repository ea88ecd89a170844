//! The cuckoo filter (reference, with delete): Fan, Andersen, Kaminsky and Mitzenmacher,
//! "Cuckoo Filter: Practically Better Than Bloom" (CoNEXT 2014).
//!
//! This module owns [`CuckooFilter`], its builder, its table layout and its insert/evict/remove
//! paths. It does not own the FPR formula ([`crate::model::cuckoo_fpr`]) or key hashing
//! ([`crate::hash`]). This file holds the type, its public methods and the width-specialised
//! paths; `builder.rs` the builder and the sizing (fingerprint width, bucket count);
//! `bucket.rs` one bucket as a register (the SWAR and vector tests, the moves of an insert)
//! and the alternate index; `tests.rs` the unit tests of those internals.
//!
//! # Layout
//! The table is an array of buckets of 4 fingerprint slots; a fingerprint is 8, 12 or 16 bits, so
//! a bucket is 4, 6 or 8 bytes, stored back to back with no padding between buckets (12-bit
//! buckets are packed: 48 bits each, so one in sixteen crosses a cache line). Inside a bucket,
//! slot `j` is bits `j*f .. (j+1)*f` of the bucket read as a little-endian integer, so the bytes
//! ([`CuckooFilter::table_bytes`]) are the same on every platform. Fingerprint 0 marks an empty
//! slot. A lookup has no per-slot loop and no branch: with 8- and 16-bit fingerprints it puts
//! both candidate buckets in one 128-bit vector and compares every slot with the broadcast
//! fingerprint in one instruction; with 12-bit ones it puts each bucket in one 64-bit lane of a
//! vector and compares all four slots of both at once (SWAR: XOR with the broadcast
//! fingerprint, then the "has a zero lane" trick). Inserts, removals and evictions use the
//! scalar SWAR form on one bucket at a time.
//!
//! # Hashing
//! One 64-bit hash per key. The first bucket is the hash reduced onto the bucket count by
//! multiply-shift ([`crate::hash::reduce`], which reads the high bits); the fingerprint comes from
//! the low 32 bits, mapped by multiply-shift onto `1 ..= 2^f - 1` (uniform over the non-zero
//! values, so no value is doubled by a "0 becomes 1" rule). The two only share a carry, which
//! matters only for tables of billions of buckets.
//!
//! # Alternate bucket
//! Partial-key cuckoo hashing: a fingerprint's other bucket must be computable from the bucket
//! it sits in and the fingerprint alone. The paper's `i ^ hash(fp)` needs a power-of-two bucket
//! count, which would round sizes up by as much as 2x. This filter uses
//! `alt(i, fp) = (h(fp) - i) mod n` with `h(fp) = reduce(fp · φ⁻¹2^64, n)`, a reflection that is an
//! involution for every `n` (`alt(alt(i)) = h - (h - i) = i`), so the bucket count is exactly
//! what the load target asks for. The `mod n` is one compare and a conditional add, never a
//! division. Filters of 8-bit fingerprints keep `h(fp)` for all 256 values in a small table
//! (the lookup's two multiplies become one load; it depends only on `n`, so it is rebuilt, not
//! stored). Where `2i = h(fp) mod n` the two buckets coincide (about one key in `n`); such a key
//! has 4 slots instead of 8.
//!
//! # Eviction without loss
//! An insert first tries the empty slots of both buckets. If both are full it walks: at each
//! full bucket it first looks one step ahead (can one of the four residents move straight to a
//! free slot in its own other bucket? then it does, and the walk ends); otherwise a random slot
//! takes the fingerprint being carried and the evicted one is carried on to its alternate
//! bucket, for at most [`MAX_KICKS`] (500) evictions. The look-ahead costs up to four more
//! bucket reads per step but raises the load at the first failure above that of a plain random
//! walk, at every size and width (`docs/performance.md`, Levers tried). Each eviction's slot is
//! recorded; if the walk ends without a free slot, it is replayed backwards (every step is a
//! swap, and the alternate index is an involution, so each step can be undone exactly), which
//! leaves the table bit for bit as it was before the call.
//! The insert then returns [`Error::Full`] and [`CuckooFilter::len`] is unchanged. Many
//! implementations instead drop the last evicted fingerprint, a silent false negative for some
//! earlier key; here a failed insert loses nothing, and lookups stay at two buckets (no victim
//! slot to check).
//!
//! # Deletion and duplicates
//! [`CuckooFilter::remove`] deletes one copy of the key's fingerprint from one of its two
//! buckets. Only remove keys that were inserted (and not yet removed as often as inserted):
//! removing a key that never was but passes the filter (a false positive: its fingerprint
//! matches a slot of its buckets) deletes the matching fingerprint of a different key, which
//! then reads as absent (a false negative). The filter cannot tell such a key from a member, so
//! only the caller can rule it out. Measured (`tests/cuckoo.rs`): 100,000 keys in a filter of
//! 8-bit fingerprints sized for them (2.9 % FPR), then `remove` of 1,000,000 keys never
//! inserted accepts 25,431, after which 25,089 of the inserted keys answer "no".
//!
//! A key may be inserted several times (a multiset); its two buckets hold at most 8 copies,
//! after which the next insert of it returns [`Error::Full`] after a bounded walk.
//!
//! # False-positive rate
//! A key that was never inserted matches each occupied slot of its two buckets with
//! probability `1 / (2^f - 1)`, so at load `α` the FPR is `1 - (1 - 2^-f)^(8α)` ≈ `8α / 2^f`
//! ([`crate::model::cuckoo_fpr`]; the `2^f - 1` vs `2^f` difference is under 0.4 %). At the 95 %
//! target load: 2.9 % (f = 8), 0.19 % (f = 12), 0.012 % (f = 16), at 8.4, 12.6 and 16.8 bits per
//! key.
//!
//! ```
//! use linebloom::{CuckooFilter, Error};
//!
//! let mut filter = CuckooFilter::with_fpr(1_000, 0.01)?;
//! filter.insert("apple")?;
//! filter.insert(&42u64)?;
//! assert!(filter.contains("apple"));
//! assert!(filter.remove("apple"));
//! assert_eq!(filter.len(), 1);
//! assert!(filter.contains(&42u64));
//!
//! // A full filter says so and keeps everything it already holds.
//! let mut tiny = CuckooFilter::with_buckets(1, 16, 7)?;
//! for i in 0..4u32 {
//!     tiny.insert(&i)?;
//! }
//! assert_eq!(tiny.insert(&4u32), Err(Error::Full));
//! assert!((0..4u32).all(|i| tiny.contains(&i)));
//! # Ok::<(), linebloom::Error>(())
//! ```

mod bucket;
mod builder;
#[cfg(test)]
mod tests;

use alloc::boxed::Box;
use alloc::format;
use alloc::string::ToString;
pub use builder::CuckooFilterBuilder;

use crate::engine::line::Line;
use crate::engine::prefetch::{Level, NEAR, prefetch_ahead, prefetch_to};
use crate::engine::storage::{LineBuf, zeroed_lines};
use crate::error::{Error, Result};
use crate::filter::{Filter, FilterKind};
use crate::hash::{Key, mix64, reduce};
use crate::model;
use bucket::{
    alt_bucket, alt_from, alt_hash, bucket_bytes, fingerprint, in_either, lane_mask, load,
    make_room_by_moving_a_resident, put, swap_slot, take,
};
use builder::{check_fingerprint_bits, table_words};

/// Fingerprint slots per bucket.
pub const SLOTS_PER_BUCKET: u32 = 4;

/// The fingerprint widths the filter supports, in bits.
pub const FINGERPRINT_WIDTHS: [u32; 3] = [8, 12, 16];

/// The load factor the sizing constructors plan for (the paper's figure for 4-slot buckets). The
/// first insert failure comes above this load with this filter's eviction (see the module
/// docs; `tests/cuckoo.rs` checks it), so a filter sized for `items` holds them with a little
/// to spare.
pub const TARGET_LOAD: f64 = 0.95;

/// [`TARGET_LOAD`] in percent, so bucket counts are computed exactly in integers.
pub(super) const TARGET_LOAD_PERCENT: u128 = 95;

/// The most evictions one insert performs before it gives up (and undoes them).
pub const MAX_KICKS: usize = 500;

/// How many keys ahead [`CuckooFilter::contains_hashes`] hints both buckets of a key into L2 on
/// tables larger than [`AHEAD_FROM_BYTES`], as the blocked filter's batched lookups do: a
/// prefetch retires at once, so the misses in flight do not depend on how many lookups the
/// out-of-order window holds. 128 keys ahead rather than 32, 64 or 256, or groups of 16 keys:
/// fewer keys ahead leave part of the memory latency exposed, more let hinted lines leave L2
/// before their test (measured in `docs/performance.md`, Levers tried). The buckets are not
/// also hinted into L1 shortly before the test, as the blocked filter's lines are: a cuckoo
/// lookup computes its buckets again for each hint, which costs more than the hint gives.
const AHEAD: usize = 128;

/// Tables up to this size take the plain one-at-a-time loop: with the vector test (see
/// [`in_either`]) the core keeps enough lookups in flight there by itself, and the plain loop is
/// level with or faster than prefetching, whose second computation of each key's buckets costs
/// more than it hides. Past that the prefetching loop wins by far: its misses in flight no
/// longer depend on the out-of-order window.
const AHEAD_FROM_BYTES: usize = 8 << 20;

/// Calls the width-specialised version of a method: `by_width!(self.method(args))`.
macro_rules! by_width {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self.fingerprint_bits {
            8 => $self.$method::<8>($($arg),*),
            12 => $self.$method::<12>($($arg),*),
            // Constructors admit only 8, 12 and 16.
            _ => $self.$method::<16>($($arg),*),
        }
    };
}

/// A cuckoo filter: fingerprints in 4-slot buckets, with delete. See the [module docs](self) for
/// the layout, the alternate index and the no-loss eviction.
///
/// Remove only keys that were inserted (and not yet removed as often as inserted): removing a
/// key that was never inserted but passes the filter (a false positive) deletes another key's
/// matching fingerprint, and that key then answers "no".
///
/// ```
/// use linebloom::CuckooFilter;
///
/// let mut filter = CuckooFilter::with_fpr(1_000, 0.001)?;
/// filter.insert("apple")?;
/// assert!(filter.contains("apple"));
/// assert!(filter.remove("apple"));
/// assert!(filter.is_empty() && !filter.contains("apple"));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    /// The buckets as bytes (bucket `b` at `b * bucket_bytes`), held in the blocked engine's
    /// 64-byte lines: zeroed by the allocator or the kernel, and on transparent huge pages from
    /// 8 MiB up, where a lookup's two random buckets would otherwise also cost two TLB misses.
    /// The bytes past the buckets are zero (the 8-byte load of the last 6-byte bucket reads 2
    /// bytes past it).
    table: LineBuf,
    /// Bytes of the table counted as filter data: the buckets and their padding, rounded up to
    /// whole `u64` words (the lines' last few bytes are not counted).
    table_len: usize,
    buckets: usize,
    fingerprint_bits: u32,
    len: usize,
    seed: u64,
    /// `h(fp)` of the alternate index (see [`alt_hash`]) for every 8-bit fingerprint (index 0
    /// unused): filters of 8-bit fingerprints look it up instead of computing it, two
    /// multiplies fewer per lookup (2 KiB per filter, whatever its width; not filter data).
    alt_hashes: Box<[usize; 256]>,
}

impl core::fmt::Debug for CuckooFilter {
    // The table can be gigabytes: print the shape, not the contents.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("buckets", &self.buckets)
            .field("fingerprint_bits", &self.fingerprint_bits)
            .field("len", &self.len)
            .field("seed", &self.seed)
            .field("size_bytes", &self.size_bytes())
            .finish()
    }
}

impl CuckooFilter {
    /// A filter for `items` keys whose FPR at 95 % load is at most `fpr`: the narrowest
    /// fingerprint (8, 12 or 16 bits) that meets it. An error when `fpr` is not in (0, 1) or is
    /// below what 16-bit fingerprints reach (about 1.16e-4; use a Bloom filter there).
    pub fn with_fpr(items: u64, fpr: f64) -> Result<Self> {
        Self::builder(items).fpr(fpr).build()
    }

    /// A filter for `items` keys at no more than `bits_per_key` bits per key at 95 % load: the
    /// widest fingerprint `f` in {8, 12, 16} with `f / 0.95 <= bits_per_key`. An error below
    /// 8 / 0.95 ≈ 8.42 bits per key. Budgets above 16.84 still get 16-bit fingerprints.
    pub fn with_bits_per_key(items: u64, bits_per_key: f64) -> Result<Self> {
        Self::builder(items).bits_per_key(bits_per_key).build()
    }

    /// A builder for `items` expected keys (1 % FPR unless told otherwise).
    pub fn builder(items: u64) -> CuckooFilterBuilder {
        CuckooFilterBuilder::new(items)
    }

    /// An empty filter of exactly `shape`, the exact-size constructor every kind shares (a
    /// builder's `shape()` plans one; ``with_buckets`` is the same by its parts); an error for another
    /// kind's shape.
    pub fn with_shape(shape: crate::format::Shape, seed: u64) -> Result<Self> {
        match shape {
            crate::format::Shape::Cuckoo {
                buckets,
                fingerprint_bits,
            } => Self::with_buckets(
                crate::format::count_of(buckets, "buckets")?,
                fingerprint_bits,
                seed,
            ),
            other => Err(crate::format::wrong_shape(FilterKind::Cuckoo, other)),
        }
    }

    /// An empty filter of exactly `buckets` buckets (any count, not only powers of two) with
    /// `fingerprint_bits`-bit fingerprints (8, 12 or 16).
    pub fn with_buckets(buckets: usize, fingerprint_bits: u32, seed: u64) -> Result<Self> {
        check_fingerprint_bits(fingerprint_bits)?;
        let table_len = table_words(buckets, fingerprint_bits)? * core::mem::size_of::<u64>();
        let table =
            zeroed_lines(table_len.div_ceil(core::mem::size_of::<Line>())).map_err(|_| {
                Error::InvalidParameter {
                    name: "buckets",
                    value: buckets.to_string(),
                    allowed: "a number whose table fits in memory",
                }
            })?;
        Ok(Self {
            table,
            table_len,
            buckets,
            fingerprint_bits,
            len: 0,
            seed,
            alt_hashes: Box::new(core::array::from_fn(|fp| alt_hash(fp as u64, buckets))),
        })
    }

    /// Rebuilds a filter from its table bytes (as [`table_bytes`](Self::table_bytes) returns
    /// them) and parameters, checking everything a corrupt source could get wrong: the width,
    /// the bucket count, the table length, and that `len` equals the number of occupied slots.
    #[allow(
        dead_code,
        reason = "the serialization (format.rs) reads filters back through this"
    )]
    pub(crate) fn from_parts(
        table: &[u8],
        buckets: usize,
        fingerprint_bits: u32,
        len: usize,
        seed: u64,
    ) -> Result<Self> {
        check_fingerprint_bits(fingerprint_bits)?;
        // The length check comes before the allocation, so a corrupt bucket count cannot make
        // us reserve memory the bytes do not back.
        let used = buckets.checked_mul(bucket_bytes(fingerprint_bits));
        if used != Some(table.len()) {
            return Err(Error::Corrupt(format!(
                "a cuckoo table of {buckets} buckets of {fingerprint_bits}-bit fingerprints \
                 cannot be {} bytes long",
                table.len()
            )));
        }
        let mut filter = Self::with_buckets(buckets, fingerprint_bits, seed)?;
        let used = table.len();
        bytemuck::cast_slice_mut::<Line, u8>(&mut filter.table)[..used].copy_from_slice(table);
        let occupied = filter.count_occupied();
        if occupied != len {
            return Err(Error::Corrupt(format!(
                "the cuckoo table holds {occupied} fingerprints but the filter says {len}"
            )));
        }
        filter.len = len;
        Ok(filter)
    }

    /// Adds a key. [`Error::Full`] when it cannot be placed within [`MAX_KICKS`] evictions; the
    /// filter is then exactly as before the call (nothing lost, `len` unchanged).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        self.insert_hash(key.hash_with_seed(self.seed))
    }

    /// Whether the key may have been inserted (false: it certainly was not, unless a key that
    /// was never inserted was removed; see [`remove`](Self::remove)).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_with_seed(self.seed))
    }

    /// Removes one copy of the key; false, changing nothing, if neither of its buckets holds
    /// its fingerprint (the key cannot be present).
    ///
    /// Safe only for a key that was inserted and not yet removed as often as it was inserted.
    /// A key that never was may share its fingerprint and a bucket with one that was (a false
    /// positive, so `true` here), and removing it deletes that key's fingerprint: a false
    /// negative from then on. `true` does not mean the key was a member.
    #[inline]
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.remove_hash(key.hash_with_seed(self.seed))
    }

    /// Adds a key given by its 64-bit hash (well mixed; see [`crate::hash`]). See
    /// [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> Result<()> {
        by_width!(self.insert_with(hash))
    }

    /// Whether a key given by its 64-bit hash may have been inserted.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        by_width!(self.contains_with(hash))
    }

    /// Inserts many pre-hashed keys, in order. Stops at the first key the table cannot place,
    /// with [`Error::Full`]: every key before it is in, it and those after it are not, and
    /// nothing inserted earlier is lost.
    pub fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        hashes.iter().try_for_each(|&h| self.insert_hash(h))
    }

    crate::filter::keyed_batch!(result);

    /// Removes one copy of a key given by its 64-bit hash. Safe only for a key that was
    /// inserted: removing a never-inserted key that passes the filter deletes another key's
    /// fingerprint. See [`remove`](Self::remove).
    #[inline]
    pub fn remove_hash(&mut self, hash: u64) -> bool {
        by_width!(self.remove_with(hash))
    }

    /// The two buckets a key given by its hash maps to (first, alternate), and the byte offset
    /// of bucket `b` is `b * 4 * fingerprint_bits / 8` in [`table_bytes`](Self::table_bytes):
    /// for `examples/cuckoo_lookup.rs`, which times the loads of a lookup without its test.
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    #[inline]
    pub fn buckets_of(&self, hash: u64) -> (usize, usize) {
        let (i1, _, i2) = by_width!(self.candidates(hash));
        (i1, i2)
    }

    /// Looks up many pre-hashed keys at once: `out[i] = self.contains_hash(hashes[i])`. On
    /// tables past 8 MiB both buckets of a key are prefetched 128 keys before it is tested, so
    /// the cache misses of many keys overlap; smaller tables are tested one key after another.
    /// An error (and nothing written) when the two slices differ in length.
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        crate::error::check_same_len(hashes.len(), out.len())?;
        by_width!(self.contains_hashes_with(hashes, out));
        Ok(())
    }

    /// Fingerprints stored (inserted minus removed keys, duplicates counted).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no fingerprint is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of fingerprint slots (4 per bucket).
    pub fn capacity(&self) -> usize {
        self.buckets * SLOTS_PER_BUCKET as usize
    }

    /// Occupied share of the slots, in [0, 1].
    pub fn load_factor(&self) -> f64 {
        self.len as f64 / self.capacity() as f64
    }

    /// Bits per fingerprint: 8, 12 or 16.
    pub fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    /// Number of buckets (any count; not rounded to a power of two).
    pub fn num_buckets(&self) -> usize {
        self.buckets
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Bytes of filter data (the table, with its few bytes of padding).
    pub fn size_bytes(&self) -> usize {
        self.table_len
    }

    /// The memory cost per key of a filter filled to the 95 % target load:
    /// `size_bytes * 8 / (0.95 * capacity)`, padding included (about `f / 0.95`).
    pub fn bits_per_key(&self) -> f64 {
        (self.size_bytes() * 8) as f64 / (TARGET_LOAD * self.capacity() as f64)
    }

    /// The table: bucket `b` is bytes `b * B .. (b + 1) * B` with `B = 4 * f / 8`, slot `j` is
    /// bits `j * f .. (j + 1) * f` of the bucket read as a little-endian integer, 0 is empty.
    /// The same bytes on every platform.
    pub fn table_bytes(&self) -> &[u8] {
        &self.bytes()[..self.buckets * bucket_bytes(self.fingerprint_bits)]
    }

    /// Bytes of the table the kernel backs with transparent huge pages right now (Linux with the
    /// feature `std`; `None` elsewhere). Tables of at least 8 MiB ask for them, as the blocked filter's lines do; the
    /// kernel may still decline, and pages are only backed once touched.
    /// [`crate::blocked::set_huge_pages`] turns the request off.
    pub fn huge_page_bytes(&self) -> Option<usize> {
        // The lines hold up to 63 bytes past the table; count the table's bytes only, as
        // `size_bytes` does.
        self.table.huge_page_bytes().map(|b| b.min(self.table_len))
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.table.fill(Line::ZERO);
        self.len = 0;
    }

    /// The FPR the model expects once `items` keys are in the filter (load `items / capacity`).
    pub fn expected_fpr(&self, items: u64) -> f64 {
        let load = items as f64 / self.capacity() as f64;
        model::cuckoo_fpr(self.fingerprint_bits, SLOTS_PER_BUCKET, load)
    }

    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.table)[..self.table_len]
    }

    /// The table's whole allocation, [`bytes`](Self::bytes) and the rest of its last line (all
    /// zero): what lookups read, with no bounds check of the slice on every call.
    #[inline(always)]
    fn lines_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.table)
    }

    fn count_occupied(&self) -> usize {
        by_width!(self.count_occupied_with())
    }

    // The width-specialised paths. `by_width!` picks one per call; the match is on a field that
    // never changes, so the branch predictor makes it free, and each body is compiled with its
    // width as a constant (masks, shifts and bucket size fold away).

    /// A key's first bucket, fingerprint and second bucket.
    ///
    /// With 8-bit fingerprints `h(fp)` comes from [`alt_hashes`](Self::alt_hashes) instead of
    /// two multiplies, which makes one-at-a-time lookups faster in and past the cache, for a
    /// 256-entry table per filter (`docs/performance.md`, Levers tried): past the cache a
    /// lookup is bound by how many the core keeps in flight, which grows as each takes fewer
    /// instructions.
    #[inline(always)]
    fn candidates<const F: u32>(&self, hash: u64) -> (usize, u64, usize) {
        let i1 = reduce(hash, self.buckets);
        let fp = fingerprint::<F>(hash);
        let h = if F == 8 {
            self.alt_hashes[fp as usize & 0xFF]
        } else {
            alt_hash(fp, self.buckets)
        };
        (i1, fp, alt_from(h, i1, self.buckets))
    }

    #[inline(always)]
    fn contains_with<const F: u32>(&self, hash: u64) -> bool {
        let (i1, fp, i2) = self.candidates::<F>(hash);
        // SAFETY: `candidates` gives buckets of this filter, whose table `lines_bytes` is.
        unsafe { in_either::<F>(self.lines_bytes(), i1, fp, i2) }
    }

    fn contains_hashes_with<const F: u32>(&self, hashes: &[u64], out: &mut [bool]) {
        let t = self.lines_bytes();
        let stride = bucket_bytes(F);
        if t.len() > AHEAD_FROM_BYTES {
            let mut out = out.iter_mut();
            prefetch_ahead(hashes, AHEAD, NEAR, |to_l2, _, now| {
                if let Some(h) = to_l2 {
                    let (i1, _, i2) = self.candidates::<F>(h);
                    prefetch_to(Level::L2, &t[i1 * stride]);
                    prefetch_to(Level::L2, &t[i2 * stride]);
                    if F == 12 {
                        // A 12-bit bucket is read with one 8-byte load, which crosses into the
                        // next line for 3 in 32 buckets: without these two prefetches that
                        // line is a demand miss for about one lookup in five, which stalls the
                        // batched lookups of 12-bit buckets far behind those of 16-bit ones.
                        // The padding keeps `+ 7` inside the table.
                        prefetch_to(Level::L2, &t[i1 * stride + 7]);
                        prefetch_to(Level::L2, &t[i2 * stride + 7]);
                    }
                }
                if let Some(h) = now
                    && let Some(o) = out.next()
                {
                    let (i1, fp, i2) = self.candidates::<F>(h);
                    // SAFETY: `candidates` gives buckets of this filter, whose table `t` is.
                    *o = unsafe { in_either::<F>(t, i1, fp, i2) };
                }
            });
            return;
        }
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = self.contains_with::<F>(h);
        }
    }

    #[inline(always)]
    fn insert_with<const F: u32>(&mut self, hash: u64) -> Result<()> {
        let (i1, fp, i2) = self.candidates::<F>(hash);
        let t = bytemuck::cast_slice_mut::<Line, u8>(&mut self.table);
        if put::<F>(t, i1, fp) || put::<F>(t, i2, fp) {
            self.len += 1;
            return Ok(());
        }
        self.insert_by_eviction::<F>(hash, i1, fp, i2)
    }

    /// The slow path of an insert whose buckets are both full: a random walk of at most
    /// [`MAX_KICKS`] evictions, undone step by step if it finds no free slot.
    #[cold]
    #[inline(never)]
    fn insert_by_eviction<const F: u32>(
        &mut self,
        hash: u64,
        i1: usize,
        fp: u64,
        i2: usize,
    ) -> Result<()> {
        let n = self.buckets;
        let t = bytemuck::cast_slice_mut::<Line, u8>(&mut self.table);
        // The walk's randomness comes from the key's own hash, so an insert is deterministic
        // (a filter built twice from the same keys is bit-identical) without an RNG in the
        // filter.
        let mut state = hash;
        let mut next_random = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            mix64(state)
        };
        let mut slots = [0u8; MAX_KICKS];
        let mut bucket = if next_random() >> 63 == 0 { i1 } else { i2 };
        let mut carried = fp;
        for slot in slots.iter_mut() {
            // Look one step ahead: if a resident of this bucket can move straight to a free
            // slot in its other bucket, that ends the walk now instead of after a random kick.
            if make_room_by_moving_a_resident::<F>(t, bucket, carried, n) {
                self.len += 1;
                return Ok(());
            }
            *slot = (next_random() >> 62) as u8;
            carried = swap_slot::<F>(t, bucket, u32::from(*slot), carried);
            bucket = alt_bucket(bucket, carried, n);
            if put::<F>(t, bucket, carried) {
                self.len += 1;
                return Ok(());
            }
        }
        // Undo: `carried` was evicted from `alt(bucket, carried)` by the last swap; swapping it
        // back returns the fingerprint that swap put there, and so on to the first, which
        // returns the new key's own fingerprint.
        for &slot in slots.iter().rev() {
            bucket = alt_bucket(bucket, carried, n);
            carried = swap_slot::<F>(t, bucket, u32::from(slot), carried);
        }
        debug_assert_eq!(
            carried, fp,
            "undoing the eviction walk must return the new fingerprint"
        );
        Err(Error::Full)
    }

    #[inline(always)]
    fn remove_with<const F: u32>(&mut self, hash: u64) -> bool {
        let (i1, fp, i2) = self.candidates::<F>(hash);
        let t = bytemuck::cast_slice_mut::<Line, u8>(&mut self.table);
        if take::<F>(t, i1, fp) || take::<F>(t, i2, fp) {
            self.len -= 1;
            return true;
        }
        false
    }

    fn count_occupied_with<const F: u32>(&self) -> usize {
        let t = self.bytes();
        (0..self.buckets)
            .map(|b| {
                let bucket = load::<F>(t, b);
                (0..SLOTS_PER_BUCKET)
                    .filter(|j| (bucket >> (j * F)) & lane_mask(F) != 0)
                    .count()
            })
            .sum()
    }
}

impl Filter for CuckooFilter {
    fn kind(&self) -> FilterKind {
        FilterKind::Cuckoo
    }
    fn insert_hash(&mut self, hash: u64) -> Result<()> {
        CuckooFilter::insert_hash(self, hash)
    }
    fn contains_hash(&self, hash: u64) -> bool {
        CuckooFilter::contains_hash(self, hash)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        CuckooFilter::contains_hashes(self, hashes, out)
    }
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<()> {
        CuckooFilter::insert_hashes(self, hashes)
    }
    fn size_bytes(&self) -> usize {
        CuckooFilter::size_bytes(self)
    }
    fn k(&self) -> Option<u32> {
        None
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn expected_fpr(&self, items: u64) -> f64 {
        CuckooFilter::expected_fpr(self, items)
    }
}
