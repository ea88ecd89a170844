//! `BlockedBloomRef::from_bytes` on arbitrary bytes copied into a 64-byte-aligned buffer (and
//! at a misaligned offset): an error, or a view that answers like the owned filter.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use linebloom::blocked::AlignedBytes;
use linebloom::{BlockedBloom, BlockedBloomRef};

fuzz_target!(|input: &[u8]| {
    for data in common::inputs(input) {
        let data = &data[..];
        let Ok(aligned) = AlignedBytes::from_slice(data) else {
            continue;
        };
        let owned = BlockedBloom::from_bytes(data);
        match BlockedBloomRef::from_bytes(&aligned) {
            Ok(view) => {
                assert_eq!(owned.as_ref(), Ok(&view.to_owned()));
                let hashes: Vec<u64> = data
                    .chunks(8)
                    .map(|c| c.iter().fold(0u64, |h, &b| h << 8 | u64::from(b)))
                    .map(|h| h.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    .collect();
                let mut out = vec![false; hashes.len()];
                view.contains_hashes(&hashes, &mut out).unwrap();
            }
            Err(_) => assert!(owned.is_err()),
        }
        let mut shifted = AlignedBytes::zeroed(data.len() + 1).unwrap();
        shifted[1..].copy_from_slice(data);
        assert!(BlockedBloomRef::from_bytes(&shifted[1..]).is_err());
    }
});
