//! Filling a large filter piece by piece through the partitioned insert.
//!
//! A storage engine often gets a file's keys in pieces (a memtable flushed block by block) and
//! inserts each piece as it comes. Each call of [`BlockedBloom::par_insert_hashes`] then holds
//! too few keys per line to partition (1 Mi keys into a 119 MiB filter is half a key per
//! line), so its tasks each scan the whole piece and insert into random lines, one memory
//! round trip per key. [`ParFill`] sorts each piece into kept [`BuildBuffers`] as it comes
//! (each thread its share) and inserts them once they hold a chunk's worth (up to 16 keys per
//! line, sized by the number of keys the fill is told to expect), so the lines are read from
//! memory once per chunk, as in a whole-batch build; what is left goes in when the fill ends.
//! The filter is borrowed for the whole fill, so nothing can look a key up before it is in;
//! dropping the fill inserts what it holds, so no key is lost whichever way it ends.
//!
//! Pushed in pieces, the fill runs about as fast as a partitioned build from the whole batch,
//! well ahead of input order on one thread (`docs/performance.md`, Building a filter).

use super::BlockedBloom;
use super::partitioned::{ByLine, insert_held};
use crate::engine::partition::{self, BuildBuffers};

/// A filter being filled piece by piece: see [`BlockedBloom::par_fill`].
///
/// ```
/// use linebloom::{BlockedBloom, BuildBuffers};
///
/// let mut filter = BlockedBloom::with_fpr(1_000, 0.01)?;
/// let mut buffers = BuildBuffers::new();
/// let mut fill = filter.par_fill(1_000, &mut buffers);
/// fill.push(&[1, 2, 3]);
/// fill.push(&[4, 5]);
/// fill.finish();
/// assert!([1, 2, 3, 4, 5].iter().all(|&h| filter.contains_hash(h)));
/// # Ok::<(), linebloom::Error>(())
/// ```
#[must_use = "a fill inserts nothing until it is given pieces"]
pub struct ParFill<'a> {
    filter: &'a mut BlockedBloom,
    buffers: &'a mut BuildBuffers,
    /// The range size, as a shift, where pieces are partitioned; `None` where each piece goes
    /// straight to [`BlockedBloom::par_insert_hashes_with`].
    shift: Option<u32>,
    /// Hashes each partition takes before they are inserted.
    share: usize,
    /// Hashes the fullest partition holds.
    held: usize,
}

impl BlockedBloom {
    /// Starts filling this filter with about `keys` keys, piece by piece on rayon's threads,
    /// sorting the pieces into `buffers`: each [`ParFill::push`] sorts its piece by range of
    /// lines, and the filter takes the keys once the buffers hold a chunk's worth, and the
    /// rest when the fill ends ([`ParFill::finish`], or when it is dropped). Bit-identical to
    /// inserting the keys one at a time, however many keys come. `keys` sizes the chunks as
    /// for a whole batch of that many (at most 16 per line, all of one length, never under 8
    /// per line): each chunk costs a pass over the filter's lines, so a fill that brings more
    /// keys than said takes more chunks, and a short last chunk costs as much as a full one.
    /// A wrong count costs time, never a key.
    ///
    /// For a filter of at least 32 MiB on 2 threads or more (up to 512 MiB on fewer than 4),
    /// as [`par_insert_hashes_with`](Self::par_insert_hashes_with) partitions a whole batch;
    /// on others, each piece goes straight to `par_insert_hashes_with`. The buffers grow to
    /// up to twice the filter's size. Meant for a fill that brings many keys per line (a
    /// filter sized for its keys at 10 bits per key gets about 51): the keys go in when the
    /// buffers are full or the fill ends, each time reading every line of the filter once.
    ///
    /// ```
    /// use linebloom::{BlockedBloom, BuildBuffers};
    ///
    /// let hashes: Vec<u64> = (0..10_000).map(linebloom::hash::mix64).collect();
    /// let mut filter = BlockedBloom::with_fpr(hashes.len() as u64, 0.01)?;
    /// let mut buffers = BuildBuffers::new();
    /// let mut fill = filter.par_fill(hashes.len(), &mut buffers);
    /// for piece in hashes.chunks(1000) {
    ///     fill.push(piece);
    /// }
    /// fill.finish();
    /// assert!(hashes.iter().all(|&h| filter.contains_hash(h)));
    /// # Ok::<(), linebloom::Error>(())
    /// ```
    pub fn par_fill<'a>(&'a mut self, keys: usize, buffers: &'a mut BuildBuffers) -> ParFill<'a> {
        let lines = self.lines.len();
        let threads = crate::par::current_num_threads();
        let shift = partition::fills(lines, threads).then(|| partition::range_shift(lines));
        ParFill::new(self, buffers, keys, threads, shift)
    }
}

impl<'a> ParFill<'a> {
    /// A fill of about `keys` keys into `filter`, partitioned in ranges of `1 << shift` lines
    /// over `threads` threads (`None`: pieces go straight in). Where the buffers cannot be
    /// had, pieces go straight in.
    fn new(
        filter: &'a mut BlockedBloom,
        buffers: &'a mut BuildBuffers,
        keys: usize,
        threads: usize,
        shift: Option<u32>,
    ) -> Self {
        let mut fill = ParFill {
            filter,
            buffers,
            shift: None,
            share: 0,
            held: 0,
        };
        if let Some(shift) = shift {
            let total = fill.filter.lines.len();
            // The chunks a whole batch of `keys` would go in, all of one length; never under
            // half the longest, so a count far too low costs some passes over the filter, not
            // one per handful of keys.
            let most = partition::chunk_keys(total);
            let chunk = partition::chunk_len(keys, total).max(most / 2).max(1);
            if let Some(share) = fill.buffers.prepare(threads, total, shift, chunk) {
                fill.shift = Some(shift);
                fill.share = share;
            }
        }
        fill
    }

    /// Adds `hashes` (pre-hashed keys) to the fill. They are in the filter once the fill
    /// ends.
    pub fn push(&mut self, hashes: &[u64]) {
        let Some(shift) = self.shift else {
            self.filter.par_insert_hashes_with(hashes, self.buffers);
            return;
        };
        let total = self.filter.lines.len();
        let parts = self.buffers.partitions();
        let mut rest = hashes;
        while !rest.is_empty() {
            // Each partition takes at most `piece.len().div_ceil(parts)`, which fits its room.
            let room = (self.share - self.held).saturating_mul(parts);
            let (piece, tail) = rest.split_at(rest.len().min(room));
            self.buffers.fill::<ByLine>(piece, total, shift);
            self.held += piece.len().div_ceil(parts);
            rest = tail;
            if self.held == self.share {
                self.insert_held(shift);
            }
        }
    }

    /// Ends the fill: every key pushed is in the filter. (Dropping the fill does the same.)
    pub fn finish(self) {}

    /// Inserts what the buffers hold into the filter.
    fn insert_held(&mut self, shift: u32) {
        let k = self.filter.probes;
        insert_held(&mut self.filter.lines, self.buffers, shift, k);
        self.held = 0;
    }
}

impl Drop for ParFill<'_> {
    fn drop(&mut self) {
        if let Some(shift) = self.shift
            && self.held > 0
        {
            self.insert_held(shift);
        }
    }
}

impl core::fmt::Debug for ParFill<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ParFill")
            .field("partitioned", &self.shift.is_some())
            .field("share", &self.share)
            .field("held", &self.held)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    /// Piece by piece, in pieces of every size (none, one key, more than a partition
    /// holds), on 1 to 5 partitions and both range sizes, with one set of buffers throughout:
    /// exactly the bits of inserting the keys one at a time, whether the fill ends by
    /// `finish` or by being dropped.
    #[test]
    fn a_fill_sets_exactly_the_bits_of_one_by_one_inserts() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut buffers = BuildBuffers::new();
        for lines in [1, 100, 4097, 3 * 4096 + 5] {
            // More than a chunk (16 keys per line) for the smaller filters, so the buffers
            // fill up and are inserted mid-fill.
            let hashes: Vec<u64> = (0..60_000).map(|i| mix64(i ^ lines as u64)).collect();
            let mut want = BlockedBloom::with_lines(lines, 7, 0).unwrap();
            hashes.iter().for_each(|&h| want.insert_hash(h));
            for threads in [1, 2, 3, 5] {
                for shift in [partition::range_shift(lines), 13] {
                    for sizes in [&[0usize, 1, 7, 1000][..], &[50_000], &[333]] {
                        let mut got = BlockedBloom::with_lines(lines, 7, 0).unwrap();
                        // Told the right count, or far too few (chunks of 8 keys per line).
                        let expect = if sizes.len() == 1 { 60_000 } else { 10 };
                        let shift = Some(shift);
                        let mut fill = ParFill::new(&mut got, &mut buffers, expect, threads, shift);
                        assert!(fill.shift.is_some());
                        let mut rest = &hashes[..];
                        for &size in sizes.iter().cycle() {
                            if rest.is_empty() {
                                break;
                            }
                            let (piece, tail) = rest.split_at(size.min(rest.len()));
                            pool.install(|| fill.push(piece));
                            rest = tail;
                        }
                        if threads % 2 == 0 {
                            fill.finish();
                        } else {
                            drop(fill);
                        }
                        let how = format!("{lines} lines, {threads} threads, shift {shift:?}");
                        assert!(got == want, "{how}, pieces {sizes:?}");
                    }
                }
            }
        }
    }

    /// A filter too small to partition takes each piece as it comes.
    #[test]
    fn small_filters_take_each_piece_at_once() {
        let hashes: Vec<u64> = (0..5000).map(mix64).collect();
        let mut want = BlockedBloom::with_fpr(hashes.len() as u64, 0.01).unwrap();
        want.insert_hashes(&hashes);
        let mut got = BlockedBloom::with_fpr(hashes.len() as u64, 0.01).unwrap();
        let mut buffers = BuildBuffers::new();
        let mut fill = got.par_fill(hashes.len(), &mut buffers);
        assert!(fill.shift.is_none());
        fill.push(&hashes[..10]);
        assert!(format!("{fill:?}").contains("partitioned: false"));
        fill.push(&hashes[10..]);
        fill.finish();
        assert!(got == want);
        assert_eq!(buffers.size_bytes(), 0);
    }
}
