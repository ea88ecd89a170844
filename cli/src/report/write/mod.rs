//! Writers: a [`Report`] as `report.md` (the tables and how to read them), `report.json`
//! (every figure), one CSV file per table, and the SVG plots (`plot.rs`), all in one
//! directory.
//!
//! This module owns the file names and what a results directory holds after a write: this
//! report's files, and none of an earlier report's plots. `write/csv.rs` owns the CSV
//! columns, `write/markdown.rs` the Markdown layout. The texts are built as strings first (so
//! tests can check them without touching the disk), then written.

mod csv;
mod markdown;

use std::path::{Path, PathBuf};

pub use super::figures::fpr_md;
pub use csv::{build_csv, bulk_csv, fpr_csv, limit_csv, speed_csv};
pub use markdown::to_markdown;

use super::plot::{is_plot_file, plots};
use super::sweep::Report;
use linebloom::error::{Error, Result};

/// The Markdown report's file name.
pub const MARKDOWN_FILE: &str = "report.md";
/// The JSON report's file name.
pub const JSON_FILE: &str = "report.json";
/// Insert and lookup figures, one row per filter and size.
pub const SPEED_CSV: &str = "speed.csv";
/// Bulk insert figures, one row per filter, size and thread count.
pub const BULK_CSV: &str = "bulk_insert.csv";
/// Whole-batch builds of blocked filters, one row per size and way.
pub const BUILD_CSV: &str = "build.csv";
/// The FPR sweep, one row per filter and bits per key.
pub const FPR_CSV: &str = "fpr.csv";
/// The memory probe, one row per size.
pub const LIMIT_CSV: &str = "memory_limit.csv";

/// Writes every file of the report into `dir` (created if needed) and returns their paths.
///
/// Plots of an earlier report in `dir` that this one does not draw (a filter not measured this
/// time, a table left empty) are removed, so the directory never mixes two reports; only files
/// named as the report names its plots (`speed_*.svg`, `compare_*.svg`, `fpr.svg`,
/// `bulk_insert.svg`) are touched, anything else in `dir` stays.
pub fn write_report(report: &Report, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let mut written = Vec::new();
    let mut put = |name: &str, text: String| -> Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        written.push(path);
        Ok(())
    };
    put(JSON_FILE, to_json(report)?)?;
    put(SPEED_CSV, speed_csv(report))?;
    put(BULK_CSV, bulk_csv(report))?;
    put(BUILD_CSV, build_csv(report))?;
    put(FPR_CSV, fpr_csv(report))?;
    put(LIMIT_CSV, limit_csv(report))?;
    let plots = plots(report)?;
    let names: Vec<String> = plots.iter().map(|p| p.file.clone()).collect();
    put(MARKDOWN_FILE, to_markdown(report, &names))?;
    for plot in plots {
        put(&plot.file, plot.svg)?;
    }
    remove_stale_plots(dir, &names)?;
    Ok(written)
}

/// Removes the plot files in `dir` (see [`is_plot_file`]) whose names are not in `keep`.
/// Directories and names that are not UTF-8 are left alone.
fn remove_stale_plots(dir: &Path, keep: &[String]) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("cannot list {}", dir.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("cannot list {}", dir.display()), e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !is_plot_file(name) || keep.iter().any(|k| k == name) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        std::fs::remove_file(&path)
            .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
    }
    Ok(())
}

/// The whole report as pretty-printed JSON (non-finite numbers, which JSON lacks, become null).
pub fn to_json(report: &Report) -> Result<String> {
    serde_json::to_string_pretty(report).map_err(|e| Error::io("JSON", e.into()))
}
