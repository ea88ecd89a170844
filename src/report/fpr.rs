//! Measured false-positive rate of one filter against its model.

use serde::Serialize;

use crate::error::Result;
use crate::filter::{FilterKind, Sizing, build};
use crate::hash::mix64;

/// What `linebloom fpr` asks for.
#[derive(Clone, Debug)]
pub struct FprSpec {
    pub kind: FilterKind,
    pub items: usize,
    pub sizing: Sizing,
    pub hashes: Option<u32>,
    pub probes: usize,
    pub seed: u64,
}

/// One measurement (the JSON object of `linebloom fpr --json`; field names are a contract).
#[derive(Clone, Debug, Serialize)]
pub struct FprMeasurement {
    pub filter: String,
    pub items: usize,
    pub probes: usize,
    pub bits_per_key: f64,
    pub hashes: u32,
    pub measured_fpr: f64,
    pub model_fpr: f64,
    pub false_negatives: u64,
    pub false_positives: u64,
    pub bytes: usize,
    pub seed: u64,
    /// Keys the filter refused (only a cuckoo filter can be full); they are not counted as
    /// inserted.
    pub insert_failures: u64,
}

/// The hash of the `i`-th key of a stream of distinct pseudo-random keys. Inserted keys come
/// from stream 0 and probes from stream 1, so no probe was ever inserted. `seed` varies the keys.
pub fn key_hash(seed: u64, stream: u64, i: u64) -> u64 {
    mix64(mix64(seed ^ (stream << 62)).wrapping_add(i))
}

/// Builds the filter from `items` distinct keys, checks every inserted key is found, and probes
/// `probes` keys that were never inserted.
pub fn measure_fpr(spec: &FprSpec) -> Result<FprMeasurement> {
    let mut filter = build(spec.kind, spec.items, spec.sizing, spec.hashes, spec.seed)?;
    let mut inserted = Vec::with_capacity(spec.items);
    let mut insert_failures = 0;
    for i in 0..spec.items as u64 {
        let h = key_hash(spec.seed, 0, i);
        match filter.insert_hash(h) {
            Ok(()) => inserted.push(h),
            Err(crate::Error::Full) => insert_failures += 1,
            Err(e) => return Err(e),
        }
    }
    let false_negatives = inserted
        .iter()
        .filter(|&&h| !filter.contains_hash(h))
        .count() as u64;
    let mut false_positives = 0u64;
    let mut out = vec![false; 1 << 16];
    let mut done = 0;
    while done < spec.probes {
        let n = (spec.probes - done).min(out.len());
        let probe: Vec<u64> = (done..done + n)
            .map(|i| key_hash(spec.seed, 1, i as u64))
            .collect();
        filter.contains_hashes(&probe, &mut out[..n])?;
        false_positives += out[..n].iter().filter(|&&b| b).count() as u64;
        done += n;
    }
    let bytes = filter.size_bytes();
    Ok(FprMeasurement {
        filter: spec.kind.name().to_string(),
        items: spec.items,
        probes: spec.probes,
        bits_per_key: bytes as f64 * 8.0 / spec.items as f64,
        hashes: filter.hashes(),
        measured_fpr: if spec.probes == 0 {
            0.0
        } else {
            false_positives as f64 / spec.probes as f64
        },
        model_fpr: filter.expected_fpr(inserted.len() as u64),
        false_negatives,
        false_positives,
        bytes,
        seed: spec.seed,
        insert_failures,
    })
}
