//! `linebloom report`: parses the flags, shows progress, and hands everything else to
//! `linebloom_cli::report` (the sweep, the measurements, the writers and the plots live there).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use linebloom_cli::report::byte_size::parse_byte_size;
use linebloom_cli::report::machine::utc_stamp;
use linebloom_cli::report::plan::Eta;
use linebloom_cli::report::subject::Contender;
use linebloom_cli::report::summary::summary_text;
use linebloom_cli::report::write::write_report;
use linebloom_cli::report::{Progress, ReportConfig, run_report};

use super::output::{self, outln};
use crate::Failure;

/// Where a report goes without `--out`: a new folder under this one, named by the time of the
/// run. `target/` is cargo's and git ignores it, so a run never touches the committed results.
const DEFAULT_OUT_PARENT: &str = "target/report";

#[derive(clap::Args)]
pub struct Args {
    /// A short run: filters up to 16 MiB, fewer keys and samples.
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The full sweep: filters up to 256 MiB, more keys and samples (several times the
    /// default's time, and several GiB of memory at the largest size).
    #[arg(long)]
    full: bool,
    /// Directory for report.md, report.json, the CSV files and the SVG plots [default: a new
    /// folder under target/report/, which git ignores; --out results regenerates the
    /// committed run].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Filter sizes for the speed sweep, e.g. 16KiB,1MiB,16MiB,256MiB
    /// [default: 16KiB,1MiB,16MiB,64MiB; --quick stops at 16MiB, --full goes to 256MiB].
    #[arg(long, value_delimiter = ',', value_parser = parse_size, conflicts_with = "items")]
    sizes: Option<Vec<usize>>,
    /// Key counts for the speed sweep instead of sizes (each filter gets items × bits/key bits).
    #[arg(long, value_delimiter = ',')]
    items: Option<Vec<usize>>,
    /// Bits per key of the speed sweep [default: 10].
    #[arg(long)]
    bits_per_key: Option<f64>,
    /// Bits-per-key grid of the FPR sweep, e.g. 6,8,10,12 [default: 6,8,...,20].
    #[arg(long, value_delimiter = ',')]
    fpr_bits: Option<Vec<f64>>,
    /// Keys inserted per filter in the FPR sweep [default: 500000; --quick 200000; --full
    /// 1000000].
    #[arg(long)]
    fpr_items: Option<usize>,
    /// Never-inserted keys probed per filter in the FPR sweep [default: 2000000; --quick
    /// 1000000; --full 4000000].
    #[arg(long)]
    fpr_probes: Option<usize>,
    /// Filters to measure, e.g. blocked,classic [default: all: blocked, classic, cuckoo,
    /// counting, scalable, split-block and the peer crates fastbloom, sbbf-rs, bloomfilter,
    /// cuckoofilter, xorf-bfuse8, growable-bloom-filter].
    #[arg(long, value_delimiter = ',')]
    filters: Option<Vec<Contender>>,
    /// Thread counts for the bulk insert, e.g. 1,2,4 [default: 1, 2, 4, ... up to the logical
    /// CPUs].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,
    /// Samples per figure, after one warm-up [default: 3; --full 5].
    #[arg(long)]
    reps: Option<usize>,
    /// Keys per lookup batch; keep it at 1048576 or more for filters past the cache
    /// [default: 1048576].
    #[arg(long)]
    lookups: Option<usize>,
    /// Least duration of one sample in milliseconds [default: 10; --quick 5; --full 20].
    #[arg(long)]
    min_sample_ms: Option<f64>,
    /// Seed of the keys and the filters' hashing.
    #[arg(long)]
    seed: Option<u64>,
}

fn parse_size(s: &str) -> Result<usize, String> {
    parse_byte_size("size", s).map_err(|e| e.to_string())
}

pub fn run(args: Args) -> Result<(), Failure> {
    let mut config = if args.quick {
        ReportConfig::quick()
    } else if args.full {
        ReportConfig::full()
    } else {
        ReportConfig::default_sweep()
    };
    if let Some(b) = args.bits_per_key {
        config.bits_per_key = b;
    }
    if let Some(sizes) = args.sizes {
        config.sizes = sizes;
    }
    if let Some(items) = args.items {
        config.sizes = items
            .iter()
            .map(|&n| ReportConfig::bytes_for(n, config.bits_per_key))
            .collect();
    }
    if let Some(v) = args.fpr_bits {
        config.fpr_bits_per_key = v;
    }
    if let Some(v) = args.fpr_items {
        config.fpr_items = v;
    }
    if let Some(v) = args.fpr_probes {
        config.fpr_probes = v;
    }
    if let Some(v) = args.filters {
        config.filters = v;
    }
    if let Some(v) = args.threads {
        config.threads = v;
    }
    if let Some(v) = args.reps {
        config.reps = v;
    }
    if let Some(v) = args.lookups {
        config.lookups = v;
    }
    if let Some(v) = args.min_sample_ms {
        config.min_sample_ms = v;
    }
    if let Some(v) = args.seed {
        config.seed = v;
    }
    config.validate()?;
    let out = match args.out {
        Some(dir) => dir,
        None => fresh_folder(Path::new(DEFAULT_OUT_PARENT))?,
    };

    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {percent:>3}% {wide_msg}")
            .map_err(Failure::other)?
            .progress_chars("=> "),
    );
    let report = {
        let ticker = Ticker::start(&bar);
        let report = run_report(&config, &command_line(), &mut |p| ticker.step(&p));
        ticker.stop();
        report?
    };
    bar.finish_and_clear();
    let files = write_report(&report, &out)?;
    let mut text = summary_text(&report);
    outln!(text);
    outln!(
        text,
        "linebloom report: {} files written to {} in {:.0} s",
        files.len(),
        out.display(),
        report.elapsed_s
    );
    outln!(
        text,
        "  read {}",
        out.join(linebloom_cli::report::write::MARKDOWN_FILE)
            .display()
    );
    output::print(&text)
}

/// A folder under `parent` that does not exist yet, named by the time (UTC), with `-2`, `-3`...
/// when a run in the same second took the name.
fn fresh_folder(parent: &Path) -> Result<PathBuf, Failure> {
    let stamp = utc_stamp();
    for n in 1..1000 {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = parent.join(name);
        if !dir.exists() {
            return Ok(dir);
        }
    }
    Err(Failure::other(format!(
        "no free folder name under {}",
        parent.display()
    )))
}

/// The progress bar's clock: the sweep reports each step as it starts, and a thread moves the
/// bar within the step by its expected cost and the time passed, and shows the time left, every
/// half second, so a long step never leaves the bar still. No thread runs when the bar is
/// hidden (standard error is not a terminal).
struct Ticker {
    bar: ProgressBar,
    state: Arc<Mutex<TickState>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct TickState {
    started: Instant,
    step_started: Instant,
    done_cost: f64,
    step_cost: f64,
    total_cost: f64,
    label: String,
    stop: bool,
}

impl TickState {
    fn show(&self, bar: &ProgressBar) {
        let eta = Eta::at(
            self.done_cost,
            self.step_cost,
            self.total_cost,
            self.started.elapsed().as_secs_f64(),
            self.step_started.elapsed().as_secs_f64(),
        );
        // The bar counts thousandths of the run's cost.
        bar.set_length(1000);
        if self.total_cost > 0.0 {
            bar.set_position((1000.0 * eta.position / self.total_cost) as u64);
        }
        let left = eta.remaining_s.round() as u64;
        bar.set_message(format!(
            "about {}:{:02} left · {}",
            left / 60,
            left % 60,
            self.label
        ));
    }
}

impl Ticker {
    fn start(bar: &ProgressBar) -> Ticker {
        let now = Instant::now();
        let state = Arc::new(Mutex::new(TickState {
            started: now,
            step_started: now,
            done_cost: 0.0,
            step_cost: 0.0,
            total_cost: 0.0,
            label: String::new(),
            stop: false,
        }));
        let thread = (!bar.is_hidden()).then(|| {
            let (state, bar) = (Arc::clone(&state), bar.clone());
            std::thread::spawn(move || {
                loop {
                    std::thread::sleep(Duration::from_millis(500));
                    let state = state.lock().unwrap_or_else(|p| p.into_inner());
                    if state.stop {
                        return;
                    }
                    state.show(&bar);
                }
            })
        });
        Ticker {
            bar: bar.clone(),
            state,
            thread,
        }
    }

    /// A step starts.
    fn step(&self, p: &Progress<'_>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.step_started = Instant::now();
        state.done_cost = p.done_cost;
        state.step_cost = p.step_cost;
        state.total_cost = p.total_cost;
        state.label = p.step.to_string();
        if self.thread.is_some() {
            state.show(&self.bar);
        }
    }

    fn stop(mut self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The command line as typed, with the program shown by its name and arguments that need it
/// quoted, for the report's record.
fn command_line() -> String {
    std::iter::once("linebloom".to_string())
        .chain(std::env::args().skip(1).map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}
