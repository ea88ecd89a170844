//! `linebloom tune`: which filter, with which parameters, for N items and one target (an FPR,
//! a number of bits per key, or a memory budget).
//!
//! This module owns the decision rule and the short measurement that backs a recommendation;
//! the formulas come from [`linebloom::model`], the measurement loop from `measure.rs`.
//!
//! # The rule
//! Every filter is sized for the target by its model: the bits per key it needs for the FPR,
//! or the FPR it reaches in the memory. The blocked filter answers with one cache miss per
//! lookup where a classic filter pays up to k and a cuckoo filter two, but it needs more
//! memory for the same FPR, and the premium grows as the FPR falls (one 512-bit line caps how
//! well its bits spread): +4 % at 1 %, +9 % at 0.1 %, +15 % at 0.01 %, +24 % at 0.001 %. The
//! rule prices that premium: **the blocked filter, unless it needs more than 20 % more memory
//! than the smallest alternative for the same FPR** (at a fixed memory: unless the alternative
//! could reach the blocked filter's FPR in 20 % less memory). Past that, the smallest
//! alternative: a cuckoo filter where its fixed fingerprint widths happen to fit (around
//! 0.01-0.02 % FPR), a classic filter elsewhere.
//!
//! A caller that must delete keys (`--deletes`) chooses between the two filters that can: the
//! cuckoo filter whenever it reaches the target (about a quarter of the counting filter's
//! memory for the same FPR, and faster lookups past the cache one at a time), the counting
//! blocked filter where it cannot (FPR below about 0.012 %, fewer than 8.42 bits per key). A
//! caller that does not know the count (`--grows`: `--items` is where it starts) gets the
//! scalable filter, sized for the target however far it grows, with what it costs at 1000x
//! its start beside one blocked filter sized for that count.
//!
//! The split-block filter (Parquet's layout) is sized and listed beside the others when keys
//! need not be removed, but never chosen: it is the layout to use where Parquet readers must
//! read the filter, and costs more memory than the blocked filter for the same FPR.

use std::hint::black_box;
use std::time::Duration;

use serde::Serialize;

use super::figures::fpr_md;
use super::keys::key_hash;
use super::lineup::build_subject;
use super::measure::{Method, Sampling, Stat, sample_batch, thread_pool, timed_insert};
use super::subject::{Contender, Subject};
use linebloom::error::{Error, MAX_BITS_PER_KEY, Result};
use linebloom::filter::FilterKind;
use linebloom::format::Shape;
use linebloom::hash::{mix64, reduce};
use linebloom::internals::{check_fpr, check_items};
use linebloom::model;
use linebloom::{
    BlockedBloom, ClassicBloom, CountingBlockedBloom, CuckooFilter, ScalableBlockedBloom,
    SplitBlockBloom,
};

/// The memory premium (for the same FPR) the blocked filter's one-miss lookups are worth.
pub const BLOCKED_PREMIUM_LIMIT: f64 = 0.20;

/// The most bits per key a memory budget is spent on (see [`recommend`]).
pub const MEMORY_BITS_CAP: f64 = 64.0;

/// The cuckoo filter's planned load, slots per bucket and fingerprint widths.
use linebloom::cuckoo::{
    FINGERPRINT_WIDTHS as CUCKOO_WIDTHS, SLOTS_PER_BUCKET as CUCKOO_SLOTS,
    TARGET_LOAD as CUCKOO_LOAD,
};

/// What the recommendation must meet.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Target {
    /// A false-positive rate in (0, 1).
    Fpr(f64),
    /// Bits of filter per item.
    BitsPerKey(f64),
    /// Bytes of filter in all.
    Memory(u64),
}

/// A `tune` question.
#[derive(Clone, Debug)]
pub struct TuneRequest {
    /// Items the filter will hold.
    pub items: u64,
    /// The target.
    pub target: Target,
    /// Whether keys must be removable (the cuckoo and counting filters can).
    pub needs_delete: bool,
    /// Whether the count is not known in advance: `items` is where it starts, and keys may keep
    /// arriving (the scalable filter).
    pub grows: bool,
}

/// How far `tune` prices a growing filter: 1000 times its start.
pub const GROWN_FACTOR: u64 = 1000;

/// A scalable filter's size once grown to [`GROWN_FACTOR`] times its start, by the sizing
/// rule of [`linebloom::ScalableBlockedBloom`].
#[derive(Clone, Debug, Serialize)]
pub struct Grown {
    /// Keys it then holds.
    pub items: u64,
    /// Filters in the chain (lines a miss reads).
    pub filters: u32,
    /// Bytes of all its filters.
    pub bytes: u64,
    /// Bits per key at that count.
    pub bits_per_key: f64,
    /// Bits per key of one blocked filter sized for that count at the same FPR.
    pub blocked_bits_per_key: f64,
}

/// One filter sized for the request.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// The filter.
    #[serde(serialize_with = "kind_name")]
    pub filter: FilterKind,
    /// Bits per item it uses.
    pub bits_per_key: f64,
    /// Probes per key (Bloom filters) or fingerprint bits (cuckoo).
    pub hashes: u32,
    /// "k=7" or "f=12".
    pub params: String,
    /// The model's FPR once the items are in.
    pub fpr: f64,
    /// Bytes of filter data (the constructors' rounding included, to within 16 bytes).
    pub bytes: u64,
    /// Cache lines a lookup touches, at most.
    pub lines_per_lookup: u32,
    /// A growing filter: its size at [`GROWN_FACTOR`] times `items` (the other fields give it
    /// at `items`: its first filter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grown: Option<Grown>,
}

/// A filter that cannot meet the target.
#[derive(Clone, Debug, Serialize)]
pub struct Unavailable {
    /// The filter.
    #[serde(serialize_with = "kind_name")]
    pub filter: FilterKind,
    /// Why not.
    pub reason: String,
}

fn kind_name<S: serde::Serializer>(
    kind: &FilterKind,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(kind.name())
}

/// What `tune` recommends.
#[derive(Clone, Debug, Serialize)]
pub struct Recommendation {
    /// The recommended filter.
    pub chosen: Candidate,
    /// The other filters sized for the same target, for comparison.
    pub alternatives: Vec<Candidate>,
    /// Filters that cannot meet the target, and why.
    pub cannot: Vec<Unavailable>,
    /// The blocked filter's memory premium over the smallest alternative for the same FPR.
    pub blocked_premium: Option<f64>,
    /// Two or three lines on the trade-off.
    pub why: Vec<String>,
    /// Anything the caller should know (a useless FPR, a filter larger than memory...).
    pub warnings: Vec<String>,
}

/// ns per key of the recommended filter, from a short measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// The size of the filter measured (the recommended one, or a smaller one of the same
    /// parameters when the recommendation is larger than the measurement's cap).
    pub bytes: usize,
    /// Keys it was sized for.
    pub items: usize,
    /// Share of those keys inserted before the time budget ran out.
    pub filled: f64,
    /// Bulk insert (all threads) or one-at-a-time insert, ns per key.
    pub insert_ns: f64,
    /// Whether `insert_ns` is the parallel insert.
    pub parallel_insert: bool,
    /// Lookup of inserted keys, one at a time.
    pub hit: Stat,
    /// Lookup of never-inserted keys, one at a time.
    pub miss: Stat,
    /// Never-inserted keys through the batched lookup.
    pub batched_miss: Stat,
    /// What the figures stand for.
    pub note: String,
}

/// Sizes every filter for the request and picks one by the rule in the module docs.
pub fn recommend(req: &TuneRequest) -> Result<Recommendation> {
    check_items(req.items)?;
    if req.grows {
        return recommend_growing(req);
    }
    let n = req.items;
    let mut candidates = Vec::new();
    let mut cannot = Vec::new();
    let mut warnings = Vec::new();
    let (blocked, classic, cuckoo, counting) = match req.target {
        Target::Fpr(p) => {
            check_fpr(p)?;
            (
                blocked_for_fpr(n, p),
                classic_for_fpr(n, p),
                cuckoo_for_fpr(n, p),
                counting_for_fpr(n, p),
            )
        }
        Target::BitsPerKey(b) => {
            check_bits(b, "bits_per_key", b.to_string())?;
            if b > MEMORY_BITS_CAP {
                warnings.push(format!(
                    "{b} bits per key is more than any filter here needs: at {MEMORY_BITS_CAP} every \
                     one is below 1e-8 FPR"
                ));
            }
            (
                blocked_for_bits(n, b),
                classic_for_bits(n, b),
                cuckoo_for_bits(n, b),
                Ok(counting_candidate(n, b)),
            )
        }
        Target::Memory(budget) => {
            let b = budget as f64 * 8.0 / n as f64;
            // Only the lower bound: a generous budget is capped below, not refused.
            check_bits(
                b.min(MEMORY_BITS_CAP),
                "memory",
                format!("{budget} bytes for {n} items ({b:.3} bits/key)"),
            )?;
            // A budget is a ceiling, not a size: past MEMORY_BITS_CAP bits per key every
            // filter's FPR is negligible and more bits only add probes.
            let bytes = if b > MEMORY_BITS_CAP {
                warnings.push(format!(
                    "the budget allows {b:.0} bits per key; no filter here needs more than \
                     {MEMORY_BITS_CAP} (FPR below 1e-8 for every one), so the recommendation \
                     uses {MEMORY_BITS_CAP} bits per key and leaves the rest"
                ));
                (n as f64 * MEMORY_BITS_CAP / 8.0) as u64
            } else {
                budget
            };
            let b = b.min(MEMORY_BITS_CAP);
            // The blocked filter rounds to whole lines: take the lines that fit.
            let lines = (bytes / 64).max(1);
            let blocked = if bytes >= 64 {
                blocked_for_bits(n, lines as f64 * 512.0 / n as f64)
            } else {
                Err("the budget is smaller than one 64-byte line".to_string())
            };
            // Whole lines as for the blocked filter.
            let counting = if bytes >= 64 {
                Ok(counting_candidate(n, lines as f64 * 512.0 / n as f64))
            } else {
                Err("the budget is smaller than one 64-byte line".to_string())
            };
            (
                blocked,
                classic_for_bits(n, b),
                cuckoo_for_bits(n, b),
                counting,
            )
        }
    };
    // The counting filter is a candidate only where keys must be removed: elsewhere a blocked
    // filter gives the same lookups in a quarter of the memory.
    let counting = req.needs_delete.then_some((FilterKind::Counting, counting));
    for (kind, c) in [
        (FilterKind::Blocked, blocked),
        (FilterKind::Classic, classic),
        (FilterKind::Cuckoo, cuckoo),
    ]
    .into_iter()
    .chain(counting)
    {
        match c {
            Ok(c) => candidates.push(c),
            Err(reason) => cannot.push(Unavailable {
                filter: kind,
                reason,
            }),
        }
    }
    if candidates.is_empty() {
        return Err(Error::InvalidParameter {
            name: "target",
            value: format!("{:?}", req.target),
            allowed: "a target some filter can meet",
        });
    }

    let find = |k: FilterKind| candidates.iter().find(|c| c.filter == k).cloned();
    let alternatives: Vec<Candidate> = candidates
        .iter()
        .filter(|c| !matches!(c.filter, FilterKind::Blocked | FilterKind::Counting))
        .cloned()
        .collect();
    let blocked = find(FilterKind::Blocked);
    // The bits per key the best alternative needs to match the blocked filter's FPR.
    let premium = blocked.as_ref().and_then(|b| {
        let alt_bits = [
            model::classic_bits_per_key(b.fpr).ok(),
            cuckoo_for_fpr(n, b.fpr).ok().map(|c| c.bits_per_key),
        ]
        .into_iter()
        .flatten()
        .fold(f64::INFINITY, f64::min);
        alt_bits
            .is_finite()
            .then(|| b.bits_per_key / alt_bits - 1.0)
    });
    let best_alternative = match req.target {
        // The smallest for the FPR.
        Target::Fpr(_) => alternatives
            .iter()
            .min_by(|a, b| a.bytes.cmp(&b.bytes))
            .cloned(),
        // The lowest FPR in the memory.
        _ => alternatives
            .iter()
            .min_by(|a, b| a.fpr.total_cmp(&b.fpr))
            .cloned(),
    };

    let mut why = Vec::new();
    let chosen = if req.needs_delete {
        match (find(FilterKind::Cuckoo), find(FilterKind::Counting)) {
            (Some(c), counting) => {
                why.push(format!(
                    "Deletes were asked for: the cuckoo and counting filters remove keys (the \
                     plain Bloom filters cannot forget one without forgetting others); the \
                     cuckoo filter meets the target in {}.",
                    match counting {
                        Some(k) => format!(
                            "{:.0} % of the counting filter's memory",
                            c.bytes as f64 / k.bytes as f64 * 100.0
                        ),
                        None => "less memory".to_string(),
                    }
                ));
                c
            }
            (None, Some(k)) => {
                why.push(
                    "Deletes were asked for and the cuckoo filter cannot meet the target: the \
                     counting filter removes keys at any FPR, in 4-bit counters."
                        .to_string(),
                );
                k
            }
            (None, None) => {
                let reasons: Vec<String> = cannot
                    .iter()
                    .filter(|u| matches!(u.filter, FilterKind::Cuckoo | FilterKind::Counting))
                    .map(|u| format!("{}: {}", u.filter.name(), u.reason))
                    .collect();
                return Err(Error::InvalidParameter {
                    name: "target",
                    value: format!("{:?} with deletes ({})", req.target, reasons.join("; ")),
                    allowed: "a target a cuckoo filter (FPR at least about 0.0116 %, 8.42 bits \
                              per key or more) or a counting filter (FPR at least about 1e-7) \
                              can meet, the filters here that delete",
                });
            }
        }
    } else {
        match (&blocked, premium) {
            (Some(b), Some(p)) if p <= BLOCKED_PREMIUM_LIMIT => b.clone(),
            // No alternative reaches the blocked filter's FPR at all.
            (Some(b), None) => b.clone(),
            _ => best_alternative
                .clone()
                .or_else(|| blocked.clone())
                .ok_or_else(|| Error::InvalidParameter {
                    name: "target",
                    value: format!("{:?}", req.target),
                    allowed: "a target some filter can meet",
                })?,
        }
    };
    why.extend(explain(&chosen, premium, &candidates));

    if chosen.fpr > 0.10 {
        warnings.push(format!(
            "at {:.2} bits per key the filter answers \"maybe\" to {} of absent keys: \
             it will filter out little; give it more memory",
            chosen.bits_per_key,
            fpr_md(chosen.fpr)
        ));
    }
    let memory = super::machine::Machine::detect().memory_bytes;
    if let Some(total) = memory
        && chosen.bytes > total / 2
    {
        warnings.push(format!(
            "the filter takes {}, more than half of this machine's {} of memory",
            super::byte_size::format_byte_size(chosen.bytes as usize),
            super::byte_size::format_byte_size(total as usize)
        ));
    }
    let mut alternatives: Vec<Candidate> = candidates
        .into_iter()
        .filter(|c| c.filter != chosen.filter)
        .collect();
    if !req.needs_delete {
        match split_block_for(n, req.target) {
            Ok(c) => alternatives.push(c),
            Err(reason) => cannot.push(Unavailable {
                filter: FilterKind::SplitBlock,
                reason,
            }),
        }
    }
    Ok(Recommendation {
        chosen,
        alternatives,
        cannot,
        blocked_premium: premium,
        why,
        warnings,
    })
}

fn check_bits(b: f64, name: &'static str, value: String) -> Result<()> {
    if !(1.0..=MAX_BITS_PER_KEY).contains(&b) {
        return Err(Error::InvalidParameter {
            name,
            value,
            allowed: "between 1 and 1024 bits per item (below 1 bit no filter works; above \
                      1024 an exact set of the keys is smaller)",
        });
    }
    Ok(())
}

/// Two or three lines on what the chosen filter gives and costs next to the others.
fn explain(chosen: &Candidate, premium: Option<f64>, all: &[Candidate]) -> Vec<String> {
    let other = |k: FilterKind| all.iter().find(|c| c.filter == k);
    let mut lines = Vec::new();
    match chosen.filter {
        FilterKind::Blocked => {
            lines.push(format!(
                "blocked: every lookup reads one 64-byte line (one cache miss), where a classic \
                 filter reads up to {} and a cuckoo filter two.",
                other(FilterKind::Classic).map_or(chosen.hashes, |c| c.hashes)
            ));
            if let Some(p) = premium {
                lines.push(format!(
                    "The price: {:.1} % more memory than the smallest alternative for the same \
                     FPR (the rule accepts up to {:.0} %; the premium grows as the FPR falls).",
                    p * 100.0,
                    BLOCKED_PREMIUM_LIMIT * 100.0
                ));
            }
        }
        FilterKind::Classic => {
            lines.push(format!(
                "classic: the lowest FPR per bit of the three, but a lookup of a present key \
                 reads {} scattered lines (an absent key stops at its first zero bit, about 2).",
                chosen.hashes
            ));
            if let Some(p) = premium {
                lines.push(format!(
                    "The blocked filter would need {:.0} % more memory for this FPR (the rule \
                     takes it up to {:.0} %).",
                    p * 100.0,
                    BLOCKED_PREMIUM_LIMIT * 100.0
                ));
            }
        }
        FilterKind::Cuckoo => {
            lines.push(format!(
                "cuckoo: {}-bit fingerprints, two buckets per lookup, and keys can be removed; \
                 its fixed widths (8, 12, 16 bits) make it the smallest only near their FPRs \
                 (2.9 %, 0.19 %, 0.012 %), and inserts slow down as the table fills.",
                chosen.hashes
            ));
            if let Some(p) = premium {
                lines.push(format!(
                    "The blocked filter would need {:.0} % more memory for this FPR.",
                    p * 100.0
                ));
            }
        }
        FilterKind::Counting => lines.push(format!(
            "counting: the blocked layout with 4-bit counters (k={}), so keys can be removed \
             and an insert never fails; one line per lookup, for four times the memory of a \
             blocked filter with as many counters per key as it has bits.",
            chosen.hashes
        )),
        FilterKind::Scalable => {
            lines.push(
                "scalable: a chain of blocked filters that grows with its keys, its FPR under \
                 the target however far it grows; a miss reads one line in each filter."
                    .to_string(),
            );
            if let Some(g) = &chosen.grown {
                lines.push(format!(
                    "At {}x its start ({} keys) it is {} filters, {:.1} bits per key; one \
                     blocked filter sized for that count would take {:.1} and read one line: \
                     if the most keys it will hold is known, give that as --items without \
                     --grows.",
                    GROWN_FACTOR, g.items, g.filters, g.bits_per_key, g.blocked_bits_per_key
                ));
            }
        }
        FilterKind::SplitBlock => lines.push(
            "split-block: Parquet's layout (32-byte blocks, 8 bits per key), for filters that \
             Parquet readers must read."
                .to_string(),
        ),
    }
    lines
}

/// The bytes of the filter a builder would build, by the library's own sizing rule
/// (`shape()`); a size no filter can have (too large to address) counts as `u64::MAX`, which
/// no target picks.
fn shape_bytes(shape: Result<Shape>) -> u64 {
    shape.and_then(|s| s.size_bytes()).unwrap_or(u64::MAX)
}

/// Blocked filter bytes: whole 64-byte lines.
fn blocked_bytes(n: u64, bits_per_key: f64) -> u64 {
    shape_bytes(BlockedBloom::builder(n).bits_per_key(bits_per_key).shape())
}

/// Classic filter bytes: whole 64-bit words.
fn classic_bytes(n: u64, bits_per_key: f64) -> u64 {
    shape_bytes(ClassicBloom::builder(n).bits_per_key(bits_per_key).shape())
}

/// Cuckoo filter bytes: enough 4-slot buckets for the items at 95 % load.
fn cuckoo_bytes(n: u64, fingerprint_bits: u32) -> u64 {
    shape_bytes(
        CuckooFilter::builder(n)
            .fingerprint_bits(fingerprint_bits)
            .shape(),
    )
}

fn blocked_candidate(n: u64, bits_per_key: f64) -> Candidate {
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

fn blocked_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
    model::blocked_bits_per_key(p)
        .map(|b| blocked_candidate(n, b))
        .map_err(|e| e.to_string())
}

fn blocked_for_bits(n: u64, b: f64) -> std::result::Result<Candidate, String> {
    Ok(blocked_candidate(n, b))
}

fn classic_candidate(n: u64, bits_per_key: f64) -> Candidate {
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

fn classic_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
    model::classic_bits_per_key(p)
        .map(|b| classic_candidate(n, b))
        .map_err(|e| e.to_string())
}

fn classic_for_bits(n: u64, b: f64) -> std::result::Result<Candidate, String> {
    Ok(classic_candidate(n, b))
}

fn cuckoo_candidate(n: u64, f: u32) -> Candidate {
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

fn cuckoo_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
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
fn split_block_for(n: u64, target: Target) -> std::result::Result<Candidate, String> {
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

fn cuckoo_for_bits(n: u64, b: f64) -> std::result::Result<Candidate, String> {
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

fn counting_candidate(n: u64, bits_per_key: f64) -> Candidate {
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

fn counting_for_fpr(n: u64, p: f64) -> std::result::Result<Candidate, String> {
    linebloom::counting::counting_bits_per_key(p)
        .map(|b| counting_candidate(n, b))
        .map_err(|e| e.to_string())
}

/// The scalable filter for a count that starts at `n`, its FPR under `fpr`, sized by the
/// chain's rule: filter `i` holds `n g^i` keys at FPR `fpr (1 - r) r^i`.
fn scalable_candidate(n: u64, fpr: f64) -> Result<Candidate> {
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

/// `--grows`: the scalable filter, its FPR target from the request (a bits-per-key target
/// becomes the blocked filter's FPR at those bits, as the report grows its chains).
fn recommend_growing(req: &TuneRequest) -> Result<Recommendation> {
    if req.needs_delete {
        return Err(Error::InvalidParameter {
            name: "deletes",
            value: "--deletes with --grows".to_string(),
            allowed: "one of them: no filter here both grows and removes keys (size a counting \
                      filter with --deletes for the most keys it will hold)",
        });
    }
    let fpr = match req.target {
        Target::Fpr(p) => {
            check_fpr(p)?;
            p
        }
        Target::BitsPerKey(b) => {
            check_bits(b, "bits_per_key", b.to_string())?;
            model::blocked_fpr(b, model::blocked_optimal_k(b)).max(model::BLOCKED_MIN_FPR)
        }
        Target::Memory(m) => {
            return Err(Error::InvalidParameter {
                name: "memory",
                value: format!("{m} bytes with --grows"),
                allowed: "--fpr or --bits-per-key: a growing filter takes memory as keys \
                          arrive, so no budget sizes it",
            });
        }
    };
    let chosen = scalable_candidate(req.items, fpr)?;
    let why = explain(&chosen, None, std::slice::from_ref(&chosen));
    let mut warnings = Vec::new();
    if fpr > 0.10 {
        warnings.push(format!(
            "the chain answers \"maybe\" to up to {} of absent keys: it will filter out little",
            fpr_md(fpr)
        ));
    }
    Ok(Recommendation {
        chosen,
        alternatives: Vec::new(),
        cannot: Vec::new(),
        blocked_premium: None,
        why,
        warnings,
    })
}

/// How long the measurement may take and how large a filter it may build.
#[derive(Clone, Copy, Debug)]
pub struct MeasureBudget {
    /// The largest filter built; a larger recommendation is measured at this size with the
    /// same parameters.
    pub max_bytes: usize,
    /// Time for filling the filter (lookups take about a fifth more on top).
    pub fill_time: Duration,
    /// Lookups per batch.
    pub lookups: usize,
}

impl Default for MeasureBudget {
    /// 64 MiB (past a 32 MiB last-level cache), 1.2 s of filling, 1 Mi lookups per batch (64
    /// MiB of lines, so repeated batches do not run from the cache): about 2 s.
    fn default() -> Self {
        MeasureBudget {
            max_bytes: 64 << 20,
            fill_time: Duration::from_millis(1200),
            lookups: 1 << 20,
        }
    }
}

/// Builds the recommended filter (or one of its parameters at the budget's size), fills it
/// for at most the budget's time, and measures its lookups.
pub fn measure(rec: &Recommendation, budget: MeasureBudget, seed: u64) -> Result<Measured> {
    let c = &rec.chosen;
    // A growing filter is measured grown: its size and bits per key at GROWN_FACTOR times
    // its start, from a start a GROWN_FACTOR-th of the keys it is filled with.
    let (full_bytes, bits_per_key) = match &c.grown {
        Some(g) => (g.bytes, g.bits_per_key),
        None => (c.bytes, c.bits_per_key),
    };
    // A chain's inserts and misses read each of its filters: measured no larger than the
    // report's speed sweep measures it, so that the fill completes in the time budget.
    let contender = Contender::Ours(c.filter);
    let most = contender
        .speed_sweep_max_bytes()
        .map_or(budget.max_bytes, |m| m.min(budget.max_bytes));
    let bytes = (full_bytes as usize).min(most.max(64));
    let items = ((bytes as f64 * 8.0 / bits_per_key) as usize).max(1);
    let mut subject: Box<dyn Subject> = match c.filter {
        FilterKind::Scalable => Box::new(
            ScalableBlockedBloom::builder((items as u64 / GROWN_FACTOR).max(1))
                .fpr(c.fpr)
                .seed(seed)
                .build()?,
        ),
        _ => build_subject(contender, items, c.bits_per_key, seed)?,
    };
    let pool = if subject.has_parallel_insert() {
        Some(thread_pool(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        )?)
    } else {
        None
    };
    let chunk = (items / 16).clamp(1 << 12, 1 << 20);
    let (mut inserted, mut fill) = (0usize, Duration::ZERO);
    let mut buffer = Vec::with_capacity(chunk);
    while inserted < items && fill < budget.fill_time {
        let end = (inserted + chunk).min(items);
        buffer.clear();
        buffer.extend((inserted as u64..end as u64).map(|i| key_hash(seed, 0, i)));
        let how = match &pool {
            Some(pool) => Method::Parallel(pool),
            None => Method::OneByOne,
        };
        fill += timed_insert(how, &mut subject, &buffer)?.1;
        inserted = end;
    }
    subject.finish()?;
    let sampling = Sampling {
        reps: 3,
        min_sample: Duration::from_millis(20),
    };
    let n = budget.lookups.max(1);
    let hits: Vec<u64> = (0..n as u64)
        .map(|j| key_hash(seed, 0, reduce(mix64(j), inserted) as u64))
        .collect();
    let misses: Vec<u64> = (0..n as u64).map(|j| key_hash(seed, 1, j)).collect();
    let hit = sample_batch(sampling, n, || subject.count_each(black_box(&hits)));
    let miss = sample_batch(sampling, n, || subject.count_each(black_box(&misses)));
    let mut out = vec![false; n];
    let batched_miss = sample_batch(sampling, n, || {
        subject
            .count_batched(black_box(&misses), &mut out)
            .and_then(|r| r.ok())
            .unwrap_or(0)
    });
    let filled = inserted as f64 / items as f64;
    let mut note = if bytes < full_bytes as usize {
        format!(
            "measured on a {} filter with the same parameters (the recommended {} is larger \
             than the measurement builds); a larger filter can only be slower per lookup",
            super::byte_size::format_byte_size(bytes),
            super::byte_size::format_byte_size(full_bytes as usize)
        )
    } else {
        format!(
            "measured on the recommended {} filter",
            super::byte_size::format_byte_size(bytes)
        )
    };
    if filled < 1.0 {
        note.push_str(&format!(
            ", filled to {:.0} % of its keys in the time budget",
            filled * 100.0
        ));
    }
    Ok(Measured {
        bytes: subject.size_bytes(),
        items,
        filled,
        insert_ns: super::measure::ns_per_op(fill, inserted),
        parallel_insert: pool.is_some(),
        hit,
        miss,
        batched_miss,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(items: u64, target: Target) -> Result<Recommendation> {
        recommend(&TuneRequest {
            items,
            target,
            needs_delete: false,
            grows: false,
        })
    }

    #[test]
    fn sizes_match_the_constructors() {
        for n in [1u64, 1000, 123_457] {
            for b in [6.0, 10.0, 13.7] {
                let f = linebloom::BlockedBloom::with_bits_per_key(n, b).unwrap();
                assert_eq!(blocked_bytes(n, b), f.size_bytes() as u64);
                let f = linebloom::ClassicBloom::with_bits_per_key(n, b).unwrap();
                assert_eq!(classic_bytes(n, b), f.size_bytes() as u64);
            }
            for f in CUCKOO_WIDTHS {
                let c = linebloom::CuckooFilter::builder(n)
                    .fingerprint_bits(f)
                    .build()
                    .unwrap();
                // The table in memory: whole 8-byte words, 2 bytes more for 12-bit buckets.
                let diff = c.size_bytes() as i64 - cuckoo_bytes(n, f) as i64;
                assert!((0..16).contains(&diff), "n={n} f={f}: {diff}");
            }
        }
    }

    #[test]
    fn scalable_sizes_match_the_chain() {
        for (n, p) in [(100u64, 0.01), (37, 0.001), (1, 0.05)] {
            let c = scalable_candidate(n, p).unwrap();
            let g = c.grown.clone().unwrap();
            let mut s = linebloom::ScalableBlockedBloom::with_fpr(n, p).unwrap();
            assert_eq!(s.size_bytes() as u64, c.bytes, "n={n} p={p}");
            let mut i = 0u64;
            while s.capacity() < g.items {
                s.insert_hash(mix64(i));
                i += 1;
            }
            assert_eq!(s.size_bytes() as u64, g.bytes, "n={n} p={p}");
            assert_eq!(s.filters() as u32, g.filters, "n={n} p={p}");
        }
    }

    #[test]
    fn counting_sizes_match_the_constructor() {
        for n in [1u64, 1000, 123_457] {
            for b in [16.0, 40.0, 57.3] {
                let f = linebloom::CountingBlockedBloom::with_bits_per_key(n, b).unwrap();
                let c = counting_candidate(n, b);
                assert_eq!(c.bytes, f.size_bytes() as u64);
                assert_eq!(c.hashes, f.k());
            }
        }
    }

    #[test]
    fn the_rule() {
        assert_eq!(
            rec(1_000_000, Target::Fpr(0.01)).unwrap().chosen.filter,
            FilterKind::Blocked
        );
        assert_eq!(
            rec(1_000_000, Target::Fpr(1e-5)).unwrap().chosen.filter,
            FilterKind::Classic
        );
        assert_eq!(
            rec(1_000_000, Target::Fpr(1.2e-4)).unwrap().chosen.filter,
            FilterKind::Cuckoo
        );
        assert_eq!(
            rec(1_000_000, Target::BitsPerKey(10.0))
                .unwrap()
                .chosen
                .filter,
            FilterKind::Blocked
        );
        assert_eq!(
            rec(1_000_000, Target::BitsPerKey(40.0))
                .unwrap()
                .chosen
                .filter,
            FilterKind::Classic
        );
    }
}
