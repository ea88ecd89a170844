//! Measurement and reporting: what the `linebloom` command's `fpr`, `tune` and `report` compute.
//! Built only with the `cli` feature (it needs serde and plotters); the filters never depend on
//! it.

pub mod fpr;
