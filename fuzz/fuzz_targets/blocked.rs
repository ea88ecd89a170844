//! `BlockedBloom::from_bytes` on arbitrary bytes: an error or a filter that writes back to the
//! same bytes (the only valid encoding of what it read, since it records 0 items).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use linebloom::BlockedBloom;
use linebloom::format::read_header;

fuzz_target!(|input: &[u8]| {
    for data in common::inputs(input) {
        let data = &data[..];
        if let Ok(filter) = BlockedBloom::from_bytes(data) {
            let again = filter.to_bytes();
            // Everything but the recorded item count (and so the checksum) is determined.
            if read_header(data).is_ok_and(|h| h.items == 0) {
                assert_eq!(again, data);
            }
            assert_eq!(BlockedBloom::from_bytes(&again).as_ref(), Ok(&filter));
        }
    }
});
