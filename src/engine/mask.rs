//! One 512-bit line's worth of SIMD: build a key's mask, set it, test it.
//!
//! This file is the engine's portable SIMD path and the definition of its bits: the filters
//! work with [`Line`] and [`Mask`]. `wide` picks AVX-512, AVX2 or SSE2 instructions when
//! the crate is compiled (`cfg(target_feature)`), so this path's speed depends on the build's
//! target features, never its results; `arch.rs` adds the AVX2 and AVX-512 paths that every
//! x86-64 build carries and chooses among at run time.
//!
//! ## The bit-placement scheme ("rotated one-per-word")
//! A line is 512 bits, seen as eight 64-bit words (stored as sixteen little-endian `u32`, so the
//! bytes are the same on every platform). A key with k probes (1..=16) sets probe `i` in word
//! `(i ± r) mod 8`, where `r` is 3 bits of the hash; so every word gets `k/8` bits rounded up or
//! down, and for k < 8 the `8 - k` words it skips rotate with the key. Where the bit goes inside
//! its word is the [`Placement`]:
//! - *shifted* (new filters): `p = hash * SHIFTED_FIRST` (one 64-bit multiply); word `w`'s
//!   first bit is `p`'s 6-bit field at bit `13 + 6w`, the rotation `p >> 61`, probe `i` in word
//!   `(i - r) mod 8`; the second bits (probes 8..16) are the fields of `hash * SHIFTED_SECOND`.
//!   The line index takes the hash's high bits (`hash::reduce`); within one line the low bits
//!   still vary, and `p` is a bijection of the hash, so line and bits stay independent.
//! - *salted* (every filter written before it): word `w`'s first bit is the top 6 bits of
//!   `x * salt[w]` (mod 2^32), the second of `x * salt[w + 8]`, `x` the hash's low 32 bits and
//!   `salt` 16 odd constants (Parquet's multiply-shift widened to 6 bits); the rotation is bits
//!   32..35 of the hash, probe `i` in word `(i + r) mod 8`.
//!
//! Why this scheme (the FPR models in docs/design.md):
//! - *one bit per 64-bit word, k = 8* (the split-block layout on 64-bit words) builds its mask in
//!   as few instructions, but its best FPR at 10 bits/key is 1.05 %;
//! - *k bits anywhere in the 512* reaches 0.957 % at k = 7, but needs a loop over k (or a
//!   scatter) to build the mask;
//! - *rotated one-per-word* reaches 0.973 % at k = 6 (0.980 % at k = 7) with a fixed sequence of
//!   vector instructions and no loop, whatever k is. `model::blocked_fpr` is its exact model,
//!   for both placements (each bit uniform and independent in its word).
//!
//! The shifted mask (`shifted_mask`) shifts the broadcast product by each word's field start and
//! shifts the rotation's pattern of 1s (a table row per k, kept in [`Probes`]) by the fields;
//! the AVX-512 kernel rotates instead and takes the rotation as a lane mask. The salted mask
//! ([`mask_for`]) takes one `u32x16` multiply (lane `2w` gives word `w`'s first bit position,
//! lane `2w + 1` its second), then on `u64x8` a variable shift places the first bits and, for
//! k < 8, an AND with an enable pattern (indexed by k and the rotation) keeps the key's words;
//! with k = 8 lookups skip the pattern ([`lookup_mask_for`]); for k > 8 the second bits come from
//! shifting the second pattern itself (1 in the words used) into place.

use bytemuck::{Pod, Zeroable};
use wide::{u32x8, u32x16, u64x8};

pub use crate::engine::line::Line;

/// Bits in one line.
pub const LINE_BITS: u32 = 512;
/// The largest number of probes per key the scheme supports (two bits in each 64-bit word).
pub const MAX_K: u32 = 16;

/// The bits one key sets in its line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Mask(u32x16);

impl core::fmt::Debug for Mask {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?}", Line(self.0.to_array()))
    }
}

/// Odd multipliers, one per probe slot: slot `w` (word `w`'s first bit) and slot `w + 8` (its
/// second bit). Taken from the digits of well-known constants (golden ratio, pi, e, sqrt 2 ...);
/// any odd values with well-spread bits work. Part of the serialized format (they decide which
/// bits a key sets).
pub const SALTS: [u32; 16] = [
    0x9e37_79b1,
    0x85eb_ca77,
    0xc2b2_ae3d,
    0x27d4_eb2f,
    0x1656_67b1,
    0xd3a2_646d,
    0xfd70_46c5,
    0xb55a_4f09,
    0x243f_6a89,
    0xb7e1_5163,
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f373,
    0xa54f_f53b,
    0x510e_527f,
    0x9b05_688d,
];

/// Lane `w` of `x * SALT_BOTH`, seen as eight `u64`, holds `x * salt[w]` in its high half
/// and `x * salt[w + 8]` in its low half (mod 2^32 each), so word `w`'s first bit position is
/// the lane's top 6 bits (one shift) and its second bit position bits 26..32.
const SALT_BOTH: u32x16 = interleaved();

const fn interleaved() -> u32x16 {
    let mut out = [0u32; 16];
    let mut w = 0;
    while w < 8 {
        // On a big-endian target the high half of a u64 is the lower-addressed u32.
        let (lo, hi) = if cfg!(target_endian = "little") {
            (2 * w, 2 * w + 1)
        } else {
            (2 * w + 1, 2 * w)
        };
        out[hi] = SALTS[w];
        out[lo] = SALTS[w + 8];
        w += 1;
    }
    u32x16::new(out)
}

/// Where a key's k bits go inside its line. The serialized format records it (hash scheme 2:
/// [`Placement::Salted`], 3: [`Placement::Shifted`]), so a filter always answers with the
/// placement it was filled with.
///
/// Both put probe `i` of a key in word `(i ± r) mod 8` of the line (`r` three bits of the
/// hash, one bit per word for k <= 8, two for k > 8), so both have the same FPR
/// ([`crate::model::blocked_fpr`]); they differ in how a word's bit position comes from the
/// hash, and so in the instructions per key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Placement {
    /// 32-bit products of the hash's low half with 16 odd salts, the top 6 bits of
    /// each a bit position. What every filter written before the shifted placement uses (hash
    /// schemes 1 and 2); new filters can still be made with it for readers that know no other.
    Salted,
    /// One 64-bit product of the hash with an odd constant, cut into eight 6-bit fields by
    /// shifts (a second product for k > 8): no vector multiply, and on AVX-512 the rotation is a
    /// lane mask. The placement of new filters.
    #[default]
    Shifted,
}

impl Placement {
    /// The name `stats` prints: `salted` or `shifted`.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Salted => "salted",
            Placement::Shifted => "shifted",
        }
    }

    /// The hash scheme a serialized filter of this placement records (2 or 3): the byte an
    /// engine that keeps bare lines stores beside them.
    pub const fn hash_scheme(self) -> u8 {
        match self {
            Placement::Salted => 2,
            Placement::Shifted => 3,
        }
    }

    /// The placement of a blocked filter of hash scheme `scheme` (1 and 2 salted, 3 shifted),
    /// `None` for a scheme this build does not know.
    pub fn from_hash_scheme(scheme: u8) -> Option<Placement> {
        match scheme {
            1 | 2 => Some(Placement::Salted),
            3 => Some(Placement::Shifted),
            _ => None,
        }
    }
}

impl core::fmt::Display for Placement {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// The odd multiplier of the shifted placement's first bits (2^64 / golden ratio).
pub(crate) const SHIFTED_FIRST: u64 = 0x9e37_79b9_7f4a_7c15;
/// The odd multiplier of the shifted placement's second bits (k > 8).
pub(crate) const SHIFTED_SECOND: u64 = 0xc2b2_ae3d_27d4_eb4f;
/// Where word `w`'s 6-bit field starts in a shifted product: bits `13 + 6 w`, so the eight
/// fields take bits 13..61 and the rotation the top three.
pub(crate) const FIELD_SHIFTS: [u64; 8] = [13, 19, 25, 31, 37, 43, 49, 55];

/// A filter's probes: `k` and the [`Placement`], with what the shifted placement's kernels
/// look up per key worked out once per filter: the lane patterns and the rows of
/// [`SHIFTED_ONES`] for its k. Equal when k and placement are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probes {
    /// Probes per key (1..=[`MAX_K`]).
    pub k: u32,
    /// Where they go.
    pub placement: Placement,
    /// The first bits' lane pattern, `2^min(k, 8) - 1`, in every byte: the lanes of a key with
    /// rotation `s` are `(first >> s) as u8`.
    pub first: u64,
    /// The same for the second bits (`2^(k - 8) - 1`; 0 for k <= 8).
    pub second: u64,
    /// The rows of [`SHIFTED_ONES`] of the first bits (`min(k, 8)`) and of the second
    /// (`k - 8`; any row for k <= 8, never read).
    ones: [&'static [Enable; 8]; 2],
}

impl PartialEq for Probes {
    fn eq(&self, other: &Self) -> bool {
        (self.k, self.placement) == (other.k, other.placement)
    }
}

impl Eq for Probes {}

impl Probes {
    /// `k` probes (1..=[`MAX_K`]; other values are never stored, see `check_k`) placed by
    /// `placement`.
    pub(crate) fn new(k: u32, placement: Placement) -> Probes {
        let row = |n: u32| &SHIFTED_ONES[(n.wrapping_sub(1) & 7) as usize];
        Probes {
            k,
            placement,
            first: lane_pattern(k),
            second: if k > 8 { lane_pattern(k - 8) } else { 0 },
            ones: [row(k.min(8)), row(k.saturating_sub(8))],
        }
    }

    /// The shifted placement's 1s for rotation `s`: of the first bits (`second` false) or of
    /// the second (see [`SHIFTED_ONES`]).
    #[inline(always)]
    pub(crate) fn shifted_ones(&self, second: bool, s: u32) -> &'static [u64; 8] {
        &self.ones[usize::from(second)][(s & 7) as usize].0
    }

    /// The bits of the key whose hash is `hash` (the portable path; the kernels' reference in
    /// tests).
    #[cfg(test)]
    pub(crate) fn mask(self, hash: u64) -> Mask {
        match self.placement {
            Placement::Salted => mask_for(hash, self.k),
            Placement::Shifted => shifted_mask(hash, self),
        }
    }

    /// [`Probes::mask`] for a lookup (the salted placement's k = 8 form).
    #[cfg(test)]
    pub(crate) fn lookup_mask(self, hash: u64) -> Mask {
        match self.placement {
            Placement::Salted => lookup_mask_for(hash, self.k),
            Placement::Shifted => shifted_mask(hash, self),
        }
    }
}

/// The lanes of `n` bits (at most 8 count) in every byte: `2^n - 1` repeated.
const fn lane_pattern(n: u32) -> u64 {
    let n = if n > 8 { 8 } else { n };
    ((1u64 << n) - 1) * 0x0101_0101_0101_0101
}

/// The rotation `s` of the shifted placement (the top 3 bits of the first product) and the
/// product itself.
#[inline(always)]
pub(crate) fn shifted_first(hash: u64) -> (u64, u32) {
    let p = hash.wrapping_mul(SHIFTED_FIRST);
    (p, (p >> 61) as u32)
}

/// `SHIFTED_ONES[n - 1][s]`: 1 in the words of the `n` (1..=8) bits of a key with rotation `s`
/// (word `w` when `(w + s) mod 8 < n`), 0 elsewhere; shifted left by the fields it is a key's
/// bits. One table serves the first bits (`n = min(k, 8)`) and the second (`n = k - 8`).
static SHIFTED_ONES: [[Enable; 8]; 8] = shifted_ones();

const fn shifted_ones() -> [[Enable; 8]; 8] {
    let mut t = [[Enable([0u64; 8]); 8]; 8];
    let mut n = 1;
    while n <= 8 {
        let mut s = 0;
        while s < 8 {
            let mut w = 0;
            while w < 8 {
                if (w + s) % 8 < n {
                    t[n - 1][s].0[w] = 1;
                }
                w += 1;
            }
            s += 1;
        }
        n += 1;
    }
    t
}

/// The shifted placement's mask of `probes` (k in 1..=[`MAX_K`]), on `wide` vectors: the
/// eight fields by one variable shift of the broadcast product, placed by shifting the
/// rotation's pattern of 1s (a shift by vector in `wide` wraps at 64, so the field needs no
/// AND).
#[inline(always)]
pub(crate) fn shifted_mask(hash: u64, probes: Probes) -> Mask {
    let (p, s) = shifted_first(hash);
    let fields = |x: u64| u64x8::splat(x) >> u64x8::new(FIELD_SHIFTS);
    let first = u64x8::new(*probes.shifted_ones(false, s)) << fields(p);
    if probes.k <= 8 {
        return Mask(bytemuck::cast(first));
    }
    let q = hash.wrapping_mul(SHIFTED_SECOND);
    let second = u64x8::new(*probes.shifted_ones(true, s)) << fields(q);
    Mask(bytemuck::cast(first | second))
}

/// [`SALT_BOTH`] as an array: the salts of the AVX2 and AVX-512 paths (`arch.rs`).
#[inline(always)]
pub(crate) const fn salt_lanes() -> [u32; 16] {
    const LANES: [u32; 16] = SALT_BOTH.to_array();
    LANES
}

/// The enable patterns of a key with `hash` and `k` probes: its first bits' (all ones in the
/// words used) and its second bits' (1 in the words used; only read for k > 8), as
/// [`mask_for`] applies them.
#[inline(always)]
pub(crate) fn enable_words(hash: u64, k: u32) -> (&'static [u64; 8], &'static [u64; 8]) {
    let (row, r) = (table_row(k), ((hash >> 32) & 7) as usize);
    (&ENABLE_FIRST[row][r].0, &ENABLE_SECOND[row][r].0)
}

/// The row of the enable tables for `hashes` probes: `hashes - 1` for 1..=16, another row
/// (never out of bounds) for other values.
#[inline(always)]
fn table_row(hashes: u32) -> usize {
    (hashes.wrapping_sub(1) & 15) as usize
}

/// One enable pattern: a value in the words a key's probes use (all ones or 1), zeros elsewhere.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C, align(64))]
struct Enable([u64; 8]);

/// `ENABLE_FIRST[k - 1][r]`: the words where a key with `k` probes and rotation `r` puts its
/// first bit, as all ones (ANDed with the placed bits); `ENABLE_SECOND` the same for its second
/// bit as 1 (shifted into place itself, see [`mask_for`]). 8 KiB each; a filter touches only
/// the 512 bytes of its own k (twice that when k > 8).
static ENABLE_FIRST: [[Enable; 8]; 16] = enable_table(0, u64::MAX);
static ENABLE_SECOND: [[Enable; 8]; 16] = enable_table(8, 1);

/// The enable patterns for the probe slots from `slot_offset` on: `on` in the words used.
const fn enable_table(slot_offset: usize, on: u64) -> [[Enable; 8]; 16] {
    let mut t = [[Enable([0u64; 8]); 8]; 16];
    let mut k = 1;
    while k <= 16 {
        let mut r = 0;
        while r < 8 {
            let mut w = 0;
            while w < 8 {
                let slot = (w + 8 - r) % 8;
                if slot + slot_offset < k {
                    t[k - 1][r].0[w] = on;
                }
                w += 1;
            }
            r += 1;
        }
        k += 1;
    }
    t
}

/// The mask of the key whose hash is `hash`, with `hashes` probes (1..=[`MAX_K`]; the
/// caller guarantees the range; other values pick another row of the table, never panic).
///
/// Built on 64-bit lanes: one 32-bit multiply gives both bit positions of every word, 64-bit
/// variable shifts place them, and the rotation's enable pattern comes from a table. Computing
/// the enable pattern with compares and placing bits with 32-bit shifts on paired lanes gives
/// the same bits in more instructions, above all on AVX2, where `wide` emulates unsigned
/// compares with two instructions (measured in `docs/performance.md`, Levers tried).
#[inline(always)]
pub fn mask_for(hash: u64, hashes: u32) -> Mask {
    let prod = products(hash);
    let k = table_row(hashes);
    // The rotation `r` (hash bits 32..35) as the offset of its pattern in 64-bit words, `8 r`:
    // one shift and one AND, and the load's address scales it by 8 itself. Indexing
    // `[Enable; 8]` by `r` instead costs a third instruction (the `* 64` of the index), which
    // shows on an in-cache lookup. The slice is always in bounds (`at <= 56`), so the
    // `unwrap_or` and the bounds check compile away.
    let at = ((hash >> 29) & 0x38) as usize;
    let enable = |table: &[[Enable; 8]; 16]| {
        let words: &[u64; 64] = bytemuck::cast_ref(&table[k]);
        u64x8::new(words[at..at + 8].try_into().unwrap_or([0; 8]))
    };
    let one = u64x8::splat(1);
    // Up to 8 probes use only the first bit of each word; skipping the second drops a third of
    // the vector instructions per key (a branch on the filter's k, taken the same way on every
    // call, and hoisted out of lookup loops by the compiler).
    if hashes <= 8 {
        let first = (one << (prod >> 58)) & enable(&ENABLE_FIRST);
        return Mask(bytemuck::cast(first));
    }
    // More than 8: every word holds a first bit (that pattern is all ones, so no AND), and the
    // second bit is the pattern's 1 shifted into place (a 0 stays 0): two vector instructions
    // fewer per key than an AND with each pattern, and the OR and the lookup's `& !line` then
    // fuse into one ternary-logic instruction, which speeds k > 8 lookups and inserts in cache
    // (docs/performance.md, Levers tried). For k < 8 the same form (`pattern << pos`, with a
    // table of ones) is level with the AND, so those keep the AND.
    let first = one << (prod >> 58);
    let second = enable(&ENABLE_SECOND) << ((prod >> 26) & u64x8::splat(63));
    Mask(bytemuck::cast(first | second))
}

/// Lane `w` of the products of `x = hash as u32` and [`SALT_BOTH`], seen as eight `u64`:
/// `x * salt[w]` in the high half, `x * salt[w + 8]` in the low half.
#[inline(always)]
fn products(hash: u64) -> u64x8 {
    bytemuck::cast(u32x16::splat(hash as u32) * SALT_BOTH)
}

/// [`mask_for`] for a lookup: the same bits, one step shorter for k = 8. With exactly 8 probes
/// every word holds one whatever the rotation, so the enable pattern (all ones) is not applied.
/// One-at-a-time misses with k = 8 (13 bits/key) run faster for it in cache, and the branch
/// leaves other k level (`docs/performance.md`, Levers tried). Not used by:
/// - inserts: skipping the pattern makes them faster in L1 and L2 but slower past L2, where
///   building a large filter spends its time;
/// - the portable batched lookups: a second branch on k per key slows their loops at every k,
///   and compiling them once per range of k (k < 8, k = 8, k > 8) makes k <= 8 faster but
///   k = 9 slower.
#[inline(always)]
pub fn lookup_mask_for(hash: u64, hashes: u32) -> Mask {
    if hashes == 8 {
        return Mask(bytemuck::cast(u64x8::splat(1) << (products(hash) >> 58)));
    }
    mask_for(hash, hashes)
}

impl Line {
    /// Sets the mask's bits: `line |= mask`.
    ///
    /// Written as two 256-bit read-modify-writes: one-by-one inserts run faster in cache than
    /// with one 512-bit load-OR-store per key, and level past it, where they wait on memory
    /// (`docs/performance.md`, Levers tried). Builds without AVX-512 split the 512-bit
    /// operation the same way anyway.
    #[inline(always)]
    pub(crate) fn set(&mut self, mask: Mask) {
        let halves: &mut [[u32; 8]; 2] = bytemuck::cast_mut(&mut self.0);
        let mask: [u32x8; 2] = bytemuck::cast(mask.0);
        halves[0] = (u32x8::new(halves[0]) | mask[0]).to_array();
        halves[1] = (u32x8::new(halves[1]) | mask[1]).to_array();
    }

    /// Whether every bit of the mask is set: `(line & mask) == mask`.
    #[inline(always)]
    pub(crate) fn test(&self, mask: Mask) -> bool {
        let missing = mask.0 & !u32x16::new(self.0);
        missing.simd_eq(u32x16::ZERO).all()
    }

    /// `self |= other`, word by word.
    #[inline]
    pub(crate) fn union(&mut self, other: &Line) {
        self.0 = (u32x16::new(self.0) | u32x16::new(other.0)).to_array();
    }

    /// `self &= other`, word by word.
    #[inline]
    pub(crate) fn intersect(&mut self, other: &Line) {
        self.0 = (u32x16::new(self.0) & u32x16::new(other.0)).to_array();
    }
}

impl Mask {
    /// The mask as a line (for tests, and the Redis layout's bit offsets).
    #[cfg(any(test, feature = "redis"))]
    pub(crate) fn to_line(self) -> Line {
        Line(self.0.to_array())
    }
}

/// The same mask computed one probe at a time with plain integer code: the reference that the
/// SIMD path is tested against, and the definition of the scheme in scalar form.
#[cfg(test)]
pub(crate) fn mask_for_scalar(hash: u64, hashes: u32) -> Line {
    let x = hash as u32;
    let r = ((hash >> 32) & 7) as u32;
    let mut words = [0u64; 8];
    for i in 0..hashes.min(MAX_K) {
        let word = ((i + r) & 7) as usize;
        let salt = SALTS[word + if i >= 8 { 8 } else { 0 }];
        let bit = x.wrapping_mul(salt) >> 26;
        words[word] |= 1u64 << bit;
    }
    let mut line = Line::ZERO;
    for (w, word) in words.iter().enumerate() {
        line.0[2 * w] = *word as u32;
        line.0[2 * w + 1] = (*word >> 32) as u32;
    }
    line
}

/// The shifted placement one probe at a time with plain integer code: its definition in scalar
/// form, which the SIMD paths are tested against. Probe `i` (first bits for `i < 8`, second
/// bits after) goes to word `(i - s) mod 8`, its position the word's 6-bit field of the first
/// (or second) product.
#[cfg(test)]
pub(crate) fn shifted_mask_scalar(hash: u64, k: u32) -> Line {
    let (p, s) = shifted_first(hash);
    let q = hash.wrapping_mul(SHIFTED_SECOND);
    let mut words = [0u64; 8];
    for i in 0..k.min(MAX_K) {
        let (product, j) = if i < 8 { (p, i) } else { (q, i - 8) };
        let word = ((j + 8 - s) & 7) as usize;
        words[word] |= 1u64 << ((product >> FIELD_SHIFTS[word]) & 63);
    }
    let mut line = Line::ZERO;
    for (w, word) in words.iter().enumerate() {
        line.0[2 * w] = *word as u32;
        line.0[2 * w + 1] = (*word >> 32) as u32;
    }
    line
}

/// The mask of `probes` in scalar form (either placement).
#[cfg(test)]
pub(crate) fn probes_mask_scalar(hash: u64, probes: Probes) -> Line {
    match probes.placement {
        Placement::Salted => mask_for_scalar(hash, probes.k),
        Placement::Shifted => shifted_mask_scalar(hash, probes.k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    #[test]
    fn simd_mask_matches_scalar_definition() {
        for k in 1..=MAX_K {
            for i in 0..20_000u64 {
                let h = mix64(i);
                assert_eq!(
                    mask_for(h, k).to_line(),
                    mask_for_scalar(h, k),
                    "k={k} h={h:x}"
                );
                assert_eq!(lookup_mask_for(h, k), mask_for(h, k), "k={k} h={h:x}");
            }
        }
    }

    #[test]
    fn shifted_mask_matches_its_scalar_definition() {
        for k in 1..=MAX_K {
            let probes = Probes::new(k, Placement::Shifted);
            for i in 0..20_000u64 {
                let h = mix64(i);
                assert_eq!(
                    shifted_mask(h, probes).to_line(),
                    shifted_mask_scalar(h, k),
                    "k={k}"
                );
                assert_eq!(probes.mask(h), probes.lookup_mask(h));
                let words: [u64; 8] = bytemuck::cast(shifted_mask_scalar(h, k));
                // Words used: min(k, 8) of them, each with at most two bits.
                let used = words.iter().filter(|w| **w != 0).count() as u32;
                assert_eq!(used, k.min(8), "k={k}");
                assert!(words.iter().all(|w| w.count_ones() <= 2));
            }
        }
    }

    #[test]
    fn shifted_lane_patterns_are_the_tables_rows() {
        for k in 1..=MAX_K {
            let probes = Probes::new(k, Placement::Shifted);
            for s in 0..8 {
                let lanes = |pattern: u64, n: u32, second: bool| {
                    let ones = probes.shifted_ones(second, s);
                    assert_eq!(ones, &SHIFTED_ONES[n as usize - 1][s as usize].0);
                    let want: u8 = (0..8).map(|w| (ones[w] as u8) << w).sum();
                    assert_eq!((pattern >> s) as u8, want, "k={k} s={s}");
                };
                lanes(probes.first, k.min(8), false);
                if k > 8 {
                    lanes(probes.second, k - 8, true);
                }
            }
        }
    }

    #[test]
    fn mask_has_k_bits_up_to_collisions_and_at_most_two_per_word() {
        for k in 1..=MAX_K {
            let mut total = 0u64;
            for i in 0..10_000u64 {
                let line = mask_for(mix64(i), k).to_line();
                let ones = line.count_ones();
                assert!(ones >= 1 && ones <= k);
                for w in 0..8 {
                    let word = line.0[2 * w] as u64 | (line.0[2 * w + 1] as u64) << 32;
                    assert!(word.count_ones() <= 2);
                }
                total += ones as u64;
            }
            // Only two probes in the same word can collide (1 in 64), so nearly all k bits show.
            let mean = total as f64 / 10_000.0;
            assert!(mean > k as f64 - 0.2, "k={k} mean={mean}");
        }
    }

    #[test]
    fn set_then_test() {
        let mut line = Line::ZERO;
        let m = mask_for(mix64(42), 7);
        assert!(!line.test(m));
        line.set(m);
        assert!(line.test(m));
        assert_eq!(line, m.to_line());
        assert!(Line([u32::MAX; 16]).test(mask_for(mix64(1), 16)));
    }

    #[test]
    fn set_ors_every_word_of_both_halves() {
        for k in [1, 6, 8, 16] {
            for i in 0..1000u64 {
                let mut line = Line(core::array::from_fn(|w| mix64(i * 16 + w as u64) as u32));
                let mask = mask_for(mix64(!i), k).to_line();
                let want = Line(core::array::from_fn(|w| line.0[w] | mask.0[w]));
                line.set(mask_for(mix64(!i), k));
                assert_eq!(line, want, "k={k} i={i}");
            }
        }
    }

    #[test]
    fn line_is_one_aligned_cache_line() {
        assert_eq!(core::mem::size_of::<Line>(), 64);
        assert_eq!(core::mem::align_of::<Line>(), 64);
    }
}
