//! False-positive theory and sizing for every filter in the crate.
//!
//! This module owns the formulas: the FPR each layout should show for a given bits/key and
//! number of probes, the optimal number of probes, and the bits/key needed for a target FPR. It
//! does not build filters; the constructors call it, and the tests compare measured FPR with it.

use crate::blocked::simd::{LINE_BITS, MAX_HASHES};
use crate::error::{check_bits_per_key, check_fpr, Result};

/// The most probes the classic filter accepts (far past any optimum: k = c ln 2 is 22 at 32
/// bits/key).
pub const CLASSIC_MAX_HASHES: u32 = 64;

/// FPR of a classic Bloom filter with `bits_per_key` bits per key and `hashes` independent
/// probes anywhere in the array: `(1 - e^{-k/c})^k` (Bloom 1970; the standard large-m limit).
pub fn classic_fpr(bits_per_key: f64, hashes: u32) -> f64 {
    let k = hashes as f64;
    (1.0 - (-k / bits_per_key).exp()).powf(k)
}

/// The k that minimises [`classic_fpr`] at `bits_per_key`: `c ln 2`, rounded to the better of
/// its floor and ceiling, at least 1.
pub fn classic_optimal_hashes(bits_per_key: f64) -> u32 {
    best_integer_near(bits_per_key * std::f64::consts::LN_2, CLASSIC_MAX_HASHES, |k| {
        classic_fpr(bits_per_key, k)
    })
}

/// Bits per key a classic filter with optimal k needs for `fpr`: `-ln p / (ln 2)^2`.
pub fn classic_bits_per_key(fpr: f64) -> Result<f64> {
    check_fpr(fpr)?;
    let ln2 = std::f64::consts::LN_2;
    Ok((-fpr.ln() / (ln2 * ln2)).max(1.0))
}

fn best_integer_near(x: f64, max: u32, fpr: impl Fn(u32) -> f64) -> u32 {
    let lo = (x.floor() as u32).clamp(1, max);
    let hi = (x.ceil() as u32).clamp(1, max);
    if fpr(hi) < fpr(lo) {
        hi
    } else {
        lo
    }
}

/// FPR of the blocked filter (`crate::blocked`) with `bits_per_key` bits per key and `hashes`
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
/// mixes over how many do (binomially).
pub fn blocked_fpr(bits_per_key: f64, hashes: u32) -> f64 {
    let k = hashes.clamp(1, MAX_HASHES) as usize;
    let lambda = LINE_BITS as f64 / bits_per_key;
    let doubles = k.saturating_sub(8);
    let p_same = 1.0f64 / 64.0;
    let mut total = 0.0;
    for coincide in 0..=doubles {
        let weight = binomial(doubles, coincide)
            * p_same.powi(coincide as i32)
            * (1.0 - p_same).powi((doubles - coincide) as i32);
        // The query's rotation is 0 by symmetry: word w holds probes w and w + 8.
        let mut query = [0usize; 8];
        for (w, q) in query.iter_mut().enumerate() {
            *q = usize::from(w < k) + usize::from(w + 8 < k);
            if w < coincide {
                *q = 1;
            }
        }
        total += weight * blocked_fpr_for_query(lambda, k, &query);
    }
    total.clamp(0.0, 1.0)
}

fn blocked_fpr_for_query(lambda: f64, k: usize, query: &[usize; 8]) -> f64 {
    // Bits a key with rotation r puts in word w.
    let mut per_key = [[0i32; 8]; 8];
    for (r, row) in per_key.iter_mut().enumerate() {
        for (w, bits) in row.iter_mut().enumerate() {
            let slot = (w + 8 - r) % 8;
            *bits = i32::from(slot < k) + i32::from(slot + 8 < k);
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
            .map(|row| {
                (0..8)
                    .map(|w| (1.0 - take[w] as f64 / 64.0).powi(row[w]))
                    .product::<f64>()
            })
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
pub fn blocked_optimal_hashes(bits_per_key: f64) -> u32 {
    // The FPR is unimodal in k: walk up from 1 while it falls.
    let mut best = 1;
    let mut best_fpr = blocked_fpr(bits_per_key, 1);
    for k in 2..=MAX_HASHES {
        let f = blocked_fpr(bits_per_key, k);
        if f >= best_fpr {
            break;
        }
        best = k;
        best_fpr = f;
    }
    best
}

/// The least bits per key (to 0.01) at which the blocked filter with optimal k reaches `fpr`;
/// an error if no size up to [`crate::error::MAX_BITS_PER_KEY`] does (a line caps how low the
/// FPR of a one-line filter can go: about 1e-9 at 64 bits/key).
pub fn blocked_bits_per_key(fpr: f64) -> Result<f64> {
    check_fpr(fpr)?;
    let best = |c: f64| blocked_fpr(c, blocked_optimal_hashes(c));
    let (mut lo, mut hi) = (1.0f64, 8.0f64);
    while best(hi) > fpr {
        lo = hi;
        hi *= 2.0;
        if hi > crate::error::MAX_BITS_PER_KEY {
            return Err(crate::Error::InvalidFpr(fpr));
        }
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
        assert_eq!(classic_optimal_hashes(10.0), 7);
        assert_eq!(classic_optimal_hashes(1.0), 1);
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
        assert_eq!(blocked_optimal_hashes(10.0), 6);
        // A blocked filter is never better than a classic one of the same size.
        for c in [4.0, 8.0, 12.0, 16.0, 24.0] {
            let k = blocked_optimal_hashes(c);
            assert!(blocked_fpr(c, k) >= classic_fpr(c, classic_optimal_hashes(c)));
        }
    }

    #[test]
    fn blocked_sizing_inverts_the_model() {
        for p in [0.1, 0.01, 0.001, 0.0001] {
            let c = blocked_bits_per_key(p).unwrap();
            assert!(blocked_fpr(c, blocked_optimal_hashes(c)) <= p);
            assert!(blocked_fpr(c - 0.05, blocked_optimal_hashes(c - 0.05)) > p);
        }
        assert!(blocked_bits_per_key(0.0).is_err());
        assert!(blocked_bits_per_key(f64::NAN).is_err());
        assert!(blocked_bits_per_key(1.0).is_err());
    }

    #[test]
    fn cuckoo_known_values() {
        // f = 8, b = 4, α = 0.95: about 2*4*0.95/256 = 2.97 %.
        assert!(close(cuckoo_fpr(8, 4, 0.95), 0.0293, 0.01));
    }
}
