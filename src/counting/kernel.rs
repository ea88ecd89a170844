//! The counting filter's SIMD paths: insert, lookup and the two removes of one key in its line,
//! on the engine's paths ([`SimdPath`](crate::SimdPath), chosen once by
//! [`simd_path`](crate::simd_path)).
//!
//! The portable path is the `wide` code of `counting.rs`, whose instructions are fixed when the
//! crate is compiled (SSE2 in a dependent's ordinary x86-64 build). The AVX2 and AVX-512 paths
//! are intrinsics inside `#[target_feature]` functions, so every x86-64 build carries them; the
//! engine's run-time choice picks one. One-key calls test the cached choice (`on_chosen!`); the
//! batched loops of `counting.rs` are compiled once per path with the engine's `per_path!`, so
//! the branch is taken once per batch and the kernel inlines into the loop.
//!
//! Every path computes the same counters, so filters are bit-identical whichever path built
//! them (the tests run each path the CPU has against the portable one). The intrinsics paths
//! use that a key has at most one counter in each 64-bit word: per word, the key's counter
//! masked in place (`line & nibbles`) is zero when the counter is zero and equals `nibbles`
//! when it is saturated, so no fold over the line's nibbles is needed. The AVX2 path computes
//! the counter's position with a 32 x 32 -> 64-bit multiply of the low halves (bits 28..32 of
//! the full product are those of the 32-bit product the portable path takes). A loop of
//! one-key calls is bound by instructions per key, so the kernels load the words a key uses
//! from `counting::ENABLE` rather than compute them.

use super::RemoveRefused;
use crate::engine::arch::Portable;
#[cfg(test)]
use crate::engine::arch::SimdPath;
use crate::engine::line::Line;

/// One path's operations on a key's line: exactly the counters of `counting::increments`,
/// with `k` (1..=8) counters per key.
///
/// # Safety
/// The methods may only run on a CPU that has the implementor's path
/// ([`SimdPath::is_available`](crate::SimdPath::is_available)).
pub(crate) trait CountKernel {
    /// Adds 1 to each of the key's counters below 15.
    unsafe fn insert(line: &mut Line, hash: u64, k: u32);
    /// Whether all of the key's counters are non-zero.
    unsafe fn contains(line: &Line, hash: u64, k: u32) -> bool;
    /// `false`, changing nothing, when one of the key's counters is zero; else subtracts 1
    /// from each of them below 15.
    unsafe fn remove(line: &mut Line, hash: u64, k: u32) -> bool;
    /// Subtracts 1 from each of the key's counters when all are in 1..=14; else changes
    /// nothing and says why (zero first).
    unsafe fn remove_exact(line: &mut Line, hash: u64, k: u32) -> Result<(), RemoveRefused>;
}

impl CountKernel for Portable {
    #[inline(always)]
    unsafe fn insert(line: &mut Line, hash: u64, k: u32) {
        super::insert_portable(line, hash, k);
    }
    #[inline(always)]
    unsafe fn contains(line: &Line, hash: u64, k: u32) -> bool {
        super::contains_portable(line, hash, k)
    }
    #[inline(always)]
    unsafe fn remove(line: &mut Line, hash: u64, k: u32) -> bool {
        super::remove_portable(line, hash, k)
    }
    #[inline(always)]
    unsafe fn remove_exact(line: &mut Line, hash: u64, k: u32) -> Result<(), RemoveRefused> {
        super::remove_exact_portable(line, hash, k)
    }
}

/// The engine's first eight salts, one in the low half of each 64-bit lane (word w: lane w).
#[cfg(target_arch = "x86_64")]
const SALT_LOW: [u64; 8] = {
    let mut out = [0u64; 8];
    let mut w = 0;
    while w < 8 {
        out[w] = crate::engine::mask::SALTS[w] as u64;
        w += 1;
    }
    out
};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    use super::{CountKernel, Line, RemoveRefused, SALT_LOW};
    use crate::engine::arch::{Avx2, Avx512};

    /// A key in its line on AVX2, as two halves of four words: `nib` has all four bits of the
    /// key's counter in each word it uses and zero elsewhere; `inc` the counter's low bit.
    struct Key2 {
        nib: [__m256i; 2],
        inc: [__m256i; 2],
        used: [__m256i; 2],
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn key_avx2(hash: u64, k: u32) -> Key2 {
        let salts: [__m256i; 2] = bytemuck::cast(SALT_LOW);
        let x = _mm256_set1_epi64x(hash as i64);
        let at = _mm256_set1_epi64x(0x3C);
        // All ones in the words the key uses (two loads from a small table in L1).
        let used: [__m256i; 2] = bytemuck::cast(*super::super::enable_row(hash, k));
        let nib = [0, 1].map(|h| {
            let offset =
                _mm256_and_si256(_mm256_srli_epi64::<26>(_mm256_mul_epu32(x, salts[h])), at);
            _mm256_and_si256(_mm256_sllv_epi64(_mm256_set1_epi64x(0xF), offset), used[h])
        });
        let low = _mm256_set1_epi64x(super::super::NIBBLE_LOW as i64);
        let inc = nib.map(|n| _mm256_and_si256(n, low));
        Key2 { nib, inc, used }
    }

    /// Per half: all ones in each word the key uses whose counter is zero.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn zero_avx2(l: &[__m256i; 2], key: &Key2) -> __m256i {
        let z = [0, 1].map(|h| {
            let mine =
                _mm256_cmpeq_epi64(_mm256_and_si256(l[h], key.nib[h]), _mm256_setzero_si256());
            _mm256_and_si256(mine, key.used[h])
        });
        _mm256_or_si256(z[0], z[1])
    }

    /// The increments of the key's counters that are not saturated.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn unsaturated_avx2(l: &[__m256i; 2], key: &Key2) -> [__m256i; 2] {
        // A word the key does not use has `nib` 0, reads "saturated" and has no increment.
        [0, 1].map(|h| {
            let sat = _mm256_cmpeq_epi64(_mm256_and_si256(l[h], key.nib[h]), key.nib[h]);
            _mm256_andnot_si256(sat, key.inc[h])
        })
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn insert_avx2(line: &mut Line, hash: u64, k: u32) {
        let key = key_avx2(hash, k);
        let l: [__m256i; 2] = bytemuck::cast(*line);
        let add = unsaturated_avx2(&l, &key);
        *line = bytemuck::cast([
            _mm256_add_epi64(l[0], add[0]),
            _mm256_add_epi64(l[1], add[1]),
        ]);
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn contains_avx2(line: &Line, hash: u64, k: u32) -> bool {
        let key = key_avx2(hash, k);
        let zero = zero_avx2(&bytemuck::cast(*line), &key);
        _mm256_testz_si256(zero, zero) == 1
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn remove_avx2(line: &mut Line, hash: u64, k: u32) -> bool {
        let key = key_avx2(hash, k);
        let l: [__m256i; 2] = bytemuck::cast(*line);
        let zero = zero_avx2(&l, &key);
        if _mm256_testz_si256(zero, zero) == 0 {
            return false;
        }
        let sub = unsaturated_avx2(&l, &key);
        *line = bytemuck::cast([
            _mm256_sub_epi64(l[0], sub[0]),
            _mm256_sub_epi64(l[1], sub[1]),
        ]);
        true
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn remove_exact_avx2(line: &mut Line, hash: u64, k: u32) -> Result<(), RemoveRefused> {
        let key = key_avx2(hash, k);
        let l: [__m256i; 2] = bytemuck::cast(*line);
        let zero = zero_avx2(&l, &key);
        if _mm256_testz_si256(zero, zero) == 0 {
            return Err(RemoveRefused::Absent);
        }
        let sat = [0, 1].map(|h| {
            let full = _mm256_cmpeq_epi64(_mm256_and_si256(l[h], key.nib[h]), key.nib[h]);
            _mm256_and_si256(full, key.used[h])
        });
        let sat = _mm256_or_si256(sat[0], sat[1]);
        if _mm256_testz_si256(sat, sat) == 0 {
            return Err(RemoveRefused::Saturated);
        }
        // Every counter of the key is in 1..=14: a plain subtraction, no borrow.
        *line = bytemuck::cast([
            _mm256_sub_epi64(l[0], key.inc[0]),
            _mm256_sub_epi64(l[1], key.inc[1]),
        ]);
        Ok(())
    }

    impl CountKernel for Avx2 {
        #[inline(always)]
        unsafe fn insert(line: &mut Line, hash: u64, k: u32) {
            // SAFETY: the caller runs this path only where the CPU has AVX2 (the trait's
            // contract).
            unsafe { insert_avx2(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn contains(line: &Line, hash: u64, k: u32) -> bool {
            // SAFETY: as in `insert`.
            unsafe { contains_avx2(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn remove(line: &mut Line, hash: u64, k: u32) -> bool {
            // SAFETY: as in `insert`.
            unsafe { remove_avx2(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn remove_exact(line: &mut Line, hash: u64, k: u32) -> Result<(), RemoveRefused> {
            // SAFETY: as in `insert`.
            unsafe { remove_exact_avx2(line, hash, k) }
        }
    }

    /// A key in its line on AVX-512: each word's counter offset (the key's counter in the
    /// words it uses) and all ones in the words it uses.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn key_avx512(hash: u64, k: u32) -> (__m512i, __m512i) {
        // The 32-bit products in the lanes' high halves, as the portable path: LLVM would turn
        // a 32 x 32 -> 64-bit multiply whose result only has its low bits used into the
        // slower 64-bit `vpmullq` where AVX-512DQ is enabled.
        let salts: __m512i = bytemuck::cast(super::super::SALT_HIGH);
        let product = _mm512_mullo_epi32(_mm512_set1_epi32(hash as i32), salts);
        let offset = _mm512_slli_epi64::<2>(_mm512_srli_epi64::<60>(product));
        // A load from the small table rather than a mask computed from k and the rotation:
        // fewer instructions per key, which set the speed of a loop of one-key calls.
        let used: __m512i = bytemuck::cast(*super::super::enable_row(hash, k));
        (offset, used)
    }

    /// Whether one of the key's counters is zero: each word shifted so that the counter at
    /// the key's offset is in its low four bits, the words the key does not use all ones.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn any_zero_avx512(l: __m512i, offset: __m512i, used: __m512i) -> bool {
        let unused = _mm512_andnot_si512(used, _mm512_set1_epi64(-1));
        let at = _mm512_srlv_epi64(_mm512_or_si512(l, unused), offset);
        _mm512_testn_epi64_mask(at, _mm512_set1_epi64(0xF)) != 0
    }

    /// The words whose counter at `offset` is saturated (the key's increment there is 0 in
    /// the words it does not use), and the key's increments.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn saturated_avx512(l: __m512i, offset: __m512i, used: __m512i) -> (__mmask8, __m512i) {
        let nib = _mm512_sllv_epi64(_mm512_set1_epi64(0xF), offset);
        let inc = _mm512_and_si512(_mm512_sllv_epi64(_mm512_set1_epi64(1), offset), used);
        (_mm512_cmpeq_epi64_mask(_mm512_and_si512(l, nib), nib), inc)
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn insert_avx512(line: &mut Line, hash: u64, k: u32) {
        let (offset, used) = key_avx512(hash, k);
        let l: __m512i = bytemuck::cast(*line);
        let (sat, inc) = saturated_avx512(l, offset, used);
        *line = bytemuck::cast(_mm512_mask_add_epi64(l, !sat, l, inc));
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn contains_avx512(line: &Line, hash: u64, k: u32) -> bool {
        let (offset, used) = key_avx512(hash, k);
        !any_zero_avx512(bytemuck::cast(*line), offset, used)
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn remove_avx512(line: &mut Line, hash: u64, k: u32) -> bool {
        let (offset, used) = key_avx512(hash, k);
        let l: __m512i = bytemuck::cast(*line);
        if any_zero_avx512(l, offset, used) {
            return false;
        }
        let (sat, inc) = saturated_avx512(l, offset, used);
        *line = bytemuck::cast(_mm512_mask_sub_epi64(l, !sat, l, inc));
        true
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn remove_exact_avx512(line: &mut Line, hash: u64, k: u32) -> Result<(), RemoveRefused> {
        let (offset, used) = key_avx512(hash, k);
        let l: __m512i = bytemuck::cast(*line);
        if any_zero_avx512(l, offset, used) {
            return Err(RemoveRefused::Absent);
        }
        let (sat, inc) = saturated_avx512(l, offset, used);
        if sat & _mm512_test_epi64_mask(used, used) != 0 {
            return Err(RemoveRefused::Saturated);
        }
        // Every counter of the key is in 1..=14: a plain subtraction, no borrow.
        *line = bytemuck::cast(_mm512_sub_epi64(l, inc));
        Ok(())
    }

    impl CountKernel for Avx512 {
        #[inline(always)]
        unsafe fn insert(line: &mut Line, hash: u64, k: u32) {
            // SAFETY: the caller runs this path only where the CPU has AVX-512F (the trait's
            // contract).
            unsafe { insert_avx512(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn contains(line: &Line, hash: u64, k: u32) -> bool {
            // SAFETY: as in `insert`.
            unsafe { contains_avx512(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn remove(line: &mut Line, hash: u64, k: u32) -> bool {
            // SAFETY: as in `insert`.
            unsafe { remove_avx512(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn remove_exact(line: &mut Line, hash: u64, k: u32) -> Result<(), RemoveRefused> {
            // SAFETY: as in `insert`.
            unsafe { remove_exact_avx512(line, hash, k) }
        }
    }
}

/// Runs `$op` of the kernel of `$path` (an available path) on the remaining arguments.
#[cfg(test)]
macro_rules! on_path {
    ($path:expr, $op:ident($($arg:expr),*)) => {{
        use crate::engine::arch::*;
        match $path {
            // SAFETY: `simd_path` and `SimdPath::available` name only paths the CPU has; the
            // callers pass one of those.
            #[cfg(target_arch = "x86_64")]
            SimdPath::Avx512 => unsafe { <Avx512 as CountKernel>::$op($($arg),*) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            SimdPath::Avx2 => unsafe { <Avx2 as CountKernel>::$op($($arg),*) },
            // SAFETY: the portable path runs everywhere.
            _ => unsafe { <Portable as CountKernel>::$op($($arg),*) },
        }
    }};
}

/// Runs `$op` on the chosen path, testing for the fastest paths first (`is_chosen`: one load
/// and one compare each). Before the choice is made it runs the portable path, which is right
/// on every CPU; the filter's constructors make the choice ([`simd_path`](crate::simd_path)), so that no call
/// sits in a loop of one-key calls (a call there would clobber the vector registers that hold
/// the loop's constants).
///
/// Where the build itself enables the AVX-512 path's features, every CPU that runs it has
/// them and the portable path compiles to AVX-512 instructions too: the AVX-512 kernel runs
/// without reading the choice (`LINEBLOOM_SIMD` then lowers only the batched loops). In a loop
/// of one-key calls each instruction of the dispatch costs as much as one of the kernel's.
macro_rules! on_chosen {
    ($op:ident($($arg:expr),*)) => {{
        use crate::engine::arch::*;
        #[cfg(all(
            target_arch = "x86_64",
            target_feature = "avx512f",
            target_feature = "avx512dq",
            target_feature = "avx2",
            target_feature = "bmi2"
        ))]
        {
            // SAFETY: the build enables AVX-512F, so every CPU that runs it has it.
            unsafe { <Avx512 as CountKernel>::$op($($arg),*) }
        }
        #[cfg(not(all(
            target_arch = "x86_64",
            target_feature = "avx512f",
            target_feature = "avx512dq",
            target_feature = "avx2",
            target_feature = "bmi2"
        )))]
        {
            #[cfg(target_arch = "x86_64")]
            if is_chosen(SimdPath::Avx512) {
                // SAFETY: `simd_path` chose the AVX-512 path, so the CPU has it.
                return unsafe { <Avx512 as CountKernel>::$op($($arg),*) };
            }
            #[cfg(target_arch = "x86_64")]
            if is_chosen(SimdPath::Avx2) {
                // SAFETY: `simd_path` chose the AVX2 path, so the CPU has it.
                return unsafe { <Avx2 as CountKernel>::$op($($arg),*) };
            }
            // SAFETY: the portable path runs everywhere.
            unsafe { <Portable as CountKernel>::$op($($arg),*) }
        }
    }};
}

/// [`CountKernel::insert`] on the chosen path.
#[inline(always)]
pub(crate) fn insert(line: &mut Line, hash: u64, k: u32) {
    on_chosen!(insert(line, hash, k))
}

/// [`CountKernel::contains`] on the chosen path.
#[inline(always)]
pub(crate) fn contains(line: &Line, hash: u64, k: u32) -> bool {
    on_chosen!(contains(line, hash, k))
}

/// [`CountKernel::remove`] on the chosen path.
#[inline(always)]
pub(crate) fn remove(line: &mut Line, hash: u64, k: u32) -> bool {
    on_chosen!(remove(line, hash, k))
}

/// [`CountKernel::remove_exact`] on the chosen path.
#[inline(always)]
pub(crate) fn remove_exact(line: &mut Line, hash: u64, k: u32) -> Result<(), RemoveRefused> {
    on_chosen!(remove_exact(line, hash, k))
}

/// [`CountKernel::insert`] on `path` (an available one).
#[cfg(test)]
#[inline(always)]
pub(crate) fn insert_on(path: SimdPath, line: &mut Line, hash: u64, k: u32) {
    on_path!(path, insert(line, hash, k))
}

/// [`CountKernel::contains`] on `path` (an available one).
#[cfg(test)]
#[inline(always)]
pub(crate) fn contains_on(path: SimdPath, line: &Line, hash: u64, k: u32) -> bool {
    on_path!(path, contains(line, hash, k))
}

/// [`CountKernel::remove`] on `path` (an available one).
#[cfg(test)]
#[inline(always)]
pub(crate) fn remove_on(path: SimdPath, line: &mut Line, hash: u64, k: u32) -> bool {
    on_path!(path, remove(line, hash, k))
}

/// [`CountKernel::remove_exact`] on `path` (an available one).
#[cfg(test)]
#[inline(always)]
pub(crate) fn remove_exact_on(
    path: SimdPath,
    line: &mut Line,
    hash: u64,
    k: u32,
) -> Result<(), RemoveRefused> {
    on_path!(path, remove_exact(line, hash, k))
}
