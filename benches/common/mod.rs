//! What every bench file shares: thread pinning, key streams, filter sizes.
#![allow(dead_code)]

use linebloom::hash::mix64;

/// Filter sizes from in-L1 to far past the last-level cache, at 10 bits/key.
/// `LINEBLOOM_BENCH_MAX_MIB` caps them (e.g. `=16` for a quick run).
pub const SIZES_BYTES: [usize; 4] = [16 << 10, 1 << 20, 16 << 20, 512 << 20];

pub fn sizes() -> Vec<usize> {
    let cap = std::env::var("LINEBLOOM_BENCH_MAX_MIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map(|mib| mib << 20)
        .unwrap_or(usize::MAX);
    SIZES_BYTES.iter().copied().filter(|&b| b <= cap).collect()
}

pub fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}

/// Items that give `bytes` of filter at `bits_per_key`.
pub fn items_for(bytes: usize, bits_per_key: f64) -> usize {
    ((bytes * 8) as f64 / bits_per_key) as usize
}

/// Distinct, well-mixed hashes; `stream` keeps sets apart (inserted keys use stream 0).
pub fn hashes(stream: u64, range: std::ops::Range<u64>) -> Vec<u64> {
    range.map(|i| mix64(i ^ (stream << 48))).collect()
}

/// Hashes of `count` keys drawn uniformly from the first `items` inserted ones (stream 0).
pub fn hit_hashes(items: usize, count: usize) -> Vec<u64> {
    (0..count as u64)
        .map(|i| mix64(mix64(i ^ (7 << 56)) % items as u64))
        .collect()
}

/// Pins the benchmark thread to one core so the scheduler does not move it mid-measurement.
pub fn pin_thread() {
    match core_affinity::get_core_ids().and_then(|ids| ids.first().copied()) {
        Some(id) if core_affinity::set_for_current(id) => {
            eprintln!("benchmark thread pinned to core {}", id.id)
        }
        _ => eprintln!("could not pin the benchmark thread; figures may be noisier"),
    }
}
