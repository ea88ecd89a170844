//! `CuckooFilter::from_bytes` on arbitrary bytes: an error or a filter that writes back to the
//! same bytes, and that can be queried and filled without panicking.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use linebloom::CuckooFilter;

fuzz_target!(|input: &[u8]| {
    for data in common::inputs(input) {
        let data = &data[..];
        if let Ok(mut filter) = CuckooFilter::from_bytes(data) {
            assert_eq!(filter.to_bytes(), data);
            filter.contains(&data.len());
            let _ = filter.insert(&data.len());
        }
    }
});
