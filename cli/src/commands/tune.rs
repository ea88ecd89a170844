//! `linebloom tune`: parses the question, asks `linebloom_cli::report::tune`, prints the answer.

use clap::ArgGroup;
use linebloom::hash::DEFAULT_SEED;
use linebloom_cli::report::byte_size::{format_byte_size, parse_byte_size};
use linebloom_cli::report::tune::{
    Candidate, MeasureBudget, Measured, Recommendation, Target, TuneRequest, measure, recommend,
};
use linebloom_cli::report::write::fpr_md;

use super::output::{self, outln};
use crate::Failure;

#[derive(clap::Args)]
#[command(group(ArgGroup::new("target").required(true).args(["fpr", "bits_per_key", "memory"])))]
pub struct Args {
    /// Items the filter will hold.
    #[arg(long)]
    items: u64,
    /// Target false-positive rate, e.g. 0.01.
    #[arg(long)]
    fpr: Option<f64>,
    /// Bits of filter per item.
    #[arg(long)]
    bits_per_key: Option<f64>,
    /// Memory for the whole filter, e.g. 64MiB, 1GB, 1048576.
    #[arg(long, value_parser = parse_memory)]
    memory: Option<u64>,
    /// Keys must be removable: the cuckoo filter where it meets the target, else the counting
    /// filter.
    #[arg(long)]
    deletes: bool,
    /// The count is not known in advance: --items is where it starts and keys may keep
    /// arriving (the scalable filter; with --fpr or --bits-per-key).
    #[arg(long, conflicts_with = "deletes")]
    grows: bool,
    /// Skip the short measurement (about 2 s) and print the model's figures only.
    #[arg(long)]
    no_measure: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_memory(s: &str) -> Result<u64, String> {
    parse_byte_size("memory", s)
        .map(|b| b as u64)
        .map_err(|e| e.to_string())
}

pub fn run(args: Args) -> Result<(), Failure> {
    let target = match (args.fpr, args.bits_per_key, args.memory) {
        (Some(p), _, _) => Target::Fpr(p),
        (_, Some(b), _) => Target::BitsPerKey(b),
        (_, _, Some(m)) => Target::Memory(m),
        _ => return Err(Failure::usage("give --fpr, --bits-per-key or --memory")),
    };
    let request = TuneRequest {
        items: args.items,
        target,
        needs_delete: args.deletes,
        grows: args.grows,
    };
    let rec = recommend(&request)?;
    let measured = if args.no_measure {
        None
    } else {
        Some(measure(&rec, MeasureBudget::default(), DEFAULT_SEED)?)
    };
    let mut text = String::new();
    if args.json {
        let out = serde_json::json!({
            "items": args.items,
            "target": target,
            "deletes": args.deletes,
            "grows": args.grows,
            "recommendation": rec,
            "measured": measured,
        });
        outln!(
            text,
            "{}",
            serde_json::to_string_pretty(&out).map_err(Failure::other)?
        );
    } else {
        print_text(&mut text, &request, &rec, measured.as_ref());
    }
    output::print(&text)
}

fn target_text(t: Target) -> String {
    match t {
        Target::Fpr(p) => format!("FPR {}", fpr_md(p)),
        Target::BitsPerKey(b) => format!("{b} bits per key"),
        Target::Memory(m) => format!("{} of memory", format_byte_size(m as usize)),
    }
}

fn print_text(
    text: &mut String,
    req: &TuneRequest,
    rec: &Recommendation,
    measured: Option<&Measured>,
) {
    let c = &rec.chosen;
    outln!(
        text,
        "linebloom tune: {} items, {}{}\n",
        req.items,
        target_text(req.target),
        if req.needs_delete {
            ", with deletes"
        } else if req.grows {
            ", growing from there"
        } else {
            ""
        }
    );
    outln!(text, "recommended    {} filter, {}", c.filter, c.params);
    let first = if c.grown.is_some() {
        format!(" (its first filter, for {} keys)", req.items)
    } else {
        String::new()
    };
    outln!(text, "bits per key   {:.2}{first}", c.bits_per_key);
    outln!(
        text,
        "memory         {} ({} bytes)",
        format_byte_size(c.bytes as usize),
        c.bytes
    );
    if let Some(g) = &c.grown {
        outln!(
            text,
            "grown {}x    {} keys: {} filters, {:.2} bits per key, {} ({} bytes)",
            linebloom_cli::report::tune::GROWN_FACTOR,
            g.items,
            g.filters,
            g.bits_per_key,
            format_byte_size(g.bytes as usize),
            g.bytes
        );
        outln!(
            text,
            "predicted FPR  under {} however far it grows (model)",
            fpr_md(c.fpr)
        );
    } else {
        outln!(text, "predicted FPR  {} (model)", fpr_md(c.fpr));
    }
    if let Some(m) = measured {
        outln!(
            text,
            "measured       hit {:.1} ns, miss {:.1} ns, batched miss {:.1} ns per lookup; \
             {} {:.1} ns per key",
            m.hit.median_ns,
            m.miss.median_ns,
            m.batched_miss.median_ns,
            if m.parallel_insert {
                "bulk insert (all threads)"
            } else {
                "insert"
            },
            m.insert_ns
        );
        outln!(text, "               ({})", m.note);
    }
    outln!(text);
    for line in &rec.why {
        outln!(text, "{line}");
    }
    if rec.alternatives.is_empty() && rec.cannot.is_empty() {
        for w in &rec.warnings {
            outln!(text, "\nwarning: {w}");
        }
        return;
    }
    outln!(text, "\nthe others, sized for the same target:");
    outln!(
        text,
        "  {:<11} {:<7} {:>9} {:>12} {:>10} {:>13}",
        "filter",
        "params",
        "bits/key",
        "memory",
        "FPR",
        "lines/lookup"
    );
    for a in &rec.alternatives {
        print_candidate(text, a);
    }
    for u in &rec.cannot {
        outln!(text, "  {:<11} cannot: {}", u.filter.name(), u.reason);
    }
    for w in &rec.warnings {
        outln!(text, "\nwarning: {w}");
    }
}

fn print_candidate(text: &mut String, a: &Candidate) {
    outln!(
        text,
        "  {:<11} {:<7} {:>9.2} {:>12} {:>10} {:>13}",
        a.filter.name(),
        a.params,
        a.bits_per_key,
        format_byte_size(a.bytes as usize),
        fpr_md(a.fpr),
        if a.filter == linebloom::FilterKind::Classic {
            format!("up to {}", a.lines_per_lookup)
        } else {
            a.lines_per_lookup.to_string()
        }
    );
}
