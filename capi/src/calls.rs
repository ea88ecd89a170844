//! The bodies of the calls the handles share: lookups (owned filters and views), inserts and
//! saving (owned filters), written once over two small traits.
//!
//! This module owns those bodies; `blocked.rs` and `split_block.rs` own the handle types, the
//! exported names and their documentation, and implement the traits by calling the library.

use linebloom::format::{CHECKSUM_LEN, HEADER_LEN};

use crate::args::{borrow, borrow_mut, disjoint, slice, slot, zeroed_mut};
use crate::status::{Failure, Status, guard};

/// What every handle answers.
pub(crate) trait Lookup {
    fn contains_hash(&self, hash: u64) -> bool;
    fn contains_bytes(&self, key: &[u8]) -> bool;
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> linebloom::Result<()>;
}

/// What an owned filter does beside answering.
pub(crate) trait Owned: Lookup {
    fn insert_hash(&mut self, hash: u64);
    fn insert_bytes(&mut self, key: &[u8]);
    fn insert_hashes(&mut self, hashes: &[u64]);
    /// Bytes of the payload (lines or blocks) in the serialized format.
    fn payload_bytes(&self) -> usize;
    /// Writes the serialized format to `out`.
    fn write_to(&self, out: &mut [u8]) -> linebloom::Result<()>;
    /// ORs `other`'s keys in; an error (and `self` unchanged) for another shape.
    fn union(&mut self, other: &Self) -> linebloom::Result<()>;
}

/// # Safety
/// `filter` is null or a live handle that nothing writes to during the call; `out` is null or
/// points to a writable `bool`.
pub(crate) unsafe fn contains_hash<F: Lookup>(
    filter: *const F,
    hash: u64,
    out: *mut bool,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter` and `out`.
        let (filter, out) = unsafe { (borrow(filter, "filter")?, slot(out, "out")?) };
        out.write(filter.contains_hash(hash));
        Ok(())
    })
}

/// # Safety
/// As [`contains_hash`]; `key` is null or points to `len` readable bytes.
pub(crate) unsafe fn contains<F: Lookup>(
    filter: *const F,
    key: *const u8,
    len: usize,
    out: *mut bool,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter`, `key` and `out`.
        let (filter, key, out) = unsafe {
            (
                borrow(filter, "filter")?,
                slice(key, len, "key")?,
                slot(out, "out")?,
            )
        };
        out.write(filter.contains_bytes(key));
        Ok(())
    })
}

/// # Safety
/// `filter` as in [`contains_hash`]; `hashes` is null or points to `n` readable `uint64_t`,
/// and `out` is null or points to `n` writable `bool`, neither overlapping the filter.
pub(crate) unsafe fn contains_hashes<F: Lookup>(
    filter: *const F,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promise for `filter`.
        let filter = unsafe { borrow(filter, "filter")? };
        // SAFETY: the caller's promise for `hashes`.
        let hashes = unsafe { slice(hashes, n, "hashes")? };
        disjoint(
            (hashes.as_ptr(), n),
            (out.cast_const(), n),
            "hashes and out",
        )?;
        // SAFETY: the caller's promise for `out`, checked above not to overlap `hashes`.
        let out = unsafe { zeroed_mut(out, n, "out")? };
        filter.contains_hashes(hashes, out)?;
        Ok(())
    })
}

/// # Safety
/// `filter` is null or a live handle that nothing else reads or writes during the call.
pub(crate) unsafe fn insert_hash<F: Owned>(filter: *mut F, hash: u64) -> Status {
    guard(|| {
        // SAFETY: the caller's promise for `filter`.
        unsafe { borrow_mut(filter, "filter")? }.insert_hash(hash);
        Ok(())
    })
}

/// # Safety
/// As [`insert_hash`]; `key` is null or points to `len` readable bytes outside the filter.
pub(crate) unsafe fn insert<F: Owned>(filter: *mut F, key: *const u8, len: usize) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter` and `key`.
        let (filter, key) = unsafe { (borrow_mut(filter, "filter")?, slice(key, len, "key")?) };
        filter.insert_bytes(key);
        Ok(())
    })
}

/// # Safety
/// As [`insert_hash`]; `hashes` is null or points to `n` readable `uint64_t` outside the
/// filter.
pub(crate) unsafe fn insert_hashes<F: Owned>(
    filter: *mut F,
    hashes: *const u64,
    n: usize,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter` and `hashes`.
        let (filter, hashes) =
            unsafe { (borrow_mut(filter, "filter")?, slice(hashes, n, "hashes")?) };
        filter.insert_hashes(hashes);
        Ok(())
    })
}

/// # Safety
/// `into` is null or a live handle that no other thread uses during the call; `other` is null
/// or a live handle that no thread writes to during the call.
pub(crate) unsafe fn union<F: Owned>(into: *mut F, other: *const F) -> Status {
    guard(|| {
        if !into.is_null() && core::ptr::eq(into, other) {
            // A filter united with itself keeps its bits; an exclusive and a shared reference
            // to one filter must not exist at once.
            return Ok(());
        }
        // SAFETY: the caller's promises for `into` and `other`, which are different handles.
        let (into, other) = unsafe { (borrow_mut(into, "into")?, borrow(other, "other")?) };
        into.union(other)?;
        Ok(())
    })
}

fn serialized_len<F: Owned>(filter: &F) -> usize {
    HEADER_LEN + filter.payload_bytes() + CHECKSUM_LEN
}

/// # Safety
/// `filter` as in [`contains_hash`]; `size` is null or points to a writable `size_t`.
pub(crate) unsafe fn serialized_size<F: Owned>(filter: *const F, size: *mut usize) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter` and `size`.
        let (filter, size) = unsafe { (borrow(filter, "filter")?, slot(size, "size")?) };
        size.write(serialized_len(filter));
        Ok(())
    })
}

/// # Safety
/// `filter` as in [`contains_hash`]; `buf` is null or points to `len` writable bytes outside
/// the filter.
pub(crate) unsafe fn save<F: Owned>(filter: *const F, buf: *mut u8, len: usize) -> Status {
    guard(|| {
        // SAFETY: the caller's promise for `filter`.
        let filter = unsafe { borrow(filter, "filter")? };
        let need = serialized_len(filter);
        if len < need {
            return Err(Failure::new(
                Status::BufferTooSmall,
                format!("the buffer has {len} bytes and the filter needs {need}"),
            ));
        }
        // SAFETY: the caller's promise for `buf` (only the first `need <= len` bytes are used).
        let buf = unsafe { zeroed_mut(buf, need, "buf")? };
        filter.write_to(buf)?;
        Ok(())
    })
}

/// Builds a handle and writes it to `*out`; `out` is checked before anything is built.
///
/// # Safety
/// `out` is null or points to a writable handle pointer.
pub(crate) unsafe fn create<T>(
    out: *mut *mut T,
    make: impl FnOnce() -> Result<T, Failure>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promise for `out`.
        let out = unsafe { slot(out, "out")? };
        out.write(Box::into_raw(Box::new(make()?)));
        Ok(())
    })
}

/// Frees a handle that [`create`] made; null does nothing.
///
/// # Safety
/// `handle` is null, or a handle of this type that this library returned and that was not
/// freed yet; nothing uses it during or after the call.
pub(crate) unsafe fn free<T>(handle: *mut T) {
    // A failure cannot happen here; the guard keeps a panic in a destructor from unwinding.
    let _ = guard(|| {
        if !handle.is_null() {
            // SAFETY: `create` made `handle` with `Box::into_raw`, and the caller promises it
            // was not freed yet and is not used again.
            drop(unsafe { Box::from_raw(handle) });
        }
        Ok(())
    });
}
