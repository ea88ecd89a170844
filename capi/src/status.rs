//! Status codes, the thread's last error message, and the guard every exported function runs
//! its body in.
//!
//! This module owns how a failure crosses the boundary: a [`Status`] as the return value and a
//! message kept per thread for [`linebloom_last_error`]. A panic never unwinds into C: [`guard`]
//! catches it and turns it into [`Status::Panic`]. It does not own argument checking
//! (`args.rs`) or the filters (`blocked.rs`, `split_block.rs`).

use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What a call did: `LINEBLOOM_STATUS_OK` (0) or why it failed. On a failure
/// `linebloom_last_error()` has a message that names the bad value, and no output was written.
/// The values are stable; new codes may be added.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// A parameter out of range: items of 0, an FPR outside (0, 1), bits per key outside
    /// [1, 1024], probes outside 1..=16, a raw-lines length that is not a multiple of 64, a
    /// count whose bytes no array can hold.
    InvalidArgument = 1,
    /// A pointer that must not be null was null.
    NullPointer = 2,
    /// Bytes that are not a filter of the kind asked for: bad magic, version, kind, length or
    /// checksum, or a split-block bitset of a bad size.
    Corrupt = 3,
    /// Two filters that differ in size, probes or seed cannot be combined.
    Incompatible = 4,
    /// A zero-copy view over bytes that do not start on the 64-byte boundary it needs, or an
    /// array of `uint64_t` that is not 8-byte aligned.
    Misaligned = 5,
    /// The caller's buffer is smaller than the bytes to write.
    BufferTooSmall = 6,
    /// The filter asked for does not fit in memory.
    OutOfMemory = 7,
    /// linebloom panicked (a bug: please report it with the message). The panic did not
    /// cross into the caller; the handle the call was given may hold a partial update.
    Panic = 8,
    /// Any other failure; the message says what.
    Other = 9,
}

/// A failed call: its status and message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub(crate) status: Status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// A null pointer where `name` must point somewhere.
    pub(crate) fn null(name: &str) -> Self {
        Self::new(Status::NullPointer, format!("{name} must not be null"))
    }
}

impl From<linebloom::Error> for Failure {
    fn from(e: linebloom::Error) -> Self {
        use linebloom::Error;
        let status = match &e {
            Error::TooLarge { .. } => Status::OutOfMemory,
            // The line storage's allocation failure names its parameter this way.
            Error::InvalidParameter { allowed, .. } if allowed.contains("fit in memory") => {
                Status::OutOfMemory
            }
            Error::ZeroItems
            | Error::InvalidFpr(_)
            | Error::InvalidBitsPerKey(_)
            | Error::InvalidK { .. }
            | Error::InvalidParameter { .. } => Status::InvalidArgument,
            Error::Corrupt(_) => Status::Corrupt,
            Error::Incompatible(_) => Status::Incompatible,
            _ => Status::Other,
        };
        Self::new(status, e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // A message with a NUL inside would end early in C; none is expected, but keep it whole.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = text);
}

/// The text of a panic's payload (`panic!` with a literal or a formatted message).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message");
    format!("linebloom panicked (a bug; please report it): {text}")
}

/// Runs an exported function's body: its `Err` becomes the returned status and this thread's
/// last error, and a panic becomes [`Status::Panic`] instead of unwinding into C.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> Status {
    // Unwind safety: after a panic the caller gets `Panic` and is told the handle may hold a
    // partial update; a Bloom filter's bits stay a valid filter whatever subset was written.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => Status::Ok,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status
        }
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            Status::Panic
        }
    }
}

/// The message of the last call on this thread that failed (`""` when none has). The pointer
/// stays valid, and the text unchanged, until the next failing call on this thread; successful
/// calls leave it as it is.
#[unsafe(no_mangle)]
pub extern "C" fn linebloom_last_error() -> *const c_char {
    // No panic can happen here: `try_with` covers a call made while the thread's locals are
    // being destroyed, `try_borrow` one made while the message is being replaced (which no
    // code path does). The pointer stays valid after the borrow ends: it points into the
    // `CString`'s heap buffer, which lives until the next failure replaces it.
    LAST_ERROR
        .try_with(|slot| slot.try_borrow().map(|text| text.as_ptr()))
        .ok()
        .and_then(Result::ok)
        .unwrap_or(c"the message is not available".as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use linebloom::blocked::Placement;
    use std::ffi::CStr;

    fn last_error() -> String {
        // SAFETY: `linebloom_last_error` returns a NUL-terminated string that stays valid until
        // the next failing call on this thread; it is copied before any such call.
        unsafe { CStr::from_ptr(linebloom_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_the_panic_status_with_its_message() {
        assert_eq!(guard(|| panic!("boom {}", 42)), Status::Panic);
        assert!(last_error().contains("boom 42"), "{}", last_error());
        assert_eq!(guard(|| panic!("static boom")), Status::Panic);
        assert!(last_error().contains("static boom"));
    }

    #[test]
    fn a_failure_sets_the_message_and_success_leaves_it() {
        let status = guard(|| Err(Failure::new(Status::Corrupt, "bad bytes")));
        assert_eq!(status, Status::Corrupt);
        assert_eq!(last_error(), "bad bytes");
        assert_eq!(guard(|| Ok(())), Status::Ok);
        assert_eq!(last_error(), "bad bytes");
    }

    #[test]
    fn a_nul_inside_a_message_is_kept_visible() {
        guard(|| Err(Failure::new(Status::Other, "a\0b")));
        assert_eq!(last_error(), "a\\0b");
    }

    #[test]
    fn library_errors_map_to_their_codes() {
        use linebloom::{BlockedBloom, BlockedBloomRef, Error};
        let code = |e: Error| Failure::from(e).status;
        assert_eq!(
            code(BlockedBloom::with_fpr(10, 1.5).unwrap_err()),
            Status::InvalidArgument
        );
        assert_eq!(
            code(BlockedBloom::with_fpr(0, 0.01).unwrap_err()),
            Status::InvalidArgument
        );
        assert_eq!(
            code(BlockedBloom::with_bits_per_key(u64::MAX, 1000.0).unwrap_err()),
            Status::OutOfMemory
        );
        assert_eq!(
            code(BlockedBloom::with_lines(usize::MAX, 6, 0).unwrap_err()),
            Status::OutOfMemory
        );
        assert_eq!(
            code(BlockedBloom::from_bytes(b"nope").unwrap_err()),
            Status::Corrupt
        );
        assert_eq!(
            code(BlockedBloomRef::from_raw_bytes(&[0; 64], 0, Placement::Shifted, 0).unwrap_err()),
            Status::InvalidArgument
        );
        let mut a = BlockedBloom::with_lines(1, 6, 0).unwrap();
        let b = BlockedBloom::with_lines(2, 6, 0).unwrap();
        assert_eq!(code(a.union(&b).unwrap_err()), Status::Incompatible);
        assert_eq!(
            code(Error::io("disk", std::io::Error::other("full"))),
            Status::Other
        );
    }
}
