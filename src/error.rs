//! The crate's one error type. Every bad input that reaches the library (sizes, rates, serialized
//! bytes, a full cuckoo table) becomes one of these values; the library never panics on user input.

#[cfg(not(feature = "std"))]
use crate::math::Float;
use alloc::string::{String, ToString};
#[cfg(feature = "std")]
use alloc::sync::Arc;
use core::fmt;

/// Everything that can go wrong when building, filling, or reading a filter.
///
/// ```
/// use linebloom::{BlockedBloom, Error};
///
/// let err = BlockedBloom::with_fpr(1_000, 1.5).unwrap_err();
/// assert_eq!(err, Error::InvalidFpr(1.5));
/// assert_eq!(
///     err.to_string(),
///     "false-positive rate must be in the open interval (0, 1) (got 1.5)"
/// );
/// assert!(matches!(BlockedBloom::from_bytes(b"not a filter"), Err(Error::Corrupt(_))));
/// ```
///
/// New variants may come in any release (`#[non_exhaustive]`): match with a `_` arm. The
/// variants of the shared filter exist with the feature `redis`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The expected number of items was zero.
    ZeroItems,
    /// A false-positive rate outside the open interval (0, 1), or NaN.
    InvalidFpr(f64),
    /// A bits-per-key value that is NaN, infinite, below 1 or above the supported maximum.
    InvalidBitsPerKey(f64),
    /// A probe count k (bits set per key) outside what the filter supports.
    InvalidK {
        /// The number asked for.
        k: u32,
        /// The fewest the filter supports.
        min: u32,
        /// The most the filter supports.
        max: u32,
    },
    /// The requested filter would need more memory than this process can address.
    TooLarge {
        /// The expected number of items.
        items: u64,
        /// The bits per key asked for.
        bits_per_key: f64,
    },
    /// A parameter of some other kind was out of range (name, value, allowed range).
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given, as text.
        value: String,
        /// What the parameter allows.
        allowed: &'static str,
    },
    /// The cuckoo filter could not place an item; nothing that was inserted before was lost.
    Full,
    /// Two filters whose shape or seed differ cannot be combined.
    Incompatible(String),
    /// Serialized bytes that are not a valid filter: what is wrong with them.
    Corrupt(String),
    /// An I/O error: what was being done, and the operating system's error as
    /// [`source()`](core::error::Error::source). With the feature `std`.
    #[cfg(feature = "std")]
    Io(IoError),
    #[cfg(feature = "redis")]
    /// A server holding a shared filter cannot be reached, or went away during a request
    /// (nothing is known about that request's keys: retry it; inserts are idempotent).
    Unavailable(String),
    #[cfg(feature = "redis")]
    /// A server refused a request (a key of another type, no permission, out of memory).
    Server(String),
    #[cfg(feature = "redis")]
    /// A shared filter that does not exist (create it first).
    NotFound(String),
    #[cfg(feature = "redis")]
    /// A server key that exists but is not a linebloom filter (or not one this version reads).
    Foreign(String),
    #[cfg(feature = "redis")]
    /// A shared filter lost data on its server: a shard deleted, evicted, expired, truncated,
    /// retyped, or replaced by another filter's. Its answers can no longer be trusted (a key it
    /// held could read as "no"), so every request that touches such a shard is this error.
    Damaged(String),
}

/// Shorthand for `std::result::Result<T, linebloom::Error>`.
///
/// ```
/// fn build() -> linebloom::Result<linebloom::BlockedBloom> {
///     linebloom::BlockedBloom::with_fpr(1_000, 0.01)
/// }
/// assert!(build().is_ok());
/// ```
pub type Result<T> = core::result::Result<T, Error>;

/// The largest bits/key the constructors accept. Beyond this a Bloom filter is the wrong tool
/// (an exact set is smaller), and the figure guards against absurd sizes from typos.
pub const MAX_BITS_PER_KEY: f64 = 1024.0;

/// An `f64` parameter value as an error message shows it: plain decimal (`0.01`, `12.5`) for
/// magnitudes from 1e-6 up to 1e15 and for 0, exponent form (`1e-300`, `1e20`) outside, so a
/// message never spells out hundreds of digits. NaN and infinities print as `NaN`, `inf`.
pub(crate) struct Readable(pub f64);

impl fmt::Display for Readable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x == 0.0 || !x.is_finite() || (1e-6..1e15).contains(&x.abs()) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ZeroItems => write!(f, "items must be at least 1 (got 0)"),
            Error::InvalidFpr(p) => {
                write!(
                    f,
                    "false-positive rate must be in the open interval (0, 1) (got {})",
                    Readable(*p)
                )
            }
            Error::InvalidBitsPerKey(b) => write!(
                f,
                "bits per key must be a finite number in [1, {MAX_BITS_PER_KEY}] (got {})",
                Readable(*b)
            ),
            Error::InvalidK { k, min, max } => {
                write!(f, "the probe count k must be in [{min}, {max}] (got {k})")
            }
            Error::TooLarge {
                items,
                bits_per_key,
            } => write!(
                f,
                "a filter for {items} items at {} bits per key does not fit in memory",
                Readable(*bits_per_key)
            ),
            Error::InvalidParameter {
                name,
                value,
                allowed,
            } => {
                write!(f, "{name} must be {allowed} (got {value})")
            }
            Error::Full => write!(
                f,
                "cuckoo filter is full: the item was not inserted and nothing was lost"
            ),
            Error::Incompatible(why) => write!(f, "filters are incompatible: {why}"),
            Error::Corrupt(why) => write!(f, "corrupt filter bytes: {why}"),
            #[cfg(feature = "std")]
            Error::Io(e) => write!(f, "I/O error: {e}"),
            #[cfg(feature = "redis")]
            Error::Unavailable(why) => write!(f, "server unavailable: {why}"),
            #[cfg(feature = "redis")]
            Error::Server(why) => write!(f, "server error: {why}"),
            #[cfg(feature = "redis")]
            Error::NotFound(why) => write!(f, "not found: {why}"),
            #[cfg(feature = "redis")]
            Error::Foreign(why) => write!(f, "not a linebloom filter: {why}"),
            #[cfg(feature = "redis")]
            Error::Damaged(why) => write!(f, "shared filter damaged: {why}"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            #[cfg(feature = "std")]
            Error::Io(e) => Some(&*e.error),
            _ => None,
        }
    }
}

#[cfg(feature = "std")]
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(IoError::new("", e))
    }
}

#[cfg(feature = "std")]
impl Error {
    /// An [`Error::Io`] for `error` met while doing `context` (say, "cannot write out.lbf").
    pub fn io(context: impl Into<String>, error: std::io::Error) -> Self {
        Error::Io(IoError::new(context, error))
    }
}

/// The I/O error inside [`Error::Io`]: what was being done, and the error itself, shared so
/// that [`Error`] stays `Clone`. Two are equal when their contexts, kinds and messages are.
///
/// ```
/// use std::error::Error as _;
///
/// let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
/// let err = linebloom::Error::io("cannot open f.lbf", missing);
/// assert_eq!(err.to_string(), "I/O error: cannot open f.lbf: entity not found");
/// let source = err.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
/// assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
/// ```
#[cfg(feature = "std")]
#[derive(Debug, Clone)]
pub struct IoError {
    context: String,
    error: Arc<std::io::Error>,
}

#[cfg(feature = "std")]
impl IoError {
    fn new(context: impl Into<String>, error: std::io::Error) -> Self {
        IoError {
            context: context.into(),
            error: Arc::new(error),
        }
    }

    /// What was being done ("" where nothing more is known).
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The error itself.
    pub fn error(&self) -> &std::io::Error {
        &self.error
    }

    /// Its kind.
    pub fn kind(&self) -> std::io::ErrorKind {
        self.error.kind()
    }
}

#[cfg(feature = "std")]
impl PartialEq for IoError {
    fn eq(&self, other: &Self) -> bool {
        self.context == other.context
            && self.error.kind() == other.error.kind()
            && self.error.to_string() == other.error.to_string()
    }
}

#[cfg(feature = "std")]
impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.context.is_empty() {
            write!(f, "{}", self.error)
        } else {
            write!(f, "{}: {}", self.context, self.error)
        }
    }
}

/// The batched paths' check: as many answers as keys (or hashes).
pub(crate) fn check_same_len(hashes: usize, out: usize) -> Result<()> {
    if hashes != out {
        return Err(Error::InvalidParameter {
            name: "output length",
            value: out.to_string(),
            allowed: "equal to the number of hashes",
        });
    }
    Ok(())
}

/// Checks an expected item count.
pub(crate) fn check_items(items: u64) -> Result<()> {
    if items == 0 {
        return Err(Error::ZeroItems);
    }
    Ok(())
}

/// Checks a target false-positive rate: finite and strictly between 0 and 1.
pub(crate) fn check_fpr(fpr: f64) -> Result<()> {
    if !(fpr > 0.0 && fpr < 1.0) {
        return Err(Error::InvalidFpr(fpr));
    }
    Ok(())
}

/// Checks a bits-per-key figure: finite, at least 1, at most [`MAX_BITS_PER_KEY`].
pub(crate) fn check_bits_per_key(bits_per_key: f64) -> Result<()> {
    if !(1.0..=MAX_BITS_PER_KEY).contains(&bits_per_key) {
        return Err(Error::InvalidBitsPerKey(bits_per_key));
    }
    Ok(())
}

/// The number of `unit_bits`-sized units needed to give `items` keys `bits_per_key` bits each,
/// rounded up, at least one; an error when the byte size would not fit in `isize`.
pub(crate) fn units_for(items: u64, bits_per_key: f64, unit_bits: u64) -> Result<usize> {
    check_items(items)?;
    check_bits_per_key(bits_per_key)?;
    let total_bits = items as f64 * bits_per_key;
    let units = (total_bits / unit_bits as f64).ceil().max(1.0);
    let bytes = units * unit_bits as f64 / 8.0;
    if bytes.is_nan() || bytes >= isize::MAX as f64 / 2.0 {
        return Err(Error::TooLarge {
            items,
            bits_per_key,
        });
    }
    Ok(units as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_numbers_switch_to_exponent_form_outside_plain_magnitudes() {
        let r = |x: f64| Readable(x).to_string();
        assert_eq!(r(1e-300), "1e-300");
        assert_eq!(r(0.01), "0.01");
        assert_eq!(r(1e20), "1e20");
        assert_eq!(r(0.0), "0");
        assert_eq!(r(-0.5), "-0.5");
        assert_eq!(r(12.5), "12.5");
        assert_eq!(r(1e-6), "0.000001");
        assert_eq!(r(9.5e-7), "9.5e-7");
        assert_eq!(r(1e15), "1e15");
        assert_eq!(r(-1e300), "-1e300");
        assert_eq!(r(f64::NAN), "NaN");
        assert_eq!(r(f64::INFINITY), "inf");
    }

    #[test]
    fn error_messages_show_tiny_and_huge_values_readably() {
        let m = Error::InvalidFpr(1e-300).to_string();
        assert!(m.ends_with("(got 1e-300)"), "{m}");
        assert!(m.len() < 100, "{m}");
        let m = Error::InvalidBitsPerKey(1e20).to_string();
        assert!(m.ends_with("(got 1e20)"), "{m}");
        let m = Error::TooLarge {
            items: 1 << 60,
            bits_per_key: 10.0,
        }
        .to_string();
        assert!(m.contains("at 10 bits per key"), "{m}");
        // A valid rate, but below what the blocked filter reaches.
        let m = crate::model::blocked_bits_per_key(1e-300)
            .unwrap_err()
            .to_string();
        assert!(m.ends_with("(got 1e-300)"), "{m}");
        let m = crate::CuckooFilter::with_fpr(10, 1e-300)
            .unwrap_err()
            .to_string();
        assert!(m.ends_with("(got 1e-300)"), "{m}");
    }
}
