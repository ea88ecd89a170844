//! The module's global allocator: Redis's own heap, so filters count in `INFO memory`'s
//! `used_memory` and in `maxmemory` like any key, with the 64-byte alignment lines need.
//!
//! This module owns [`RedisHeap`] and nothing else. The binding crate's `RedisAlloc` rounds
//! each size up to the alignment and trusts jemalloc's size classes to align the block; a
//! server built with libc malloc gives no such promise (zmalloc may even put an 8-byte size
//! prefix in front). So blocks aligned to more than 8 bytes are over-allocated by their
//! alignment here, and the start of the underlying block is kept in the 8 bytes just below the
//! pointer handed out.
//!
//! Allocation uses the `Try` variants of the API where the server has them (`TryAlloc` since
//! Redis 7.0.8, `TryCalloc` and `TryRealloc` later): an allocation the server cannot make is
//! then an error reply, not its out-of-memory abort. Filters are allocated zeroed through
//! `TryCalloc` or `Calloc`, whose large blocks are fresh pages, so untouched pages stay
//! unbacked.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use redis_module::raw;

/// What every build of the server's allocator guarantees (a libc build with a size prefix
/// gives 8); larger alignments take the over-allocating path.
const MALLOC_ALIGN: usize = 8;

/// Redis's heap, behind Rust's allocator interface.
pub struct RedisHeap;

/// Writes a message without allocating and aborts: the allocator cannot work before the
/// server hands the module its API (it always does before any module code runs).
fn no_api() -> ! {
    const MESSAGE: &[u8] = b"linebloom: the Redis allocator API is not available\n";
    // SAFETY: writes a static buffer of the given length to the standard error descriptor.
    unsafe {
        let _ = write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
    }
    std::process::abort()
}

unsafe extern "C" {
    fn write(fd: i32, buf: *const c_void, count: usize) -> isize;
}

/// `size` bytes from the server, zeroed or not; null when the memory cannot be had.
///
/// # Safety
/// `size` is not zero.
unsafe fn server_alloc(size: usize, zeroed: bool) -> *mut u8 {
    // SAFETY: the server writes these function pointers once, when the module loads, before
    // it runs any module code; they are only read afterwards.
    let (try_calloc, try_alloc, calloc, alloc) = unsafe {
        (
            raw::RedisModule_TryCalloc,
            raw::RedisModule_TryAlloc,
            raw::RedisModule_Calloc,
            raw::RedisModule_Alloc,
        )
    };
    // SAFETY: each function is the server's allocator, called with a non-zero size.
    unsafe {
        match (zeroed, try_calloc, try_alloc) {
            (true, Some(f), _) => f(1, size).cast(),
            (false, _, Some(f)) => f(size).cast(),
            // Without `TryCalloc`, `Calloc`: its large blocks are fresh, untouched pages, where
            // `TryAlloc` and zeroing by hand would back every page of a filter at once. It
            // aborts the server when memory runs out, as every allocation there does; filters
            // larger than the machine are refused before they get here (`chain.rs`).
            (true, None, _) => calloc.unwrap_or_else(|| no_api())(1, size).cast(),
            (false, _, None) => alloc.unwrap_or_else(|| no_api())(size).cast(),
        }
    }
}

/// Returns a block `server_alloc` gave.
///
/// # Safety
/// `ptr` came from `server_alloc` and is freed once.
unsafe fn server_free(ptr: *mut u8) {
    // SAFETY: as in `server_alloc`; `ptr` is a live block of the server's heap.
    unsafe {
        let free = raw::RedisModule_Free.unwrap_or_else(|| no_api());
        free(ptr.cast());
    }
}

impl RedisHeap {
    /// # Safety
    /// `layout` has a non-zero size (as `GlobalAlloc` requires of its callers).
    unsafe fn allocate(&self, layout: Layout, zeroed: bool) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: the size is not zero.
            return unsafe { server_alloc(layout.size(), zeroed) };
        }
        // Room for the alignment gap and the 8-byte record of the block's start, which
        // `align >= 16` always leaves below the aligned pointer.
        let Some(total) = layout.size().checked_add(layout.align()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `total` is not zero.
        let base = unsafe { server_alloc(total, zeroed) };
        if base.is_null() {
            return base;
        }
        let start = base as usize;
        let aligned = (start + MALLOC_ALIGN).next_multiple_of(layout.align());
        // SAFETY: `start` is 8-aligned, so `aligned - start` is at least 8 and at most
        // `align`: `aligned - 8 .. aligned + size` lies inside the `size + align` bytes of the
        // block, and `aligned - 8` is 8-aligned for the pointer written there.
        unsafe {
            let user = base.add(aligned - start);
            user.cast::<*mut u8>().sub(1).write(base);
            user
        }
    }
}

// SAFETY: every block comes from the server's allocator, large enough and aligned as the
// layout asks (see `allocate`), and is returned to it by `dealloc` with the same layout, which
// finds the block's start the way `allocate` recorded it.
unsafe impl GlobalAlloc for RedisHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller gives a non-zero size.
        unsafe { self.allocate(layout, false) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { self.allocate(layout, true) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `allocate` with this layout: for a large alignment, the
        // block's start is the pointer just below it.
        unsafe {
            let base = if layout.align() <= MALLOC_ALIGN {
                ptr
            } else {
                ptr.cast::<*mut u8>().sub(1).read()
            };
            server_free(base);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `server_alloc`.
        let (try_realloc, realloc) =
            unsafe { (raw::RedisModule_TryRealloc, raw::RedisModule_Realloc) };
        if layout.align() <= MALLOC_ALIGN
            && let Some(f) = try_realloc.or(realloc)
        {
            // SAFETY: `ptr` is a block of the server's heap (small alignments are handed out
            // unchanged) and `new_size` is not zero.
            return unsafe { f(ptr.cast(), new_size).cast() };
        }
        // SAFETY: the default: a new block, the old contents copied, the old block freed.
        unsafe {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let new = self.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}
