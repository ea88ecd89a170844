//! The `linebloom` command: a thin layer over the library (no filter logic here).
//!
//! Exit codes (a contract, see DESIGN.md): 0 success; 2 bad arguments, unreadable files and
//! corrupt filters (one line on stderr); 1 any other failure.

mod commands;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use commands::{files, fpr, parquet, redis, report, tune};
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "linebloom",
    version,
    about = "Cache-line-blocked Bloom filters: measure, tune, build, query"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure every filter on this machine and write the tuning report (the main job).
    Report(report::Args),
    /// Recommend a filter and its parameters for N items.
    Tune(tune::Args),
    /// Build one filter from random keys and measure its false-positive rate.
    Fpr(fpr::Args),
    /// Build a filter from a file of keys (one per line) and save it.
    Build(files::BuildArgs),
    /// Query a saved filter with keys from a file or standard input.
    Query(files::QueryArgs),
    /// Print a saved filter's parameters, fill and expected FPR.
    Stats(files::StatsArgs),
    /// Read and query the split-block Bloom filters in a Parquet file.
    Parquet(parquet::Args),
    /// A filter shared through Redis or Valkey: create, add, query, stats, export.
    #[command(subcommand)]
    Redis(redis::RedisCommand),
}

/// A failure with the exit code it maps to.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// Bad arguments, unreadable input, corrupt filters: exit code 2.
    pub fn usage(message: impl std::fmt::Display) -> Self {
        Failure {
            code: 2,
            message: message.to_string(),
        }
    }
    /// Standard output was closed by its reader (`| head`): the command ends quietly with
    /// success, as `cat` and `grep` do.
    pub fn closed_pipe() -> Self {
        Failure {
            code: 0,
            message: String::new(),
        }
    }
    /// Anything else: exit code 1.
    pub fn other(message: impl std::fmt::Display) -> Self {
        Failure {
            code: 1,
            message: message.to_string(),
        }
    }
}

impl From<linebloom::Error> for Failure {
    fn from(e: linebloom::Error) -> Self {
        use linebloom::Error::*;
        match e {
            Io(_) | Full | Server(_) | Damaged(_) => Failure::other(e),
            _ => Failure::usage(e),
        }
    }
}

fn main() -> ExitCode {
    // The library asks for huge pages unless told not to; the variable is this command's.
    if std::env::var_os("LINEBLOOM_NO_HUGE_PAGES").is_some() {
        linebloom::blocked::set_huge_pages(false);
    }
    // `--version` names the SIMD path too, which is known only at run time.
    let version = format!(
        "{} (SIMD path: {})",
        env!("CARGO_PKG_VERSION"),
        linebloom::simd_path()
    );
    // clap keeps the text for the process's life: leaking this one string is that.
    let version: &'static str = Box::leak(version.into_boxed_str());
    let matches = Cli::command().version(version).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Report(args) => report::run(args),
        Command::Tune(args) => tune::run(args),
        Command::Fpr(args) => fpr::run(args),
        Command::Build(args) => files::build(args),
        Command::Query(args) => files::query(args),
        Command::Stats(args) => files::stats(args),
        Command::Parquet(args) => parquet::run(args),
        Command::Redis(command) => redis::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                // Nothing more can be done when standard error cannot be written either.
                let _ = writeln!(std::io::stderr(), "linebloom: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}
