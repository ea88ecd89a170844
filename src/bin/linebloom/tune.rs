//! `linebloom tune`. Being written (issue 4).

use crate::Failure;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_: Args) -> Result<(), Failure> {
    Err(Failure::other("tune is not implemented yet"))
}
