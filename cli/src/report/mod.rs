//! Measurement and reporting: what the `linebloom` command's `fpr`, `tune` and `report` compute.
//! It lives in the `linebloom-cli` package (it needs serde and plotters); the library never
//! depends on it.
//!
//! - [`sweep`] runs the tuning report: every filter at every size, measured the same way
//!   ([`measure`] samples one figure, [`limit`] probes what the memory system allows,
//!   [`machine`] records where it ran), into one [`sweep::Report`];
//! - [`build`] times whole-batch builds of the blocked filter (partitioned on 4 threads or more);
//! - [`write`](mod@write) turns a report into Markdown, JSON and CSV, [`plot`] into SVG plots;
//! - [`tune`] recommends a filter for a number of items and a target;
//! - [`fpr`] measures one filter's false-positive rate (`linebloom fpr`);
//! - [`subject`] puts this crate's filters (and the peer crates adapted in `peers`) behind one trait the measurements drive.

pub mod build;
pub mod byte_size;
pub mod ceiling;
pub mod config;
pub mod figures;
pub mod fpr;
pub mod keys;
pub mod limit;
pub mod lineup;
pub mod machine;
pub mod measure;
pub mod peers;
pub mod plot;
pub mod speed;
pub mod subject;
pub mod sweep;
pub mod tune;
pub mod write;

pub use config::ReportConfig;
pub use sweep::{Progress, Report, run_report};
