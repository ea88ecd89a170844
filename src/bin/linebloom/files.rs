//! `linebloom build`, `query` and `stats`: filters saved to files. Being written (issue 5).

use crate::Failure;

#[derive(clap::Args)]
pub struct BuildArgs {}
#[derive(clap::Args)]
pub struct QueryArgs {}
#[derive(clap::Args)]
pub struct StatsArgs {}

pub fn build(_: BuildArgs) -> Result<(), Failure> {
    Err(Failure::other("build is not implemented yet"))
}
pub fn query(_: QueryArgs) -> Result<(), Failure> {
    Err(Failure::other("query is not implemented yet"))
}
pub fn stats(_: StatsArgs) -> Result<(), Failure> {
    Err(Failure::other("stats is not implemented yet"))
}
