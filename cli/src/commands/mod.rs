//! One module per subcommand (`files` holds `build`, `query` and `stats`).

pub mod files;
pub mod fpr;
pub mod report;
pub mod tune;
