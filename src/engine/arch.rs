//! The engine's SIMD paths, all compiled into every build and chosen once at run time.
//!
//! `mask.rs` is the portable path: `wide` vectors, whose instructions are fixed when the crate
//! is compiled (`cfg(target_feature)`), so a dependent's ordinary build (no `target-cpu` flag)
//! gets SSE2 there. This file adds the same mask, test and set written with AVX2 and with
//! AVX-512 intrinsics in `#[target_feature]` functions, so every x86-64 build carries them,
//! and [`simd_path`] picks the best one the CPU has (`is_x86_feature_detected!`, once, cached
//! in an atomic). The environment variable `LINEBLOOM_SIMD` (`portable`, `avx2` or `avx512`),
//! read at that moment, lowers the choice for comparisons; it never raises it past the CPU.
//! Without the feature `std` there is neither: the path is the best the build's target features
//! allow (`-C target-cpu` or `-C target-feature`), fixed at compile time.
//!
//! One-key calls ([`test()`], [`set()`]) branch on the cached path and call the path's function;
//! a build whose target features include AVX-512 or AVX2 runs the best kernel they allow
//! inlined, with no branch (so there `LINEBLOOM_SIMD` lowers the batched calls only). Loops over many keys are compiled
//! once per path ([`Kernel`], and the [`per_path!`] wrappers of the filters' loops), so the branch is
//! taken once per batch and the kernel inlines into the loop.
//!
//! Every path sets and tests exactly the bits of `mask::mask_for` (the scalar definition is
//! `mask::mask_for_scalar`); the tests run each path the CPU has against the portable one.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, Ordering};

use super::mask::{Line, Placement, Probes, lookup_mask_for, mask_for, shifted_mask};

/// Whether the CPU has all these x86 features: asked at run time with `std`; without it (no
/// run-time detection in `core`), what the build's target features promise at compile time.
#[cfg(all(target_arch = "x86_64", feature = "std"))]
macro_rules! has {
    ($($feature:tt),+) => {
        $(std::arch::is_x86_feature_detected!($feature))&&+
    };
}
#[cfg(all(target_arch = "x86_64", not(feature = "std")))]
macro_rules! has {
    ($($feature:tt),+) => {
        cfg!(all($(target_feature = $feature),+))
    };
}

/// The instructions the engine's kernels run, from slowest to fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimdPath {
    /// `wide`'s vectors as the build compiled them (SSE2 in a build without `target-cpu`
    /// flags on x86-64; NEON on aarch64): every CPU.
    Portable,
    /// 256-bit AVX2 intrinsics (x86-64 CPUs with AVX2).
    Avx2,
    /// 512-bit AVX-512 intrinsics and the hand-written batched loops (x86-64 CPUs with
    /// AVX-512F, AVX-512DQ, AVX2 and BMI2).
    Avx512,
}

impl SimdPath {
    /// The path's name, as `LINEBLOOM_SIMD` takes it and the report prints it.
    pub fn name(self) -> &'static str {
        match self {
            SimdPath::Portable => "portable",
            SimdPath::Avx2 => "avx2",
            SimdPath::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the path.
    pub fn is_available(self) -> bool {
        match self {
            SimdPath::Portable => true,
            #[cfg(target_arch = "x86_64")]
            SimdPath::Avx2 => has!("avx2"),
            #[cfg(target_arch = "x86_64")]
            SimdPath::Avx512 => has!("avx512f", "avx512dq", "avx2", "bmi2"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Every path this CPU can run, slowest first.
    pub fn available() -> Vec<SimdPath> {
        [SimdPath::Portable, SimdPath::Avx2, SimdPath::Avx512]
            .into_iter()
            .filter(|p| p.is_available())
            .collect()
    }

    fn from_code(code: u8) -> SimdPath {
        match code {
            2 => SimdPath::Avx2,
            3 => SimdPath::Avx512,
            _ => SimdPath::Portable,
        }
    }

    fn code(self) -> u8 {
        match self {
            SimdPath::Portable => 1,
            SimdPath::Avx2 => 2,
            SimdPath::Avx512 => 3,
        }
    }
}

impl core::fmt::Display for SimdPath {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// The chosen path's code (0: not chosen yet).
static CHOSEN: AtomicU8 = AtomicU8::new(0);

/// The SIMD path the filters run on this CPU: the fastest it has, or a lower one that
/// `LINEBLOOM_SIMD` asks for. Chosen at the first call and fixed for the process.
///
/// ```
/// let path = linebloom::simd_path();
/// assert!(path.is_available());
/// println!("linebloom runs its {path} path");
/// ```
#[inline]
pub fn simd_path() -> SimdPath {
    match CHOSEN.load(Ordering::Relaxed) {
        0 => choose(),
        code => SimdPath::from_code(code),
    }
}

#[cold]
fn choose() -> SimdPath {
    let best = SimdPath::available().pop().unwrap_or(SimdPath::Portable);
    #[cfg(not(feature = "std"))]
    let asked: Option<SimdPath> = None;
    #[cfg(feature = "std")]
    let asked = std::env::var("LINEBLOOM_SIMD").ok().and_then(|v| {
        [SimdPath::Portable, SimdPath::Avx2, SimdPath::Avx512]
            .into_iter()
            .find(|p| p.name() == v.trim().to_ascii_lowercase())
    });
    let path = asked.map_or(best, |a| a.min(best));
    CHOSEN.store(path.code(), Ordering::Relaxed);
    path
}

/// Whether [`simd_path`] has chosen `path`: one relaxed load and one compare, `false` before
/// the first choice. For one-key calls that test for their fastest path first and call
/// [`simd_path`] otherwise: a `match` on [`simd_path`] per key also carries its first-call
/// branch and tests the path twice, which shows in a tight loop of one-key calls.
// Other architectures have only the portable path.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn is_chosen(path: SimdPath) -> bool {
    CHOSEN.load(Ordering::Relaxed) == path.code()
}

/// One path's mask, test and set of a key in its line: exactly the bits of
/// the placement's mask (`shifted_mask`, [`mask_for`]), for each placement (k in 1..=16).
///
/// # Safety
/// The methods may only run on a CPU that has the implementor's path
/// ([`SimdPath::is_available`]).
pub(crate) trait Kernel {
    /// Whether every bit of `hash`'s salted mask (`k` probes) is set in `line`.
    unsafe fn test_salted(line: &Line, hash: u64, k: u32) -> bool;
    /// Sets `hash`'s salted mask in `line`.
    unsafe fn set_salted(line: &mut Line, hash: u64, k: u32);
    /// Whether every bit of `hash`'s shifted mask is set in `line`.
    unsafe fn test_shifted(line: &Line, hash: u64, probes: Probes) -> bool;
    /// Sets `hash`'s shifted mask in `line`.
    unsafe fn set_shifted(line: &mut Line, hash: u64, probes: Probes);

    /// Whether every bit of `hash`'s mask is set in `line`, on the probes' placement.
    #[inline(always)]
    unsafe fn test(line: &Line, hash: u64, probes: Probes) -> bool {
        // SAFETY: the caller's contract.
        unsafe {
            match probes.placement {
                Placement::Shifted => Self::test_shifted(line, hash, probes),
                Placement::Salted => Self::test_salted(line, hash, probes.k),
            }
        }
    }

    /// Sets `hash`'s mask in `line`, on the probes' placement.
    #[inline(always)]
    unsafe fn set(line: &mut Line, hash: u64, probes: Probes) {
        // SAFETY: the caller's contract.
        unsafe {
            match probes.placement {
                Placement::Shifted => Self::set_shifted(line, hash, probes),
                Placement::Salted => Self::set_salted(line, hash, probes.k),
            }
        }
    }
}

/// One placement, as a type: loops over many keys are compiled once per path and placement
/// (`placed!`), so no branch on the placement is left inside them.
pub(crate) trait Place {
    /// [`Kernel::test`] of this placement.
    unsafe fn test<K: Kernel>(line: &Line, hash: u64, probes: Probes) -> bool;
    /// [`Kernel::set`] of this placement.
    unsafe fn set<K: Kernel>(line: &mut Line, hash: u64, probes: Probes);
}

/// [`Placement::Salted`] as a type.
pub(crate) struct SaltedPlace;
/// [`Placement::Shifted`] as a type; `NARROW`: every key has at most 8 probes (one bit per
/// word), which the loops compiled for it know, so no branch on k is left in them.
pub(crate) struct ShiftedPlace<const NARROW: bool>;

impl Place for SaltedPlace {
    #[inline(always)]
    unsafe fn test<K: Kernel>(line: &Line, hash: u64, probes: Probes) -> bool {
        // SAFETY: the caller's contract.
        unsafe { K::test_salted(line, hash, probes.k) }
    }
    #[inline(always)]
    unsafe fn set<K: Kernel>(line: &mut Line, hash: u64, probes: Probes) {
        // SAFETY: the caller's contract.
        unsafe { K::set_salted(line, hash, probes.k) }
    }
}

impl<const NARROW: bool> Place for ShiftedPlace<NARROW> {
    #[inline(always)]
    unsafe fn test<K: Kernel>(line: &Line, hash: u64, probes: Probes) -> bool {
        // SAFETY: the caller's contract: the CPU has `K`'s path, and `placed!` takes this
        // type with `NARROW` only for probes of k <= 8.
        unsafe {
            if NARROW {
                core::hint::assert_unchecked(probes.k <= 8);
            }
            K::test_shifted(line, hash, probes)
        }
    }
    #[inline(always)]
    unsafe fn set<K: Kernel>(line: &mut Line, hash: u64, probes: Probes) {
        // SAFETY: as in `test`.
        unsafe {
            if NARROW {
                core::hint::assert_unchecked(probes.k <= 8);
            }
            K::set_shifted(line, hash, probes)
        }
    }
}

/// Runs `$body` with the type `$place` standing for `$probes.placement` (and, for the shifted
/// placement, whether k <= 8): a loop written once over `P: Place` is compiled per placement
/// and chosen once per call.
macro_rules! placed {
    ($probes:expr, $place:ident => $body:expr) => {
        match $probes.placement {
            $crate::engine::mask::Placement::Shifted if $probes.k <= 8 => {
                type $place = $crate::engine::arch::ShiftedPlace<true>;
                $body
            }
            $crate::engine::mask::Placement::Shifted => {
                type $place = $crate::engine::arch::ShiftedPlace<false>;
                $body
            }
            $crate::engine::mask::Placement::Salted => {
                type $place = $crate::engine::arch::SaltedPlace;
                $body
            }
        }
    };
}
pub(crate) use placed;

/// The portable path (`mask.rs`).
pub(crate) struct Portable;

impl Kernel for Portable {
    #[inline(always)]
    unsafe fn test_salted(line: &Line, hash: u64, k: u32) -> bool {
        line.test(lookup_mask_for(hash, k))
    }
    #[inline(always)]
    unsafe fn set_salted(line: &mut Line, hash: u64, k: u32) {
        line.set(mask_for(hash, k));
    }
    #[inline(always)]
    unsafe fn test_shifted(line: &Line, hash: u64, probes: Probes) -> bool {
        line.test(shifted_mask(hash, probes))
    }
    #[inline(always)]
    unsafe fn set_shifted(line: &mut Line, hash: u64, probes: Probes) {
        line.set(shifted_mask(hash, probes));
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    use super::super::mask::{
        FIELD_SHIFTS, Line, Probes, SHIFTED_SECOND, enable_words, salt_lanes, shifted_first,
    };
    use super::Kernel;

    /// The AVX2 path: the line as two 256-bit halves.
    pub(crate) struct Avx2;

    /// The AVX2 mask of `hash` with `k` probes, as two halves of four 64-bit words. `lookup`:
    /// k = 8 skips the enable pattern (it is all ones), as `lookup_mask_for` does.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn mask_avx2(hash: u64, k: u32, lookup: bool) -> [__m256i; 2] {
        let salts: [__m256i; 2] = bytemuck::cast(salt_lanes());
        let x = _mm256_set1_epi32(hash as i32);
        let p = [
            _mm256_mullo_epi32(x, salts[0]),
            _mm256_mullo_epi32(x, salts[1]),
        ];
        let one = _mm256_set1_epi64x(1);
        let first = p.map(|p| _mm256_sllv_epi64(one, _mm256_srli_epi64::<58>(p)));
        if lookup && k == 8 {
            return first;
        }
        let (enable, second) = enable_words(hash, k);
        let enable: [__m256i; 2] = bytemuck::cast(*enable);
        if k <= 8 {
            return [
                _mm256_and_si256(first[0], enable[0]),
                _mm256_and_si256(first[1], enable[1]),
            ];
        }
        let second: [__m256i; 2] = bytemuck::cast(*second);
        let m63 = _mm256_set1_epi64x(63);
        let at = |p| _mm256_and_si256(_mm256_srli_epi64::<26>(p), m63);
        [
            _mm256_or_si256(first[0], _mm256_sllv_epi64(second[0], at(p[0]))),
            _mm256_or_si256(first[1], _mm256_sllv_epi64(second[1], at(p[1]))),
        ]
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn test_avx2(line: &Line, hash: u64, k: u32) -> bool {
        let m = mask_avx2(hash, k, true);
        let l: [__m256i; 2] = bytemuck::cast(line.0);
        let missing = _mm256_or_si256(
            _mm256_andnot_si256(l[0], m[0]),
            _mm256_andnot_si256(l[1], m[1]),
        );
        _mm256_testz_si256(missing, missing) == 1
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn set_avx2(line: &mut Line, hash: u64, k: u32) {
        let m = mask_avx2(hash, k, false);
        let l: [__m256i; 2] = bytemuck::cast(line.0);
        line.0 = bytemuck::cast([_mm256_or_si256(l[0], m[0]), _mm256_or_si256(l[1], m[1])]);
    }

    /// The shifted placement's mask on AVX2, as two halves: the broadcast product shifted by
    /// each word's field start, the field's low 6 bits kept (AVX2 shifts by 64 or more give 0,
    /// they do not wrap), and the rotation's pattern of 1s shifted by them.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn shifted_avx2(hash: u64, probes: Probes) -> [__m256i; 2] {
        let shifts: [__m256i; 2] = bytemuck::cast(FIELD_SHIFTS);
        let m63 = _mm256_set1_epi64x(63);
        let (p, s) = shifted_first(hash);
        let place = |product: u64, second: bool| {
            let x = _mm256_set1_epi64x(product as i64);
            let ones: [__m256i; 2] = bytemuck::cast(*probes.shifted_ones(second, s));
            [0, 1].map(|h| {
                let field = _mm256_and_si256(_mm256_srlv_epi64(x, shifts[h]), m63);
                _mm256_sllv_epi64(ones[h], field)
            })
        };
        let first = place(p, false);
        if probes.k <= 8 {
            return first;
        }
        let second = place(hash.wrapping_mul(SHIFTED_SECOND), true);
        [
            _mm256_or_si256(first[0], second[0]),
            _mm256_or_si256(first[1], second[1]),
        ]
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn test_shifted_avx2(line: &Line, hash: u64, probes: Probes) -> bool {
        let m = shifted_avx2(hash, probes);
        let l: [__m256i; 2] = bytemuck::cast(line.0);
        let missing = _mm256_or_si256(
            _mm256_andnot_si256(l[0], m[0]),
            _mm256_andnot_si256(l[1], m[1]),
        );
        _mm256_testz_si256(missing, missing) == 1
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn set_shifted_avx2(line: &mut Line, hash: u64, probes: Probes) {
        let m = shifted_avx2(hash, probes);
        let l: [__m256i; 2] = bytemuck::cast(line.0);
        line.0 = bytemuck::cast([_mm256_or_si256(l[0], m[0]), _mm256_or_si256(l[1], m[1])]);
    }

    impl Kernel for Avx2 {
        // SAFETY (each method): the caller runs this path only where the CPU has AVX2 (the
        // trait's contract).
        #[inline(always)]
        unsafe fn test_salted(line: &Line, hash: u64, k: u32) -> bool {
            // SAFETY: as above.
            unsafe { test_avx2(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn set_salted(line: &mut Line, hash: u64, k: u32) {
            // SAFETY: as above.
            unsafe { set_avx2(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn test_shifted(line: &Line, hash: u64, probes: Probes) -> bool {
            // SAFETY: as above.
            unsafe { test_shifted_avx2(line, hash, probes) }
        }
        #[inline(always)]
        unsafe fn set_shifted(line: &mut Line, hash: u64, probes: Probes) {
            // SAFETY: as above.
            unsafe { set_shifted_avx2(line, hash, probes) }
        }
    }

    /// The AVX-512 path: the line as one 512-bit register.
    pub(crate) struct Avx512;

    /// [`mask_avx2`] in one 512-bit register.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn mask_avx512(hash: u64, k: u32, lookup: bool) -> __m512i {
        let salts: __m512i = bytemuck::cast(salt_lanes());
        let p = _mm512_mullo_epi32(_mm512_set1_epi32(hash as i32), salts);
        let first = _mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_srli_epi64::<58>(p));
        if lookup && k == 8 {
            return first;
        }
        let (enable, second) = enable_words(hash, k);
        let enable: __m512i = bytemuck::cast(*enable);
        if k <= 8 {
            return _mm512_and_si512(first, enable);
        }
        let second: __m512i = bytemuck::cast(*second);
        let at = _mm512_and_si512(_mm512_srli_epi64::<26>(p), _mm512_set1_epi64(63));
        _mm512_or_si512(first, _mm512_sllv_epi64(second, at))
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn test_avx512(line: &Line, hash: u64, k: u32) -> bool {
        let m = mask_avx512(hash, k, true);
        let l: __m512i = bytemuck::cast(line.0);
        let missing = _mm512_andnot_si512(l, m);
        _mm512_test_epi64_mask(missing, missing) == 0
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn set_avx512(line: &mut Line, hash: u64, k: u32) {
        let m = mask_avx512(hash, k, false);
        let l: __m512i = bytemuck::cast(line.0);
        line.0 = bytemuck::cast(_mm512_or_si512(l, m));
    }

    /// The shifted placement's first bits on AVX-512: the eight fields by one variable rotate
    /// of the broadcast product, and each lane's bit by a rotate of 1 (which takes the count
    /// mod 64, so the field needs no AND); the rotation `s` picks the lanes as a mask register,
    /// `(first >> s) as u8` (`first`: `Probes::first`). Returns the bits of all eight lanes,
    /// the first bits' lanes and the rotation.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn shifted_avx512(hash: u64, first: u64) -> (__m512i, __mmask8, u32) {
        let shifts: __m512i = bytemuck::cast(FIELD_SHIFTS);
        let (p, s) = shifted_first(hash);
        // A rotate right brings each field to the low 6 bits (the bits above it ride along;
        // the rotate of 1 below reads the count mod 64). A shift right would give the same
        // bits, but the compiler models its counts of 64 and more as giving 0 and spends a
        // register copy per key on that case.
        let fields = _mm512_rorv_epi64(_mm512_set1_epi64(p as i64), shifts);
        let bits = _mm512_rolv_epi64(_mm512_set1_epi64(1), fields);
        (bits, (first >> s) as __mmask8, s)
    }

    /// The second bits (k > 8) of the lanes `(second >> s) as u8` (`second`:
    /// `Probes::second`), 0 elsewhere.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn shifted_second_avx512(hash: u64, second: u64, s: u32) -> __m512i {
        let shifts: __m512i = bytemuck::cast(FIELD_SHIFTS);
        let q = hash.wrapping_mul(SHIFTED_SECOND);
        let fields = _mm512_rorv_epi64(_mm512_set1_epi64(q as i64), shifts);
        let lanes = (second >> s) as __mmask8;
        _mm512_maskz_rolv_epi64(lanes, _mm512_set1_epi64(1), fields)
    }

    // The one-key kernels take the probes' scalars, not `Probes`: in a build that cannot
    // inline them they are a call per key, and these arguments travel in registers.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn test_shifted_avx512(line: &Line, hash: u64, k: u32, first: u64, second: u64) -> bool {
        let (bits, lanes, s) = shifted_avx512(hash, first);
        let l: __m512i = bytemuck::cast(line.0);
        if k <= 8 {
            // One bit per lane: present where `line & bit` is not zero.
            return _mm512_mask_testn_epi64_mask(lanes, l, bits) == 0;
        }
        let m = _mm512_or_si512(bits, shifted_second_avx512(hash, second, s));
        let missing = _mm512_andnot_si512(l, m);
        _mm512_test_epi64_mask(missing, missing) == 0
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn set_shifted_avx512(line: &mut Line, hash: u64, k: u32, first: u64, second: u64) {
        let (bits, lanes, s) = shifted_avx512(hash, first);
        let mut m = _mm512_maskz_mov_epi64(lanes, bits);
        if k > 8 {
            m = _mm512_or_si512(m, shifted_second_avx512(hash, second, s));
        }
        let l: __m512i = bytemuck::cast(line.0);
        line.0 = bytemuck::cast(_mm512_or_si512(l, m));
    }

    impl Kernel for Avx512 {
        // SAFETY (each method): the caller runs this path only where the CPU has AVX-512F
        // (the trait's contract).
        #[inline(always)]
        unsafe fn test_salted(line: &Line, hash: u64, k: u32) -> bool {
            // SAFETY: as above.
            unsafe { test_avx512(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn set_salted(line: &mut Line, hash: u64, k: u32) {
            // SAFETY: as above.
            unsafe { set_avx512(line, hash, k) }
        }
        #[inline(always)]
        unsafe fn test_shifted(line: &Line, hash: u64, probes: Probes) -> bool {
            // SAFETY: as above.
            unsafe { test_shifted_avx512(line, hash, probes.k, probes.first, probes.second) }
        }
        #[inline(always)]
        unsafe fn set_shifted(line: &mut Line, hash: u64, probes: Probes) {
            // SAFETY: as above.
            unsafe { set_shifted_avx512(line, hash, probes.k, probes.first, probes.second) }
        }
    }
}

/// Whether every bit of `hash`'s mask (`k` probes) is set in `line`, on `path`, which must be
/// available (a lower path than the CPU's best is always safe to ask for).
#[inline(always)]
pub(crate) fn test_on(path: SimdPath, line: &Line, hash: u64, k: Probes) -> bool {
    match path {
        // SAFETY: `simd_path`, `one_key_path` and `SimdPath::available` name only paths the CPU
        // has (a build's target features promise them of every CPU it runs on); the callers
        // pass one of those.
        #[cfg(target_arch = "x86_64")]
        SimdPath::Avx512 => unsafe { Avx512::test(line, hash, k) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        SimdPath::Avx2 => unsafe { Avx2::test(line, hash, k) },
        // SAFETY: the portable path runs everywhere.
        _ => unsafe { Portable::test(line, hash, k) },
    }
}

/// Sets `hash`'s mask (`k` probes) in `line`, on `path` (as for [`test_on`]).
#[inline(always)]
pub(crate) fn set_on(path: SimdPath, line: &mut Line, hash: u64, k: Probes) {
    match path {
        // SAFETY: as in `test_on`.
        #[cfg(target_arch = "x86_64")]
        SimdPath::Avx512 => unsafe { Avx512::set(line, hash, k) },
        // SAFETY: as in `test_on`.
        #[cfg(target_arch = "x86_64")]
        SimdPath::Avx2 => unsafe { Avx2::set(line, hash, k) },
        // SAFETY: the portable path runs everywhere.
        _ => unsafe { Portable::set(line, hash, k) },
    }
}

/// Whether this build's target features include the AVX-512 path's (`-C target-cpu` of a CPU
/// with them).
const AVX512_BUILT_IN: bool = cfg!(all(
    target_arch = "x86_64",
    target_feature = "avx512f",
    target_feature = "avx512dq",
    target_feature = "avx2",
    target_feature = "bmi2"
));

/// Whether this build's target features include AVX2 (`-C target-cpu=x86-64-v3` and up).
const AVX2_BUILT_IN: bool = cfg!(all(target_arch = "x86_64", target_feature = "avx2"));

/// The path of a one-key call. A build whose target features include AVX-512 or AVX2 takes the
/// best kernel they allow, a constant, so the call inlines with no branch on the chosen path
/// (there `LINEBLOOM_SIMD` lowers only the batched calls): a branch per key lays the kernel out
/// of line, a taken jump per key, and a call into a kernel the build cannot inline costs more
/// than the AVX2 kernel inlined on a CPU that has AVX-512. Other builds test for the AVX-512
/// path first with [`is_chosen`] (one load and one compare per key, where a `match` on
/// [`simd_path`] costs four more instructions) and take the others through [`simd_path`].
/// Always an available path.
#[inline(always)]
fn one_key_path() -> SimdPath {
    #[cfg(target_arch = "x86_64")]
    {
        if AVX512_BUILT_IN {
            return SimdPath::Avx512;
        }
        if AVX2_BUILT_IN {
            return SimdPath::Avx2;
        }
        if is_chosen(SimdPath::Avx512) {
            return SimdPath::Avx512;
        }
    }
    simd_path()
}

/// [`test_on`] for a one-key call, on [`one_key_path`].
#[inline(always)]
pub(crate) fn test(line: &Line, hash: u64, k: Probes) -> bool {
    test_on(one_key_path(), line, hash, k)
}

/// [`set_on`] for a one-key call, on [`one_key_path`].
#[inline(always)]
pub(crate) fn set(line: &mut Line, hash: u64, k: Probes) {
    set_on(one_key_path(), line, hash, k)
}

/// Defines `fn $name(path: SimdPath, args...)` that runs the generic
/// `unsafe fn $generic::<K: Kernel>(args...)` compiled once per path: for AVX2 and AVX-512
/// inside a `#[target_feature]` function, so the kernel inlines into the loop and the path is
/// chosen once per call, not per key. `path` must be available.
macro_rules! per_path {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        = $generic:ident;) => {
        $(#[$meta])*
        #[inline]
        $vis fn $name(path: $crate::engine::arch::SimdPath, $($arg: $ty),*) $(-> $ret)? {
            use $crate::engine::arch::SimdPath;
            match path {
                #[cfg(target_arch = "x86_64")]
                SimdPath::Avx512 => {
                    #[target_feature(enable = "avx512f,avx512dq,avx2,bmi2")]
                    unsafe fn run($($arg: $ty),*) $(-> $ret)? {
                        // SAFETY: this function runs only on the AVX-512 path.
                        unsafe { $generic::<$crate::engine::arch::Avx512>($($arg),*) }
                    }
                    // SAFETY: the caller passes an available path.
                    unsafe { run($($arg),*) }
                }
                #[cfg(target_arch = "x86_64")]
                SimdPath::Avx2 => {
                    #[target_feature(enable = "avx2")]
                    unsafe fn run($($arg: $ty),*) $(-> $ret)? {
                        // SAFETY: this function runs only on the AVX2 path.
                        unsafe { $generic::<$crate::engine::arch::Avx2>($($arg),*) }
                    }
                    // SAFETY: the caller passes an available path.
                    unsafe { run($($arg),*) }
                }
                // SAFETY: the portable path runs everywhere.
                _ => unsafe { $generic::<$crate::engine::arch::Portable>($($arg),*) },
            }
        }
    };
}
pub(crate) use per_path;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mask::{Placement, probes_mask_scalar};
    use crate::hash::mix64;

    #[test]
    fn every_path_sets_and_tests_the_portable_bits() {
        let paths = SimdPath::available();
        assert_eq!(paths[0], SimdPath::Portable);
        for &path in &paths {
            for (kk, placement) in
                (1..=16).flat_map(|k| [(k, Placement::Salted), (k, Placement::Shifted)])
            {
                let k = Probes::new(kk, placement);
                for i in 0..5_000u64 {
                    let h = mix64(i ^ (u64::from(kk) << 40));
                    let mut line = Line::ZERO;
                    set_on(path, &mut line, h, k);
                    assert_eq!(line, probes_mask_scalar(h, k), "{path} {k:?} h={h:x}");
                    assert!(test_on(path, &line, h, k));
                    // Every single bit cleared makes the test fail.
                    for w in 0..16 {
                        let mut bits = line.0[w];
                        while bits != 0 {
                            let bit = bits & bits.wrapping_neg();
                            let mut missing = line;
                            missing.0[w] &= !bit;
                            assert!(!test_on(path, &missing, h, k), "{path} {k:?}");
                            bits &= bits - 1;
                        }
                    }
                    // On a random line, every path answers as the portable one.
                    let mut noisy = Line(std::array::from_fn(|w| mix64(i * 16 + w as u64) as u32));
                    assert_eq!(
                        test_on(path, &noisy, h, k),
                        test_on(SimdPath::Portable, &noisy, h, k)
                    );
                    let mut want = noisy;
                    set_on(SimdPath::Portable, &mut want, h, k);
                    set_on(path, &mut noisy, h, k);
                    assert_eq!(noisy, want, "{path} {k:?}");
                }
            }
        }
    }

    #[test]
    fn the_chosen_path_is_available_and_named() {
        let path = simd_path();
        assert!(path.is_available());
        assert_eq!(simd_path(), path, "fixed for the process");
        assert!(["portable", "avx2", "avx512"].contains(&path.name()));
        // Without LINEBLOOM_SIMD it is the best path the CPU has.
        if std::env::var_os("LINEBLOOM_SIMD").is_none() {
            assert_eq!(Some(&path), SimdPath::available().last());
        }
    }
}
