//! Sizing a classic filter: [`ClassicBloomBuilder`] (bits from a target FPR or a bits-per-key
//! budget, the optimal number of probes unless fixed) and the check of a probe count. The
//! storage and its paths are `mod.rs`'s; the formulas are [`crate::model`]'s.

use super::{ClassicBloom, WORD_BITS};
use crate::error::{Error, Result, check_bits_per_key, check_items, units_for};
use crate::filter::Sizing;
use crate::hash::DEFAULT_SEED;
#[cfg(not(feature = "std"))]
use crate::math::Float;
use crate::model::{self, CLASSIC_MAX_K};

/// Builds a [`ClassicBloom`] from an expected item count and a size (a target FPR or a number of
/// bits per key), optionally fixing the number of probes and the hash seed.
///
/// ```
/// use linebloom::ClassicBloom;
///
/// let filter = ClassicBloom::builder(1_000_000).bits_per_key(12.0).k(6).seed(7).build()?;
/// assert_eq!((filter.num_bits(), filter.k(), filter.seed()), (12_000_000, 6, 7));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClassicBloomBuilder {
    items: u64,
    size: Sizing,
    hashes: Option<u32>,
    seed: u64,
}

impl ClassicBloomBuilder {
    /// The builder [`ClassicBloom::builder`] returns: 1 % FPR, the optimal k, the default seed.
    pub(super) fn new(items: u64) -> Self {
        ClassicBloomBuilder {
            items,
            size: Sizing::Fpr(0.01),
            hashes: None,
            seed: DEFAULT_SEED,
        }
    }

    crate::filter::sizing_setters!(size);
    crate::filter::probe_setters!("`1..=64`.");

    /// The shape [`build`](Self::build) gives (bits and k), without taking memory: the sizing
    /// rule, for planning.
    pub fn shape(&self) -> Result<crate::format::Shape> {
        let (num_bits, k, _) = self.sized()?;
        Ok(crate::format::Shape::Classic { bits: num_bits, k })
    }

    /// Builds the empty filter, or says which parameter is out of range.
    pub fn build(self) -> Result<ClassicBloom> {
        let (num_bits, hashes, bits_per_key) = self.sized()?;
        ClassicBloom::allocate(num_bits, hashes, self.seed).ok_or(Error::TooLarge {
            items: self.items,
            bits_per_key,
        })
    }

    /// The bits, probes and bits per key the builder asks for, checked.
    fn sized(&self) -> Result<(u64, u32, f64)> {
        let items = self.items;
        check_items(items)?;
        let bits_per_key = match self.size {
            Sizing::Fpr(p) => model::classic_bits_per_key(p)?,
            Sizing::BitsPerKey(b) => b,
        };
        check_bits_per_key(bits_per_key)?;
        // The shared check for sizes that overflow or cannot be addressed; the filter itself is
        // sized to the bit, not to whole words.
        units_for(items, bits_per_key, WORD_BITS)?;
        // At least 1, since items >= 1 and bits_per_key >= 1, and no more bits than the words
        // `units_for` counted hold (it divides the same product by 64, which is exact).
        let num_bits = (items as f64 * bits_per_key).ceil() as u64;
        let hashes = self
            .hashes
            .unwrap_or_else(|| model::classic_optimal_k(bits_per_key));
        check_k(hashes)?;
        Ok((num_bits, hashes, bits_per_key))
    }
}

/// Checks a probe count: 1..=[`CLASSIC_MAX_K`].
pub(super) fn check_k(k: u32) -> Result<()> {
    if !(1..=CLASSIC_MAX_K).contains(&k) {
        return Err(Error::InvalidK {
            k,
            min: 1,
            max: CLASSIC_MAX_K,
        });
    }
    Ok(())
}
