//! False-positive theory and sizing for every filter in the crate.
//!
//! This module owns the formulas: the FPR each layout should show for a given bits/key and
//! number of probes, the optimal number of probes, and the bits/key needed for a target FPR. It
//! does not build filters; the constructors call it, and the tests compare measured FPR with it.
//!
//! With the feature `std` (the default) the formulas use the standard library's `ln`, `exp` and
//! `powf`; without it (`no_std`) they use the `libm` crate's, which can differ in the last bit,
//! so a filter sized in a `no_std` build can, rarely, differ in size from one sized with `std`
//! for the same arguments. A filter's saved bytes read the same in both.

use crate::engine::mask::{LINE_BITS, MAX_K};
use crate::error::{Result, check_bits_per_key, check_fpr};
#[cfg(not(feature = "std"))]
use crate::math::Float;
use alloc::string::ToString;

/// The most probes the classic filter accepts (far past any optimum: k = c ln 2 is 22 at 32
/// bits/key).
pub const CLASSIC_MAX_K: u32 = 64;

/// FPR of a classic Bloom filter with `bits_per_key` bits per key and `k` independent
/// probes anywhere in the array: `(1 - e^{-k/c})^k` (Bloom 1970; the standard large-m limit).
pub fn classic_fpr(bits_per_key: f64, k: u32) -> f64 {
    let k = k as f64;
    (1.0 - (-k / bits_per_key).exp()).powf(k)
}

/// The k that minimises [`classic_fpr`] at `bits_per_key`: `c ln 2`, rounded to the better of
/// its floor and ceiling, at least 1.
pub fn classic_optimal_k(bits_per_key: f64) -> u32 {
    best_integer_near(bits_per_key * core::f64::consts::LN_2, CLASSIC_MAX_K, |k| {
        classic_fpr(bits_per_key, k)
    })
}

/// Bits per key a classic filter with optimal k needs for `fpr`: `-ln p / (ln 2)^2`.
pub fn classic_bits_per_key(fpr: f64) -> Result<f64> {
    check_fpr(fpr)?;
    let ln2 = core::f64::consts::LN_2;
    Ok((-fpr.ln() / (ln2 * ln2)).max(1.0))
}

fn best_integer_near(x: f64, max: u32, fpr: impl Fn(u32) -> f64) -> u32 {
    let lo = (x.floor() as u32).clamp(1, max);
    let hi = (x.ceil() as u32).clamp(1, max);
    if fpr(hi) < fpr(lo) { hi } else { lo }
}

/// FPR of the blocked filter (`crate::blocked`) with `bits_per_key` bits per key and `k`
/// probes per key, for its exact bit-placement scheme ("rotated one-per-word", see
/// `blocked::simd`).
///
/// The number of keys in a query's line is Poisson with mean `λ = 512 / c` (Putze, Sanders and
/// Singler, "Cache-, hash- and space-efficient Bloom filters", 2007, use the same mixture). By
/// inclusion-exclusion over the subsets T of the query's probe bits,
/// `FPR = Σ_T (-1)^{|T|} E[P(no key in the line hits T)] = Σ_T (-1)^{|T|} e^{-λ (1 - g(T))}`,
/// where `g(T)` is the chance that one key avoids every bit of T: averaged over the key's 8
/// rotations, the product over words of `(1 - |T ∩ word| / 64)^{bits the key puts in the word}`.
/// Subsets are grouped by how many bits they take from each word, so the sum has at most 3^8
/// terms. For k > 8 a query's two bits in one word coincide with probability 1/64; the model
/// mixes the all-distinct case with the case of one such word.
///
/// Inclusion-exclusion cancels large terms, so the result is trustworthy down to about 1e-13;
/// [`BLOCKED_MIN_FPR`] keeps sizing well above that.
pub fn blocked_fpr(bits_per_key: f64, k: u32) -> f64 {
    let k = k.clamp(1, MAX_K) as usize;
    let lambda = LINE_BITS as f64 / bits_per_key;
    // The query's rotation is 0 by symmetry: word w holds probes w and w + 8.
    let mut query = [0usize; 8];
    for (w, q) in query.iter_mut().enumerate() {
        *q = usize::from(w < k) + usize::from(w + 8 < k);
    }
    let distinct = blocked_fpr_for_query(lambda, k, &query);
    let doubles = k.saturating_sub(8);
    if doubles == 0 {
        return distinct.clamp(0.0, 1.0);
    }
    // With probability 1 - (63/64)^doubles at least one of the query's double words has its
    // two bits on one position; the model takes one such word (two or more, 0.02 % of queries at
    // k = 16, change the result by far less than its other approximations).
    query[0] = 1;
    let merged = blocked_fpr_for_query(lambda, k, &query);
    let p_all_distinct = (63.0f64 / 64.0).powi(doubles as i32);
    (p_all_distinct * distinct + (1.0 - p_all_distinct) * merged).clamp(0.0, 1.0)
}

fn blocked_fpr_for_query(lambda: f64, k: usize, query: &[usize; 8]) -> f64 {
    // Bits a key with rotation r puts in word w.
    let mut per_key = [[0usize; 8]; 8];
    for (r, row) in per_key.iter_mut().enumerate() {
        for (w, bits) in row.iter_mut().enumerate() {
            let slot = (w + 8 - r) % 8;
            *bits = usize::from(slot < k) + usize::from(slot + 8 < k);
        }
    }
    // avoid[t][b]: chance that b uniform bits in a word miss t given bits of it.
    let mut avoid = [[1.0f64; 3]; 3];
    for (t, row) in avoid.iter_mut().enumerate() {
        for (b, v) in row.iter_mut().enumerate() {
            *v = (1.0 - t as f64 / 64.0).powi(b as i32);
        }
    }
    let mut take = [0usize; 8];
    let mut sum = 0.0;
    loop {
        let mut weight = 1.0;
        let mut size = 0;
        for w in 0..8 {
            weight *= binomial(query[w], take[w]);
            size += take[w];
        }
        let g: f64 = per_key
            .iter()
            .map(|row| (0..8).map(|w| avoid[take[w]][row[w]]).product::<f64>())
            .sum::<f64>()
            / 8.0;
        let sign = if size % 2 == 0 { 1.0 } else { -1.0 };
        sum += sign * weight * (-lambda * (1.0 - g)).exp();
        // Next vector of per-word counts (odometer).
        let mut w = 0;
        loop {
            if w == 8 {
                return sum;
            }
            if take[w] < query[w] {
                take[w] += 1;
                break;
            }
            take[w] = 0;
            w += 1;
        }
    }
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The k in `1..=16` that minimises [`blocked_fpr`] at `bits_per_key`.
pub fn blocked_optimal_k(bits_per_key: f64) -> u32 {
    // The FPR is unimodal in k and its minimum lies a little below the classic optimum c ln 2:
    // start there and walk downhill.
    let start = ((bits_per_key * 0.6).round() as u32).clamp(1, MAX_K);
    let fpr = |k: u32| blocked_fpr(bits_per_key, k);
    let mut best = start;
    let mut best_fpr = fpr(start);
    for step in [1i32, -1] {
        let mut k = best as i32 + step;
        while (1..=MAX_K as i32).contains(&k) {
            let f = fpr(k as u32);
            if f >= best_fpr {
                break;
            }
            best = k as u32;
            best_fpr = f;
            k += step;
        }
    }
    best
}

/// The lowest FPR the blocked filter's sizing accepts. One line caps what a blocked filter can
/// reach (at 128 bits/key the model gives 4e-11), and below this the model's own precision runs
/// out; an exact set is the better tool there.
pub const BLOCKED_MIN_FPR: f64 = 1e-10;

/// The least bits per key (to 0.01) at which the blocked filter with optimal k reaches `fpr`;
/// an error below [`BLOCKED_MIN_FPR`].
pub fn blocked_bits_per_key(fpr: f64) -> Result<f64> {
    check_fpr(fpr)?;
    if fpr < BLOCKED_MIN_FPR {
        return Err(crate::Error::InvalidParameter {
            name: "fpr",
            value: crate::error::Readable(fpr).to_string(),
            allowed: "at least 1e-10 for the blocked filter (one cache line caps its FPR)",
        });
    }
    known_blocked_bits_per_key(fpr)
}

/// [`search_blocked_bits_per_key`], its answers kept: the search takes milliseconds; a scalable
/// filter asks again for every filter it adds, and a program that builds many filters asks the
/// same few rates.
#[cfg(feature = "std")]
fn known_blocked_bits_per_key(fpr: f64) -> Result<f64> {
    use std::sync::Mutex;
    static KNOWN: Mutex<Vec<(u64, f64)>> = Mutex::new(Vec::new());
    let key = fpr.to_bits();
    if let Ok(known) = KNOWN.lock()
        && let Some(&(_, bits)) = known.iter().find(|(k, _)| *k == key)
    {
        return Ok(bits);
    }
    let bits = search_blocked_bits_per_key(fpr)?;
    if let Ok(mut known) = KNOWN.lock() {
        if known.len() >= 64 {
            known.remove(0);
        }
        known.push((key, bits));
    }
    Ok(bits)
}

/// Without `std` (no lock to guard a cache), every call searches.
#[cfg(not(feature = "std"))]
fn known_blocked_bits_per_key(fpr: f64) -> Result<f64> {
    search_blocked_bits_per_key(fpr)
}

/// The bisection behind [`blocked_bits_per_key`].
fn search_blocked_bits_per_key(fpr: f64) -> Result<f64> {
    let best = |c: f64| blocked_fpr(c, blocked_optimal_k(c));
    let (mut lo, mut hi) = (1.0f64, 8.0f64);
    while best(hi) > fpr {
        lo = hi;
        hi *= 2.0;
    }
    if best(lo) <= fpr {
        return Ok(lo);
    }
    while hi - lo > 0.01 {
        let mid = 0.5 * (lo + hi);
        if best(mid) > fpr {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    check_bits_per_key(hi)?;
    Ok(hi)
}

/// FPR of a blocked Bloom filter whose keys each set `k` *distinct* bits, chosen uniformly
/// at random, inside one block of `block_bits` bits (the block uniform among the filter's),
/// at `bits_per_key` bits per key. The layout-free best case for a given block width: any
/// scheme that builds its mask faster (one bit per word, split block, this crate's rotation)
/// constrains where the bits may go and can only do as well or worse, as the tests check for
/// the ones this crate models.
///
/// Keys per block are Poisson with mean `λ = B / c` (as in [`blocked_fpr`]); a query's k bits
/// all set is, by inclusion-exclusion over the `s` of them that no key hits,
/// `Σ_s (-1)^s C(k, s) e^{-λ (1 - C(B - s, k) / C(B, k))}`. `k` is clamped to
/// `1..=16` (and to `block_bits`), where the sum's cancellation costs at most `C(16, 8)` times
/// the rounding error (results good to about 1e-12); `block_bits` to at least 1.
///
/// This is what decides which widths can meet an FPR: at 10 bits per key the best 256-bit block
/// gives 1.070 % (k = 6), so no layout that keeps a key's bits in 32 bytes reaches 1 %, while
/// 512-bit blocks give 0.955 % (k = 6); see [`block_optimal_k`].
pub fn block_fpr(block_bits: u32, bits_per_key: f64, k: u32) -> f64 {
    let b = block_bits.max(1) as usize;
    let k = (k as usize).clamp(1, b.min(MAX_FREE_HASHES as usize));
    let lambda = b as f64 / bits_per_key;
    // C(B - s, k) / C(B, k) = Π_{i < k} (B - s - i) / (B - i): the chance one key misses s
    // given bits.
    let missed = |s: usize| -> f64 {
        (0..k)
            .map(|i| (b as f64 - s as f64 - i as f64).max(0.0) / (b - i) as f64)
            .product()
    };
    let sum: f64 = (0..=k)
        .map(|s| {
            let sign = if s % 2 == 0 { 1.0 } else { -1.0 };
            sign * binomial(k, s) * (-lambda * (1.0 - missed(s))).exp()
        })
        .sum();
    sum.clamp(0.0, 1.0)
}

/// The most probes [`block_fpr`] models.
pub const MAX_FREE_HASHES: u32 = 16;

/// The k (1..=16) that minimises [`block_fpr`] for `block_bits`-bit blocks at `bits_per_key`,
/// with that FPR.
pub fn block_optimal_k(block_bits: u32, bits_per_key: f64) -> (u32, f64) {
    (1..=MAX_FREE_HASHES.min(block_bits.max(1)))
        .map(|k| (k, block_fpr(block_bits, bits_per_key, k)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((1, 1.0))
}

/// FPR of the Parquet split-block Bloom filter ([`crate::SplitBlockBloom`]) at `bits_per_key`
/// bits per key: 256-bit blocks of eight 32-bit words, each key setting one uniform bit in each
/// word of one uniform block (Putze, Sanders and Singler, "Cache-, hash- and space-efficient
/// Bloom filters", 2007, the split-block variant). Keys per block are Poisson with mean
/// `λ = 256 / c`; with `j` keys in its block a query's bit in one word is set with probability
/// `1 - (31/32)^j`, independently across the eight words, so
/// `FPR = Σ_j Pois(j; λ) (1 - (31/32)^j)^8`.
///
/// ```
/// use linebloom::model::split_block_fpr;
///
/// let p = split_block_fpr(10.0);
/// assert!(p > 0.012 && p < 0.013);
/// ```
pub fn split_block_fpr(bits_per_key: f64) -> f64 {
    if bits_per_key.is_nan() || bits_per_key <= 0.0 {
        return 1.0;
    }
    let lambda = 256.0 / bits_per_key;
    // Sum the Poisson terms in log space to well past the mean (the tail beyond is below 1e-30).
    let last = (lambda + 20.0 * lambda.sqrt() + 50.0).ceil() as u64;
    let miss = (31.0f64 / 32.0).ln();
    let mut log_pois = -lambda; // ln Pois(0; λ)
    let mut sum = 0.0;
    for j in 0..=last {
        if j > 0 {
            log_pois += lambda.ln() - (j as f64).ln();
        }
        let hit = -(miss * j as f64).exp_m1(); // 1 - (31/32)^j, exact for small j
        sum += (log_pois + 8.0 * hit.ln()).exp();
    }
    sum.clamp(0.0, 1.0)
}

/// Bits per key a split-block filter needs for `fpr` by [`split_block_fpr`] (bisection; the
/// FPR falls as bits grow). Parquet writers size with the simpler
/// [`crate::sbbf::parquet_bitset_bytes`], then round up to a power of two.
///
/// ```
/// use linebloom::model::{split_block_bits_per_key, split_block_fpr};
///
/// let c = split_block_bits_per_key(0.01)?;
/// assert!((split_block_fpr(c) / 0.01 - 1.0).abs() < 1e-6);
/// # Ok::<(), linebloom::Error>(())
/// ```
pub fn split_block_bits_per_key(fpr: f64) -> Result<f64> {
    check_fpr(fpr)?;
    let max = crate::error::MAX_BITS_PER_KEY;
    if split_block_fpr(max) > fpr {
        return Err(crate::Error::InvalidFpr(fpr));
    }
    let (mut lo, mut hi) = (1.0f64, max);
    if split_block_fpr(lo) <= fpr {
        return Ok(lo);
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if split_block_fpr(mid) > fpr {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}

/// FPR of a cuckoo filter with `fingerprint_bits`-bit fingerprints, `slots` slots per bucket and
/// load factor `load` (Fan et al., "Cuckoo filter: practically better than Bloom", 2014): a
/// lookup compares against the `2 * slots * load` occupied slots of its two buckets, each a false
/// match with probability `2^-f`, so `1 - (1 - 2^-f)^{2 b α}` (≈ `2 b α / 2^f`).
pub fn cuckoo_fpr(fingerprint_bits: u32, slots: u32, load: f64) -> f64 {
    let miss = 1.0 - (0.5f64).powi(fingerprint_bits as i32);
    1.0 - miss.powf(2.0 * slots as f64 * load.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn classic_known_values() {
        // 10 bits/key, k = 7: 0.819 % (the textbook figure).
        assert!(close(classic_fpr(10.0, 7), 0.008_19, 0.002));
        assert_eq!(classic_optimal_k(10.0), 7);
        assert_eq!(classic_optimal_k(1.0), 1);
        // 1 % needs 9.585 bits/key.
        assert!(close(classic_bits_per_key(0.01).unwrap(), 9.585, 0.001));
    }

    #[test]
    fn blocked_known_values() {
        // Values from an independent evaluation of the same formula (Python, see the README's
        // design notes): 10 bits/key, k = 6: 0.973 %, k = 7: 0.980 %, k = 8: 1.049 %.
        assert!(close(blocked_fpr(10.0, 6), 0.009_73, 0.002));
        assert!(close(blocked_fpr(10.0, 7), 0.009_80, 0.002));
        assert!(close(blocked_fpr(10.0, 8), 0.010_49, 0.002));
        assert_eq!(blocked_optimal_k(10.0), 6);
        // A blocked filter is never better than a classic one of the same size.
        for c in [4.0, 8.0, 12.0, 16.0, 24.0] {
            let k = blocked_optimal_k(c);
            assert!(blocked_fpr(c, k) >= classic_fpr(c, classic_optimal_k(c)));
        }
    }

    #[test]
    fn blocked_sizing_inverts_the_model() {
        for p in [0.1, 0.01, 0.001, 0.0001, 1e-6] {
            let c = blocked_bits_per_key(p).unwrap();
            assert!(blocked_fpr(c, blocked_optimal_k(c)) <= p);
            assert!(blocked_fpr(c - 0.05, blocked_optimal_k(c - 0.05)) > p);
        }
        assert!(blocked_bits_per_key(0.0).is_err());
        assert!(blocked_bits_per_key(f64::NAN).is_err());
        assert!(blocked_bits_per_key(1.0).is_err());
        assert!(blocked_bits_per_key(1e-11).is_err());
        assert!(blocked_bits_per_key(BLOCKED_MIN_FPR).is_ok());
        // The optimum from the local search is the global one.
        for c in [1.0, 2.0, 5.0, 10.0, 16.0, 24.0, 40.0, 64.0, 128.0] {
            let global = (1..=MAX_K)
                .min_by(|&a, &b| blocked_fpr(c, a).total_cmp(&blocked_fpr(c, b)))
                .unwrap();
            assert_eq!(blocked_optimal_k(c), global, "c={c}");
        }
    }

    #[test]
    fn block_known_values() {
        // Values from an independent evaluation of the same formula (Python): 10 bits/key,
        // 256-bit blocks k = 6: 1.0696 %, 512-bit blocks k = 6: 0.9550 %, k = 7: 0.9597 %.
        assert!(close(block_fpr(256, 10.0, 6), 0.010_696, 0.001));
        assert!(close(block_fpr(512, 10.0, 6), 0.009_550, 0.001));
        assert!(close(block_fpr(512, 10.0, 7), 0.009_597, 0.001));
        // The bound behind target 1 (README): no 32-byte block reaches 1 % at 10 bits/key.
        let (k, best) = block_optimal_k(256, 10.0);
        assert_eq!(k, 6);
        assert!(best > 0.0105, "best 256-bit block {best}");
        // The free placement bounds the constrained ones: the rotated scheme of this crate's
        // 512-bit lines, and the classic filter (one block the size of the array).
        for c in [6.0, 8.0, 10.0, 12.0, 16.0] {
            let free = block_optimal_k(512, c).1;
            assert!(
                free <= blocked_fpr(c, blocked_optimal_k(c)) * 1.0001,
                "c={c}"
            );
            assert!(free >= classic_fpr(c, classic_optimal_k(c)), "c={c}");
            // Wider blocks never do worse.
            assert!(block_optimal_k(256, c).1 > free, "c={c}");
        }
        // Degenerate arguments stay finite and in range.
        for (b, c, k) in [
            (0, 10.0, 6),
            (1, 10.0, 6),
            (8, 10.0, 100),
            (256, 0.5, 0),
            (512, 128.0, 99),
        ] {
            let p = block_fpr(b, c, k);
            assert!((0.0..=1.0).contains(&p), "{b} {c} {k}: {p}");
        }
    }

    #[test]
    fn cuckoo_known_values() {
        // f = 8, b = 4, α = 0.95: about 2*4*0.95/256 = 2.97 %.
        assert!(close(cuckoo_fpr(8, 4, 0.95), 0.0293, 0.01));
    }
}
