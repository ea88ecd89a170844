//! `ClassicBloom::from_bytes` on arbitrary bytes: an error or a filter that round-trips.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use linebloom::ClassicBloom;

fuzz_target!(|input: &[u8]| {
    for data in common::inputs(input) {
        let data = &data[..];
        if let Ok(filter) = ClassicBloom::from_bytes(data) {
            let again = filter.to_bytes();
            assert_eq!(ClassicBloom::from_bytes(&again).as_ref(), Ok(&filter));
            filter.contains(&data.len());
        }
    }
});
