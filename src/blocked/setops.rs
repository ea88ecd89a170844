//! Set operations on whole filters (union, intersection) and what the bits say about their
//! contents: fill ratio, estimated number of distinct keys, and the FPR expected from the fill.
//!
//! This module owns those for [`BlockedBloom`] (and, through functions over `&[Line]`, for the
//! zero-copy view) and, because they are a few lines each, for [`ClassicBloom`]. It does not own
//! the a-priori FPR model ([`crate::model`]), which predicts from an item count instead of
//! reading the bits.
//!
//! The estimators and their derivations are documented on [`BlockedBloom::estimated_items`]
//! and [`BlockedBloom::current_fpr`].

use super::{BlockedBloom, MAX_K};
use crate::ClassicBloom;
use crate::engine::mask::{LINE_BITS, Line};
use crate::error::{Error, Result};
#[cfg(not(feature = "std"))]
use crate::math::Float;
use alloc::format;

impl BlockedBloom {
    /// Adds every key of `other`: afterwards `self` is bit for bit the filter built from both
    /// filters' keys. [`Error::Incompatible`] (and `self` unchanged) when the two differ in line
    /// count, probes per key, placement or seed.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        for (a, b) in self.lines.iter_mut().zip(&other.lines) {
            a.union(b);
        }
        Ok(())
    }

    /// Keeps only the bits set in both filters. Every key inserted into both still answers
    /// `true`; the result may hold more bits (so more false positives) than a filter built from
    /// the keys common to both, since two different keys can set the same bit. Same
    /// compatibility rule as [`union`](Self::union).
    pub fn intersect(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        for (a, b) in self.lines.iter_mut().zip(&other.lines) {
            a.intersect(b);
        }
        Ok(())
    }

    fn check_compatible(&self, other: &Self) -> Result<()> {
        compatible(
            (self.lines.len() as u64, self.probes.k, self.seed),
            (other.lines.len() as u64, other.probes.k, other.seed),
            "line counts",
        )?;
        if self.placement() != other.placement() {
            return Err(Error::Incompatible(format!(
                "placements differ ({} vs {})",
                self.placement(),
                other.placement()
            )));
        }
        Ok(())
    }

    /// Set bits over all bits, in [0, 1].
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }

    /// The number of distinct keys inserted, estimated from the fill: within a few percent
    /// below about 70 % fill (`tests/setops.rs`); duplicates count once; infinite when every
    /// bit is set.
    ///
    /// Swamidass and Baldi (2007) estimate a classic filter's keys from its `X` set bits of `m`
    /// as `n ≈ -(m/k) ln(1 - X/m)`: a bit stays zero with probability `(1 - 1/m)^{kn}`, and the
    /// observed zero fraction inverts that. Adapted to lines: a key lands in one of `L` lines
    /// (probability `1/L`) and then misses a given bit of it with probability `g`, where the
    /// bit's 64-bit word gets 0, 1 or 2 of the key's probes depending on its rotation, each on
    /// a uniform one of 64 positions: `g = (1/8) Σ_s (63/64)^{[s < k] + [s + 8 < k]}`. A bit
    /// stays zero with probability `(1 - (1 - g)/L)^n`, so with `Z` the observed zero fraction
    /// `n ≈ ln Z / ln(1 - (1 - g)/L)`. For `k ≤ 8`, `1 - g = k/512` and this *is* Swamidass and
    /// Baldi's formula with `m = 512 L`; for `k > 8` it counts the 1-in-64 chance that a key's
    /// two probes in one word coincide (at `k = 16` the effective k is 15.9).
    pub fn estimated_items(&self) -> f64 {
        estimated_items_of(&self.lines, self.probes.k)
    }

    /// The false-positive rate a key never inserted meets now, read from the bits rather than
    /// predicted from an item count: exact in expectation over random keys, skewed line loads
    /// included. One pass over the filter (about 64 multiplies per line).
    ///
    /// A key never inserted picks a uniform line and rotation, and each of its probes is a
    /// uniform position in its word, so it is a false positive with probability
    /// `Π_w f_w^{b_w}`: `f_w` the share of word `w` that is set, `b_w` the probes the key puts
    /// in that word (two independent uniform positions are both set with probability exactly
    /// `f_w²`). This averages that over all lines and the 8 rotations.
    pub fn current_fpr(&self) -> f64 {
        current_fpr_of(&self.lines, self.probes.k)
    }
}

/// Set bits in `lines`.
pub(crate) fn ones_in(lines: &[Line]) -> u64 {
    lines.iter().map(|l| u64::from(l.count_ones())).sum()
}

/// Probes a key with `hashes` probes puts in each word of its line, for each of the 8
/// rotations: `bits[r][w]`.
fn probes_per_word(hashes: u32) -> [[usize; 8]; 8] {
    let k = hashes.clamp(1, MAX_K) as usize;
    let mut bits = [[0usize; 8]; 8];
    for (r, row) in bits.iter_mut().enumerate() {
        for (w, b) in row.iter_mut().enumerate() {
            let slot = (w + 8 - r) % 8;
            *b = usize::from(slot < k) + usize::from(slot + 8 < k);
        }
    }
    bits
}

/// See [`BlockedBloom::estimated_items`]: `ln Z / ln(1 - (1 - g)/L)`.
pub(crate) fn estimated_items_of(lines: &[Line], hashes: u32) -> f64 {
    estimated_items_from(ones_in(lines), lines.len() as u64, hashes)
}

/// [`estimated_items_of`] from the count of set bits alone (what a server's `BITCOUNT` gives).
pub(crate) fn estimated_items_from(ones: u64, lines: u64, hashes: u32) -> f64 {
    let bits = lines as f64 * LINE_BITS as f64;
    let zeros = bits - ones as f64;
    if zeros <= 0.0 {
        return f64::INFINITY;
    }
    let miss_word = 63.0f64 / 64.0;
    // Rotation 0's row lists, per word, the probes of every rotation (the slots are a cycle).
    let g = probes_per_word(hashes)[0]
        .iter()
        .map(|&b| miss_word.powi(b as i32))
        .sum::<f64>()
        / 8.0;
    let per_key = (-(1.0 - g) / lines as f64).ln_1p();
    (zeros / bits).ln() / per_key
}

/// See [`BlockedBloom::current_fpr`]: the mean over lines and rotations of `Π_w f_w^{b_w}`.
pub(crate) fn current_fpr_of(lines: &[Line], hashes: u32) -> f64 {
    let table = probes_per_word(hashes);
    let mut sum = 0.0;
    for line in lines {
        // powers[w][b] = f_w^b for the 0, 1 or 2 probes a word can get.
        let mut powers = [[1.0f64; 3]; 8];
        for (w, p) in powers.iter_mut().enumerate() {
            let ones = line.0[2 * w].count_ones() + line.0[2 * w + 1].count_ones();
            let f = f64::from(ones) / 64.0;
            *p = [1.0, f, f * f];
        }
        let per_line: f64 = table
            .iter()
            .map(|row| (0..8).map(|w| powers[w][row[w]]).product::<f64>())
            .sum();
        sum += per_line / 8.0;
    }
    sum / lines.len().max(1) as f64
}

/// `Ok` when the (size, probes, seed) triples agree, else which one differs.
fn compatible(a: (u64, u32, u64), b: (u64, u32, u64), size_name: &str) -> Result<()> {
    if a.0 != b.0 {
        return Err(Error::Incompatible(format!(
            "{size_name} differ ({} vs {})",
            a.0, b.0
        )));
    }
    if a.1 != b.1 {
        return Err(Error::Incompatible(format!(
            "probes per key differ ({} vs {})",
            a.1, b.1
        )));
    }
    if a.2 != b.2 {
        return Err(Error::Incompatible(format!(
            "seeds differ ({:#x} vs {:#x})",
            a.2, b.2
        )));
    }
    Ok(())
}

impl ClassicBloom {
    /// Adds every key of `other`: afterwards `self` is bit for bit the filter built from both
    /// filters' keys. [`Error::Incompatible`] (and `self` unchanged) when the two differ in
    /// number of bits, probes per key or seed.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.combine(other, |a, b| a | b)
    }

    /// Keeps only the bits set in both filters: every key inserted into both still answers
    /// `true` (with more false positives than a filter of the common keys alone). Same
    /// compatibility rule as [`union`](Self::union).
    pub fn intersect(&mut self, other: &Self) -> Result<()> {
        self.combine(other, |a, b| a & b)
    }

    fn combine(&mut self, other: &Self, op: impl Fn(u64, u64) -> u64) -> Result<()> {
        compatible(
            (self.num_bits(), self.k(), self.seed()),
            (other.num_bits(), other.k(), other.seed()),
            "bit counts",
        )?;
        // The words are private to `classic.rs`; rebuilding through its validating constructor
        // costs one copy and keeps this module off its internals.
        let words = self
            .iter_words()
            .zip(other.iter_words())
            .map(|(a, b)| op(a, b))
            .collect();
        *self = ClassicBloom::from_parts(words, self.num_bits(), self.k(), self.seed())?;
        Ok(())
    }

    /// Set bits over all bits, in [0, 1].
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }

    /// The number of distinct keys inserted, estimated from the fill: Swamidass and Baldi
    /// (2007), `n ≈ -(m/k) ln(1 - X/m)` for `X` set bits of `m`. Infinite when every bit is set.
    pub fn estimated_items(&self) -> f64 {
        let m = self.num_bits() as f64;
        let zeros = m - self.count_ones() as f64;
        if zeros <= 0.0 {
            return f64::INFINITY;
        }
        (zeros / m).ln() / (-(self.k() as f64) / m).ln_1p()
    }

    /// The false-positive rate a key never inserted meets now: `(X/m)^k`, its `k` probes
    /// landing on uniform bits of which a share `X/m` is set.
    pub fn current_fpr(&self) -> f64 {
        self.fill_ratio().powi(self.k() as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_per_word_adds_up_to_k_for_every_rotation() {
        for k in 1..=MAX_K {
            let table = probes_per_word(k);
            for row in table {
                assert_eq!(row.iter().sum::<usize>(), k as usize, "k={k}");
            }
            // Every word sees the same multiset over rotations: rotation 0 lists it.
            for w in 0..8 {
                let mut column: Vec<usize> = table.iter().map(|row| row[w]).collect();
                let mut first = table[0].to_vec();
                column.sort_unstable();
                first.sort_unstable();
                assert_eq!(column, first);
            }
        }
    }

    #[test]
    fn empty_and_full_filters() {
        let mut f = BlockedBloom::with_lines(4, 7, 0).unwrap();
        assert_eq!(f.estimated_items(), 0.0);
        assert_eq!(f.current_fpr(), 0.0);
        assert_eq!(f.fill_ratio(), 0.0);
        f.lines.fill(Line([u32::MAX; 16]));
        assert_eq!(f.estimated_items(), f64::INFINITY);
        assert_eq!(f.current_fpr(), 1.0);
        assert_eq!(f.fill_ratio(), 1.0);
    }
}
