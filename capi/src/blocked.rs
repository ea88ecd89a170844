//! The blocked filter through the C ABI: `linebloom_blocked` (an owned [`BlockedBloom`]) and
//! `linebloom_blocked_view` (a [`BlockedBloomRef`] over the caller's bytes).
//!
//! This module owns the exported `linebloom_blocked_*` functions and their documentation,
//! which cbindgen copies into the header. The checks of pointers live in `args.rs`, the bodies
//! shared with the split-block filter in `calls.rs`.

use linebloom::blocked::Placement;
use linebloom::{BlockedBloom, BlockedBloomRef, Key};

use crate::args::{borrow, slice, slot};
use crate::calls::{self, Lookup, Owned};
use crate::status::{Failure, Status, guard};

/// An owned blocked Bloom filter: one 64-byte cache line per key. Create it with a
/// `linebloom_blocked_new_*` call, `linebloom_blocked_load` or
/// `linebloom_blocked_view_to_owned`; free it with `linebloom_blocked_free`.
pub struct Blocked(BlockedBloom);

/// A blocked filter read in place from bytes the caller owns (a zero-copy view). The bytes
/// must outlive the view and stay unchanged while it lives; free the view with
/// `linebloom_blocked_view_free` (which leaves the bytes alone).
pub struct BlockedView(BlockedBloomRef<'static>);

/// A blocked filter's shape: what `linebloom_blocked_view_from_raw_lines` needs beside the
/// lines to read them back.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockedInfo {
    /// The number of 64-byte lines.
    pub lines: usize,
    /// The hash seed keys are hashed with (`linebloom_hash_bytes`).
    pub seed: u64,
    /// Probes (bits set) per key, 1 to 16.
    pub hashes: u32,
    /// Where a key's bits go in its line: `LINEBLOOM_PLACEMENT_SHIFTED` (new filters) or
    /// `LINEBLOOM_PLACEMENT_SALTED` (filters written before it, and those asked for it).
    pub placement: u32,
}

/// `linebloom_blocked_info.placement` of the salted placement (hash scheme 2).
pub const LINEBLOOM_PLACEMENT_SALTED: u32 = 0;
/// `linebloom_blocked_info.placement` of the shifted placement (hash scheme 3), every new
/// filter's.
pub const LINEBLOOM_PLACEMENT_SHIFTED: u32 = 1;

/// The C code of a placement.
fn placement_code(placement: Placement) -> u32 {
    match placement {
        Placement::Salted => LINEBLOOM_PLACEMENT_SALTED,
        Placement::Shifted => LINEBLOOM_PLACEMENT_SHIFTED,
    }
}

/// The placement of a C code, or an error naming the codes.
fn placement_of(code: u32) -> linebloom::Result<Placement> {
    match code {
        LINEBLOOM_PLACEMENT_SALTED => Ok(Placement::Salted),
        LINEBLOOM_PLACEMENT_SHIFTED => Ok(Placement::Shifted),
        other => Err(linebloom::Error::InvalidParameter {
            name: "placement",
            value: other.to_string(),
            allowed: "LINEBLOOM_PLACEMENT_SALTED (0) or LINEBLOOM_PLACEMENT_SHIFTED (1)",
        }),
    }
}

/// The alignment a blocked view's bytes need: a line is 64-byte aligned, and so is the payload
/// of linebloom's format, 64 bytes into the buffer.
pub const LINEBLOOM_VIEW_ALIGN: usize = 64;

impl Lookup for Blocked {
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

impl Owned for Blocked {
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

impl Lookup for BlockedView {
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

/// Creates an empty blocked filter for `items` keys at a false-positive rate of about `fpr`
/// (in (0, 1)), with the optimal number of probes and the default seed.
///
/// # Safety
/// `out` points to a writable `linebloom_blocked *` (the pointer rules above).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_new_fpr(
    items: usize,
    fpr: f64,
    out: *mut *mut Blocked,
) -> Status {
    // SAFETY: the caller's promise for `out`.
    unsafe {
        calls::create(out, || {
            Ok(Blocked(BlockedBloom::with_fpr(items as u64, fpr)?))
        })
    }
}

/// Creates an empty blocked filter for `items` keys at `bits_per_key` bits each (1 to 1024),
/// with the optimal number of probes and the default seed.
///
/// # Safety
/// `out` points to a writable `linebloom_blocked *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_new_bits_per_key(
    items: usize,
    bits_per_key: f64,
    out: *mut *mut Blocked,
) -> Status {
    // SAFETY: the caller's promise for `out`.
    unsafe {
        calls::create(out, || {
            Ok(Blocked(BlockedBloom::with_bits_per_key(
                items as u64,
                bits_per_key,
            )?))
        })
    }
}

/// Creates an empty blocked filter for `items` keys at `bits_per_key` bits each, with `hashes`
/// probes per key (1 to 16; 0 picks the optimum) and the hash seed `seed`. Two filters can be
/// united when they agree in items, bits per key, probes and seed.
///
/// # Safety
/// `out` points to a writable `linebloom_blocked *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_new_with(
    items: usize,
    bits_per_key: f64,
    hashes: u32,
    seed: u64,
    out: *mut *mut Blocked,
) -> Status {
    let build = || {
        let builder = BlockedBloom::builder(items as u64)
            .bits_per_key(bits_per_key)
            .seed(seed);
        let builder = if hashes == 0 {
            builder
        } else {
            builder.k(hashes)
        };
        Ok(Blocked(builder.build()?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, build) }
}

/// Frees a filter; null does nothing.
///
/// # Safety
/// `filter` is null or a live handle from this library, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_free(filter: *mut Blocked) {
    // SAFETY: the caller's promise for `filter`.
    unsafe { calls::free(filter) }
}

/// Adds a key given by its 64-bit hash (`linebloom_hash_bytes` with the filter's seed, or any
/// well-mixed 64-bit hash used the same way for lookups).
///
/// # Safety
/// `filter` is a live handle that no other thread uses during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_insert_hash(filter: *mut Blocked, hash: u64) -> Status {
    // SAFETY: the caller's promise for `filter`.
    unsafe { calls::insert_hash(filter, hash) }
}

/// Adds the key of `len` bytes at `key` (hashed with xxh3-64 and the filter's seed). `key` may
/// be null when `len` is 0 (the empty key).
///
/// # Safety
/// `filter` as in `linebloom_blocked_insert_hash`; `key` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_insert(
    filter: *mut Blocked,
    key: *const u8,
    len: usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `key`.
    unsafe { calls::insert(filter, key, len) }
}

/// Adds `n` keys given by their hashes, a batch at a time (the same bits as `n` calls of
/// `linebloom_blocked_insert_hash`). `hashes` may be null when `n` is 0.
///
/// # Safety
/// `filter` as in `linebloom_blocked_insert_hash`; `hashes` points to `n` readable, 8-byte
/// aligned `uint64_t` outside the filter's lines.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_insert_hashes(
    filter: *mut Blocked,
    hashes: *const u64,
    n: usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `hashes`.
    unsafe { calls::insert_hashes(filter, hashes, n) }
}

/// Sets `*out` to whether the key with this hash may have been inserted (false: it certainly
/// was not).
///
/// # Safety
/// `filter` is a live handle that no thread writes to during the call; `out` points to a
/// writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_contains_hash(
    filter: *const Blocked,
    hash: u64,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `out`.
    unsafe { calls::contains_hash(filter, hash, out) }
}

/// Sets `*out` to whether the key of `len` bytes at `key` may have been inserted. `key` may be
/// null when `len` is 0.
///
/// # Safety
/// As `linebloom_blocked_contains_hash`; `key` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_contains(
    filter: *const Blocked,
    key: *const u8,
    len: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `filter`, `key` and `out`.
    unsafe { calls::contains(filter, key, len, out) }
}

/// Sets `out[i]` to whether the key with hash `hashes[i]` may have been inserted, for `i` below
/// `n`: the batched lookup, which prefetches lines ahead and is the fastest way to ask about
/// many keys. The arrays must not overlap (an `INVALID_ARGUMENT`); both may be null when `n`
/// is 0.
///
/// # Safety
/// `filter` as in `linebloom_blocked_contains_hash`; `hashes` points to `n` readable, 8-byte
/// aligned `uint64_t`, `out` to `n` writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_contains_hashes(
    filter: *const Blocked,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `filter`, `hashes` and `out`.
    unsafe { calls::contains_hashes(filter, hashes, n, out) }
}

/// Adds every key of `other` to `into`: afterwards `into` holds the bits of a filter built from
/// both filters' keys. `INCOMPATIBLE` (and `into` unchanged) when they differ in lines, probes
/// or seed. `into` and `other` may be the same filter (nothing changes).
///
/// # Safety
/// `into` is a live handle that no other thread uses during the call; `other` is a live handle
/// that no thread writes to during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_union(
    into: *mut Blocked,
    other: *const Blocked,
) -> Status {
    // SAFETY: the caller's promises for `into` and `other`.
    unsafe { calls::union(into, other) }
}

/// Writes the filter's shape to `*info`.
///
/// # Safety
/// As `linebloom_blocked_contains_hash`; `info` points to a writable `linebloom_blocked_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_get_info(
    filter: *const Blocked,
    info: *mut BlockedInfo,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter` and `info`.
        let (filter, info) = unsafe { (borrow(filter, "filter")?, slot(info, "info")?) };
        info.write(BlockedInfo {
            lines: filter.0.num_lines(),
            seed: filter.0.seed(),
            hashes: filter.0.k(),
            placement: placement_code(filter.0.placement()),
        });
        Ok(())
    })
}

/// Sets `*lines` to the filter's own lines (64 bytes each, 64-byte aligned) and `*len` to their
/// bytes: the bare lines an engine keeps in its own blocks and reads back with
/// `linebloom_blocked_view_from_raw_lines` and the filter's `linebloom_blocked_info`. The
/// words are in the machine's byte order (little-endian on the machines the views support).
/// The pointer is valid until the filter is freed; the bytes change as keys are inserted.
///
/// # Safety
/// As `linebloom_blocked_contains_hash`; `lines` points to a writable `const uint8_t *` and
/// `len` to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_lines(
    filter: *const Blocked,
    lines: *mut *const u8,
    len: *mut usize,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `filter`, `lines` and `len`.
        let (filter, lines, len) = unsafe {
            (
                borrow(filter, "filter")?,
                slot(lines, "lines")?,
                slot(len, "len")?,
            )
        };
        lines.write(filter.0.lines().as_ptr().cast());
        len.write(filter.0.size_bytes());
        Ok(())
    })
}

/// Sets `*size` to the bytes `linebloom_blocked_save` writes: a 64-byte header, the lines, an
/// 8-byte checksum.
///
/// # Safety
/// As `linebloom_blocked_contains_hash`; `size` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_serialized_size(
    filter: *const Blocked,
    size: *mut usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `size`.
    unsafe { calls::serialized_size(filter, size) }
}

/// Writes the filter in linebloom's format (the Rust crate's `to_bytes`) into the first
/// `linebloom_blocked_serialized_size` bytes of `buf`; `BUFFER_TOO_SMALL` when `len` is less.
/// To open the bytes in place later, put them at a 64-byte aligned address
/// (`LINEBLOOM_VIEW_ALIGN`).
///
/// # Safety
/// As `linebloom_blocked_contains_hash`; `buf` points to `len` writable bytes outside the
/// filter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_save(
    filter: *const Blocked,
    buf: *mut u8,
    len: usize,
) -> Status {
    // SAFETY: the caller's promises for `filter` and `buf`.
    unsafe { calls::save(filter, buf, len) }
}

/// Reads a filter saved by `linebloom_blocked_save` (or the Rust crate) into a new owned
/// filter: a copy, from bytes at any alignment, checksum checked. `CORRUPT` for anything else.
///
/// # Safety
/// `bytes` points to `len` readable bytes; `out` to a writable `linebloom_blocked *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_load(
    bytes: *const u8,
    len: usize,
    out: *mut *mut Blocked,
) -> Status {
    let load = || {
        // SAFETY: the caller's promise for `bytes`, read only during this call.
        let bytes = unsafe { slice(bytes, len, "bytes")? };
        Ok(Blocked(BlockedBloom::from_bytes(bytes)?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, load) }
}

/// An empty slice at a 64-byte aligned address: what a view is given for `len == 0`, so the
/// library's own message (no filter in 0 bytes) comes before any alignment complaint.
#[repr(C, align(64))]
struct AlignedEmpty([u8; 0]);
static ALIGNED_EMPTY: AlignedEmpty = AlignedEmpty([]);

/// The caller's bytes for a view, borrowed for as long as the view lives.
///
/// # Safety
/// `bytes` points to `len` readable bytes that stay valid and unchanged while the view that
/// borrows them lives.
unsafe fn view_bytes(bytes: *const u8, len: usize) -> Result<&'static [u8], Failure> {
    if len == 0 {
        return Ok(&ALIGNED_EMPTY.0);
    }
    // SAFETY: the caller's promise: the bytes outlive the view and stay unchanged, so the
    // view may hold them for as long as it lives; it hands out no reference to them.
    let bytes = unsafe { slice(bytes, len, "bytes")? };
    let address = bytes.as_ptr() as usize;
    if !address.is_multiple_of(LINEBLOOM_VIEW_ALIGN) {
        return Err(Failure::new(
            Status::Misaligned,
            format!(
                "a view's bytes must start on a 64-byte boundary (got address {address:#x}); \
                 linebloom_blocked_load reads them from any alignment into a copy"
            ),
        ));
    }
    Ok(bytes)
}

/// Opens a zero-copy view over a filter saved in linebloom's format, checking its header,
/// length and checksum (one pass over the bytes). The bytes must start at a 64-byte aligned
/// address (`MISALIGNED` otherwise) and must outlive the view and stay unchanged while it
/// lives: the view reads them in place and copies nothing.
///
/// # Safety
/// `bytes` points to `len` readable bytes that stay valid and unchanged until the view is
/// freed; `out` points to a writable `linebloom_blocked_view *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_from_bytes(
    bytes: *const u8,
    len: usize,
    out: *mut *mut BlockedView,
) -> Status {
    let open = || {
        // SAFETY: the caller's promise for `bytes`.
        let bytes = unsafe { view_bytes(bytes, len)? };
        Ok(BlockedView(BlockedBloomRef::from_bytes(bytes)?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, open) }
}

/// `linebloom_blocked_view_from_bytes` without the checksum: the header and exact length are
/// checked (constant time, whatever the filter's size), the payload's hash is not. For bytes
/// whose integrity the engine vouches for (its own block checksum); damaged bits give wrong
/// answers, never a read out of bounds.
///
/// # Safety
/// As `linebloom_blocked_view_from_bytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_from_bytes_unverified(
    bytes: *const u8,
    len: usize,
    out: *mut *mut BlockedView,
) -> Status {
    let open = || {
        // SAFETY: the caller's promise for `bytes`.
        let bytes = unsafe { view_bytes(bytes, len)? };
        Ok(BlockedView(BlockedBloomRef::from_bytes_unverified(bytes)?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, open) }
}

/// Opens a zero-copy view over bare lines (no linebloom header or checksum) that an engine
/// keeps in its own blocks: `len` a positive multiple of 64, the address 64-byte aligned,
/// `hashes`, `placement` and `seed` those of the filter the lines came from
/// (`linebloom_blocked_info`: lines read with another placement lose keys).
/// The bytes must outlive the view and stay unchanged while it lives.
///
/// # Safety
/// As `linebloom_blocked_view_from_bytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_from_raw_lines(
    bytes: *const u8,
    len: usize,
    hashes: u32,
    placement: u32,
    seed: u64,
    out: *mut *mut BlockedView,
) -> Status {
    let open = || {
        let placement = placement_of(placement)?;
        // SAFETY: the caller's promise for `bytes`.
        let bytes = unsafe { view_bytes(bytes, len)? };
        Ok(BlockedView(BlockedBloomRef::from_raw_bytes(
            bytes, hashes, placement, seed,
        )?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, open) }
}

/// Frees a view (not the bytes it reads); null does nothing.
///
/// # Safety
/// `view` is null or a live view handle from this library, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_free(view: *mut BlockedView) {
    // SAFETY: the caller's promise for `view`.
    unsafe { calls::free(view) }
}

/// As `linebloom_blocked_contains_hash`, on a view.
///
/// # Safety
/// `view` is a live view handle whose bytes are still valid; `out` points to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_contains_hash(
    view: *const BlockedView,
    hash: u64,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `view` and `out`.
    unsafe { calls::contains_hash(view, hash, out) }
}

/// As `linebloom_blocked_contains`, on a view.
///
/// # Safety
/// As `linebloom_blocked_view_contains_hash`; `key` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_contains(
    view: *const BlockedView,
    key: *const u8,
    len: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `view`, `key` and `out`.
    unsafe { calls::contains(view, key, len, out) }
}

/// As `linebloom_blocked_contains_hashes`, on a view.
///
/// # Safety
/// As `linebloom_blocked_view_contains_hash`; `hashes` points to `n` readable, 8-byte aligned
/// `uint64_t`, `out` to `n` writable `bool` outside the view's bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_contains_hashes(
    view: *const BlockedView,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) -> Status {
    // SAFETY: the caller's promises for `view`, `hashes` and `out`.
    unsafe { calls::contains_hashes(view, hashes, n, out) }
}

/// Writes the view's shape to `*info`.
///
/// # Safety
/// As `linebloom_blocked_view_contains_hash`; `info` points to a writable
/// `linebloom_blocked_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_get_info(
    view: *const BlockedView,
    info: *mut BlockedInfo,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `view` and `info`.
        let (view, info) = unsafe { (borrow(view, "view")?, slot(info, "info")?) };
        info.write(BlockedInfo {
            lines: view.0.num_lines(),
            seed: view.0.seed(),
            hashes: view.0.k(),
            placement: placement_code(view.0.placement()),
        });
        Ok(())
    })
}

/// Copies the view's filter into a new owned filter (which then no longer needs the bytes).
///
/// # Safety
/// As `linebloom_blocked_view_contains_hash`; `out` points to a writable `linebloom_blocked *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_blocked_view_to_owned(
    view: *const BlockedView,
    out: *mut *mut Blocked,
) -> Status {
    let copy = || {
        // SAFETY: the caller's promise for `view`.
        let view = unsafe { borrow(view, "view")? };
        Ok(Blocked(view.0.to_filter()?))
    };
    // SAFETY: the caller's promise for `out`.
    unsafe { calls::create(out, copy) }
}

/// Sets `*out` to the hash the blocked filters give the key of `len` bytes at `key` under
/// `seed` (xxh3-64; a filter's seed is in its `linebloom_blocked_info`): hash once, then use
/// the `*_hash` and `*_hashes` calls. `key` may be null when `len` is 0.
///
/// # Safety
/// `key` points to `len` readable bytes; `out` to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn linebloom_hash_bytes(
    key: *const u8,
    len: usize,
    seed: u64,
    out: *mut u64,
) -> Status {
    guard(|| {
        // SAFETY: the caller's promises for `key` and `out`.
        let (key, out) = unsafe { (slice(key, len, "key")?, slot(out, "out")?) };
        out.write(key.hash_with_seed(seed));
        Ok(())
    })
}
