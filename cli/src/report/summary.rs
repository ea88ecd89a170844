//! The verdict of a run: what to pick for each common need, with the measured figure that
//! decides it, and the README's headline claims checked against this machine. `report.md`
//! opens with it ([`summary_markdown`], at most [`SUMMARY_MAX_LINES`] lines) and `linebloom
//! report` prints it when it ends ([`summary_text`]).
//!
//! Everything here is read from the [`Report`]: the machine, the sizes and every figure. Only
//! the rules are fixed: which filters serve which need, and what a claim says. Figures come from
//! the largest filter size measured (where a filter's lookups pay for memory, not cache), and a
//! pick for lookups considers only filters whose measured FPR is at most 1.5 times the blocked
//! filter's model at the sweep's bits per key, so a filter is not picked for being fast and
//! inaccurate.

use std::fmt::Write as _;

use super::byte_size::format_byte_size;
use super::figures::fpr_md;
use super::speed::SpeedRow;
use super::subject::{Contender, Peer};
use super::sweep::Report;
use linebloom::filter::FilterKind;

/// The most lines the summary takes in `report.md`, its heading included.
pub const SUMMARY_MAX_LINES: usize = 15;

/// A filter's measured FPR may be at most this many times the reference FPR (the blocked
/// filter's model) to be picked for lookups.
const FPR_SLACK: f64 = 1.5;

/// A filter that removes keys pays for it in FPR or memory: it may have up to this many times
/// the lookup bound to be picked for deletes.
const DELETES_FPR_SLACK: f64 = 3.0;

/// The FPR the "fewest bits per key" need asks for.
const FEWEST_BITS_TARGET: f64 = 0.01;

/// One need, the filter this run picks for it, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    /// The need, e.g. "point lookups on a hot path".
    pub need: &'static str,
    /// The filter picked (and how to call it), or "—" when the run measured nothing for it.
    pub pick: String,
    /// The measured figures that decide it.
    pub why: String,
}

/// One claim of the README and what this run says of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// The claim, in short.
    pub claim: &'static str,
    /// "holds (…)", "here: …" or "not tested: …".
    pub verdict: String,
}

/// The summary of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The machine, the SIMD path and the sizes, in one sentence.
    pub machine: String,
    /// The size the figures come from, e.g. "64 MiB, 10 bits/key".
    pub at: String,
    /// One pick per need.
    pub picks: Vec<Pick>,
    /// The README's headline claims.
    pub claims: Vec<Claim>,
}

/// ns with three significant digits.
fn ns(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Reads a run and says what to pick.
pub fn summarize(report: &Report) -> Summary {
    let m = &report.machine;
    let largest = report.speed.iter().map(|r| r.target_bytes).max();
    let llc = m.last_level_cache_bytes();
    let cache_words = match llc {
        Some(b) => format!("last-level cache {}", format_byte_size(b)),
        None => "cache size unknown".to_string(),
    };
    let where_largest = match (largest, llc) {
        (Some(l), Some(c)) if l > c => format!(
            "; the largest filter, {}, is {:.1}× that cache",
            format_byte_size(l),
            l as f64 / c as f64
        ),
        (Some(l), Some(_)) => format!(
            "; the largest filter, {}, fits in that cache, so no figure here is past it",
            format_byte_size(l)
        ),
        (Some(l), None) => format!("; the largest filter is {}", format_byte_size(l)),
        (None, _) => String::new(),
    };
    // A build whose flags name no target CPU is what a crate depending on linebloom gets; the
    // SIMD path is chosen at run time either way, the rest of the code is not.
    let build = if super::machine::build_kind() == "target-cpu" {
        "a build for this CPU (`target-cpu`)"
    } else {
        "a default build (no `target-cpu`: what a dependent gets)"
    };
    let machine = format!(
        "{} ({} logical CPUs, {cache_words}), SIMD path {}, {build}; the run took {:.0} s{where_largest}.",
        m.cpu_model, m.logical_cpus, m.simd_path, report.elapsed_s
    );
    let at = match largest {
        Some(l) => format!(
            "{}, {} bits/key",
            format_byte_size(l),
            report.config.bits_per_key
        ),
        None => "—".to_string(),
    };
    let rows: Vec<&SpeedRow> = match largest {
        Some(l) => report
            .speed
            .iter()
            .filter(|r| r.target_bytes == l)
            .collect(),
        None => Vec::new(),
    };
    let past_cache = matches!((largest, llc), (Some(l), Some(c)) if l > c);
    Summary {
        machine,
        at,
        picks: vec![
            point_lookups(&rows),
            batched_lookups(&rows),
            building(report, largest),
            deletes(&rows),
            growth(report),
            fewest_bits(report),
        ],
        claims: claims(report, &rows, past_cache, largest, llc),
    }
}

fn row<'a>(rows: &[&'a SpeedRow], name: &str) -> Option<&'a SpeedRow> {
    rows.iter().copied().find(|r| r.filter == name)
}

/// The FPR a filter may have to be picked for lookups.
fn fpr_bound(rows: &[&SpeedRow]) -> Option<f64> {
    let reference = row(rows, "blocked").and_then(|r| r.model_fpr).or_else(|| {
        rows.iter()
            .filter_map(|r| r.model_fpr)
            .min_by(|a, b| a.total_cmp(b))
    })?;
    Some(FPR_SLACK * reference)
}

fn lookup_ns(r: &SpeedRow) -> f64 {
    0.5 * (r.hit.median_ns + r.miss.median_ns)
}

fn threads(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

fn none(need: &'static str) -> Pick {
    Pick {
        need,
        pick: "—".into(),
        why: "not measured in this run".into(),
    }
}

/// Lowest mean of hit and miss, one key at a time, among filters accurate enough.
fn point_lookups(rows: &[&SpeedRow]) -> Pick {
    let need = "point lookups on a hot path";
    let Some(bound) = fpr_bound(rows) else {
        return none(need);
    };
    let mut eligible: Vec<&SpeedRow> = rows
        .iter()
        .copied()
        .filter(|r| r.measured_fpr <= bound)
        .collect();
    eligible.sort_by(|a, b| lookup_ns(a).total_cmp(&lookup_ns(b)));
    let Some(best) = eligible.first() else {
        return none(need);
    };
    let figure = |r: &SpeedRow| {
        format!(
            "hit {} / miss {} ns, FPR {}",
            ns(r.hit.median_ns),
            ns(r.miss.median_ns),
            fpr_md(r.measured_fpr)
        )
    };
    // Beside the pick: the best of the other side (ours against the peers).
    let other = eligible.iter().find(|r| r.peer != best.peer);
    let mut why = figure(best);
    if let Some(o) = other {
        let _ = write!(why, " ({}: {})", o.filter, figure(o));
    }
    Pick {
        need,
        pick: best.filter.clone(),
        why,
    }
}

/// Lowest batched miss, against the fastest one-key miss.
fn batched_lookups(rows: &[&SpeedRow]) -> Pick {
    let need = "batches of lookups";
    let Some(bound) = fpr_bound(rows) else {
        return none(need);
    };
    let best = rows
        .iter()
        .filter(|r| r.measured_fpr <= bound)
        .filter_map(|r| r.batched_miss.as_ref().map(|s| (*r, s.median_ns)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let Some((r, batched)) = best else {
        return none(need);
    };
    let mut why = format!("batched miss {} ns/key", ns(batched));
    if let Some(ratio) = r.batched_miss_ratio.filter(|x| x.is_finite()) {
        let _ = write!(why, " ({ratio:.2}× the memory limit)");
    }
    let one_key = rows
        .iter()
        .filter(|o| o.peer)
        .min_by(|a, b| a.miss.median_ns.total_cmp(&b.miss.median_ns));
    if let Some(o) = one_key {
        let _ = write!(
            why,
            "; fastest peer, one key at a time: {} {} ns",
            o.filter,
            ns(o.miss.median_ns)
        );
    }
    Pick {
        need,
        pick: format!("{} `contains_hashes`", r.filter),
        why,
    }
}

/// The fastest way to fill a new filter at the largest size: bulk inserts and whole-batch
/// builds, against the fastest peer's one-key insert.
fn building(report: &Report, largest: Option<usize>) -> Pick {
    let need = "building fast";
    let Some(l) = largest else {
        return none(need);
    };
    let bulk = report.bulk.iter().filter(|b| b.target_bytes == l).map(|b| {
        (
            format!("{} `par_insert_hashes`, {}", b.filter, threads(b.threads)),
            b.insert.median_ns,
        )
    });
    let builds = report
        .builds
        .iter()
        .filter(|b| b.target_bytes == l)
        .map(|b| {
            let way = b.method.split_whitespace().next().unwrap_or("");
            (
                format!("blocked `{way}`, {}", threads(b.threads)),
                b.insert.median_ns,
            )
        });
    let Some((way, best)) = bulk.chain(builds).min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return none(need);
    };
    let mut why = format!("{} ns/key", ns(best));
    let peer = report
        .speed
        .iter()
        .filter(|r| r.target_bytes == l && r.peer)
        .min_by(|a, b| a.insert.median_ns.total_cmp(&b.insert.median_ns));
    if let Some(p) = peer {
        let _ = write!(
            why,
            "; fastest peer ({} one key at a time): {} ns",
            p.filter,
            ns(p.insert.median_ns)
        );
    }
    Pick {
        need,
        pick: way,
        why,
    }
}

/// Among the filters that remove keys, the fastest lookups, with their memory and FPR.
fn deletes(rows: &[&SpeedRow]) -> Pick {
    let need = "deletes";
    let deleting = [
        Contender::Ours(FilterKind::Cuckoo),
        Contender::Ours(FilterKind::Counting),
        Contender::Peer(Peer::CuckooFilter),
    ];
    let mut found: Vec<&SpeedRow> = deleting
        .iter()
        .filter_map(|c| row(rows, c.name()))
        .collect();
    found.sort_by(|a, b| lookup_ns(a).total_cmp(&lookup_ns(b)));
    // The fastest whose FPR is of use (a counting filter at the sweep's bits per key has few
    // counters per key), else the most accurate.
    let useful = fpr_bound(rows).map_or(0.0, |b| DELETES_FPR_SLACK * b);
    let best = found
        .iter()
        .position(|r| r.measured_fpr <= useful)
        .or_else(|| {
            (0..found.len())
                .min_by(|&a, &b| found[a].measured_fpr.total_cmp(&found[b].measured_fpr))
        });
    let Some(best) = best else {
        return none(need);
    };
    let best = found.remove(best);
    let figure = |r: &SpeedRow| {
        format!(
            "hit {} / miss {} ns, {:.1} bits/key, FPR {}",
            ns(r.hit.median_ns),
            ns(r.miss.median_ns),
            r.bits_per_key,
            fpr_md(r.measured_fpr)
        )
    };
    let mut why = figure(best);
    for o in &found {
        let _ = write!(why, "; {}: {}", o.filter, figure(o));
    }
    Pick {
        need,
        pick: best.filter.clone(),
        why,
    }
}

/// Scalable against growable-bloom-filter at the largest size both were measured at.
fn growth(report: &Report) -> Pick {
    let need = "growth (count not known)";
    let growing = [
        Contender::Ours(FilterKind::Scalable).name(),
        Contender::Peer(Peer::GrowableBloom).name(),
    ];
    let size = report
        .speed
        .iter()
        .filter(|r| growing.contains(&r.filter.as_str()))
        .map(|r| r.target_bytes)
        .max();
    let Some(size) = size else {
        return none(need);
    };
    let mut found: Vec<&SpeedRow> = report
        .speed
        .iter()
        .filter(|r| r.target_bytes == size && growing.contains(&r.filter.as_str()))
        .collect();
    found.sort_by(|a, b| lookup_ns(a).total_cmp(&lookup_ns(b)));
    let figure = |r: &SpeedRow| {
        format!(
            "miss {} ns, {:.1} bits/key, FPR {} at {}",
            ns(r.miss.median_ns),
            r.bits_per_key,
            fpr_md(r.measured_fpr),
            format_byte_size(size)
        )
    };
    let best = found[0];
    let mut why = figure(best);
    for o in &found[1..] {
        let _ = write!(
            why,
            "; {}: miss {} ns, {:.1} bits/key",
            o.filter,
            ns(o.miss.median_ns),
            o.bits_per_key
        );
    }
    Pick {
        need,
        pick: best.filter.clone(),
        why,
    }
}

/// Bits per key a filter needs for `target` FPR, from its FPR sweep: interpolated in log FPR
/// between the grid points around it; a filter of one size (xorf) counts where it already
/// meets the target.
fn bits_for(report: &Report, filter: &str, target: f64) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = report
        .fpr
        .iter()
        .filter(|r| r.filter == filter && r.measured_fpr > 0.0)
        .map(|r| (r.bits_per_key, r.measured_fpr))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(&(b, p)) = points.first()
        && p <= target
    {
        // Already below the target at its fewest bits: that is all it is known to need.
        return (points.len() == 1).then_some(b);
    }
    points.windows(2).find_map(|w| {
        let ((b0, p0), (b1, p1)) = (w[0], w[1]);
        (p0 > target && p1 <= target).then(|| {
            let t = (p0.ln() - target.ln()) / (p0.ln() - p1.ln());
            b0 + t * (b1 - b0)
        })
    })
}

/// The fewest bits per key for a 1 % FPR, from the FPR sweep.
fn fewest_bits(report: &Report) -> Pick {
    let need = "fewest bits per key (1 % FPR)";
    let mut found: Vec<(&str, f64)> = report
        .config
        .filters
        .iter()
        .filter_map(|c| bits_for(report, c.name(), FEWEST_BITS_TARGET).map(|b| (c.name(), b)))
        .collect();
    found.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some(&(best, bits)) = found.first() else {
        return none(need);
    };
    let mut why = format!("{bits:.1} bits/key");
    if best == Contender::Peer(Peer::BinaryFuse8).name() {
        why.push_str(" (static: built once from all keys)");
    }
    let others: Vec<String> = found[1..]
        .iter()
        .filter(|(name, _)| ["classic", "blocked"].contains(name))
        .map(|(name, b)| format!("{name} {b:.1}"))
        .collect();
    if !others.is_empty() {
        let _ = write!(why, "; {}", others.join(", "));
    }
    Pick {
        need,
        pick: best.to_string(),
        why,
    }
}

/// The README's headline claims, each checked against this run.
fn claims(
    report: &Report,
    rows: &[&SpeedRow],
    past_cache: bool,
    largest: Option<usize>,
    llc: Option<usize>,
) -> Vec<Claim> {
    let blocked = row(rows, "blocked");
    let size = largest.map_or_else(String::new, format_byte_size);
    let not_past = || {
        format!(
            "not tested: the largest filter ({size}) fits in the {} cache; add a larger size \
             (--sizes, e.g. {})",
            llc.map_or_else(|| "last-level".into(), format_byte_size),
            llc.map_or_else(
                || "1GiB".into(),
                |c| format_byte_size((2 * c).next_power_of_two())
            )
        )
    };
    let missing = |what: &str| format!("not tested: {what} not measured");
    let mut out = Vec::new();

    // The batched lookup at the memory limit past the cache.
    let verdict = match (blocked.and_then(|b| b.batched_miss_ratio), past_cache) {
        (_, false) => not_past(),
        (None, true) => missing("the blocked filter's batched lookup"),
        (Some(x), true) if x <= 1.25 => format!("holds ({x:.2}× at {size})"),
        (Some(x), true) => format!("here: {x:.2}× the limit at {size}"),
    };
    out.push(Claim {
        claim: "past the cache, batched lookups run at the memory limit",
        verdict,
    });

    // Faster than sbbf-rs's one-key lookups, batched.
    let sbbf = row(rows, Contender::Peer(Peer::SbbfRs).name());
    let verdict = match (blocked.and_then(|b| b.batched_miss.as_ref()), sbbf) {
        (Some(b), Some(s)) => {
            let x = s.miss.median_ns / b.median_ns;
            if x > 1.0 {
                format!("holds ({x:.1}× at {size})")
            } else {
                format!("here: {x:.2}× (slower) at {size}")
            }
        }
        _ => missing("blocked or sbbf-rs"),
    };
    out.push(Claim {
        claim: "batched lookups beat sbbf-rs one key at a time",
        verdict,
    });

    // Faster than a classic filter one key at a time.
    let classic = row(rows, "classic");
    let verdict = match (blocked, classic) {
        (Some(b), Some(c)) => {
            let x = (c.hit.median_ns / b.hit.median_ns).min(c.miss.median_ns / b.miss.median_ns);
            if x > 1.0 {
                format!("holds (at least {x:.1}× at {size})")
            } else {
                format!("here: {x:.2}× at {size}")
            }
        }
        _ => missing("blocked or classic"),
    };
    out.push(Claim {
        claim: "one key at a time, blocked beats classic",
        verdict,
    });

    // Measured FPR within 2 % of the model at the largest size (the README's table), where
    // the count of false positives can tell: 2 % plus three standard deviations of the count.
    let mut worst: Option<(&str, f64)> = None;
    let mut checked = 0;
    for r in rows {
        let Some(model) = r.model_fpr.filter(|&m| m > 0.0) else {
            continue;
        };
        let expected = model * report.config.lookups as f64;
        if expected < 1000.0 {
            continue;
        }
        checked += 1;
        let allowed = 0.02 + 3.0 / expected.sqrt();
        let off = (r.measured_fpr / model - 1.0).abs();
        if off > allowed && worst.is_none_or(|(_, w)| off > w) {
            worst = Some((&r.filter, off));
        }
    }
    let verdict = match (checked, worst) {
        (0, _) => missing("a filter with enough false positives"),
        (n, None) => format!("holds ({n} filters at {size})"),
        (_, Some((f, off))) => format!("here: {f} {:.1} % off its model at {size}", 100.0 * off),
    };
    out.push(Claim {
        claim: "measured FPR within 2 % of each model",
        verdict,
    });
    out
}

/// The summary as the opening section of `report.md`: at most [`SUMMARY_MAX_LINES`] lines.
pub fn summary_markdown(report: &Report) -> String {
    let s = summarize(report);
    let mut w = String::new();
    let _ = writeln!(w, "## Summary\n");
    let _ = writeln!(w, "{}\n", s.machine);
    let _ = writeln!(w, "| you need | pick here | measured ({}) |", s.at);
    let _ = writeln!(w, "|---|---|---|");
    for p in &s.picks {
        let _ = writeln!(w, "| {} | {} | {} |", p.need, p.pick, p.why);
    }
    let _ = writeln!(
        w,
        "| your own key count and FPR | `linebloom tune --items N --fpr P` | sizes every \
         filter and measures the pick here |"
    );
    let claims: Vec<String> = s
        .claims
        .iter()
        .map(|c| format!("{}: **{}**", c.claim, c.verdict))
        .collect();
    let _ = writeln!(w, "\nREADME claims on this machine: {}.", claims.join("; "));
    w
}

/// The summary as `linebloom report` prints it when it ends.
pub fn summary_text(report: &Report) -> String {
    let s = summarize(report);
    let mut w = String::new();
    let _ = writeln!(w, "Summary: {}", s.machine);
    let _ = writeln!(w, "Picks (figures at {}):", s.at);
    let width = s.picks.iter().map(|p| p.need.len()).max().unwrap_or(0);
    for p in &s.picks {
        let _ = writeln!(
            w,
            "  {:<width$}  {}: {}",
            p.need,
            p.pick.replace('`', ""),
            p.why.replace('`', "")
        );
    }
    let _ = writeln!(w, "README claims on this machine:");
    let width = s.claims.iter().map(|c| c.claim.len()).max().unwrap_or(0);
    for c in &s.claims {
        let _ = writeln!(w, "  {:<width$}  {}", c.claim, c.verdict);
    }
    let _ = writeln!(
        w,
        "For your own key count and FPR: linebloom tune --items N --fpr P"
    );
    w
}
