//! The unit of storage: one 64-byte, 64-byte-aligned line of sixteen 32-bit words, and the
//! line of a hash (multiply-shift; [`line_for`], and [`Run`] for loops over many keys).
//!
//! The engine's storage ([`LineBuf`](super::storage::LineBuf)) holds lines; the filters give
//! them meaning (the blocked filter's probe masks, the split-block filter's two blocks per
//! line, the counting filter's counters, the cuckoo filter's buckets). The blocked filter's
//! mask operations are `mask.rs` and `arch.rs`; the type and its layout live here, re-exported
//! as `linebloom::blocked::Line`.

use bytemuck::{Pod, Zeroable};

/// One cache line of the filter: 512 bits, 64-byte aligned, so a key's probes touch exactly one
/// line. The alignment is part of the type, so a `&[Line]` is always a run of whole cache lines.
/// A line is sixteen 32-bit words, stored little-endian in the serialized format; an engine
/// that keeps lines in its own blocks casts its aligned bytes to `&[Line]` (`Line` is
/// `bytemuck::Pod`) or builds them with [`Line::from_words`].
///
/// ```
/// use linebloom::blocked::Line;
///
/// let line = Line::from_words([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x8000_0000]);
/// assert_eq!(line.count_ones(), 2);
/// assert_eq!(line.words()[15], 0x8000_0000);
/// assert_eq!(std::mem::align_of::<Line>(), 64);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(64))]
pub struct Line(pub(crate) [u32; 16]);

impl core::fmt::Debug for Line {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Line(")?;
        for w in self.0.iter().rev() {
            write!(f, "{w:08x}")?;
        }
        write!(f, ")")
    }
}

impl Line {
    /// An empty line.
    pub const ZERO: Line = Line([0; 16]);

    /// The line of these sixteen words (word `i` holds bits `32 i ..= 32 i + 31`).
    pub const fn from_words(words: [u32; 16]) -> Line {
        Line(words)
    }

    /// The line's sixteen words.
    pub const fn words(&self) -> &[u32; 16] {
        &self.0
    }

    /// Number of set bits.
    #[inline]
    pub fn count_ones(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
}

/// The line a hash belongs to, of `lines`: multiply-shift on the high bits (`hash::reduce`:
/// no division, any count, below `lines` for every hash).
#[inline(always)]
pub(crate) fn line_index(hash: u64, lines: usize) -> usize {
    crate::hash::reduce(hash, lines)
}

static EMPTY_LINE: Line = Line::ZERO;

/// The line of `lines` that `hash` belongs to, with no per-key bounds check: lookups are
/// bound by instructions per key in cache, and the check is two of about twenty (dropping it,
/// with the shorter mask of `mask.rs`, speeds in-cache misses: `docs/performance.md`, Levers
/// tried). No filter has zero lines; an empty run gets an empty line, never a read out of
/// bounds. Inserts use [`line_for_mut`], the same without the check.
#[inline(always)]
pub(crate) fn line_for(lines: &[Line], hash: u64) -> &Line {
    let i = line_index(hash, lines.len());
    if lines.is_empty() {
        return &EMPTY_LINE;
    }
    // SAFETY: `line_index(hash, n)` is `(hash * n) >> 64` on 128 bits, which is below `n`
    // for every 64-bit `hash` (`hash < 2^64`), and `n = lines.len() >= 1` here.
    unsafe { lines.get_unchecked(i) }
}

/// A run of at least one line: [`Run::line`] indexes it with no check at all, where
/// [`line_for`] keeps a test of the run's length per key (three instructions in a loop the
/// compiler does not unswitch). Loops over many keys make one at their start.
#[derive(Clone, Copy)]
pub(crate) struct Run<'a>(&'a [Line]);

impl<'a> Run<'a> {
    /// The run, or `None` for no lines.
    #[inline(always)]
    pub(crate) fn new(lines: &'a [Line]) -> Option<Self> {
        (!lines.is_empty()).then_some(Run(lines))
    }

    /// The bytes of the run.
    #[inline(always)]
    pub(crate) fn bytes(self) -> usize {
        core::mem::size_of_val(self.0)
    }

    /// The line `hash` belongs to.
    #[inline(always)]
    pub(crate) fn line(self, hash: u64) -> &'a Line {
        // SAFETY: `line_index(hash, n) < n` for every hash, and `n >= 1` (`new`).
        unsafe { self.0.get_unchecked(line_index(hash, self.0.len())) }
    }
}

/// [`line_for`] for writing: `None` only for an empty run (no filter has zero lines; the check
/// is on the run's length, which loops hoist). Together with [`Line::set`] writing two 256-bit
/// halves, it makes one-by-one inserts in cache faster (`docs/performance.md`, Levers tried).
/// The two go together: with one 512-bit read-modify-write per key instead, the unchecked index
/// makes that loop much *slower*, since the compiler then unrolls it 4x, which hurts the
/// 512-bit form and not the 256-bit halves.
#[inline(always)]
pub(crate) fn line_for_mut(lines: &mut [Line], hash: u64) -> Option<&mut Line> {
    let i = line_index(hash, lines.len());
    if lines.is_empty() {
        return None;
    }
    // SAFETY: as in `line_for`: `i < lines.len()` for every hash when the run is not empty.
    Some(unsafe { lines.get_unchecked_mut(i) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_for_stays_in_bounds_for_extreme_hashes() {
        let lines: Vec<Line> = (0..7u32).map(|i| Line([i; 16])).collect();
        for n in 1..=lines.len() {
            for h in [0, 1, u64::MAX / n as u64, u64::MAX - 1, u64::MAX] {
                let line = line_for(&lines[..n], h);
                assert_eq!(line, &lines[line_index(h, n)], "n={n} h={h}");
            }
        }
        assert_eq!(line_for(&lines[..1], u64::MAX), &lines[0]);
        assert_eq!(line_for(&lines[6..], u64::MAX), &lines[6]);
        assert_eq!(line_for(&[], u64::MAX), &Line::ZERO);
    }

    #[test]
    fn line_for_mut_is_line_for_and_none_for_an_empty_run() {
        let mut lines: Vec<Line> = (0..7u32).map(|i| Line([i; 16])).collect();
        for n in 1..=lines.len() {
            for h in [0, 1, u64::MAX / n as u64, u64::MAX - 1, u64::MAX] {
                let want = lines[line_index(h, n)];
                assert_eq!(line_for_mut(&mut lines[..n], h), Some(&mut want.clone()));
            }
        }
        assert!(line_for_mut(&mut [], 0).is_none());
    }
}
