//! The line-up: an empty filter of any [`Contender`], behind [`Subject`]. This crate's filters
//! are built here from their own builders, the peer crates by `peers.rs`; this module owns only
//! the choice between them (it sits above both, so neither names the other).

use super::peers;
use super::subject::{Contender, Subject, growth_plan};
use linebloom::BlockedBloom;
use linebloom::classic::ClassicBloom;
use linebloom::cuckoo::CuckooFilter;
use linebloom::error::Result;
use linebloom::filter::FilterKind;
use linebloom::{CountingBlockedBloom, ScalableBlockedBloom, SplitBlockBloom};

/// Builds an empty contender for `items` keys at (about) `bits_per_key` bits each. Peers that
/// cannot choose their size take the size they need for `items` (see [`Peer`](super::subject::Peer)); a cuckoo
/// filter takes the widest fingerprint that fits (so fewer bits than asked when the budget
/// falls between widths) and is an error below 8.42 bits per key.
pub fn build_subject(
    contender: Contender,
    items: usize,
    bits_per_key: f64,
    seed: u64,
) -> Result<Box<dyn Subject>> {
    match contender {
        Contender::Ours(FilterKind::Blocked) => Ok(Box::new(
            BlockedBloom::builder(items as u64)
                .bits_per_key(bits_per_key)
                .seed(seed)
                .build()?,
        )),
        Contender::Ours(FilterKind::Classic) => Ok(Box::new(
            ClassicBloom::builder(items as u64)
                .bits_per_key(bits_per_key)
                .seed(seed)
                .build()?,
        )),
        Contender::Ours(FilterKind::Cuckoo) => Ok(Box::new(
            CuckooFilter::builder(items as u64)
                .bits_per_key(bits_per_key)
                .seed(seed)
                .build()?,
        )),
        Contender::Ours(FilterKind::Counting) => Ok(Box::new(
            CountingBlockedBloom::builder(items as u64)
                .bits_per_key(bits_per_key)
                .seed(seed)
                .build()?,
        )),
        // A chain grown to `items` from a thousandth of them (see `growth_plan`).
        Contender::Ours(FilterKind::Scalable) => {
            let (initial, fpr) = growth_plan(items, bits_per_key);
            Ok(Box::new(
                ScalableBlockedBloom::builder(initial as u64)
                    .fpr(fpr)
                    .seed(seed)
                    .build()?,
            ))
        }
        // Whole 32-byte blocks at `bits_per_key` (not Parquet's power of two), as the sbbf-rs
        // peer is sized, so the two differ only in code. The layout has no seed.
        Contender::Ours(FilterKind::SplitBlock) => Ok(Box::new(
            SplitBlockBloom::with_bits_per_key(items as u64, bits_per_key)?,
        )),
        Contender::Peer(peer) => peers::build(peer, items, bits_per_key, seed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_find_what_they_hold() {
        for c in Contender::ours() {
            let mut s = build_subject(c, 1000, 12.0, 1).unwrap();
            let hs: Vec<u64> = (0..1000).map(linebloom::hash::mix64).collect();
            assert_eq!(s.insert_each(&hs).unwrap(), 0);
            s.finish().unwrap();
            assert_eq!(s.count_each(&hs), 1000, "{c}");
            let mut out = vec![false; 1000];
            assert_eq!(s.count_batched(&hs, &mut out).unwrap().unwrap(), 1000);
            assert!(s.size_bytes() > 0);
        }
    }

    #[test]
    fn touch_leaves_an_empty_filter_that_works() {
        // 8 Mi keys at 10 bits: past the size from which the blocked and cuckoo filters map
        // their lines instead of taking them from the heap.
        let items = 8 << 20;
        let hs: Vec<u64> = (0..1000).map(linebloom::hash::mix64).collect();
        for c in Contender::available() {
            let mut s = build_subject(c, items, 10.0, 1).unwrap();
            s.touch();
            assert_eq!(s.insert_each(&hs).unwrap(), 0, "{c}");
            s.finish().unwrap();
            assert_eq!(s.count_each(&hs), 1000, "{c}");
        }
        for c in Contender::ours() {
            let mut s = build_subject(c, items, 10.0, 1).unwrap();
            s.insert_each(&hs).unwrap();
            s.touch();
            assert!(
                s.count_each(&hs) < 10,
                "{c}: touch empties this crate's filters"
            );
        }
    }
}
