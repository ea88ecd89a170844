//! What the report measures: a [`Contender`] (one of the crate's filters or a peer crate from
//! crates.io) behind one small trait, [`Subject`].
//!
//! The trait works on whole batches of pre-hashed keys (`insert_each`, `count_each`, ...), with
//! the per-key loop inside each implementation. The loop is then compiled for the concrete type,
//! its calls inlined, so the figures measure the filter and not a virtual call per key; the one
//! dynamic call per batch costs nothing measurable. This module owns the trait, the names and
//! the implementations for the crate's own filters; `peers.rs` adapts the peer crates and
//! `lineup.rs` builds an empty filter of any contender.

use linebloom::BlockedBloom;
use linebloom::classic::ClassicBloom;
use linebloom::cuckoo::CuckooFilter;
use linebloom::error::{Error, Result};
use linebloom::filter::FilterKind;
use linebloom::format::AnyFilter;
use linebloom::{CountingBlockedBloom, ScalableBlockedBloom, SplitBlockBloom};

/// A filter the report can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Contender {
    /// One of this crate's filters.
    Ours(FilterKind),
    /// A filter from another crate.
    Peer(Peer),
}

/// The peer crates the report and `benches/peers.rs` compare against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Peer {
    /// `fastbloom` 0.17 `BloomFilter`: classic layout, pre-hashed `insert_hash`/`contains_hash`.
    FastBloom,
    /// `sbbf-rs` 0.2: Parquet's split-block Bloom filter (256-bit blocks, 8 bits per key).
    SbbfRs,
    /// `bloomfilter` 3: classic layout, hashes every key with SipHash-1-3 (no pre-hashed path).
    BloomFilter,
    /// `cuckoofilter` 0.5: 8-bit fingerprints, 4-slot buckets, power-of-two bucket count.
    CuckooFilter,
    /// `xorf` 0.13 `BinaryFuse8`: a static filter built once from all keys.
    BinaryFuse8,
    /// `growable-bloom-filter` 2.1 `GrowableBloom`: a scalable Bloom filter (growth 2,
    /// tightening 0.85), the peer of the scalable filter, grown as it is (see [`growth_plan`]).
    GrowableBloom,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer; 6] = [
        Peer::FastBloom,
        Peer::SbbfRs,
        Peer::BloomFilter,
        Peer::CuckooFilter,
        Peer::BinaryFuse8,
        Peer::GrowableBloom,
    ];

    /// The crate's name as the command line and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Peer::FastBloom => "fastbloom",
            Peer::SbbfRs => "sbbf-rs",
            Peer::BloomFilter => "bloomfilter",
            Peer::CuckooFilter => "cuckoofilter",
            Peer::BinaryFuse8 => "xorf-bfuse8",
            Peer::GrowableBloom => "growable-bloom-filter",
        }
    }

    /// Whether the crate lets the caller choose the bits per key (the others have one size per
    /// item count, which the report then states).
    pub fn bits_per_key_adjustable(self) -> bool {
        matches!(self, Peer::FastBloom | Peer::SbbfRs | Peer::BloomFilter)
    }
}

impl Contender {
    /// The crate's filters.
    pub fn ours() -> Vec<Contender> {
        FilterKind::ALL.into_iter().map(Contender::Ours).collect()
    }

    /// Every contender the report measures: ours, then the peer crates.
    pub fn available() -> Vec<Contender> {
        let mut all = Contender::ours();
        all.extend(Peer::ALL.into_iter().map(Contender::Peer));
        all
    }

    /// The short name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Contender::Ours(kind) => kind.name(),
            Contender::Peer(peer) => peer.name(),
        }
    }

    /// The largest filter the speed sweep measures this contender at: a scalable chain grown
    /// 1000x (ours or growable-bloom-filter's) reads each of its filters on every miss and
    /// insert, so past the cache one fill and its lookups take minutes.
    pub fn speed_sweep_max_bytes(self) -> Option<usize> {
        match self {
            Contender::Ours(FilterKind::Scalable) | Contender::Peer(Peer::GrowableBloom) => {
                Some(16 << 20)
            }
            _ => None,
        }
    }

    /// Whether this is a peer crate.
    pub fn is_peer(self) -> bool {
        matches!(self, Contender::Peer(_))
    }
}

impl std::fmt::Display for Contender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Contender {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        if let Ok(kind) = s.parse::<FilterKind>() {
            return Ok(Contender::Ours(kind));
        }
        match Peer::ALL.into_iter().find(|p| p.name() == s) {
            Some(peer) => Ok(Contender::Peer(peer)),
            None => Err(Error::InvalidParameter {
                name: "filter",
                value: s.to_string(),
                allowed: "one of blocked, classic, cuckoo, counting, scalable, split-block, \
                          fastbloom, sbbf-rs, bloomfilter, cuckoofilter, xorf-bfuse8, \
                          growable-bloom-filter",
            }),
        }
    }
}

/// How the report grows a scalable filter (ours and growable-bloom-filter's alike) to `items`
/// keys at `bits_per_key`: the first filter sized for a thousandth of the keys (at least 1),
/// the FPR target that of one blocked filter at `bits_per_key`. The figures then say what
/// growth 1000x costs against knowing the count in advance. Returns `(initial_items, fpr)`.
pub fn growth_plan(items: usize, bits_per_key: f64) -> (usize, f64) {
    let k = linebloom::model::blocked_optimal_k(bits_per_key);
    let fpr = linebloom::model::blocked_fpr(bits_per_key, k).max(linebloom::model::BLOCKED_MIN_FPR);
    ((items / 1000).max(1), fpr)
}

/// A filter under measurement, driven a batch of pre-hashed keys at a time.
pub trait Subject: Send + Sync {
    /// Which filter this is.
    fn contender(&self) -> Contender;
    /// Its parameters in a few words: "k=7", "f=8", "k=8 (fixed)".
    fn params(&self) -> String;
    /// Inserts the hashes one at a time, in order; returns how many the filter refused (a full
    /// cuckoo table). A static filter only collects them here and builds in
    /// [`finish`](Self::finish).
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64>;
    /// Completes the build (static filters); a no-op for the others.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    /// Whether [`par_insert`](Self::par_insert) uses more than one thread.
    fn has_parallel_insert(&self) -> bool {
        false
    }
    /// Inserts the hashes with every thread of the current rayon pool; `None` when the filter
    /// has no parallel insert.
    fn par_insert(&mut self, _hashes: &[u64]) -> Option<Result<()>> {
        None
    }
    /// How many of the hashes the filter may contain, asked one at a time.
    fn count_each(&self, hashes: &[u64]) -> u64;
    /// The same through the filter's batched lookup (prefetching); `None` when it has none.
    fn count_batched(&self, _hashes: &[u64], _out: &mut [bool]) -> Option<Result<u64>> {
        None
    }
    /// The batched lookup on every thread of the current rayon pool; `None` when the filter
    /// has no parallel lookup.
    fn par_count_batched(&self, _hashes: &[u64], _out: &mut [bool]) -> Option<Result<u64>> {
        None
    }
    /// Bytes of filter data.
    fn size_bytes(&self) -> usize;
    /// The FPR the filter's model expects after `items` keys; `None` when it has no model.
    fn model_fpr(&self, items: u64) -> Option<f64>;
    /// Readies an empty filter for a timed build: writes the memory its constructor left
    /// untouched (a fresh mapping, or pages the allocator zeroed without writing), so that no
    /// build pays a first touch that another filter's constructor paid off the clock. At
    /// 100 M keys sbbf-rs, fastbloom and cuckoofilter write theirs when built (45-75 ms), this
    /// crate's blocked and cuckoo filters (a huge-page mapping) and bloomfilter do not. A no-op
    /// where the constructor wrote it; on a filter that holds keys it may remove them.
    fn touch(&mut self) {}
    /// Whether the filter is built once from all keys (no insert of single keys).
    fn is_static(&self) -> bool {
        false
    }
    /// Bytes of the filter the kernel backs with transparent huge pages; `None` when the
    /// filter does not ask for them (or the system cannot tell).
    fn huge_page_bytes(&self) -> Option<usize> {
        None
    }
}

/// Counts the `true`s of a batched lookup's output.
pub(crate) fn count_true(out: &[bool]) -> u64 {
    out.iter().map(|&b| u64::from(b)).sum()
}

/// The output buffer a batched lookup of `hashes` writes.
fn out_for<'a>(hashes: &[u64], out: &'a mut [bool]) -> Result<&'a mut [bool]> {
    let len = out.len();
    out.get_mut(..hashes.len())
        .ok_or_else(|| Error::InvalidParameter {
            name: "output length",
            value: len.to_string(),
            allowed: "at least the number of hashes",
        })
}

/// The lookups, size and model every one of the crate's filters measures the same way, through
/// the inherent methods of the same names.
macro_rules! ours_lookups {
    ($ty:ty) => {
        fn count_each(&self, hashes: &[u64]) -> u64 {
            hashes
                .iter()
                .map(|&h| u64::from(self.contains_hash(h)))
                .sum()
        }
        fn count_batched(&self, hashes: &[u64], out: &mut [bool]) -> Option<Result<u64>> {
            Some(out_for(hashes, out).and_then(|out| {
                self.contains_hashes(hashes, out)?;
                Ok(count_true(out))
            }))
        }
        fn size_bytes(&self) -> usize {
            <$ty>::size_bytes(self)
        }
        fn model_fpr(&self, items: u64) -> Option<f64> {
            Some(<$ty>::expected_fpr(self, items))
        }
        fn touch(&mut self) {
            <$ty>::clear(self);
        }
    };
}

/// The inserts of the two Bloom filters: one by one (they never refuse a key) and in bulk.
macro_rules! bloom_inserts {
    () => {
        fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
            for &h in hashes {
                self.insert_hash(h);
            }
            Ok(0)
        }
        fn has_parallel_insert(&self) -> bool {
            true
        }
        fn par_insert(&mut self, hashes: &[u64]) -> Option<Result<()>> {
            self.par_insert_hashes(hashes);
            Some(Ok(()))
        }
    };
}

impl Subject for BlockedBloom {
    fn contender(&self) -> Contender {
        Contender::Ours(FilterKind::Blocked)
    }
    fn params(&self) -> String {
        format!("k={}", self.k())
    }
    fn huge_page_bytes(&self) -> Option<usize> {
        BlockedBloom::huge_page_bytes(self)
    }
    bloom_inserts!();
    ours_lookups!(BlockedBloom);
    fn par_count_batched(&self, hashes: &[u64], out: &mut [bool]) -> Option<Result<u64>> {
        Some(out_for(hashes, out).and_then(|out| {
            self.par_contains_hashes(hashes, out)?;
            Ok(count_true(out))
        }))
    }
}

impl Subject for ClassicBloom {
    fn contender(&self) -> Contender {
        Contender::Ours(FilterKind::Classic)
    }
    fn params(&self) -> String {
        format!("k={}", self.k())
    }
    bloom_inserts!();
    ours_lookups!(ClassicBloom);
}

impl Subject for CuckooFilter {
    fn contender(&self) -> Contender {
        Contender::Ours(FilterKind::Cuckoo)
    }
    fn params(&self) -> String {
        format!("f={}", self.fingerprint_bits())
    }
    fn huge_page_bytes(&self) -> Option<usize> {
        CuckooFilter::huge_page_bytes(self)
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        let mut refused = 0;
        for &h in hashes {
            match self.insert_hash(h) {
                Ok(()) => {}
                Err(Error::Full) => refused += 1,
                Err(e) => return Err(e),
            }
        }
        Ok(refused)
    }
    ours_lookups!(CuckooFilter);
}

impl Subject for CountingBlockedBloom {
    fn contender(&self) -> Contender {
        Contender::Ours(FilterKind::Counting)
    }
    fn params(&self) -> String {
        format!("k={}", self.k())
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        for &h in hashes {
            self.insert_hash(h);
        }
        Ok(0)
    }
    ours_lookups!(CountingBlockedBloom);
}

impl Subject for ScalableBlockedBloom {
    fn contender(&self) -> Contender {
        Contender::Ours(FilterKind::Scalable)
    }
    fn params(&self) -> String {
        format!(
            "{} filters x{} r={}",
            self.filters(),
            self.growth(),
            self.tightening()
        )
    }
    /// Keys the chain already reports present are not stored again; they are not refusals.
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        self.insert_hashes(hashes);
        Ok(0)
    }
    ours_lookups!(ScalableBlockedBloom);
}

/// The Parquet layout, measured on the same hashes as the sbbf-rs peer (same layout, so the
/// same bits for the same hash and block count).
impl Subject for SplitBlockBloom {
    fn contender(&self) -> Contender {
        Contender::Ours(FilterKind::SplitBlock)
    }
    fn params(&self) -> String {
        "k=8 (fixed)".into()
    }
    bloom_inserts!();
    ours_lookups!(SplitBlockBloom);
}

/// A filter of a kind chosen at run time is measured as the filter inside it (used by
/// `linebloom fpr`, whose filters come from [`AnyFilter::new`]; the speed sweep builds concrete
/// types, so no figure pays this dispatch per call).
impl Subject for AnyFilter {
    fn contender(&self) -> Contender {
        inner(self).contender()
    }
    fn params(&self) -> String {
        inner(self).params()
    }
    fn insert_each(&mut self, hashes: &[u64]) -> Result<u64> {
        inner_mut(self).insert_each(hashes)
    }
    fn touch(&mut self) {
        inner_mut(self).touch()
    }
    fn count_each(&self, hashes: &[u64]) -> u64 {
        inner(self).count_each(hashes)
    }
    fn count_batched(&self, hashes: &[u64], out: &mut [bool]) -> Option<Result<u64>> {
        inner(self).count_batched(hashes, out)
    }
    fn size_bytes(&self) -> usize {
        inner(self).size_bytes()
    }
    fn model_fpr(&self, items: u64) -> Option<f64> {
        inner(self).model_fpr(items)
    }
}

fn inner(f: &AnyFilter) -> &dyn Subject {
    match f {
        AnyFilter::Blocked(b) => b,
        AnyFilter::Classic(c) => c,
        AnyFilter::Cuckoo(c) => c,
        AnyFilter::Counting(c) => c,
        AnyFilter::Scalable(s) => s,
        AnyFilter::SplitBlock(s) => s,
    }
}

fn inner_mut(f: &mut AnyFilter) -> &mut dyn Subject {
    match f {
        AnyFilter::Blocked(b) => b,
        AnyFilter::Classic(c) => c,
        AnyFilter::Cuckoo(c) => c,
        AnyFilter::Counting(c) => c,
        AnyFilter::Scalable(s) => s,
        AnyFilter::SplitBlock(s) => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in Contender::available() {
            assert_eq!(c.name().parse::<Contender>().unwrap(), c);
        }
        assert!("bloom".parse::<Contender>().is_err());
    }
}
