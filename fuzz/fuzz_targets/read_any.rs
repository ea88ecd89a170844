//! `format::read_any` on arbitrary bytes: an error, or a filter of the kind the header names
//! that round-trips.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use linebloom::Filter;
use linebloom::format::{read_any, read_header};

fuzz_target!(|input: &[u8]| {
    for data in common::inputs(input) {
        let data = &data[..];
        let _ = read_header(data);
        if let Ok(filter) = read_any(data) {
            assert_eq!(read_header(data).map(|h| h.kind()), Ok(filter.kind()));
            assert_eq!(read_any(&filter.to_bytes()).as_ref(), Ok(&filter));
            filter.contains_hash(data.len() as u64);
        }
    }
});
