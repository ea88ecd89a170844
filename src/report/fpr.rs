//! Measured false-positive rate of one filter against its model.

use serde::Serialize;

use super::sweep::fpr_row;
use crate::error::Result;
use crate::filter::{Filter, FilterKind, Sizing};
use crate::format::AnyFilter;
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
/// `probes` keys that were never inserted (the report's own measurement loop,
/// [`super::sweep::fpr_row`]).
pub fn measure_fpr(spec: &FprSpec) -> Result<FprMeasurement> {
    let mut filter = AnyFilter::new(spec.kind, spec.items, spec.sizing, spec.hashes, spec.seed)?;
    let target = match spec.sizing {
        Sizing::BitsPerKey(c) => c,
        Sizing::Fpr(_) => f64::NAN,
    };
    let row = fpr_row(&mut filter, target, spec.items, spec.probes, spec.seed)?;
    Ok(FprMeasurement {
        filter: row.filter,
        items: row.items,
        probes: row.probes,
        bits_per_key: row.bits_per_key,
        hashes: filter.hashes(),
        measured_fpr: row.measured_fpr,
        model_fpr: row.model_fpr.unwrap_or(f64::NAN),
        false_negatives: row.false_negatives,
        false_positives: row.false_positives,
        bytes: row.bytes,
        seed: spec.seed,
        insert_failures: row.insert_failures,
    })
}
