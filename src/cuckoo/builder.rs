//! Sizing a cuckoo filter: [`CuckooFilterBuilder`] and the choices behind it (the fingerprint
//! width from a target FPR or a bits-per-key budget, the bucket count from the item count at
//! the target load, the table's size in words). It builds through
//! [`CuckooFilter::with_buckets`]; the table and its paths are `mod.rs`'s, the FPR formula is
//! [`crate::model::cuckoo_fpr`].

use super::bucket::bucket_bytes;
use super::{CuckooFilter, FINGERPRINT_WIDTHS, SLOTS_PER_BUCKET, TARGET_LOAD, TARGET_LOAD_PERCENT};
use crate::error::{
    Error, Readable, Result, check_bits_per_key, check_fpr, check_items, units_for,
};
use crate::filter::Sizing;
use crate::hash::DEFAULT_SEED;
use crate::model;
use alloc::string::ToString;

/// Builds a [`CuckooFilter`] for an expected item count from a target FPR, a bits-per-key budget
/// or a fixed fingerprint width, optionally with a hash seed.
///
/// ```
/// use linebloom::CuckooFilter;
///
/// let filter = CuckooFilter::builder(1_000_000).fpr(0.005).seed(7).build()?;
/// assert_eq!(filter.fingerprint_bits(), 12);
/// let wide = CuckooFilter::builder(1_000).fingerprint_bits(16).build()?;
/// assert_eq!(wide.fingerprint_bits(), 16);
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CuckooFilterBuilder {
    items: u64,
    size: Sizing,
    fingerprint_bits: Option<u32>,
    seed: u64,
}

impl CuckooFilterBuilder {
    /// The builder [`CuckooFilter::builder`] returns: 1 % FPR, widths chosen from it, the
    /// default seed.
    pub(super) fn new(items: u64) -> Self {
        CuckooFilterBuilder {
            items,
            size: Sizing::Fpr(0.01),
            fingerprint_bits: None,
            seed: DEFAULT_SEED,
        }
    }

    crate::filter::sizing_setters!(
        size,
        "Pick the narrowest fingerprint whose FPR at 95 % load meets `fpr` (the default is 1 %).",
        "Pick the widest fingerprint that fits `bits_per_key` bits per item at 95 % load."
    );

    /// Use fingerprints of exactly this many bits (8, 12 or 16), whatever the FPR or bits per
    /// key say (those are still checked for validity).
    pub fn fingerprint_bits(mut self, bits: u32) -> Self {
        self.fingerprint_bits = Some(bits);
        self
    }

    /// Use this hash seed (default [`DEFAULT_SEED`]).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Builds the empty filter, with enough buckets for the items at 95 % load, or says which
    /// parameter is out of range.
    pub fn build(self) -> Result<CuckooFilter> {
        let (buckets, bits) = self.sized()?;
        CuckooFilter::with_buckets(buckets, bits, self.seed)
    }

    /// The shape [`build`](Self::build) gives (buckets and fingerprint bits), without taking
    /// memory: the sizing rule, for planning.
    pub fn shape(&self) -> Result<crate::format::Shape> {
        let (buckets, fingerprint_bits) = self.sized()?;
        Ok(crate::format::Shape::Cuckoo {
            buckets: buckets as u64,
            fingerprint_bits,
        })
    }

    /// The buckets and fingerprint bits the builder asks for, checked.
    fn sized(&self) -> Result<(usize, u32)> {
        check_items(self.items)?;
        let chosen = match self.size {
            Sizing::Fpr(p) => fingerprint_bits_for_fpr(p),
            Sizing::BitsPerKey(b) => fingerprint_bits_for_bits_per_key(b),
        };
        let bits = match self.fingerprint_bits {
            Some(bits) => {
                // A fixed width overrides the size, but a NaN or out-of-range size is still a
                // caller's mistake worth reporting.
                match self.size {
                    Sizing::Fpr(p) => check_fpr(p)?,
                    Sizing::BitsPerKey(b) => check_bits_per_key(b)?,
                }
                check_fingerprint_bits(bits)?;
                bits
            }
            None => chosen?,
        };
        Ok((buckets_for(self.items, bits)?, bits))
    }
}

pub(super) fn check_fingerprint_bits(bits: u32) -> Result<()> {
    if !FINGERPRINT_WIDTHS.contains(&bits) {
        return Err(Error::InvalidParameter {
            name: "fingerprint_bits",
            value: bits.to_string(),
            allowed: "8, 12 or 16",
        });
    }
    Ok(())
}

/// The narrowest width whose FPR at the target load meets `fpr`.
pub(super) fn fingerprint_bits_for_fpr(fpr: f64) -> Result<u32> {
    check_fpr(fpr)?;
    FINGERPRINT_WIDTHS
        .into_iter()
        .find(|&f| model::cuckoo_fpr(f, SLOTS_PER_BUCKET, TARGET_LOAD) <= fpr)
        .ok_or_else(|| Error::InvalidParameter {
            name: "fpr",
            value: Readable(fpr).to_string(),
            allowed: "at least about 1.16e-4 for a cuckoo filter (the FPR of its widest, \
                      16-bit fingerprints at 95 % load); use a Bloom filter for lower rates",
        })
}

/// The widest width that fits `bits_per_key` at the target load.
pub(super) fn fingerprint_bits_for_bits_per_key(bits_per_key: f64) -> Result<u32> {
    check_bits_per_key(bits_per_key)?;
    FINGERPRINT_WIDTHS
        .into_iter()
        .rev()
        .find(|&f| f as f64 / TARGET_LOAD <= bits_per_key)
        .ok_or_else(|| Error::InvalidParameter {
            name: "bits_per_key",
            value: Readable(bits_per_key).to_string(),
            allowed: "at least 8 / 0.95 = 8.421... for a cuckoo filter (8-bit fingerprints at \
                      95 % load)",
        })
}

/// `ceil(items / (4 * 0.95))` buckets, exactly, after checking that the table would fit.
pub(super) fn buckets_for(items: u64, fingerprint_bits: u32) -> Result<usize> {
    let slot_bits = fingerprint_bits as f64 / TARGET_LOAD;
    units_for(
        items,
        slot_bits,
        u64::from(SLOTS_PER_BUCKET * fingerprint_bits),
    )?;
    let buckets =
        (items as u128 * 100).div_ceil(u128::from(SLOTS_PER_BUCKET) * TARGET_LOAD_PERCENT);
    // units_for bounded the table below isize::MAX bytes, so this fits.
    Ok(buckets as usize)
}

/// Words of table storage for `buckets` buckets, or an error when there are none or too many.
pub(super) fn table_words(buckets: usize, fingerprint_bits: u32) -> Result<usize> {
    let too_many = || Error::InvalidParameter {
        name: "buckets",
        value: buckets.to_string(),
        allowed: "at least 1, and few enough that the table fits in memory",
    };
    if buckets == 0 {
        return Err(too_many());
    }
    // A 12-bit bucket is read with one 8-byte load: 2 bytes of padding keep the last in bounds.
    let padding = if fingerprint_bits == 12 { 2 } else { 0 };
    let bytes = buckets
        .checked_mul(bucket_bytes(fingerprint_bits))
        .and_then(|b| b.checked_add(padding))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(too_many)?;
    Ok(bytes.div_ceil(8))
}
