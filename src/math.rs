//! Float math for a build without `std`, whose `core` lacks `ln`, `exp`, `powf` and the like:
//! the same methods on `f64`, computed by `libm`. A module that needs them imports `Float`
//! only when `std` is off (`#[cfg(not(feature = "std"))] use crate::math::Float;`), so a build
//! with `std` calls the standard library's methods, bit for bit as before; a build without it
//! may differ from those in the last bit of a result (and so, rarely, in a size rounded from
//! one).

#[cfg(not(feature = "std"))]
pub(crate) trait Float {
    fn ln(self) -> f64;
    fn ln_1p(self) -> f64;
    fn exp(self) -> f64;
    fn exp_m1(self) -> f64;
    fn powf(self, n: f64) -> f64;
    fn powi(self, n: i32) -> f64;
    fn ceil(self) -> f64;
    fn floor(self) -> f64;
    fn round(self) -> f64;
    fn sqrt(self) -> f64;
}

#[cfg(not(feature = "std"))]
impl Float for f64 {
    #[inline]
    fn ln(self) -> f64 {
        libm::log(self)
    }
    #[inline]
    fn ln_1p(self) -> f64 {
        libm::log1p(self)
    }
    #[inline]
    fn exp(self) -> f64 {
        libm::exp(self)
    }
    #[inline]
    fn exp_m1(self) -> f64 {
        libm::expm1(self)
    }
    #[inline]
    fn powf(self, n: f64) -> f64 {
        libm::pow(self, n)
    }
    #[inline]
    fn powi(self, n: i32) -> f64 {
        libm::pow(self, f64::from(n))
    }
    #[inline]
    fn ceil(self) -> f64 {
        libm::ceil(self)
    }
    #[inline]
    fn floor(self) -> f64 {
        libm::floor(self)
    }
    #[inline]
    fn round(self) -> f64 {
        libm::round(self)
    }
    #[inline]
    fn sqrt(self) -> f64 {
        libm::sqrt(self)
    }
}
