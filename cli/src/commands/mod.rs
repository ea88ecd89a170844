//! One module per subcommand (`files` holds `build`, `query` and `stats`), and what they
//! share: key input (`keys`) and output (`output`). `parquet` reads the filters in Parquet files.

pub mod files;
pub mod fpr;
pub mod keys;
pub mod output;
pub mod parquet;
pub mod redis;
pub mod report;
pub mod tune;
