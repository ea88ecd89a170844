//! The unit of storage: one 64-byte, 64-byte-aligned line of sixteen 32-bit words.
//!
//! The engine's storage ([`LineBuf`](super::storage::LineBuf)) holds lines; the filters give
//! them meaning (the blocked filter's probe masks, the split-block filter's two blocks per
//! line, the counting filter's counters, the cuckoo filter's buckets). The mask operations live
//! with the blocked filter (`blocked/simd.rs`); the type and its layout live here, re-exported
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
