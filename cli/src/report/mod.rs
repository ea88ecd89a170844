//! Measurement and reporting: what the `linebloom` command's `fpr`, `tune` and `report` compute.
//! It lives in the `linebloom-cli` package (it needs serde and plotters); the library never
//! depends on it.
//!
//! - [`sweep`] runs the tuning report: every filter at every size, measured the same way
//!   ([`speed`] fills and looks up one filter, [`measure`] samples one figure, [`limit`]
//!   probes what the memory system allows, [`machine`] records where it ran), into one
//!   [`sweep::Report`];
//! - [`build`] times whole-batch builds of the blocked filter, [`ceiling`] the bound of its
//!   bulk insert;
//! - [`write`](mod@write) turns a report into Markdown, JSON and CSV, [`plot`] into SVG plots,
//!   [`summary`] into the verdict that opens the Markdown and ends the command's output;
//! - [`plan`] says what each step of a run costs, for the progress bar and its time left;
//! - [`tune`] recommends a filter for a number of items and a target;
//! - [`fpr`] measures one filter's false-positive rate (`linebloom fpr` and the FPR sweep);
//! - [`subject`] puts this crate's filters (and the peer crates adapted in [`peers`]) behind
//!   one trait the measurements drive, and [`lineup`] builds any of them.
//!
//! # Layers
//!
//! Each file names only files of lower layers, so data flows one way, from the keys up to the
//! written report:
//!
//! 1. [`keys`] (the key streams), [`byte_size`] and [`figures`] (how sizes and figures read),
//!    [`subject`] (the contenders and their trait): they name no other file.
//! 2. [`measure`], [`machine`], [`peers`].
//! 3. [`config`], [`limit`], [`lineup`].
//! 4. [`plan`] (the expected cost of each step).
//! 5. [`build`], [`ceiling`], [`fpr`], [`tune`]: one measurement each.
//! 6. [`speed`]: one filter's insert, bulk-insert and lookup figures at one size.
//! 7. [`sweep`]: the order of work, and the [`Report`] it fills.
//! 8. [`plot`] and [`summary`], then [`write`](mod@write) (with `write/csv.rs` and
//!    `write/markdown.rs`): what is made of a [`Report`].

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
pub mod plan;
pub mod plot;
pub mod speed;
pub mod subject;
pub mod summary;
pub mod sweep;
pub mod tune;
pub mod write;

pub use config::ReportConfig;
pub use sweep::{Progress, Report, run_report};
