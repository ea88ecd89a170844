//! `linebloom fpr`: build one filter from random keys and measure its false-positive rate.

use clap::ArgGroup;
use linebloom::filter::{FilterKind, Sizing};
use linebloom::hash::DEFAULT_SEED;
use linebloom_cli::report::fpr::{FprSpec, measure_fpr};

use super::output::{self, outln};
use crate::Failure;

#[derive(clap::Args)]
#[command(group(ArgGroup::new("size").required(true).args(["bits_per_key", "fpr"])))]
pub struct Args {
    /// Which filter.
    #[arg(long, value_parser = super::filter_kind_parser())]
    filter: FilterKind,
    /// Number of distinct keys to insert.
    #[arg(long)]
    items: usize,
    /// Size the filter at this many bits per key.
    #[arg(long)]
    bits_per_key: Option<f64>,
    /// Size the filter for this false-positive rate.
    #[arg(long)]
    fpr: Option<f64>,
    /// Probes per key (Bloom filters) or fingerprint bits (cuckoo); default: the model's best.
    #[arg(long)]
    hashes: Option<u32>,
    /// For --filter scalable: the keys its first filter is sized for (default: items / 1000,
    /// at least 1); --fpr is then the bound as it grows to --items.
    #[arg(long)]
    initial_items: Option<usize>,
    /// Number of never-inserted keys to probe.
    #[arg(long, default_value_t = 1_000_000)]
    probes: usize,
    /// Seed for the keys and the filter's hash.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let sizing = match (args.bits_per_key, args.fpr) {
        (Some(b), _) => Sizing::BitsPerKey(b),
        (None, Some(p)) => Sizing::Fpr(p),
        (None, None) => return Err(Failure::usage("give --bits-per-key or --fpr")),
    };
    let spec = FprSpec {
        kind: args.filter,
        items: args.items,
        sizing,
        hashes: args.hashes,
        probes: args.probes,
        seed: args.seed,
        initial_items: args.initial_items,
    };
    let m = measure_fpr(&spec)?;
    let mut text = String::new();
    if args.json {
        outln!(
            text,
            "{}",
            serde_json::to_string(&m).map_err(Failure::other)?
        );
    } else {
        let k_name = if m.filter == "cuckoo" {
            "fingerprint bits"
        } else {
            "hashes (k)"
        };
        outln!(text, "filter            {}", m.filter);
        outln!(text, "items             {}", m.items);
        outln!(text, "bytes             {}", m.bytes);
        outln!(text, "bits per key      {:.3}", m.bits_per_key);
        outln!(text, "{k_name:<17} {}", m.hashes);
        outln!(text, "probes            {}", m.probes);
        outln!(text, "measured FPR      {:.5} %", m.measured_fpr * 100.0);
        outln!(text, "model FPR         {:.5} %", m.model_fpr * 100.0);
        outln!(text, "false negatives   {}", m.false_negatives);
        if m.insert_failures > 0 {
            outln!(
                text,
                "insert failures   {} (filter full)",
                m.insert_failures
            );
        }
    }
    output::print(&text)?;
    if m.false_negatives > 0 {
        return Err(Failure::other(format!(
            "{} false negatives",
            m.false_negatives
        )));
    }
    Ok(())
}
