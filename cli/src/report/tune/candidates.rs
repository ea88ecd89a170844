//! Each filter sized for a target: its bytes from the library's own sizing rule (the builders'
//! `shape()`), its FPR and probes from `linebloom::model`.

use super::*;

/// The bytes of the filter a builder would build, by the library's own sizing rule
/// (`shape()`); a size no filter can have (too large to address) counts as `u64::MAX`, which
/// no target picks.
pub(super) fn shape_bytes(shape: Result<Shape>) -> u64 {
    shape.and_then(|s| s.size_bytes()).unwrap_or(u64::MAX)
}

/// Blocked filter bytes: whole 64-byte lines.
pub(super) fn blocked_bytes(n: u64, bits_per_key: f64) -> u64 {
    shape_bytes(BlockedBloom::builder(n).bits_per_key(bits_per_key).shape())
}

/// Classic filter bytes: whole 64-bit words.
pub(super) fn classic_bytes(n: u64, bits_per_key: f64) -> u64 {
    shape_bytes(ClassicBloom::builder(n).bits_per_key(bits_per_key).shape())
}

/// Cuckoo filter bytes: enough 4-slot buckets for the items at 95 % load.
pub(super) fn cuckoo_bytes(n: u64, fingerprint_bits: u32) -> u64 {
    shape_bytes(
        CuckooFilter::builder(n)
            .fingerprint_bits(fingerprint_bits)
            .shape(),
    )
}

pub(super) fn blocked_candidate(n: u64, bits_per_key: f64) -> Candidate {
    let k = model::blocked_optimal_k(bits_per_key);
    let bytes = blocked_bytes(n, bits_per_key);
    Candidate {
        filter: FilterKind::Blocked,
        bits_per_key: bytes as f64 * 8.0 / n as f64,
        hashes: k,
        params: format!("k={k}"),
        fpr: model::blocked_fpr(bits_per_key, k),
        bytes,
        lines_per_lookup: 1,
        grown: None,
    }
}

pub(super) fn blocked_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
    model::blocked_bits_per_key(p)
        .map(|b| blocked_candidate(n, b))
        .map_err(|e| e.to_string())
}

pub(super) fn blocked_for_bits(n: u64, b: f64) -> std::result::Result<Candidate, String> {
    Ok(blocked_candidate(n, b))
}

pub(super) fn classic_candidate(n: u64, bits_per_key: f64) -> Candidate {
    let k = model::classic_optimal_k(bits_per_key);
    Candidate {
        filter: FilterKind::Classic,
        bits_per_key,
        hashes: k,
        params: format!("k={k}"),
        fpr: model::classic_fpr(bits_per_key, k),
        bytes: classic_bytes(n, bits_per_key),
        lines_per_lookup: k,
        grown: None,
    }
}

pub(super) fn classic_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
    model::classic_bits_per_key(p)
        .map(|b| classic_candidate(n, b))
        .map_err(|e| e.to_string())
}

pub(super) fn classic_for_bits(n: u64, b: f64) -> std::result::Result<Candidate, String> {
    Ok(classic_candidate(n, b))
}

pub(super) fn cuckoo_candidate(n: u64, f: u32) -> Candidate {
    let bytes = cuckoo_bytes(n, f);
    Candidate {
        filter: FilterKind::Cuckoo,
        bits_per_key: bytes as f64 * 8.0 / n as f64,
        hashes: f,
        params: format!("f={f}"),
        fpr: model::cuckoo_fpr(f, CUCKOO_SLOTS, CUCKOO_LOAD),
        bytes,
        lines_per_lookup: 2,
        grown: None,
    }
}

pub(super) fn cuckoo_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
    CUCKOO_WIDTHS
        .into_iter()
        .find(|&f| model::cuckoo_fpr(f, CUCKOO_SLOTS, CUCKOO_LOAD) <= p)
        .map(|f| cuckoo_candidate(n, f))
        .ok_or_else(|| {
            format!(
                "its widest fingerprints (16 bits) reach only {} at 95 % load",
                fpr_md(model::cuckoo_fpr(16, CUCKOO_SLOTS, CUCKOO_LOAD))
            )
        })
}

/// The split-block filter for the target: whole 32-byte blocks at the bits per key its model
/// needs for an FPR, or that the memory holds.
pub(super) fn split_block_for(n: u64, target: Target) -> std::result::Result<Candidate, String> {
    let bits_per_key = match target {
        Target::Fpr(p) => model::split_block_bits_per_key(p).map_err(|e| e.to_string())?,
        Target::BitsPerKey(b) => b,
        Target::Memory(budget) => {
            let blocks = budget / 32;
            if blocks == 0 {
                return Err("the budget is smaller than one 32-byte block".to_string());
            }
            // Capped as the other filters are: more bits only add memory.
            ((blocks * 256) as f64 / n as f64).min(MEMORY_BITS_CAP)
        }
    };
    let bytes = shape_bytes(
        SplitBlockBloom::builder(n)
            .bits_per_key(bits_per_key)
            .shape(),
    );
    let bits_per_key = bytes as f64 * 8.0 / n as f64;
    Ok(Candidate {
        filter: FilterKind::SplitBlock,
        bits_per_key,
        hashes: 8,
        params: "k=8".to_string(),
        fpr: model::split_block_fpr(bits_per_key),
        bytes,
        lines_per_lookup: 1,
        grown: None,
    })
}

pub(super) fn cuckoo_for_bits(n: u64, b: f64) -> std::result::Result<Candidate, String> {
    CUCKOO_WIDTHS
        .into_iter()
        .rev()
        .find(|&f| f as f64 / CUCKOO_LOAD <= b)
        .map(|f| cuckoo_candidate(n, f))
        .ok_or_else(|| {
            format!(
                "its narrowest fingerprints need {:.2} bits per key at 95 % load",
                8.0 / CUCKOO_LOAD
            )
        })
}

pub(super) fn counting_candidate(n: u64, bits_per_key: f64) -> Candidate {
    let k = linebloom::counting::counting_optimal_k(bits_per_key / 4.0);
    // Whole lines of 128 counters.
    let bytes = shape_bytes(
        CountingBlockedBloom::builder(n)
            .bits_per_key(bits_per_key)
            .shape(),
    );
    Candidate {
        filter: FilterKind::Counting,
        bits_per_key: bytes as f64 * 8.0 / n as f64,
        hashes: k,
        params: format!("k={k}"),
        fpr: linebloom::counting::counting_fpr(bits_per_key / 4.0, k),
        bytes,
        lines_per_lookup: 1,
        grown: None,
    }
}

pub(super) fn counting_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
    linebloom::counting::counting_bits_per_key(p)
        .map(|b| counting_candidate(n, b))
        .map_err(|e| e.to_string())
}

/// The scalable filter for a count that starts at `n`, its FPR under `fpr`, sized by the
/// chain's rule: filter `i` holds `n g^i` keys at FPR `fpr (1 - r) r^i`.
pub(super) fn scalable_candidate(n: u64, fpr: f64) -> Result<Candidate> {
    let (g, r) = (
        linebloom::scalable::DEFAULT_GROWTH,
        linebloom::scalable::DEFAULT_TIGHTENING,
    );
    let part = |i: i32| -> Result<(u64, u64)> {
        let capacity = ((n as f64 * g.powi(i)).ceil() as u64).max(1);
        let b =
            model::blocked_bits_per_key((fpr * (1.0 - r) * r.powi(i)).max(model::BLOCKED_MIN_FPR))?;
        Ok((capacity, blocked_bytes(capacity, b)))
    };
    let (_, first) = part(0)?;
    let target = n.saturating_mul(GROWN_FACTOR);
    let (mut held, mut bytes, mut filters) = (0u64, 0u64, 0i32);
    while held < target {
        let (capacity, b) = part(filters)?;
        held += capacity;
        bytes += b;
        filters += 1;
    }
    let blocked = blocked_candidate(target, model::blocked_bits_per_key(fpr)?);
    let k = model::blocked_optimal_k(first as f64 * 8.0 / n as f64);
    Ok(Candidate {
        filter: FilterKind::Scalable,
        bits_per_key: first as f64 * 8.0 / n as f64,
        hashes: k,
        params: format!("x{g} r={r}"),
        fpr,
        bytes: first,
        lines_per_lookup: 1,
        grown: Some(Grown {
            items: target,
            filters: filters as u32,
            bytes,
            bits_per_key: bytes as f64 * 8.0 / target as f64,
            blocked_bits_per_key: blocked.bits_per_key,
        }),
    })
}
