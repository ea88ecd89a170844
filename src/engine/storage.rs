//! Where a filter's lines live: on the heap, or, for large filters on Linux, in an anonymous
//! mapping backed by transparent huge pages. The blocked, split-block, cuckoo and counting
//! filters all keep their memory in a [`LineBuf`]; `blocked` re-exports the public switches
//! ([`set_huge_pages`], [`huge_pages`], [`HUGE_PAGE_MIN_BYTES`]).
//!
//! A lookup in a filter far larger than the cache is one cache miss *and*, with 4 KiB pages, a
//! TLB miss (a 512 MiB filter spans 131 072 pages; the L2 TLB holds a few thousand). With 2 MiB
//! pages the same filter spans 256, so most page walks disappear. In the common
//! transparent-huge-page mode, `madvise`, the kernel uses huge pages only where asked, and only
//! for 2 MiB-aligned ranges it has not yet backed with small pages. A `Vec<Line>` cannot give
//! that: the allocator zeroes 64-byte-aligned blocks by writing them, so every page is backed
//! before any advice could be given. So filters of at least [`HUGE_PAGE_MIN_BYTES`] get a fresh
//! mapping (zeroed by the kernel, untouched), 2 MiB-aligned, advised `MADV_HUGEPAGE` before use.
//! Measured effect: README, "Performance". Without the feature `std` every filter stays on
//! the heap (allocated fallibly, zeroed).

use alloc::string::ToString;
use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

use super::line::Line;
use crate::error::{Error, Result};

/// Filters smaller than this stay on the heap (they fit in a few TLB entries anyway).
pub const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;

#[cfg(all(target_os = "linux", feature = "std"))]
const HUGE_PAGE: usize = 2 << 20;

/// The lines of one filter: a pointer and a length (so that every lookup reaches its line with
/// no branch on where the lines live), and the storage that owns them.
pub struct LineBuf {
    ptr: NonNull<Line>,
    len: usize,
    _storage: Storage,
}

/// Who owns a [`LineBuf`]'s lines; never accessed after construction, only dropped.
enum Storage {
    Heap(#[allow(dead_code)] Vec<Line>),
    #[cfg(all(target_os = "linux", feature = "std"))]
    Mapped(#[allow(dead_code)] memmap2::MmapMut),
}

// SAFETY: a `LineBuf` owns its lines exclusively, as the `Vec` or mapping it holds does (both
// `Send` and `Sync`); shared access gives out `&[Line]` and mutation needs `&mut LineBuf`, so
// the usual borrow rules apply across threads exactly as for a `Vec<Line>`.
unsafe impl Send for LineBuf {}
// SAFETY: see `Send`.
unsafe impl Sync for LineBuf {}

/// Whether large filters ask for huge pages (the default); see [`set_huge_pages`].
static HUGE_PAGES: AtomicBool = AtomicBool::new(true);

/// Whether filters of at least [`HUGE_PAGE_MIN_BYTES`] made from now on ask the kernel for
/// transparent huge pages (on by default; Linux with the feature `std` only). Off, every filter
/// stays on the heap: for a process that measures the difference or must not use huge pages.
/// Filters already made keep their memory. The `linebloom` command turns it off when
/// `LINEBLOOM_NO_HUGE_PAGES` is set.
///
/// ```
/// linebloom::blocked::set_huge_pages(false);
/// assert!(!linebloom::blocked::huge_pages());
/// let filter = linebloom::BlockedBloom::with_lines(1 << 18, 7, 0)?; // 16 MiB
/// assert_eq!(filter.huge_page_bytes().unwrap_or(0), 0);
/// linebloom::blocked::set_huge_pages(true);
/// # Ok::<(), linebloom::Error>(())
/// ```
pub fn set_huge_pages(enabled: bool) {
    HUGE_PAGES.store(enabled, Ordering::Relaxed);
}

/// Whether large filters ask for huge pages ([`set_huge_pages`]).
pub fn huge_pages() -> bool {
    HUGE_PAGES.load(Ordering::Relaxed)
}

/// Allocates `n` zeroed lines without writing them (fresh pages from the allocator or the
/// kernel; huge pages for large runs, see [`LineBuf::zeroed`]), or an error when the memory
/// cannot be had or `n` is 0: the storage of every filter kind built on lines.
pub(crate) fn zeroed_lines(n: usize) -> Result<LineBuf> {
    check_line_count(n)?;
    LineBuf::zeroed(n)
}

/// An error for a run of no lines (no filter has none).
pub(crate) fn check_line_count(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::InvalidParameter {
            name: "lines",
            value: "0".into(),
            allowed: "at least 1",
        });
    }
    Ok(())
}

impl LineBuf {
    /// `n` zeroed lines, on huge pages where that applies ([`set_huge_pages`]).
    pub(crate) fn zeroed(n: usize) -> Result<Self> {
        let too_large = || Error::InvalidParameter {
            name: "lines",
            value: n.to_string(),
            allowed: "a number whose 64-byte lines fit in memory",
        };
        let bytes = n
            .checked_mul(core::mem::size_of::<Line>())
            .ok_or_else(too_large)?;
        #[cfg(all(target_os = "linux", feature = "std"))]
        if bytes >= HUGE_PAGE_MIN_BYTES
            && huge_pages()
            && let Ok(buf) = Self::mapped(n, bytes)
        {
            return Ok(buf);
        }
        let _ = bytes;
        bytemuck::allocation::try_zeroed_vec::<Line>(n)
            .map(LineBuf::from)
            .map_err(|_| too_large())
    }

    #[cfg(all(target_os = "linux", feature = "std"))]
    fn mapped(lines: usize, bytes: usize) -> std::io::Result<Self> {
        let mut map = memmap2::MmapMut::map_anon(bytes + HUGE_PAGE)?;
        let start = map.as_ptr() as usize;
        let offset = start.next_multiple_of(HUGE_PAGE) - start;
        // Advice is best effort: without it the filter still works, on small pages.
        let _ = map.advise_range(memmap2::Advice::HugePage, offset, bytes);
        // The mapping is page-aligned and `offset` a multiple of 2 MiB, so the cast's alignment
        // check cannot fail; `offset + bytes` is within the mapping by its size.
        let ptr = NonNull::from(bytemuck::cast_slice_mut::<u8, Line>(
            &mut map[offset..offset + bytes],
        ))
        .cast();
        Ok(LineBuf {
            ptr,
            len: lines,
            _storage: Storage::Mapped(map),
        })
    }

    /// Whether the lines live in a huge-page-advised mapping.
    pub(crate) fn is_mapped(&self) -> bool {
        !matches!(self._storage, Storage::Heap(_))
    }

    /// Without `std` nothing is read: `None`.
    #[cfg(not(feature = "std"))]
    pub(crate) fn huge_page_bytes(&self) -> Option<usize> {
        None
    }

    /// Bytes of the lines the kernel backs with huge pages right now, from `/proc/self/smaps`
    /// (`AnonHugePages` of the mappings that overlap the lines); `None` where that cannot be read.
    #[cfg(feature = "std")]
    pub(crate) fn huge_page_bytes(&self) -> Option<usize> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let start = self.as_ptr() as usize;
        let end = start + core::mem::size_of_val(&**self);
        let mut total = 0;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_once(' ').and_then(|(r, _)| r.split_once('-'));
            if let Some((lo, hi)) = range
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = lo < end && hi > start;
                continue;
            }
            if let (true, Some(kb)) = (inside, line.strip_prefix("AnonHugePages:")) {
                let kb: usize = kb.trim().trim_end_matches("kB").trim().parse().ok()?;
                total += kb * 1024;
            }
        }
        Some(total.min(end - start))
    }
}

impl From<Vec<Line>> for LineBuf {
    fn from(mut v: Vec<Line>) -> Self {
        LineBuf {
            ptr: NonNull::from(v.as_mut_slice()).cast(),
            len: v.len(),
            // Moving the `Vec` does not move its heap buffer, which `ptr` points into.
            _storage: Storage::Heap(v),
        }
    }
}

impl FromIterator<Line> for LineBuf {
    fn from_iter<I: IntoIterator<Item = Line>>(iter: I) -> Self {
        LineBuf::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a LineBuf {
    type Item = &'a Line;
    type IntoIter = core::slice::Iter<'a, Line>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Deref for LineBuf {
    type Target = [Line];
    // Inlined, and free of branches: every lookup goes through here. An out-of-line call (what
    // the compiler chose across codegen units) doubled the cost of an in-cache lookup, and a
    // match on where the lines live kept the compiler from hoisting it out of lookup loops.
    #[inline(always)]
    fn deref(&self) -> &[Line] {
        // SAFETY: `ptr` and `len` describe the lines `_storage` owns (set together at
        // construction and never changed), which live, initialised and unmoved, as long as
        // `self`; `&self` rules out a concurrent `&mut`.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for LineBuf {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Line] {
        // SAFETY: as in `deref`; `&mut self` makes this the only access to the lines.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Clone for LineBuf {
    fn clone(&self) -> Self {
        match LineBuf::zeroed(self.len()) {
            Ok(mut copy) => {
                copy.copy_from_slice(self);
                copy
            }
            // Same size as a buffer that exists; if even that fails, the heap copy below
            // reports it the way `Vec` does.
            Err(_) => LineBuf::from(self.to_vec()),
        }
    }
}

impl PartialEq for LineBuf {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for LineBuf {}

impl core::fmt::Debug for LineBuf {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} lines{}",
            self.len(),
            if self.is_mapped() {
                " (huge-page mapping)"
            } else {
                ""
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_and_heap_buffers_behave_alike() {
        let n = HUGE_PAGE_MIN_BYTES / 64 + 3;
        let mut big = LineBuf::zeroed(n).unwrap();
        let mut small = LineBuf::from(vec![Line::ZERO; n]);
        assert_eq!(big.len(), n);
        assert!(big.iter().all(|l| *l == Line::ZERO));
        assert_eq!(big.as_ptr() as usize % 64, 0);
        big[n - 1].0[3] = 7;
        small[n - 1].0[3] = 7;
        assert_eq!(big, small);
        let copy = big.clone();
        assert_eq!(copy, big);
        assert_eq!(copy, small);
        assert!(big.huge_page_bytes().is_some() || cfg!(not(target_os = "linux")));
    }
}
