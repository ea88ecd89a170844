//! Key hashing: one 64-bit hash per key, the same on every platform and Rust version.
//!
//! This module owns how a key becomes the `u64` that every filter consumes. It does not own how a
//! filter turns that hash into positions (each filter documents its own derivation).
//!
//! - Byte-like keys (`[u8]`, `str`, `String`, `Vec<u8>`, byte arrays) hash their bytes with
//!   xxh3-64 and the filter's seed.
//! - Integer keys hash their **little-endian** bytes the same way, so `5u64` and
//!   `5u64.to_le_bytes()` are the same key; `usize`/`isize` are widened to 64 bits first so a
//!   filter built on a 32-bit machine answers the same on a 64-bit one.
//! - Callers that already hold a good 64-bit hash use the filters' `*_hash` methods and skip this
//!   module entirely; such hashes must be well mixed (e.g. xxh3, wyhash, a murmur finaliser),
//!   since the filters take their line and bit positions straight from the bits. [`mix64`] turns a
//!   weak one (a counter, a pointer) into a good one.
//!
//! `std::hash::Hash` is deliberately not used: its output is not stable across Rust versions or
//! platforms, and a stored filter must keep answering the same after an upgrade.

use alloc::string::String;
use alloc::vec::Vec;
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The seed every filter uses unless one is chosen: fixed, so builds are reproducible and two
/// processes can exchange filters without agreeing on anything else. See the README on seeds.
pub const DEFAULT_SEED: u64 = 0x6c69_6e65_626c_6f6d; // "linebloom"

/// A fresh, unpredictable seed for a filter that must resist chosen keys.
///
/// With the fixed [`DEFAULT_SEED`], anyone who knows this crate can compute offline which keys
/// land on the same bits, and feed a deployment keys that are false positives everywhere (or
/// that pile into a few lines). A per-filter random seed makes that precomputation useless. The
/// seed is stored in the serialized format ([`crate::format`]), so a saved filter reads back
/// with whatever seed it was built with; the cost is that two filters only combine
/// (`union`, `intersect`) or answer alike when they share a seed.
///
/// The value comes from the standard library's `RandomState` (SipHash keyed from the operating
/// system's randomness) fed a process-wide counter and the clock, then remixed: not a
/// cryptographic key, but unknown to an attacker who cannot read the process's memory, and
/// distinct across calls. No dependency beyond `std`, and only with the feature `std`.
#[cfg(feature = "std")]
pub fn random_seed() -> u64 {
    use core::hash::{BuildHasher, Hasher};
    use core::sync::atomic::{AtomicU64, Ordering};
    // The counter makes two calls in the same clock tick differ even if `RandomState` reused
    // its keys (it does within a thread, only incrementing them).
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    mix64(hasher.finish())
}

/// A key that a filter can hash. Implemented for byte-like types and all primitive integers.
///
/// ```
/// use linebloom::{BlockedBloom, Key};
///
/// // Integers hash as their little-endian bytes, strings as their UTF-8 bytes.
/// assert_eq!(7u32.hash_with_seed(1), [7u8, 0, 0, 0].hash_with_seed(1));
/// assert_eq!("ab".hash_with_seed(1), b"ab".hash_with_seed(1));
///
/// let mut filter = BlockedBloom::with_fpr(100, 0.01)?;
/// filter.insert_hash("ab".hash_with_seed(filter.seed()));
/// assert!(filter.contains("ab"));
/// # Ok::<(), linebloom::Error>(())
/// ```
pub trait Key {
    /// The 64-bit hash of this key under `seed`.
    fn hash_with_seed(&self, seed: u64) -> u64;

    /// XXH64 with seed 0 of the same bytes ([`hash_xxh64`]): the hash of the Parquet
    /// split-block filter ([`crate::SplitBlockBloom`]). For byte-like keys, `i32`, `i64`,
    /// `f32` and `f64` those bytes are Parquet's plain encoding of BYTE_ARRAY, INT32, INT64,
    /// FLOAT and DOUBLE values.
    ///
    /// ```
    /// use linebloom::Key;
    ///
    /// assert_eq!("".hash_xxh64(), 17241709254077376921);
    /// assert_eq!(7i32.hash_xxh64(), 7i32.to_le_bytes().hash_xxh64());
    /// ```
    fn hash_xxh64(&self) -> u64;
}

/// XXH64 with seed 0 of `bytes`: the Parquet split-block filter's hash of a value's plain
/// encoding.
///
/// Inputs under 32 bytes (every integer and float, most keys) take an inlined copy of XXH64's
/// short-input path (the spec's finalisation: 8-byte, 4-byte and 1-byte steps, then the
/// avalanche), so an `i64` hashes in a few instructions; `xxhash-rust`'s `xxh64`, not inlined
/// across crates and looping over an unknown length, makes a value lookup far slower
/// (`docs/performance.md`, The Parquet split-block filter). Longer inputs go to `xxhash-rust`. The
/// tests compare both on every length from 0 to 100.
#[inline]
pub fn hash_xxh64(bytes: &[u8]) -> u64 {
    if bytes.len() < 32 {
        return xxh64_short(bytes);
    }
    xxhash_rust::xxh64::xxh64(bytes, 0)
}

const XXH_P1: u64 = 0x9E37_79B1_85EB_CA87;
const XXH_P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const XXH_P3: u64 = 0x1656_67B1_9E37_79F9;
const XXH_P4: u64 = 0x85EB_CA77_C2B2_AE63;
const XXH_P5: u64 = 0x27D4_EB2F_1656_67C5;

/// XXH64 with seed 0 of fewer than 32 bytes (no stripes: the accumulator starts at
/// `PRIME64_5 + len` and goes straight to the finalisation).
#[inline(always)]
fn xxh64_short(bytes: &[u8]) -> u64 {
    let mut acc = XXH_P5.wrapping_add(bytes.len() as u64);
    let (words, rest) = bytes.as_chunks::<8>();
    for w in words {
        let k = u64::from_le_bytes(*w)
            .wrapping_mul(XXH_P2)
            .rotate_left(31)
            .wrapping_mul(XXH_P1);
        acc = (acc ^ k)
            .rotate_left(27)
            .wrapping_mul(XXH_P1)
            .wrapping_add(XXH_P4);
    }
    let (half, tail) = match rest.split_first_chunk::<4>() {
        Some((h, tail)) => (Some(u32::from_le_bytes(*h)), tail),
        None => (None, rest),
    };
    if let Some(h) = half {
        acc = (acc ^ u64::from(h).wrapping_mul(XXH_P1))
            .rotate_left(23)
            .wrapping_mul(XXH_P2)
            .wrapping_add(XXH_P3);
    }
    for &b in tail {
        acc = (acc ^ u64::from(b).wrapping_mul(XXH_P5))
            .rotate_left(11)
            .wrapping_mul(XXH_P1);
    }
    acc ^= acc >> 33;
    acc = acc.wrapping_mul(XXH_P2);
    acc ^= acc >> 29;
    acc = acc.wrapping_mul(XXH_P3);
    acc ^ (acc >> 32)
}

/// Hashes `bytes` with xxh3-64 under `seed`: the hash of every byte-like key.
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// A strong, invertible 64-bit mixer (the `rrmxmx` variant of the murmur3 finaliser by
/// Pelle Evensen): use it to turn a weak `u64` (a counter, an id) into a hash the `*_hash`
/// methods can use. Bijective, so distinct inputs stay distinct.
#[inline]
pub const fn mix64(mut x: u64) -> u64 {
    x ^= x.rotate_right(49) ^ x.rotate_right(24);
    x = x.wrapping_mul(0x9FB2_1C65_1E98_DF25);
    x ^= x >> 28;
    x = x.wrapping_mul(0x9FB2_1C65_1E98_DF25);
    x ^ (x >> 28)
}

impl Key for [u8] {
    #[inline]
    fn hash_with_seed(&self, seed: u64) -> u64 {
        hash_bytes(self, seed)
    }

    #[inline]
    fn hash_xxh64(&self) -> u64 {
        hash_xxh64(self)
    }
}

impl Key for str {
    #[inline]
    fn hash_with_seed(&self, seed: u64) -> u64 {
        hash_bytes(self.as_bytes(), seed)
    }

    #[inline]
    fn hash_xxh64(&self) -> u64 {
        hash_xxh64(self.as_bytes())
    }
}

impl Key for String {
    #[inline]
    fn hash_with_seed(&self, seed: u64) -> u64 {
        hash_bytes(self.as_bytes(), seed)
    }

    #[inline]
    fn hash_xxh64(&self) -> u64 {
        hash_xxh64(self.as_bytes())
    }
}

impl Key for Vec<u8> {
    #[inline]
    fn hash_with_seed(&self, seed: u64) -> u64 {
        hash_bytes(self, seed)
    }

    #[inline]
    fn hash_xxh64(&self) -> u64 {
        hash_xxh64(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn hash_with_seed(&self, seed: u64) -> u64 {
        hash_bytes(self, seed)
    }

    #[inline]
    fn hash_xxh64(&self) -> u64 {
        hash_xxh64(self)
    }
}

impl<T: Key + ?Sized> Key for &T {
    #[inline]
    fn hash_with_seed(&self, seed: u64) -> u64 {
        (**self).hash_with_seed(seed)
    }

    #[inline]
    fn hash_xxh64(&self) -> u64 {
        (**self).hash_xxh64()
    }
}

macro_rules! integer_key {
    ($($t:ty => $wide:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn hash_with_seed(&self, seed: u64) -> u64 {
                hash_bytes(&(*self as $wide).to_le_bytes(), seed)
            }

            #[inline]
            fn hash_xxh64(&self) -> u64 {
                hash_xxh64(&(*self as $wide).to_le_bytes())
            }
        }
    )*};
}

integer_key!(
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, u128 => u128, usize => u64,
    i8 => i8, i16 => i16, i32 => i32, i64 => i64, i128 => i128, isize => i64,
);

/// Floats hash as their little-endian IEEE 754 bytes (Parquet's FLOAT and DOUBLE plain
/// encodings), so `0.0` and `-0.0` are different keys, and each NaN payload its own.
macro_rules! float_key {
    ($($t:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn hash_with_seed(&self, seed: u64) -> u64 {
                hash_bytes(&self.to_le_bytes(), seed)
            }

            #[inline]
            fn hash_xxh64(&self) -> u64 {
                hash_xxh64(&self.to_le_bytes())
            }
        }
    )*};
}

float_key!(f32, f64);

/// Derives a filter's probe sequence from one 64-bit hash for layouts that need k independent
/// positions (the classic filter): enhanced double hashing after Kirsch and Mitzenmacher,
/// "Less hashing, same performance" (2006), with the cubic term of Dillinger and Manolios (2004)
/// (see `crate::classic` for what it does under [`reduce`]: next to nothing). Yields
/// `h1 + i*h2 + (i^3 - i)/6` for i = 0, 1, ...
/// with `h1` the hash and `h2` its two 32-bit halves swapped ([`DoubleHash::second`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DoubleHash {
    h1: u64,
    h2: u64,
    i: u64,
}

impl DoubleHash {
    /// Starts the sequence for `hash`.
    #[inline]
    pub fn new(hash: u64) -> Self {
        Self {
            h1: hash,
            h2: Self::second(hash),
            i: 0,
        }
    }

    /// `h2` for `hash`: its halves swapped, made odd. In the high bits that a probe position
    /// is taken from, probe `i` is then `hi + i·lo` (plus carries and the cubic term) for the
    /// hash's two independent 32-bit halves, the two-hash scheme Kirsch and Mitzenmacher
    /// analyse. One instruction, where a remix such as [`mix64`] puts two multiplies on the
    /// path to every probe after the first (measured in `crate::classic`); the FPR is the same
    /// (`tests/classic.rs` checks it against the model).
    #[inline(always)]
    pub const fn second(hash: u64) -> u64 {
        hash.rotate_left(32) | 1
    }

    /// From probe `i − 1`'s `(h1, h2)` to probe `i`'s (`i` from 1): `h1 + h2` and `h2 + i`, so
    /// that probe `i` is `hash + i·h2 + (i³ − i)/6`. The classic filter's lookups (and its
    /// inserts past the cache) unroll the sequence with it, so that the first probe needs no
    /// second hash.
    #[inline(always)]
    pub const fn step(h1: u64, h2: u64, i: u64) -> (u64, u64) {
        (h1.wrapping_add(h2), h2.wrapping_add(i))
    }
}

impl Iterator for DoubleHash {
    type Item = u64;
    #[inline]
    fn next(&mut self) -> Option<u64> {
        let out = self.h1;
        self.i = self.i.wrapping_add(1);
        (self.h1, self.h2) = Self::step(self.h1, self.h2, self.i);
        Some(out)
    }
}

/// Maps a well-mixed 64-bit hash onto `0..n` without division or modulo bias worth measuring:
/// Lemire's multiply-shift, `(hash * n) >> 64`. Uses the high bits of `hash`.
#[inline]
pub fn reduce(hash: u64, n: usize) -> usize {
    ((hash as u128 * n as u128) >> 64) as usize
}

/// Keys hashed per round by the keyed batch paths (`contains_keys`, `insert_keys`): a round's
/// hashes (32 KiB) sit on the stack and go through the filter's batched path, so a batch of keys
/// takes no allocation and past the cache its lookups' misses still overlap.
pub(crate) const KEY_ROUND: usize = 4096;

/// Calls `each(first, hashes)` for each run of up to [`KEY_ROUND`] keys in order: `first` is the
/// run's offset in `keys`, `hashes` the run's keys under `hash`. Stops at the first error. A
/// batch of up to 64 keys takes a 512-byte buffer, so a small batch does not pay for zeroing
/// the 32 KiB one.
pub(crate) fn in_hashed_rounds<K>(
    keys: &[K],
    hash: impl Fn(&K) -> u64,
    mut each: impl FnMut(usize, &[u64]) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    if keys.len() <= 64 {
        rounds::<K, 64>(keys, &hash, &mut each)
    } else {
        rounds::<K, KEY_ROUND>(keys, &hash, &mut each)
    }
}

/// [`in_hashed_rounds`] for work that cannot fail (the keyed inserts): `each(hashes)` per round.
pub(crate) fn each_hashed_round<K>(
    keys: &[K],
    hash: impl Fn(&K) -> u64,
    mut each: impl FnMut(&[u64]),
) {
    // Never an error: the closure below returns none.
    let _ = in_hashed_rounds(keys, hash, |_, hashes| {
        each(hashes);
        Ok(())
    });
}

/// [`in_hashed_rounds`] with rounds of `N` keys.
fn rounds<K, const N: usize>(
    keys: &[K],
    hash: &impl Fn(&K) -> u64,
    each: &mut impl FnMut(usize, &[u64]) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    let mut buf = [0u64; N];
    for (round, keys) in keys.chunks(N).enumerate() {
        let hashes = &mut buf[..keys.len()];
        for (h, k) in hashes.iter_mut().zip(keys) {
            *h = hash(k);
        }
        each(round * N, hashes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inlined short path is XXH64: equal to `xxhash-rust`'s on every length around it.
    #[test]
    fn the_short_xxh64_path_is_xxh64() {
        assert_eq!(hash_xxh64(b""), 17_241_709_254_077_376_921);
        let bytes: Vec<u8> = (0..100u64).map(|i| mix64(i) as u8).collect();
        for len in 0..=100 {
            for start in [0, 1] {
                let input = &bytes[start..start + len.min(99)];
                assert_eq!(
                    hash_xxh64(input),
                    xxhash_rust::xxh64::xxh64(input, 0),
                    "{} bytes",
                    input.len()
                );
            }
        }
    }

    #[test]
    fn integers_hash_as_their_little_endian_bytes() {
        assert_eq!(5u64.hash_with_seed(7), hash_bytes(&5u64.to_le_bytes(), 7));
        assert_eq!(5usize.hash_with_seed(7), 5u64.hash_with_seed(7));
        assert_eq!((-3isize).hash_with_seed(7), (-3i64).hash_with_seed(7));
        assert_ne!(5u32.hash_with_seed(7), 5u64.hash_with_seed(7));
    }

    #[test]
    fn byte_like_keys_agree() {
        let s = "linebloom";
        let h = s.hash_with_seed(1);
        assert_eq!(h, s.to_string().hash_with_seed(1));
        assert_eq!(h, s.as_bytes().hash_with_seed(1));
        assert_eq!(h, s.as_bytes().to_vec().hash_with_seed(1));
        assert_ne!(h, s.hash_with_seed(2));
    }

    #[test]
    fn hashes_are_pinned() {
        // The stored bit pattern of every filter depends on these values: a change here breaks
        // saved filters and must come with a format version bump.
        assert_eq!(hash_bytes(b"", 0), 0x2d06_8005_38d3_94c2);
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x2308_5d6f_7a56_9905);
    }

    #[test]
    fn random_seeds_differ() {
        let seeds: std::collections::HashSet<u64> = (0..1000).map(|_| random_seed()).collect();
        assert_eq!(seeds.len(), 1000);
        assert!(!seeds.contains(&DEFAULT_SEED));
    }

    #[test]
    fn reduce_stays_in_range() {
        for n in [1usize, 2, 3, 1000, usize::MAX] {
            for h in [0u64, 1, u64::MAX / 2, u64::MAX] {
                assert!(reduce(h, n) < n);
            }
        }
    }

    #[test]
    fn double_hash_follows_its_formula() {
        let h = 0x1234_5678_9abc_def0u64;
        let h2 = h.rotate_left(32) | 1;
        for (i, p) in DoubleHash::new(h).take(20).enumerate() {
            let i = i as u64;
            let cubic = (i * i * i - i) / 6;
            assert_eq!(p, h.wrapping_add(i.wrapping_mul(h2)).wrapping_add(cubic));
        }
    }
}
