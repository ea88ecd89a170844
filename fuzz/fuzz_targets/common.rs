//! What every target shares: the input as it came, and a copy whose trailing checksum is
//! recomputed, so the fuzzer reaches the header and parameter checks behind the checksum
//! instead of stopping at it almost every time.

use xxhash_rust::xxh3::xxh3_64;

/// `data`, and (if it is long enough to hold a checksum) `data` with its last 8 bytes replaced
/// by the xxh3-64 of the rest.
pub fn inputs(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![data.to_vec()];
    if let Some(end) = data.len().checked_sub(8) {
        let mut sealed = data.to_vec();
        let sum = xxh3_64(&sealed[..end]);
        sealed[end..].copy_from_slice(&sum.to_le_bytes());
        out.push(sealed);
    }
    out
}
