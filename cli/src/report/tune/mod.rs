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

mod candidates;
mod explain;
mod measure;

use candidates::*;
use explain::explain;
pub use measure::{MeasureBudget, measure};

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
