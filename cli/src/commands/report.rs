//! `linebloom report`: parses the flags, shows progress, and hands everything else to
//! `linebloom_cli::report` (the sweep, the measurements, the writers and the plots live there).

use std::io::IsTerminal;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use linebloom_cli::report::byte_size::parse_byte_size;
use linebloom_cli::report::subject::Contender;
use linebloom_cli::report::write::write_report;
use linebloom_cli::report::{ReportConfig, run_report};

use super::output::{self, outln};
use crate::Failure;

#[derive(clap::Args)]
pub struct Args {
    /// A short run (about a third of the full run's time): largest filter 64 MiB, fewer keys
    /// and samples.
    #[arg(long)]
    quick: bool,
    /// Directory for report.md, report.json, the CSV files and the SVG plots.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Filter sizes for the speed sweep, e.g. 16KiB,1MiB,16MiB,256MiB
    /// [default: 16KiB,1MiB,16MiB,256MiB; with --quick the last is 64MiB].
    #[arg(long, value_delimiter = ',', value_parser = parse_size, conflicts_with = "items")]
    sizes: Option<Vec<usize>>,
    /// Key counts for the speed sweep instead of sizes (each filter gets items × bits/key bits).
    #[arg(long, value_delimiter = ',')]
    items: Option<Vec<usize>>,
    /// Bits per key of the speed sweep [default: 10].
    #[arg(long)]
    bits_per_key: Option<f64>,
    /// Bits-per-key grid of the FPR sweep, e.g. 6,8,10,12 [default: 6,8,...,20].
    #[arg(long, value_delimiter = ',')]
    fpr_bits: Option<Vec<f64>>,
    /// Keys inserted per filter in the FPR sweep [default: 1000000; --quick 200000].
    #[arg(long)]
    fpr_items: Option<usize>,
    /// Never-inserted keys probed per filter in the FPR sweep [default: 4000000; --quick
    /// 1000000].
    #[arg(long)]
    fpr_probes: Option<usize>,
    /// Filters to measure, e.g. blocked,classic [default: all: blocked, classic, cuckoo,
    /// counting, scalable, split-block and the peer crates fastbloom, sbbf-rs, bloomfilter,
    /// cuckoofilter, xorf-bfuse8, growable-bloom-filter].
    #[arg(long, value_delimiter = ',')]
    filters: Option<Vec<Contender>>,
    /// Thread counts for the bulk insert, e.g. 1,2,4 [default: 1, 2, 4, ... up to the logical
    /// CPUs].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,
    /// Samples per figure, after one warm-up [default: 5; --quick 3].
    #[arg(long)]
    reps: Option<usize>,
    /// Keys per lookup batch; keep it at 1048576 or more for filters past the cache
    /// [default: 1048576].
    #[arg(long)]
    lookups: Option<usize>,
    /// Least duration of one sample in milliseconds [default: 20; --quick 5].
    #[arg(long)]
    min_sample_ms: Option<f64>,
    /// Seed of the keys and the filters' hashing.
    #[arg(long)]
    seed: Option<u64>,
}

fn parse_size(s: &str) -> Result<usize, String> {
    parse_byte_size("size", s).map_err(|e| e.to_string())
}

pub fn run(args: Args) -> Result<(), Failure> {
    let mut config = if args.quick {
        ReportConfig::quick()
    } else {
        ReportConfig::default_sweep()
    };
    if let Some(b) = args.bits_per_key {
        config.bits_per_key = b;
    }
    if let Some(sizes) = args.sizes {
        config.sizes = sizes;
    }
    if let Some(items) = args.items {
        config.sizes = items
            .iter()
            .map(|&n| ReportConfig::bytes_for(n, config.bits_per_key))
            .collect();
    }
    if let Some(v) = args.fpr_bits {
        config.fpr_bits_per_key = v;
    }
    if let Some(v) = args.fpr_items {
        config.fpr_items = v;
    }
    if let Some(v) = args.fpr_probes {
        config.fpr_probes = v;
    }
    if let Some(v) = args.filters {
        config.filters = v;
    }
    if let Some(v) = args.threads {
        config.threads = v;
    }
    if let Some(v) = args.reps {
        config.reps = v;
    }
    if let Some(v) = args.lookups {
        config.lookups = v;
    }
    if let Some(v) = args.min_sample_ms {
        config.min_sample_ms = v;
    }
    if let Some(v) = args.seed {
        config.seed = v;
    }
    config.validate()?;

    let bar = ProgressBar::with_draw_target(
        None,
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .map_err(Failure::other)?
            .progress_chars("=> "),
    );
    let report = run_report(&config, &command_line(), &mut |p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(p.step.to_string());
    })?;
    bar.finish_and_clear();
    let files = write_report(&report, &args.out)?;
    let mut text = String::new();
    outln!(
        text,
        "linebloom report: {} files written to {} in {:.0} s",
        files.len(),
        args.out.display(),
        report.elapsed_s
    );
    outln!(
        text,
        "  read {}",
        args.out
            .join(linebloom_cli::report::write::MARKDOWN_FILE)
            .display()
    );
    output::print(&text)
}

/// The command line as typed, with the program shown by its name and arguments that need it
/// quoted, for the report's record.
fn command_line() -> String {
    std::iter::once("linebloom".to_string())
        .chain(std::env::args().skip(1).map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}
