//! One module per subcommand (`files` holds `build`, `query` and `stats`), and what they
//! share: key input (`keys`), output (`output`) and the `--filter` flag's parser. `parquet`
//! reads the filters in Parquet files.

pub mod files;
pub mod fpr;
pub mod keys;
pub mod output;
pub mod parquet;
pub mod redis;
pub mod report;
pub mod tune;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use linebloom::FilterKind;

/// `--filter` of `build` and `fpr`: every kind the library has, so `--help` and the error for
/// a wrong name list them all (and `sbbf`, the other name of `split-block`, still parses).
pub fn filter_kind_parser() -> impl TypedValueParser<Value = FilterKind> {
    let names = FilterKind::ALL.map(|kind| match kind {
        FilterKind::SplitBlock => PossibleValue::new(kind.name()).alias("sbbf"),
        _ => PossibleValue::new(kind.name()),
    });
    PossibleValuesParser::new(names).try_map(|name| name.parse::<FilterKind>())
}
