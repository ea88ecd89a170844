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
    /// Keys must be removable (only the cuckoo filter can).
    #[arg(long)]
    deletes: bool,
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
        } else {
            ""
        }
    );
    outln!(text, "recommended    {} filter, {}", c.filter, c.params);
    outln!(text, "bits per key   {:.2}", c.bits_per_key);
    outln!(
        text,
        "memory         {} ({} bytes)",
        format_byte_size(c.bytes as usize),
        c.bytes
    );
    outln!(text, "predicted FPR  {} (model)", fpr_md(c.fpr));
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
