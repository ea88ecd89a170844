//! What each step of a report run is expected to cost, and how much of a run is left: the
//! weights of the progress bar and its estimate of the time to go.
//!
//! A cost is in "reference seconds": seconds on a 2-core x86-64 virtual machine, fitted to the
//! step times a run records (`Report::steps` in `report.json`). Most of a step's time is filling
//! its filter, so a speed step costs a per-filter rate times its keys, plus the floor that
//! sampling sets (each figure takes `reps + 1` samples of at least `min_sample_ms`). Another
//! machine runs faster or slower, but in about the same proportions, so [`Eta`] scales the
//! costs by the rate the run has shown so far.

use super::config::ReportConfig;
use super::subject::{Contender, Peer};
use linebloom::filter::FilterKind;

/// Reference seconds per million keys of one fill and its lookups, by filter, from default runs
/// (16 and 64 MiB): the slow ones hash each key again (bloomfilter, growable-bloom-filter),
/// touch k lines per key (classic, fastbloom) or two buckets (the cuckoo filters), or are
/// chains (scalable, growable-bloom-filter).
fn seconds_per_million_keys(c: Contender) -> f64 {
    match c {
        Contender::Ours(FilterKind::Blocked) => 0.06,
        Contender::Ours(FilterKind::Classic) => 0.2,
        Contender::Ours(FilterKind::Cuckoo) => 0.2,
        Contender::Ours(FilterKind::Counting) => 0.035,
        Contender::Ours(FilterKind::Scalable) => 0.22,
        Contender::Ours(FilterKind::SplitBlock) => 0.015,
        Contender::Peer(Peer::FastBloom) => 0.13,
        Contender::Peer(Peer::SbbfRs) => 0.02,
        Contender::Peer(Peer::BloomFilter) => 0.57,
        Contender::Peer(Peer::CuckooFilter) => 0.16,
        Contender::Peer(Peer::BinaryFuse8) => 0.2,
        Contender::Peer(Peer::GrowableBloom) => 1.1,
    }
}

/// Reference seconds a speed step takes beyond its keys and sampling floor: a chain grown
/// 1000x from a few keys builds many small filters.
fn fixed_seconds(c: Contender) -> f64 {
    match c {
        Contender::Ours(FilterKind::Scalable) => 0.4,
        Contender::Peer(Peer::GrowableBloom) => 3.0,
        _ => 0.0,
    }
}

/// The floor one figure's sampling sets: `reps + 1` samples of at least the minimum time.
fn sampling_floor(config: &ReportConfig) -> f64 {
    (config.reps + 1) as f64 * config.min_sample_ms / 1e3
}

/// Reference nanoseconds of one random read from a buffer of `size` bytes: in cache, or
/// from memory.
fn read_ns(size: usize) -> f64 {
    if size <= 2 << 20 { 2.0 } else { 80.0 }
}

/// The memory probe at one size: four ways of reading, each sampled.
pub fn probe_cost(config: &ReportConfig, size: usize) -> f64 {
    let batch = config.lookups as f64 * read_ns(size) / 1e9;
    4.0 * (config.reps + 1) as f64 * batch.max(config.min_sample_ms / 1e3)
}

/// One filter's speed figures at one size; next to nothing where the sweep skips the filter.
pub fn speed_cost(config: &ReportConfig, c: Contender, size: usize) -> f64 {
    if c.speed_sweep_max_bytes().is_some_and(|most| size > most) {
        return 0.0;
    }
    let keys = config.items_for(size) as f64 / 1e6;
    // Fills (one key at a time and per pool) and four lookup figures.
    let figures = 5.0 + config.threads.len() as f64;
    fixed_seconds(c) + figures * sampling_floor(config) + keys * seconds_per_million_keys(c)
}

/// The whole-batch builds of a blocked filter at one size (several ways, each sampled).
pub fn builds_cost(config: &ReportConfig, size: usize) -> f64 {
    let keys = config.items_for(size) as f64 / 1e6;
    keys * 0.25 * (config.reps + 1) as f64 / 4.0
}

/// One filter's FPR sweep: a filter of `fpr_items` keys and `fpr_probes` lookups per point.
pub fn fpr_sweep_cost(config: &ReportConfig, c: Contender) -> f64 {
    let keys = (config.fpr_items as f64 + config.fpr_probes as f64 / 4.0) / 1e6;
    // The chains start small and grow through many filters at every point.
    let factor = match c {
        Contender::Ours(FilterKind::Scalable) | Contender::Peer(Peer::GrowableBloom) => 1.2,
        _ => 0.3,
    };
    config.fpr_bits_per_key.len() as f64 * keys * seconds_per_million_keys(c) * factor
}

/// Where a run stands, for a progress bar: how far along it is in cost, and the seconds left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eta {
    /// Cost done, counting the running step's share by its time so far.
    pub position: f64,
    /// Seconds left, estimated.
    pub remaining_s: f64,
}

impl Eta {
    /// The estimate when the steps done cost `done_cost`, the running one `step_cost`, the
    /// whole run `total_cost`, `elapsed_s` have passed in all and `step_elapsed_s` in the
    /// running step. The machine's rate (cost per second) is the one shown by the steps done,
    /// once they have taken a few seconds, else the reference machine's; the running step counts
    /// by its share of its expected time, at most 90 % of it until it ends.
    pub fn at(
        done_cost: f64,
        step_cost: f64,
        total_cost: f64,
        elapsed_s: f64,
        step_elapsed_s: f64,
    ) -> Eta {
        let finished_s = (elapsed_s - step_elapsed_s).max(0.0);
        let rate = if finished_s >= 2.0 && done_cost > 0.0 {
            done_cost / finished_s
        } else {
            1.0
        };
        let step_share = if step_cost > 0.0 {
            (step_elapsed_s * rate / step_cost).min(0.9)
        } else {
            0.0
        };
        let position = (done_cost + step_share * step_cost).min(total_cost);
        // What the running step has left takes at least what it has overrun by.
        let step_left = (step_cost / rate - step_elapsed_s).max(0.1 * step_cost / rate);
        let after_step = (total_cost - done_cost - step_cost).max(0.0) / rate;
        Eta {
            position,
            remaining_s: step_left + after_step,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_follow_the_keys_and_skips_cost_nothing() {
        let config = ReportConfig::default_sweep();
        let blocked = Contender::Ours(FilterKind::Blocked);
        let bloomfilter = Contender::Peer(Peer::BloomFilter);
        assert!(
            speed_cost(&config, blocked, 64 << 20) > 3.0 * speed_cost(&config, blocked, 16 << 20)
        );
        assert!(
            speed_cost(&config, bloomfilter, 64 << 20) > speed_cost(&config, blocked, 64 << 20)
        );
        assert_eq!(
            speed_cost(&config, Contender::Ours(FilterKind::Scalable), 64 << 20),
            0.0
        );
        assert!(probe_cost(&config, 64 << 20) > probe_cost(&config, 16 << 10));
        assert!(fpr_sweep_cost(&config, blocked) > 0.0);
    }

    #[test]
    fn the_estimate_scales_by_the_rate_shown() {
        // The reference machine's rate at the start.
        let e = Eta::at(0.0, 10.0, 100.0, 0.0, 0.0);
        assert_eq!(e.position, 0.0);
        assert_eq!(e.remaining_s, 100.0);
        // Twice as slow as the reference: 20 cost done in 40 s, 80 left take 160 s.
        let e = Eta::at(20.0, 10.0, 100.0, 40.0, 0.0);
        assert_eq!(e.position, 20.0);
        assert_eq!(e.remaining_s, 160.0);
        // Half-way through the running step by time.
        let e = Eta::at(20.0, 10.0, 100.0, 50.0, 10.0);
        assert_eq!(e.position, 25.0);
        assert_eq!(e.remaining_s, 150.0);
        // A step running long stops at 90 % of its cost and keeps some time left.
        let e = Eta::at(20.0, 10.0, 100.0, 140.0, 100.0);
        assert_eq!(e.position, 29.0);
        assert_eq!(e.remaining_s, 2.0 + 140.0);
    }
}
