//! `linebloom report`: until the full report lands (issue 4), a short demo of the engine.

use linebloom::filter::{FilterKind, Sizing};
use linebloom::report::fpr::{FprSpec, measure_fpr};

use crate::Failure;

#[derive(clap::Args)]
pub struct Args {
    /// A shorter run.
    #[arg(long)]
    quick: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let items = if args.quick { 100_000 } else { 1_000_000 };
    for bits_per_key in [8.0, 10.0, 12.0, 16.0] {
        let spec = FprSpec {
            kind: FilterKind::Blocked,
            items,
            sizing: Sizing::BitsPerKey(bits_per_key),
            hashes: None,
            probes: 1_000_000,
            seed: linebloom::hash::DEFAULT_SEED,
        };
        let started = std::time::Instant::now();
        let m = measure_fpr(&spec)?;
        println!(
            "blocked  {bits_per_key:>4} bits/key  k={:<2}  measured FPR {:.4} %  model {:.4} %  ({:.2?})",
            m.hashes,
            m.measured_fpr * 100.0,
            m.model_fpr * 100.0,
            started.elapsed()
        );
    }
    Ok(())
}
