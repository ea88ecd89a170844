//! The caller's pointers as Rust references and slices, checked first.
//!
//! This module owns every conversion from a raw pointer the C caller passes: null, alignment
//! and size are checked here and become a [`Failure`], so the exported functions never build
//! a reference from a pointer that could not be one. What no function can check (that a
//! non-null pointer points to live memory of the stated size, that a handle was not freed) is
//! the caller's promise, stated in the header's pointer rules; each function here names the
//! promise it relies on in its `# Safety` section.

use std::mem::{MaybeUninit, align_of, size_of};

use crate::status::{Failure, Status};

/// A shared reference to the object `ptr` points to, or a null-pointer failure.
///
/// # Safety
/// `ptr` is null or points to a live, initialised `T` that nothing writes to for `'a`.
pub(crate) unsafe fn borrow<'a, T>(ptr: *const T, name: &str) -> Result<&'a T, Failure> {
    // SAFETY: `as_ref` returns `None` for null; otherwise the caller promises a live `T` that
    // nothing writes to for `'a`.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::null(name))
}

/// An exclusive reference to the object `ptr` points to, or a null-pointer failure.
///
/// # Safety
/// `ptr` is null or points to a live, initialised `T` that nothing else reads or writes for
/// `'a`.
pub(crate) unsafe fn borrow_mut<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: `as_mut` returns `None` for null; otherwise the caller promises a live `T` that
    // nothing else touches for `'a`.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::null(name))
}

/// The place `ptr` points to, to write one result into (whatever it holds now).
///
/// # Safety
/// `ptr` is null or points to memory for one `T` that the caller lets this call write and
/// that nothing else touches for `'a`.
pub(crate) unsafe fn slot<'a, T>(
    ptr: *mut T,
    name: &str,
) -> Result<&'a mut MaybeUninit<T>, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    if !ptr.is_aligned() {
        return Err(misaligned(name, ptr as usize, align_of::<T>()));
    }
    // SAFETY: non-null and aligned (checked above); the caller promises writable memory for
    // one `T` that nothing else touches for `'a`. `MaybeUninit` accepts any content, so no
    // value is read or dropped.
    Ok(unsafe { &mut *ptr.cast::<MaybeUninit<T>>() })
}

/// The `len` values at `ptr`; with `len == 0` the pointer may be null (an empty slice).
///
/// # Safety
/// When `len > 0`, `ptr` is null or points to `len` initialised values of `T` that nothing
/// writes to for `'a`.
pub(crate) unsafe fn slice<'a, T>(
    ptr: *const T,
    len: usize,
    name: &str,
) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    check_array(ptr, len, name)?;
    // SAFETY: non-null, aligned and `len * size_of::<T>() <= isize::MAX` (`check_array`); the
    // caller promises `len` initialised values that nothing writes to for `'a`.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Element types for which all-zero bytes are a valid value.
pub(crate) trait ZeroIsValid: Copy {}
impl ZeroIsValid for u8 {}
impl ZeroIsValid for bool {}

/// The `len` places at `ptr` to write results into, zeroed first, so the slice holds valid
/// values whatever the caller's memory held; with `len == 0` the pointer may be null.
///
/// # Safety
/// When `len > 0`, `ptr` is null or points to `len` writable places for `T` that nothing else
/// touches for `'a`.
pub(crate) unsafe fn zeroed_mut<'a, T: ZeroIsValid>(
    ptr: *mut T,
    len: usize,
    name: &str,
) -> Result<&'a mut [T], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_array(ptr.cast_const(), len, name)?;
    // SAFETY: non-null, aligned, and `len` values of `T` fit in `isize::MAX` bytes
    // (`check_array`); the caller promises `len` writable places that nothing else touches for
    // `'a`. After `write_bytes` every element is all-zero bytes, a valid `T` (`ZeroIsValid`),
    // so the slice holds initialised values.
    unsafe {
        ptr.write_bytes(0, len);
        Ok(std::slice::from_raw_parts_mut(ptr, len))
    }
}

/// Fails when the `a_len` values at `a` and the `b_len` values at `b` share a byte: a slice
/// read while another is written must not overlap.
pub(crate) fn disjoint<A, B>(
    (a, a_len): (*const A, usize),
    (b, b_len): (*const B, usize),
    names: &str,
) -> Result<(), Failure> {
    let start_a = a as usize;
    let start_b = b as usize;
    // Either pointer may not be checked yet (null, or a length no array has): saturate.
    let end_a = start_a.saturating_add(a_len.saturating_mul(size_of::<A>()));
    let end_b = start_b.saturating_add(b_len.saturating_mul(size_of::<B>()));
    if a_len > 0 && b_len > 0 && start_a < end_b && start_b < end_a {
        return Err(Failure::new(
            Status::InvalidArgument,
            format!("{names} must not overlap"),
        ));
    }
    Ok(())
}

fn check_array<T>(ptr: *const T, len: usize, name: &str) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    if !ptr.is_aligned() {
        return Err(misaligned(name, ptr as usize, align_of::<T>()));
    }
    let most = isize::MAX as usize / size_of::<T>().max(1);
    let end_fits = (ptr as usize).checked_add(len.saturating_mul(size_of::<T>()));
    if len > most || end_fits.is_none() {
        return Err(Failure::new(
            Status::InvalidArgument,
            format!("{name} has {len} elements, more than an array in memory can hold"),
        ));
    }
    Ok(())
}

fn misaligned(name: &str, address: usize, align: usize) -> Failure {
    Failure::new(
        Status::Misaligned,
        format!("{name} must be {align}-byte aligned (got address {address:#x})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_slice_may_be_null_and_a_longer_one_may_not() {
        // SAFETY: `len == 0`: the pointer is never read.
        let empty = unsafe { slice::<u64>(std::ptr::null(), 0, "hashes") }.unwrap();
        assert!(empty.is_empty());
        // SAFETY: a null pointer is rejected before any read.
        let err = unsafe { slice::<u64>(std::ptr::null(), 3, "hashes") }.unwrap_err();
        assert_eq!(err.status, Status::NullPointer);
        assert_eq!(err.message, "hashes must not be null");
    }

    #[test]
    fn a_misaligned_or_oversized_array_is_refused_before_any_read() {
        let words = [0u64; 4];
        let odd = words.as_ptr().cast::<u8>().wrapping_add(1).cast::<u64>();
        // SAFETY: a misaligned pointer is rejected before any read.
        let err = unsafe { slice(odd, 1, "hashes") }.unwrap_err();
        assert_eq!(err.status, Status::Misaligned);
        assert!(err.message.contains("8-byte aligned"), "{}", err.message);
        // SAFETY: an impossible length is rejected before any read.
        let err = unsafe { slice(words.as_ptr(), usize::MAX / 4, "hashes") }.unwrap_err();
        assert_eq!(err.status, Status::InvalidArgument);
    }

    #[test]
    fn zeroed_places_hold_false_before_they_are_written() {
        let mut raw = [0xAAu8; 3];
        let ptr = raw.as_mut_ptr().cast::<bool>();
        // SAFETY: `raw` has 3 writable bytes, nothing else touches them while `out` lives.
        let out = unsafe { zeroed_mut(ptr, 3, "out") }.unwrap();
        assert_eq!(out, &[false; 3]);
        out[1] = true;
        assert_eq!(raw, [0, 1, 0]);
    }

    #[test]
    fn overlapping_arrays_are_refused() {
        let words = [0u64; 4];
        let bytes = words.as_ptr().cast::<u8>();
        let overlap = disjoint((words.as_ptr(), 4), (bytes.wrapping_add(31), 1), "a and b");
        assert_eq!(overlap.unwrap_err().status, Status::InvalidArgument);
        assert!(disjoint((words.as_ptr(), 3), (bytes.wrapping_add(24), 8), "a and b").is_ok());
        assert!(disjoint((words.as_ptr(), 4), (bytes, 0), "a and b").is_ok());
        let top = usize::MAX as *const u8;
        assert!(disjoint((words.as_ptr(), 4), (top, usize::MAX), "a and b").is_ok());
    }

    #[test]
    fn a_slot_refuses_null() {
        // SAFETY: a null pointer is rejected before any write.
        let err = unsafe { slot::<u64>(std::ptr::null_mut(), "out") }.unwrap_err();
        assert_eq!(err.status, Status::NullPointer);
    }
}
