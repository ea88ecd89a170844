//! The sweep: every filter at every size and bits-per-key value the configuration names,
//! measured the same way, into one [`Report`].
//!
//! Per filter size: the memory probe (`limit.rs`, again after the filters), then per filter its
//! insert, bulk-insert and lookup figures (`speed.rs`) and, for large blocked filters, the
//! whole-batch builds (`build.rs`). Then the FPR sweep over the bits-per-key grid (`fpr.rs`). This module owns the
//! order of work, the memory check before it and the [`Report`] that holds the rows;
//! `measure.rs` owns how a figure is sampled, `write` and `plot.rs` what is made of the rows.

use std::time::Instant;

use serde::Serialize;

use super::build::{BuildRow, measure_builds};
use super::byte_size::format_byte_size;
use super::config::ReportConfig;
use super::fpr::{FprRow, measure_fpr_point};
use super::limit::{MemoryLimit, probe_memory};
use super::machine::{Machine, utc_now};
use super::measure::{Pinning, pin_current_thread, thread_pool};
use super::plan::{builds_cost, fpr_sweep_cost, probe_cost, speed_cost};
use super::speed::{BulkRow, SMALL_FILL, SpeedRow, measure_speed};
use super::subject::{Contender, Peer};
use linebloom::error::{Error, Result};
use linebloom::filter::FilterKind;

/// The version of the report's JSON layout (incremented when a field changes meaning).
pub const REPORT_FORMAT_VERSION: u32 = 1;

/// Everything one run measured, and where.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// [`REPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// The command line that produced the report.
    pub command: String,
    /// When the run started (UTC).
    pub started: String,
    /// How long the run took, in seconds.
    pub elapsed_s: f64,
    /// The machine and the build.
    pub machine: Machine,
    /// Whether the measuring thread was pinned to a core.
    pub pinning: Pinning,
    /// What was measured.
    pub config: ReportConfig,
    /// The memory probe, one row per filter size.
    pub limits: Vec<MemoryLimit>,
    /// Insert and lookup figures, one row per filter and size.
    pub speed: Vec<SpeedRow>,
    /// Bulk insert figures, one row per filter, size and thread count.
    pub bulk: Vec<BulkRow>,
    /// Whole-batch builds of blocked filters of more than 2 Mi keys, one row per size and
    /// way (`build.rs`).
    pub builds: Vec<BuildRow>,
    /// The FPR sweep, one row per filter and bits per key.
    pub fpr: Vec<FprRow>,
    /// Measurements that could not be made, and why.
    pub skipped: Vec<Skip>,
    /// Each step of the run, with the time the plan expected and the time it took.
    pub steps: Vec<StepTime>,
}

/// One step of a run and its time.
#[derive(Clone, Debug, Serialize)]
pub struct StepTime {
    /// What the step measured ("blocked, 16 MiB").
    pub step: String,
    /// The plan's expected seconds (`plan.rs`).
    pub expected_s: f64,
    /// Seconds it took.
    pub seconds: f64,
}

/// A measurement the sweep could not make.
#[derive(Clone, Debug, Serialize)]
pub struct Skip {
    /// The filter's name.
    pub filter: String,
    /// What was skipped ("speed at 16 KiB", "FPR at 6 bits/key").
    pub what: String,
    /// Why.
    pub reason: String,
}

/// Where a run is, for a progress bar: steps, and the same weighted by their expected cost
/// (seconds on the machine the plan's costs were measured on; see `plan.rs`), so a bar can move
/// and estimate the time left by cost rather than by count.
#[derive(Clone, Debug)]
pub struct Progress<'a> {
    /// Steps finished.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// The step now running.
    pub step: &'a str,
    /// Expected cost of the steps finished.
    pub done_cost: f64,
    /// Expected cost of the step now running.
    pub step_cost: f64,
    /// Expected cost of all steps.
    pub total_cost: f64,
}

/// Runs the whole sweep. `command` is recorded in the report; `progress` is called before each
/// step. An error for an invalid configuration or a size this machine cannot hold; a filter
/// that cannot be built at some point of the sweep (a cuckoo filter below 8.42 bits per key)
/// is recorded in [`Report::skipped`] instead.
pub fn run_report(
    config: &ReportConfig,
    command: &str,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Report> {
    let clock = Instant::now();
    let started = utc_now();
    config.validate()?;
    let machine = Machine::detect();
    check_memory(config, &machine)?;
    let pinning = pin_current_thread();
    let pools = config
        .threads
        .iter()
        .map(|&t| Ok((t, thread_pool(t)?)))
        .collect::<Result<Vec<_>>>()?;

    let plan = plan_steps(config);
    let total = plan.len();
    let total_cost: f64 = plan.iter().map(|(_, cost)| cost).sum();
    let mut times: Vec<StepTime> = Vec::with_capacity(total);
    let mut step_started = Instant::now();
    let mut step = |label: String, progress: &mut dyn FnMut(Progress<'_>)| {
        let done = times.len();
        if let Some(last) = times.last_mut() {
            last.seconds = step_started.elapsed().as_secs_f64();
        }
        // The plan lists the steps in the order the loops below take them.
        debug_assert!(done == total || plan[done].0 == label, "{label}");
        let step_cost = plan.get(done).map_or(0.0, |p| p.1);
        progress(Progress {
            done,
            total,
            step: &label,
            done_cost: plan[..done].iter().map(|p| p.1).sum(),
            step_cost,
            total_cost,
        });
        step_started = Instant::now();
        times.push(StepTime {
            step: label,
            expected_s: step_cost,
            seconds: 0.0,
        });
    };

    let (mut limits, mut speed, mut bulk, mut fpr, mut skipped) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut builds = Vec::new();
    for &size in &config.sizes {
        let label = format_byte_size(size);
        step(format!("memory probe, {label}"), progress);
        let limit = probe_memory(size, config.lookups, config.sampling(), config.seed);
        let first_row = speed.len();
        for &c in &config.filters {
            step(format!("{c}, {label}"), progress);
            if let Some(most) = c.speed_sweep_max_bytes()
                && size > most
            {
                skipped.push(Skip {
                    filter: c.name().to_string(),
                    what: format!("speed at {label}"),
                    reason: format!(
                        "the speed sweep stops this filter at {}: every miss and every insert \
                         reads each filter of its chain, so one fill and its lookups past the \
                         cache take minutes (scalable_tuning measures it to 1 M keys)",
                        format_byte_size(most)
                    ),
                });
                continue;
            }
            match measure_speed(c, size, config, &pools, &limit) {
                Ok((row, rows)) => {
                    speed.push(row);
                    bulk.extend(rows);
                }
                Err(e) => skipped.push(Skip {
                    filter: c.name().to_string(),
                    what: format!("speed at {label}"),
                    reason: e.to_string(),
                }),
            }
            let items = config.items_for(size);
            if measures_builds(c, items) {
                step(format!("{c}, {label}, whole-batch builds"), progress);
                match measure_builds(items, size, config, &pools, machine.memory_bytes) {
                    Ok(rows) => builds.extend(rows),
                    Err(e) => skipped.push(Skip {
                        filter: c.name().to_string(),
                        what: format!("whole-batch builds at {label}"),
                        reason: e.to_string(),
                    }),
                }
            }
        }
        // Probed again after the filters, each figure the faster of the two, and the lookups'
        // ratios taken against that.
        step(format!("memory probe again, {label}"), progress);
        let again = probe_memory(size, config.lookups, config.sampling(), config.seed ^ 1);
        let limit = limit.faster(again);
        for row in &mut speed[first_row..] {
            row.set_limit(&limit);
        }
        limits.push(limit);
    }
    for &c in &config.filters {
        step(format!("{c}, FPR sweep"), progress);
        let mut seen: Vec<(usize, String)> = Vec::new();
        for &b in &config.fpr_bits_per_key {
            match measure_fpr_point(c, b, config.fpr_items, config.fpr_probes, config.seed) {
                // Filters of fixed sizes give the same filter at several grid points: keep one.
                Ok(row) if seen.contains(&(row.bytes, row.params.clone())) => {}
                Ok(row) => {
                    seen.push((row.bytes, row.params.clone()));
                    fpr.push(row);
                }
                Err(e) => skipped.push(Skip {
                    filter: c.name().to_string(),
                    what: format!("FPR at {b} bits/key"),
                    reason: e.to_string(),
                }),
            }
        }
    }
    // The last step's time, then the end.
    step("done".to_string(), progress);
    times.pop();
    Ok(Report {
        format_version: REPORT_FORMAT_VERSION,
        command: command.to_string(),
        started,
        elapsed_s: clock.elapsed().as_secs_f64(),
        machine,
        pinning,
        config: config.clone(),
        limits,
        speed,
        bulk,
        builds,
        fpr,
        skipped,
        steps: times,
    })
}

/// The steps of a run, in the order [`run_report`] takes them, with their expected costs; the
/// labels are the ones the progress shows.
pub fn plan_steps(config: &ReportConfig) -> Vec<(String, f64)> {
    let mut plan = Vec::new();
    for &size in &config.sizes {
        let label = format_byte_size(size);
        plan.push((format!("memory probe, {label}"), probe_cost(config, size)));
        for &c in &config.filters {
            plan.push((format!("{c}, {label}"), speed_cost(config, c, size)));
            if measures_builds(c, config.items_for(size)) {
                plan.push((
                    format!("{c}, {label}, whole-batch builds"),
                    builds_cost(config, size),
                ));
            }
        }
        plan.push((
            format!("memory probe again, {label}"),
            probe_cost(config, size),
        ));
    }
    for &c in &config.filters {
        plan.push((format!("{c}, FPR sweep"), fpr_sweep_cost(config, c)));
    }
    plan
}

/// Whether the sweep times whole-batch builds (`build.rs`) of `c` at `items` keys: blocked
/// filters filled in chunks (smaller ones are filled whole in the bulk-insert table already).
fn measures_builds(c: Contender, items: usize) -> bool {
    c == Contender::Ours(FilterKind::Blocked) && items > SMALL_FILL
}

/// A filter is built next to its keys' hash buffers, and a static peer (xorf) holds every key
/// (8 bytes each) and about 24 bytes of build state per key while it builds, some 26 times a
/// filter of 10 bits per key: refuse sizes that would not leave the machine room.
fn check_memory(config: &ReportConfig, machine: &Machine) -> Result<()> {
    let largest = config.sizes.iter().copied().max().unwrap_or(0) as u64;
    let holds_every_key = config.filters.contains(&Contender::Peer(Peer::BinaryFuse8));
    let (factor, allowed) = if holds_every_key {
        (
            32,
            "at most 1/32 of this machine's memory with xorf-bfuse8 among the filters (it \
             holds every key while it builds)",
        )
    } else {
        (
            4,
            "at most a quarter of this machine's memory (building a filter needs several \
             times its size)",
        )
    };
    // The bulk-insert ceiling holds one blocked filter per thread of the largest pool, and
    // one for the task alone.
    let threads = config.threads.iter().copied().max().unwrap_or(1) as u64;
    let factor = factor.max(threads + 2);
    if let Some(total) = machine.memory_bytes
        && largest.saturating_mul(factor) > total
    {
        return Err(Error::InvalidParameter {
            name: "size",
            value: format_byte_size(largest as usize),
            allowed,
        });
    }
    Ok(())
}
