//! The measuring and reporting side of linebloom, used by the `linebloom` command, the
//! benches and the tests of this package: the tuning report ([`report`]), `tune` and `fpr`.
//! The filters themselves live in the `linebloom` library, which depends on none of this.

pub mod report;

/// The README's Rust examples, compiled and run by `cargo test` as doc-tests of this crate
/// (which depends on the library), so the quick start keeps compiling as pasted into a file of
/// its own.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;
