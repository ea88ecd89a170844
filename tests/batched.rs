//! Every filter kind's batched lookup answers each key in its own slot, as the one-key lookup
//! does, in cache and past the 2 MiB from which the batched paths prefetch ahead: probes
//! alternate inserted keys (every one a "yes") with never-inserted ones, so an answer written
//! to the wrong slot or left out shows, in batches shorter than, near and far past the
//! prefetch distance (256 keys).

use linebloom::filter::{FilterKind, Sizing};
use linebloom::format::AnyFilter;
use linebloom::hash::mix64;

#[test]
fn batched_lookups_answer_each_key_in_its_slot_for_every_kind() {
    // 40 Ki keys at 10 bits per key are about 50 KiB; 4 Mi keys about 5 MiB.
    for items in [40_000usize, 4_000_000] {
        let inserted: Vec<u64> = (0..items as u64).map(mix64).collect();
        let probes: Vec<u64> = inserted
            .iter()
            .take(20_000)
            .flat_map(|&h| [h, mix64(!h)])
            .collect();
        for kind in FilterKind::ALL {
            let mut filter = AnyFilter::new(kind, items as u64, Sizing::Fpr(0.01), None, 7)
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            let f = filter.as_filter_mut();
            for &h in &inserted {
                f.insert_hash(h).unwrap_or_else(|e| panic!("{kind}: {e}"));
            }
            let f = filter.as_filter();
            for len in [1, 2, 255, 257, 300, probes.len()] {
                let probe = &probes[..len];
                let mut out = vec![false; len];
                f.contains_hashes(probe, &mut out).unwrap();
                let one: Vec<bool> = probe.iter().map(|&h| f.contains_hash(h)).collect();
                assert!(
                    one.iter().step_by(2).all(|&b| b),
                    "{kind}, {items} keys: an inserted key answered no"
                );
                assert_eq!(out, one, "{kind}, {items} keys, batch of {len}");
            }
        }
    }
}
