//! Measured false-positive rate of one filter against its model: the one measurement loop
//! ([`fpr_row`]) that the report's FPR sweep and `linebloom fpr` share.

use serde::Serialize;

use super::keys::{CHUNK, key_hash};
use super::lineup::build_subject;
use super::subject::{Contender, Subject};
use linebloom::filter::{Filter, FilterKind, Sizing};
use linebloom::format::AnyFilter;
use linebloom::hash::mix64;
use linebloom::internals::units_for;
use linebloom::{Error, Result};

/// The measured FPR of a simulated blocked Bloom filter with free placement: each of `keys`
/// keys sets `hashes` distinct bits chosen at random in one of the filter's `block_bits`-bit
/// blocks (`bits_per_key` bits per key in all), then `probes` never-inserted keys are tested.
/// The layout [`linebloom::model::block_fpr`] models: no filter of that block width does better,
/// so measuring it shows what a width allows (`examples/block_width.rs`). An error unless
/// `block_bits` is a positive multiple of 64 and `hashes` in `1..=block_bits`, or when the
/// keys and bits per key are out of the filters' ranges; a slow loop, for a few million probes.
pub fn free_block_fpr(
    block_bits: u32,
    bits_per_key: f64,
    hashes: u32,
    keys: u64,
    probes: u64,
    seed: u64,
) -> Result<f64> {
    if block_bits == 0 || !block_bits.is_multiple_of(64) {
        return Err(Error::InvalidParameter {
            name: "block bits",
            value: block_bits.to_string(),
            allowed: "a positive multiple of 64",
        });
    }
    if hashes == 0 || hashes > block_bits {
        return Err(Error::InvalidParameter {
            name: "number of hashes",
            value: hashes.to_string(),
            allowed: "1 up to the block's bits",
        });
    }
    let words = block_bits as usize / 64;
    let k = hashes as usize;
    let blocks = units_for(keys, bits_per_key, u64::from(block_bits))?;
    let mut bits = vec![0u64; blocks * words];
    // The block and the k distinct bits of the key with hash `h`: the block by multiply-shift,
    // each bit from a fresh remix of a counter (redrawn when it repeats).
    let place = |h: u64, positions: &mut Vec<usize>| {
        let block = linebloom::hash::reduce(h, blocks);
        positions.clear();
        let mut x = h;
        while positions.len() < k {
            x = mix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            let p = linebloom::hash::reduce(x, words * 64);
            if !positions.contains(&p) {
                positions.push(p);
            }
        }
        block * words
    };
    let mut positions = Vec::with_capacity(k);
    for i in 0..keys {
        let base = place(key_hash(seed, 0, i), &mut positions);
        for &p in &positions {
            bits[base + p / 64] |= 1 << (p % 64);
        }
    }
    let found = (0..probes)
        .filter(|&i| {
            let base = place(key_hash(seed, 1, i), &mut positions);
            positions
                .iter()
                .all(|&p| bits[base + p / 64] & (1 << (p % 64)) != 0)
        })
        .count();
    Ok(found as f64 / probes.max(1) as f64)
}

/// What `linebloom fpr` asks for.
#[derive(Clone, Debug)]
pub struct FprSpec {
    pub kind: FilterKind,
    pub items: usize,
    pub sizing: Sizing,
    pub hashes: Option<u32>,
    pub probes: usize,
    pub seed: u64,
    /// For a scalable filter: the keys its first filter is sized for (default `items / 1000`,
    /// at least 1); `items` keys are then inserted, growing the chain.
    pub initial_items: Option<usize>,
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

/// Builds the filter from `items` distinct keys, checks every inserted key is found, and probes
/// `probes` keys that were never inserted (the report's own measurement loop, [`fpr_row`]).
pub fn measure_fpr(spec: &FprSpec) -> Result<FprMeasurement> {
    let sized_for = match spec.kind {
        FilterKind::Scalable => spec.initial_items.unwrap_or(spec.items / 1000).max(1),
        _ => spec.items,
    };
    let mut filter = AnyFilter::new(spec.kind, sized_for, spec.sizing, spec.hashes, spec.seed)?;
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
        // `--hashes` sets the cuckoo filter's fingerprint bits; they are reported in its place.
        hashes: match &filter {
            AnyFilter::Cuckoo(c) => c.fingerprint_bits(),
            other => other.k().unwrap_or(0),
        },
        measured_fpr: row.measured_fpr,
        model_fpr: row.model_fpr.unwrap_or(f64::NAN),
        false_negatives: row.false_negatives,
        false_positives: row.false_positives,
        bytes: row.bytes,
        seed: spec.seed,
        insert_failures: row.insert_failures,
    })
}

/// One filter at one bits-per-key value of the FPR sweep.
#[derive(Clone, Debug, Serialize)]
pub struct FprRow {
    /// The filter's name.
    pub filter: String,
    /// Whether it is a peer crate.
    pub peer: bool,
    /// The bits per key the sweep asked for.
    pub target_bits_per_key: f64,
    /// The bits per key the filter actually uses (cuckoo filters and some peers have fixed
    /// sizes; this is what to read the FPR against).
    pub bits_per_key: f64,
    /// Its parameters ("k=7", "f=8").
    pub params: String,
    /// Keys inserted (refused ones included).
    pub items: usize,
    /// Never-inserted keys probed.
    pub probes: usize,
    /// Share of the probes answered "maybe".
    pub measured_fpr: f64,
    /// The filter's model FPR, if it has a model.
    pub model_fpr: Option<f64>,
    /// Probes answered "maybe".
    pub false_positives: u64,
    /// Inserted keys answered "no" (must be 0).
    pub false_negatives: u64,
    /// Inserts the filter refused.
    pub insert_failures: u64,
    /// The filter's size in bytes.
    pub bytes: usize,
}

/// Measured and model FPR of one filter at one bits-per-key value: `items` keys inserted,
/// `probes` never-inserted keys probed, from the same key streams as `linebloom fpr` (inserted
/// keys from stream 0, probes from stream 1).
pub fn measure_fpr_point(
    c: Contender,
    bits_per_key: f64,
    items: usize,
    probes: usize,
    seed: u64,
) -> Result<FprRow> {
    let mut subject = build_subject(c, items, bits_per_key, seed)?;
    fpr_row(subject.as_mut(), bits_per_key, items, probes, seed)
}

/// Fills `subject` (empty) with `items` keys of stream 0, checks they are found, and probes
/// `probes` keys of stream 1 that were never inserted: the one FPR measurement loop, shared by
/// the sweep and `linebloom fpr`. `target_bits_per_key` is only recorded.
pub fn fpr_row(
    subject: &mut dyn Subject,
    target_bits_per_key: f64,
    items: usize,
    probes: usize,
    seed: u64,
) -> Result<FprRow> {
    let c = subject.contender();
    let inserted: Vec<u64> = (0..items as u64).map(|i| key_hash(seed, 0, i)).collect();
    let mut refused = 0;
    for chunk in inserted.chunks(CHUNK) {
        refused += subject.insert_each(chunk)?;
    }
    subject.finish()?;
    // Refused keys are not in the filter; only a correct filter that refused nothing must
    // find them all.
    let false_negatives = (items as u64 - refused).saturating_sub(subject.count_each(&inserted));
    drop(inserted);
    let mut false_positives = 0;
    let mut buffer = Vec::with_capacity(CHUNK);
    for start in (0..probes).step_by(CHUNK) {
        let end = (start + CHUNK).min(probes);
        buffer.clear();
        buffer.extend((start as u64..end as u64).map(|i| key_hash(seed, 1, i)));
        false_positives += subject.count_each(&buffer);
    }
    let bytes = subject.size_bytes();
    Ok(FprRow {
        filter: c.name().to_string(),
        peer: c.is_peer(),
        target_bits_per_key,
        bits_per_key: bytes as f64 * 8.0 / items as f64,
        params: subject.params(),
        items,
        probes,
        measured_fpr: if probes == 0 {
            0.0
        } else {
            false_positives as f64 / probes as f64
        },
        model_fpr: subject.model_fpr(items as u64 - refused),
        false_positives,
        false_negatives,
        insert_failures: refused,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use linebloom::model::block_fpr;

    /// The free-placement model against its simulated filter, for both widths the README's
    /// target 1 argument uses (fixed seed; about 1 % spread between seeds, the bound is 6 %).
    #[test]
    fn free_blocks_measure_as_modelled() {
        let measure = |block_bits, k| free_block_fpr(block_bits, 10.0, k, 200_000, 2_000_000, 7);
        let mut measured = Vec::new();
        for (block_bits, k) in [(256, 6), (512, 6), (512, 8)] {
            let fpr = measure(block_bits, k).unwrap();
            let model = block_fpr(block_bits, 10.0, k);
            let off = (fpr - model).abs() / model;
            assert!(off < 0.06, "{block_bits} bits, k={k}: {fpr} vs {model}");
            measured.push(fpr);
        }
        // 32 bytes cannot reach 1 % at 10 bits/key; 64 can.
        assert!(measured[0] > 0.0101);
        assert!(measured[1] < 0.0099);
        // Shapes the simulation cannot build are errors.
        for (block_bits, k) in [(0, 6), (100, 6), (256, 0), (256, 257)] {
            assert!(measure(block_bits, k).is_err(), "{block_bits} bits, k={k}");
        }
        assert!(free_block_fpr(256, f64::NAN, 6, 1000, 10, 7).is_err());
        assert!(free_block_fpr(256, 10.0, 6, 0, 10, 7).is_err());
    }
}
