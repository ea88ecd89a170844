//! The measuring and reporting side of linebloom, used by the `linebloom` command, the
//! benches and the tests of this package: the tuning report ([`report`]), `tune` and `fpr`.
//! The filters themselves live in the `linebloom` library, which depends on none of this.

pub mod report;
