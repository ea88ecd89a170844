//! The Parquet split-block filter through the C ABI: `linebloom_split_block` (an owned
//! [`SplitBlockBloom`]) and `linebloom_split_block_view` (a [`SplitBlockBloomRef`] over a
//! bitset the caller owns).
//!
//! This module owns the exported `linebloom_split_block_*` functions and their
//! documentation; the bodies shared with the blocked filter live in `calls.rs`.

use linebloom::{Key, SplitBlockBloom, SplitBlockBloomRef};

use crate::args::{borrow, slice, slot};
use crate::calls::{self, Lookup, Owned};
use crate::status::{Status, guard};

/// An owned split-block filter: Parquet's layout (32-byte blocks, 8 bits per key, XXH64 with
/// seed 0). Free it with `linebloom_split_block_free`.
pub struct SplitBlock(SplitBlockBloom);

/// A split-block filter read in place from a Parquet bitset the caller owns (a zero-copy
/// view, any alignment). The bytes must outlive the view and stay unchanged while it lives;
/// free the view with `linebloom_split_block_view_free` (which leaves the bytes alone).
pub struct SplitBlockView(SplitBlockBloomRef<'static>);

impl Lookup for SplitBlock {
    fn contains_hash(&self, hash: u64) -> bool {
        self.0.contains_hash(hash)
    }
    fn contains_bytes(&self, key: &[u8]) -> bool {
        self.0.contains(key)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> linebloom::Result<()> {
        self.0.contains_hashes(hashes, out)
    }
}

impl Owned for SplitBlock {
    fn insert_hash(&mut self, hash: u64) {
        self.0.insert_hash(hash);
    }
    fn insert_bytes(&mut self, key: &[u8]) {
        self.0.insert(key);
    }
    fn insert_hashes(&mut self, hashes: &[u64]) {
        self.0.insert_hashes(hashes);
    }
    fn payload_bytes(&self) -> usize {
        self.0.size_bytes()
    }
    fn write_to(&self, out: &mut [u8]) -> linebloom::Result<()> {
        self.0.write_to(out)
    }
    fn union(&mut self, other: &Self) -> linebloom::Result<()> {
        self.0.union(&other.0)
    }
}

impl Lookup for SplitBlockView {
    fn contains_hash(&self, hash: u64) -> bool {
        self.0.contains_hash(hash)
    }
    fn contains_bytes(&self, key: &[u8]) -> bool {
        self.0.contains(key)
    }
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) -> linebloom::Result<()> {
        self.0.contains_hashes(hashes, out)
    }
}

/// Creates an empty split-block filter for `items` keys at a false-positive rate of about
/// `fpr`, sized as Parquet writers size a column chunk's filter (a power of two from 32 bytes
/// to 128 MiB).
///
/// # Safety
/// `out` points to a writable `linebloom_split_block *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_new_fpr(
    items: usize,
    fpr: f64,
    out: *mut *mut SplitBlock,
) -> Status {
    // SAFETY: the caller's promise for `out`.
    unsafe {
        calls::create(out, || {
            Ok(SplitBlock(SplitBlockBloom::with_fpr(items as u64, fpr)?))
        })
    }
}

/// Creates an empty split-block filter for `items` keys at `bits_per_key` bits each, in whole
/// 32-byte blocks.
///
/// # Safety
/// `out` points to a writable `linebloom_split_block *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_new_bits_per_key(
    items: usize,
    bits_per_key: f64,
    out: *mut *mut SplitBlock,
) -> Status {
    let build = || {
        Ok(SplitBlock(SplitBlockBloom::with_bits_per_key(
            items as u64,
            bits_per_key,
        )?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, build) }
}

/// Frees a filter; null does nothing.
///
/// # Safety
/// `filter` is null or a live handle from this library, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_free(filter: *mut SplitBlock) {
    // SAFETY: the caller's promise for `filter`.
    unsafe { calls::free(filter) }
}

/// Adds a value given by its XXH64 hash (`linebloom_hash_xxh64`).
///
/// # Safety
/// `filter` is a live handle that no other thread uses during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_insert_hash(
    filter: *mut SplitBlock,
    hash: u64,
) -> Status {
    // SAFETY: the caller's promise for `filter`.
    unsafe { calls::insert_hash(filter, hash) }
}

/// Adds the value whose plain encoding is the `len` bytes at `key` (as Parquet hashes it:
/// XXH64, seed 0). `key` may be null when `len` is 0.
///
/// # Safety
/// As `linebloom_split_block_insert_hash`; `key` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_insert(
    filter: *mut SplitBlock,
    key: *const u8,
    len: usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `key`.
    unsafe { calls::insert(filter, key, len) }
}

/// Adds `n` values given by their hashes (the same bits as `n` calls of
/// `linebloom_split_block_insert_hash`). `hashes` may be null when `n` is 0.
///
/// # Safety
/// As `linebloom_split_block_insert_hash`; `hashes` points to `n` readable, 8-byte aligned
/// `uint64_t` outside the filter's bitset.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_insert_hashes(
    filter: *mut SplitBlock,
    hashes: *const u64,
    n: usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `hashes`.
    unsafe { calls::insert_hashes(filter, hashes, n) }
}

/// Sets `*out` to whether the value with this hash may have been inserted.
///
/// # Safety
/// `filter` is a live handle that no thread writes to during the call; `out` points to a
/// writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_contains_hash(
    filter: *const SplitBlock,
    hash: u64,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `out`.
    unsafe { calls::contains_hash(filter, hash, out) }
}

/// Sets `*out` to whether the value whose plain encoding is the `len` bytes at `key` may have
/// been inserted. `key` may be null when `len` is 0.
///
/// # Safety
/// As `linebloom_split_block_contains_hash`; `key` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_contains(
    filter: *const SplitBlock,
    key: *const u8,
    len: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `filter`, `key` and `out`.
    unsafe { calls::contains(filter, key, len, out) }
}

/// Sets `out[i]` to whether the value with hash `hashes[i]` may have been inserted, for `i`
/// below `n` (the batched, prefetching lookup). The arrays must not overlap; both may be null
/// when `n` is 0.
///
/// # Safety
/// As `linebloom_split_block_contains_hash`; `hashes` points to `n` readable, 8-byte aligned
/// `uint64_t`, `out` to `n` writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_contains_hashes(
    filter: *const SplitBlock,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `filter`, `hashes` and `out`.
    unsafe { calls::contains_hashes(filter, hashes, n, out) }
}

/// Adds every value of `other` to `into` (the OR of the bitsets): afterwards `into` holds the
/// bits of a filter built from both filters' values. `INCOMPATIBLE` (and `into` unchanged)
/// when they differ in blocks. `into` and `other` may be the same filter (nothing changes).
///
/// # Safety
/// `into` is a live handle that no other thread uses during the call; `other` is a live handle
/// that no thread writes to during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_union(
    into: *mut SplitBlock,
    other: *const SplitBlock,
) -> Status {
    // SAFETY: the caller's promises for `into` and `other`.
    unsafe { calls::union(into, other) }
}

/// Sets `*bitset` to the filter's bitset as a Parquet file stores it (the bytes after the
/// thrift header: blocks of eight little-endian `uint32_t`) and `*len` to its size. The
/// pointer is valid until the filter is freed; the bytes change as values are inserted.
///
/// # Safety
/// As `linebloom_split_block_contains_hash`; `bitset` points to a writable `const uint8_t *`
/// and `len` to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_bitset(
    filter: *const SplitBlock,
    bitset: *mut *const u8,
    len: *mut usize,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter`, `bitset` and `len`.
        let (filter, bitset, len) = unsafe {
            (
                borrow(filter, "filter")?,
                slot(bitset, "bitset")?,
                slot(len, "len")?,
            )
        };
        let bytes = filter.0.bitset();
        bitset.write(bytes.as_ptr());
        len.write(bytes.len());
        Ok(())
    })
}

/// Sets `*size` to the bytes `linebloom_split_block_save` writes.
///
/// # Safety
/// As `linebloom_split_block_contains_hash`; `size` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_serialized_size(
    filter: *const SplitBlock,
    size: *mut usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `size`.
    unsafe { calls::serialized_size(filter, size) }
}

/// Writes the filter in linebloom's format (header, bitset, checksum) into the first
/// `linebloom_split_block_serialized_size` bytes of `buf`; `BUFFER_TOO_SMALL` when `len` is
/// less.
///
/// # Safety
/// As `linebloom_split_block_contains_hash`; `buf` points to `len` writable bytes outside the
/// filter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_save(
    filter: *const SplitBlock,
    buf: *mut u8,
    len: usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `buf`.
    unsafe { calls::save(filter, buf, len) }
}

/// Reads a filter saved by `linebloom_split_block_save` into a new owned filter (a copy, any
/// alignment, checksum checked). `CORRUPT` for anything else.
///
/// # Safety
/// `bytes` points to `len` readable bytes; `out` to a writable `linebloom_split_block *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_load(
    bytes: *const u8,
    len: usize,
    out: *mut *mut SplitBlock,
) -> Status {
    let load = || {
        // SAFETY: the caller's promise for `bytes`, read only during this call.
        let bytes = unsafe { slice(bytes, len, "bytes")? };
        Ok(SplitBlock(SplitBlockBloom::from_bytes(bytes)?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, load) }
}

/// Opens a zero-copy view over a Parquet bitset (the bytes after a filter's thrift header in a
/// Parquet file): a multiple of 32 bytes from 32 B to 128 MiB (`CORRUPT` otherwise), at any
/// alignment. The bytes must outlive the view and stay unchanged while it lives.
///
/// # Safety
/// `bytes` points to `len` readable bytes that stay valid and unchanged until the view is
/// freed; `out` points to a writable `linebloom_split_block_view *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_view_from_bitset(
    bytes: *const u8,
    len: usize,
    out: *mut *mut SplitBlockView,
) -> Status {
    let open = || {
        // SAFETY: the caller's promise: the bytes outlive the view and stay unchanged, so the
        // view may hold them for as long as it lives; it hands out no reference to them.
        let bytes: &'static [u8] = unsafe { slice(bytes, len, "bytes")? };
        Ok(SplitBlockView(SplitBlockBloomRef::from_bitset(bytes)?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, open) }
}

/// Frees a view (not the bytes it reads); null does nothing.
///
/// # Safety
/// `view` is null or a live view handle from this library, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_view_free(view: *mut SplitBlockView) {
    // SAFETY: the caller's promise for `view`.
    unsafe { calls::free(view) }
}

/// As `linebloom_split_block_contains_hash`, on a view.
///
/// # Safety
/// `view` is a live view handle whose bytes are still valid; `out` points to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_view_contains_hash(
    view: *const SplitBlockView,
    hash: u64,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `view` and `out`.
    unsafe { calls::contains_hash(view, hash, out) }
}

/// As `linebloom_split_block_contains`, on a view.
///
/// # Safety
/// As `linebloom_split_block_view_contains_hash`; `key` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_view_contains(
    view: *const SplitBlockView,
    key: *const u8,
    len: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `view`, `key` and `out`.
    unsafe { calls::contains(view, key, len, out) }
}

/// As `linebloom_split_block_contains_hashes`, on a view.
///
/// # Safety
/// As `linebloom_split_block_view_contains_hash`; `hashes` points to `n` readable, 8-byte
/// aligned `uint64_t`, `out` to `n` writable `bool` outside the view's bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_view_contains_hashes(
    view: *const SplitBlockView,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `view`, `hashes` and `out`.
    unsafe { calls::contains_hashes(view, hashes, n, out) }
}

/// Copies the view's bitset into a new owned filter (which then no longer needs the bytes).
///
/// # Safety
/// As `linebloom_split_block_view_contains_hash`; `out` points to a writable
/// `linebloom_split_block *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_split_block_view_to_owned(
    view: *const SplitBlockView,
    out: *mut *mut SplitBlock,
) -> Status {
    let copy = || {
        // SAFETY: the caller's promise for `view`.
        let view = unsafe { borrow(view, "view")? };
        Ok(SplitBlock(view.0.to_filter()?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, copy) }
}

/// Sets `*out` to the hash the split-block filters give the value whose plain encoding is the
/// `len` bytes at `key`: XXH64 with seed 0, as Parquet hashes (a BYTE_ARRAY's bytes without the
/// length prefix; INT32 / INT64 / FLOAT / DOUBLE as little-endian bytes). `key` may be null when
/// `len` is 0.
///
/// # Safety
/// `key` points to `len` readable bytes; `out` to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_hash_xxh64(key: *const u8, len: usize, out: *mut u64) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `key` and `out`.
        let (key, out) = unsafe { (slice(key, len, "key")?, slot(out, "out")?) };
        out.write(key.hash_xxh64());
        Ok(())
    })
}
