//! The tuning report and `tune`: a tiny sweep end to end, what the writers produce, the
//! recommendations, and bad input. No timing is asserted (this machine's speed is not a test
//! subject); small sizes keep the whole file to a few seconds.

use std::path::{Path, PathBuf};
use std::process::Command;

use linebloom::FilterKind;
use linebloom_cli::report::byte_size::parse_byte_size;
use linebloom_cli::report::subject::Contender;
use linebloom_cli::report::tune::{MeasureBudget, Target, TuneRequest, measure, recommend};
use linebloom_cli::report::write::{self, write_report};
use linebloom_cli::report::{Report, ReportConfig, run_report};

/// A fresh, empty directory under the system's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("linebloom-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A sweep small enough for a test: a filter in L1 and one just past the repeated-fill
/// threshold (so both sampling paths run), three FPR points, two thread counts.
fn tiny_config() -> ReportConfig {
    ReportConfig {
        sizes: vec![16 << 10, 3 << 20],
        fpr_bits_per_key: vec![8.0, 10.0, 12.0],
        fpr_items: 20_000,
        fpr_probes: 50_000,
        threads: vec![1, 2],
        reps: 2,
        lookups: 4096,
        min_sample_ms: 1.0,
        ..ReportConfig::quick()
    }
}

fn tiny_report() -> Report {
    let mut steps = 0;
    let report = run_report(&tiny_config(), "linebloom report (test)", &mut |p| {
        assert!(p.done <= p.total);
        steps += 1;
    })
    .unwrap();
    assert!(steps > 0);
    report
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_tiny_sweep_writes_every_file() {
    let report = tiny_report();
    let config = tiny_config();
    let filters = config.filters.len();

    // Every filter measured at both sizes, no false negatives anywhere.
    assert_eq!(report.speed.len(), 2 * filters, "{:?}", report.skipped);
    assert_eq!(report.limits.len(), 2);
    for r in &report.speed {
        assert_eq!(r.hits_not_found, 0, "{}", r.filter);
        // Each row names linebloom's SIMD path (none for a peer's row) and the build.
        let path = linebloom::simd_path().name();
        assert_eq!(r.simd_path, if r.peer { "" } else { path }, "{}", r.filter);
        assert!(["target-cpu", "default"].contains(&r.build), "{}", r.build);
        assert!(r.insert.median_ns > 0.0 && r.hit.median_ns > 0.0);
        // A scalable chain grows 1000x to its size, and pays for it in bits per key; a
        // counting filter's counters are 4 bits each.
        let most = match r.filter.as_str() {
            "scalable" | "counting" => 60.0,
            _ => 17.0,
        };
        assert!(
            r.bits_per_key > 5.0 && r.bits_per_key < most,
            "{} {}",
            r.filter,
            r.bits_per_key
        );
        assert!(r.hit_ratio > 0.0);
    }
    // Blocked and classic have a parallel insert: one row per size and thread count.
    for kind in ["blocked", "classic"] {
        assert_eq!(report.bulk.iter().filter(|b| b.filter == kind).count(), 4);
    }
    // Blocked rows carry their ceiling: at 16 KiB from whole fills after the sweep's, at 3 MiB
    // (past the whole-fill bound) from chunks timed between the bulk insert's own.
    for b in &report.bulk {
        let ceiling = b.ceiling.as_ref().map(|c| (c.samples, c.median_ns));
        match ceiling {
            Some((samples, ns)) => {
                assert_eq!(b.filter, "blocked");
                assert!(samples >= 1 && ns > 0.0 && ns.is_finite(), "{b:?}");
            }
            None => assert_ne!(b.filter, "blocked", "{b:?}"),
        }
        // And the one-task bound, timed the same ways.
        let task = b.one_task.as_ref().map(|t| (t.samples, t.median_ns));
        match task {
            Some((samples, ns)) => {
                assert_eq!(b.filter, "blocked");
                assert!(samples >= 1 && ns > 0.0 && ns.is_finite(), "{b:?}");
                assert!(b.one_task_bound.is_some_and(|x| x > 0.0), "{b:?}");
            }
            None => assert_ne!(b.filter, "blocked", "{b:?}"),
        }
    }
    // Whole-batch builds of the 3 MiB filter only (the 16 KiB one is filled whole in the bulk
    // table already): in input order, one call, one call per pool and, on more than one
    // thread, one call with buffers kept and a fill in pieces; too small to partition.
    let ways: Vec<(&str, usize)> = report
        .builds
        .iter()
        .map(|b| (b.method.as_str(), b.threads))
        .collect();
    assert_eq!(
        ways,
        [
            ("insert_hashes per 1 Mi keys", 1),
            ("insert_hashes whole batch", 1),
            ("par_insert_hashes whole batch", 1),
            ("par_insert_hashes whole batch", 2),
            ("par_insert_hashes_with whole batch (buffers kept)", 2),
            ("par_fill per 1 Mi keys (buffers kept)", 2),
        ]
    );
    for b in &report.builds {
        assert_eq!(b.target_bytes, 3 << 20);
        assert!(
            !b.partitioned && b.insert.median_ns > 0.0 && b.speedup > 0.0,
            "{b:?}"
        );
    }
    assert_eq!(report.builds[1].speedup, 1.0);
    for r in &report.fpr {
        assert_eq!(r.false_negatives, 0, "{}", r.filter);
    }
    // Cuckoo cannot go below 8.42 bits per key; 8 is recorded as skipped, not an error.
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.filter == "cuckoo" && s.what.contains("FPR at 8"))
    );

    let dir = temp_dir("sweep");
    let files = write_report(&report, &dir).unwrap();
    assert!(files.iter().all(|f| f.exists()));

    // JSON: parses back, with every section.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(write::JSON_FILE)).unwrap())
            .unwrap();
    assert_eq!(json["speed"].as_array().unwrap().len(), report.speed.len());
    assert_eq!(json["fpr"].as_array().unwrap().len(), report.fpr.len());
    assert_eq!(json["limits"].as_array().unwrap().len(), 2);
    assert!(json["machine"]["rustc"].as_str().unwrap().contains("rustc"));
    assert!(json["speed"][0]["hit"]["median_ns"].as_f64().unwrap() > 0.0);
    assert_eq!(json["config"]["filters"][0], "blocked");

    // CSV: a header, one row per measurement, every row as wide as the header.
    for (file, rows) in [
        (write::SPEED_CSV, report.speed.len()),
        (write::BULK_CSV, report.bulk.len()),
        (write::BUILD_CSV, report.builds.len()),
        (write::FPR_CSV, report.fpr.len()),
        (write::LIMIT_CSV, report.limits.len()),
    ] {
        let csv = csv_rows(&dir.join(file));
        assert_eq!(csv.len(), rows + 1, "{file}");
        assert!(csv[0].iter().all(|h| !h.is_empty()), "{file}");
        assert!(csv.iter().all(|r| r.len() == csv[0].len()), "{file}");
    }
    let speed = csv_rows(&dir.join(write::SPEED_CSV));
    assert_eq!(speed[0][0], "filter");
    assert_eq!(speed[0][speed[0].len() - 2..], ["simd_path", "build"]);

    // Markdown: the machine, the tables, every filter, the plots linked.
    let md = std::fs::read_to_string(dir.join(write::MARKDOWN_FILE)).unwrap();
    for needle in [
        "# linebloom tuning report",
        "## Machine",
        "| Target features compiled in |",
        "## How to read this report",
        "## Inserts and lookups at 10 bits per key",
        "| filter | params | bits/key | insert | hit | miss |",
        "## Lookups as multiples of the memory limit",
        "## Memory limit: ns per random 64-byte line",
        "## Bulk insert",
        "## Building a blocked filter from all its keys at once",
        "## False-positive rate against bits per key",
        "## Not measured",
        "![fpr.svg](fpr.svg)",
    ] {
        assert!(md.contains(needle), "report.md lacks {needle:?}");
    }
    for c in &config.filters {
        assert!(md.contains(&format!("| {} |", c.name())), "{c}");
    }
    // The summary opens the report: within its first 40 lines, at most 15 lines long, a pick
    // for every need and a verdict for every README claim, and no machine fact of its own.
    let lines: Vec<&str> = md.lines().collect();
    let start = lines.iter().position(|l| *l == "## Summary").unwrap();
    assert!(start < 40, "the summary starts at line {}", start + 1);
    let mut len = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## "))
        .unwrap()
        + 1;
    while lines[start + len - 1].is_empty() {
        len -= 1;
    }
    let section = lines[start..start + len].join("\n");
    assert!(
        len <= linebloom_cli::report::summary::SUMMARY_MAX_LINES,
        "{len} lines:\n{section}"
    );
    for need in [
        "| point lookups on a hot path |",
        "| batches of lookups |",
        "| building fast |",
        "| deletes |",
        "| growth (count not known) |",
        "| fewest bits per key (1 % FPR) |",
    ] {
        assert!(section.contains(need), "{need} in\n{section}");
    }
    let s = linebloom_cli::report::summary::summarize(&report);
    assert_eq!(s.picks.len(), 6);
    assert!(s.picks.iter().all(|p| p.pick != "—"), "{:?}", s.picks);
    assert_eq!(s.claims.len(), 4);
    for c in &s.claims {
        assert!(
            ["holds (", "here: ", "not tested: "]
                .iter()
                .any(|v| c.verdict.starts_with(v)),
            "{c:?}"
        );
    }
    assert!(section.contains(&report.machine.simd_path), "{section}");
    assert!(section.contains("linebloom tune --items N --fpr P"));
    // The machine's cache, not a fixed one, in the words beside the tables.
    assert!(
        !md.contains("32 MiB cache"),
        "a fixed cache size in the report"
    );
    if let Some(llc) = report.machine.last_level_cache_bytes() {
        let llc = linebloom_cli::report::byte_size::format_byte_size(llc);
        assert!(md.contains(&format!("this machine's {llc} last-level cache")));
    }
    // Each step's time is recorded, in the plan's order.
    let plan = linebloom_cli::report::sweep::plan_steps(&config);
    let steps: Vec<&str> = report.steps.iter().map(|s| s.step.as_str()).collect();
    let planned: Vec<&str> = plan.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(steps, planned);
    assert!(
        report
            .steps
            .iter()
            .all(|s| s.seconds >= 0.0 && s.expected_s >= 0.0)
    );

    // SVG: well-formed enough to be a picture, titled; every series told from the others by
    // its colour and marker (or, for a model beside its measurement, by its dashes), every
    // legend name in the picture.
    let plots = linebloom_cli::report::plot::plots(&report).unwrap();
    assert!(plots.len() >= config.filters.len() + 3);
    for plot in &plots {
        assert!(!plot.legend.is_empty(), "{}", plot.file);
        for (i, a) in plot.legend.iter().enumerate() {
            assert!(plot.svg.contains(&a.name), "{}: {}", plot.file, a.name);
            for b in &plot.legend[i + 1..] {
                assert!(
                    (a.style.colour, a.style.marker) != (b.style.colour, b.style.marker),
                    "{}: {} and {} look alike ({:?})",
                    plot.file,
                    a.name,
                    b.name,
                    a.style
                );
            }
        }
    }
    // The plots that compare filters give a filter the same look in each.
    let look = |file: &str, name: &str| {
        plots
            .iter()
            .find(|p| p.file == file)
            .and_then(|p| p.legend.iter().find(|e| e.name == name))
            .map(|e| (e.style.colour, e.style.marker))
    };
    for c in &config.filters {
        assert_eq!(
            look("compare_hit.svg", c.name()),
            look("compare_miss.svg", c.name())
        );
    }
    for plot in &plots {
        let svg = std::fs::read_to_string(dir.join(&plot.file)).unwrap();
        assert!(svg.trim_start().starts_with("<svg"), "{}", plot.file);
        assert!(svg.trim_end().ends_with("</svg>"), "{}", plot.file);
        assert!(svg.contains(&plot.title), "{} lacks its title", plot.file);
        assert!(svg.contains("<text"), "{}", plot.file);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_report_removes_the_plots_of_an_earlier_one() {
    let config = ReportConfig {
        sizes: vec![16 << 10],
        filters: vec![Contender::Ours(FilterKind::Blocked)],
        fpr_bits_per_key: vec![10.0],
        fpr_items: 5_000,
        fpr_probes: 5_000,
        threads: vec![1],
        reps: 1,
        lookups: 1000,
        min_sample_ms: 1.0,
        ..ReportConfig::quick()
    };
    let report = run_report(&config, "linebloom report (test)", &mut |_| {}).unwrap();
    let dir = temp_dir("stale");
    // An earlier report's plots of a filter and an operation this one does not draw, and
    // files that are no plot of a report.
    let stale = ["speed_oldfilter.svg", "compare_old_operation.svg"];
    let others = ["notes.txt", "speed_oldfilter.png", "my_fpr.svg"];
    for name in stale.iter().chain(&others) {
        std::fs::write(dir.join(name), "earlier").unwrap();
    }
    std::fs::create_dir(dir.join("speed_kept_dir.svg")).unwrap();

    let files = write_report(&report, &dir).unwrap();
    for name in stale {
        assert!(
            !dir.join(name).exists(),
            "{name} is left from the earlier report"
        );
    }
    for name in others {
        assert_eq!(
            std::fs::read_to_string(dir.join(name)).unwrap(),
            "earlier",
            "{name}"
        );
    }
    assert!(dir.join("speed_kept_dir.svg").is_dir());
    // This report's own plots are written, and listed.
    for name in ["speed_blocked.svg", "fpr.svg"] {
        assert!(dir.join(name).exists(), "{name}");
        assert!(files.contains(&dir.join(name)), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_command_runs_end_to_end() {
    let dir = temp_dir("cli");
    let out = Command::new(env!("CARGO_BIN_EXE_linebloom"))
        .args([
            "report",
            "--sizes",
            "16KiB,64KiB",
            "--filters",
            "blocked,cuckoo",
            "--fpr-bits",
            "10,16",
            "--fpr-items",
            "5000",
            "--fpr-probes",
            "5000",
            "--threads",
            "1",
            "--reps",
            "1",
            "--lookups",
            "1000",
            "--min-sample-ms",
            "1",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        write::MARKDOWN_FILE,
        write::JSON_FILE,
        "fpr.svg",
        "speed_blocked.svg",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let md = std::fs::read_to_string(dir.join(write::MARKDOWN_FILE)).unwrap();
    assert!(md.contains("linebloom report --sizes 16KiB,64KiB"));
    // The summary ends the command's output, then where the files are.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Summary: "), "{text}");
    assert!(
        text.contains("\nREADME claims on this machine:\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("files written to {}", dir.display())),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_out_a_report_goes_to_a_fresh_ignored_folder() {
    // Run where `results/` exists, as in a checkout: it is left alone, and each run gets a
    // folder of its own under target/report/.
    let dir = temp_dir("default-out");
    std::fs::create_dir(dir.join("results")).unwrap();
    std::fs::write(dir.join("results/report.md"), "committed").unwrap();
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_linebloom"))
            .current_dir(&dir)
            .args([
                "report",
                "--sizes",
                "16KiB",
                "--filters",
                "blocked",
                "--fpr-bits",
                "10",
                "--fpr-items",
                "5000",
                "--fpr-probes",
                "5000",
                "--threads",
                "1",
                "--reps",
                "1",
                "--lookups",
                "1000",
                "--min-sample-ms",
                "1",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run();
    run();
    assert_eq!(
        std::fs::read_to_string(dir.join("results/report.md")).unwrap(),
        "committed"
    );
    let folders: Vec<PathBuf> = std::fs::read_dir(dir.join("target/report"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 2, "{folders:?}");
    for f in &folders {
        assert!(f.join(write::MARKDOWN_FILE).exists(), "{}", f.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_report_flags_exit_2() {
    for args in [
        vec!["report", "--sizes", "lots"],
        vec!["report", "--threads", "0"],
        vec!["report", "--filters", "bloom"],
        vec!["report", "--bits-per-key", "0.5"],
        vec!["report", "--quick", "--full"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_linebloom"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

fn tune(
    items: u64,
    target: Target,
) -> linebloom::Result<linebloom_cli::report::tune::Recommendation> {
    recommend(&TuneRequest {
        items,
        target,
        needs_delete: false,
        grows: false,
    })
}

#[test]
fn tune_recommends_by_the_rule() {
    // High FPR: the blocked filter's memory premium is small.
    let r = tune(1_000_000, Target::Fpr(0.05)).unwrap();
    assert_eq!(r.chosen.filter, FilterKind::Blocked);
    assert!(r.chosen.fpr <= 0.05);
    // Classic and cuckoo, and the split-block filter (listed, never chosen).
    assert_eq!(r.alternatives.len(), 3);
    assert!(
        r.alternatives
            .iter()
            .any(|c| c.filter == FilterKind::SplitBlock && c.fpr <= 0.05)
    );
    assert_eq!(r.why.len(), 2);
    // 1e-5: the blocked filter would need 24 % more memory than classic; cuckoo cannot.
    let r = tune(1_000_000, Target::Fpr(1e-5)).unwrap();
    assert_eq!(r.chosen.filter, FilterKind::Classic);
    assert!(r.cannot.iter().any(|u| u.filter == FilterKind::Cuckoo));
    assert!(r.blocked_premium.unwrap() > 0.2);
    // Near 16-bit fingerprints' FPR the cuckoo filter is the smallest.
    let r = tune(1_000_000, Target::Fpr(1.2e-4)).unwrap();
    assert_eq!(r.chosen.filter, FilterKind::Cuckoo);
    // A memory budget: the blocked filter, within budget.
    let r = tune(1_000_000, Target::Memory(1_250_000)).unwrap();
    assert_eq!(r.chosen.filter, FilterKind::Blocked);
    assert!(r.chosen.bytes <= 1_250_000);
    // Deletes: the cuckoo filter where it meets the target, the counting filter where it
    // cannot, an error where neither can.
    let del = |target| {
        recommend(&TuneRequest {
            items: 1000,
            target,
            needs_delete: true,
            grows: false,
        })
    };
    let r = del(Target::Fpr(0.01)).unwrap();
    assert_eq!(r.chosen.filter, FilterKind::Cuckoo);
    let counting = r
        .alternatives
        .iter()
        .find(|c| c.filter == FilterKind::Counting)
        .unwrap();
    assert!(counting.fpr <= 0.01 && counting.bytes > 3 * r.chosen.bytes);
    for target in [Target::Fpr(1e-6), Target::BitsPerKey(8.0)] {
        let r = del(target).unwrap();
        assert_eq!(r.chosen.filter, FilterKind::Counting, "{target:?}");
        assert!(r.cannot.iter().any(|u| u.filter == FilterKind::Cuckoo));
    }
    assert!(del(Target::Fpr(1e-9)).is_err());
}

#[test]
fn tune_recommends_scalable_when_the_count_grows() {
    let grows = |target| {
        recommend(&TuneRequest {
            items: 1000,
            target,
            needs_delete: false,
            grows: true,
        })
    };
    let r = grows(Target::Fpr(0.01)).unwrap();
    assert_eq!(r.chosen.filter, FilterKind::Scalable);
    assert_eq!(r.chosen.fpr, 0.01);
    let g = r.chosen.grown.as_ref().unwrap();
    assert_eq!(g.items, 1_000_000);
    // The chain at 1000x: about 18 bits per key in 10 filters, against 10 for one filter.
    assert_eq!(g.filters, 10);
    assert!((15.0..21.0).contains(&g.bits_per_key), "{}", g.bits_per_key);
    assert!(g.blocked_bits_per_key < g.bits_per_key);
    assert!(r.why.iter().any(|w| w.contains("without --grows")));
    assert_eq!(
        grows(Target::BitsPerKey(10.0)).unwrap().chosen.filter,
        FilterKind::Scalable
    );
    assert!(grows(Target::Memory(1 << 20)).is_err());
    assert!(grows(Target::Fpr(2.0)).is_err());
    assert!(
        recommend(&TuneRequest {
            items: 1000,
            target: Target::Fpr(0.01),
            needs_delete: true,
            grows: true,
        })
        .is_err()
    );
    // Measured grown, within the budget.
    let budget = MeasureBudget {
        max_bytes: 64 << 10,
        fill_time: std::time::Duration::from_millis(100),
        lookups: 4096,
    };
    let m = measure(&r, budget, 7).unwrap();
    assert!(m.bytes <= 64 << 10);
    assert!(m.miss.median_ns > 0.0);
}

#[test]
fn tune_is_honest_about_tight_memory() {
    // 3 bits per key: a filter, but a poor one, and it says so.
    let r = tune(1_000_000, Target::Memory(375_000)).unwrap();
    assert!(r.chosen.fpr > 0.1);
    assert!(r.warnings.iter().any(|w| w.contains("more memory")));
    // Less than a bit per key: no filter at all.
    let e = tune(1_000_000, Target::Memory(100))
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory"), "{e}");
    // A budget far beyond need is capped, with a note.
    let r = tune(1000, Target::Memory(1 << 30)).unwrap();
    assert!(r.chosen.bits_per_key <= 65.0);
    assert!(!r.warnings.is_empty());
}

#[test]
fn tune_rejects_bad_input() {
    assert!(tune(0, Target::Fpr(0.01)).is_err());
    for p in [2.0, 0.0, -0.1, 1.0, f64::NAN] {
        assert!(tune(1000, Target::Fpr(p)).is_err(), "{p}");
    }
    for b in [0.0, 0.5, f64::NAN, f64::INFINITY, 5000.0] {
        assert!(tune(1000, Target::BitsPerKey(b)).is_err(), "{b}");
    }
    for m in ["garbage", "", "-5MiB", "0", "12 parsecs"] {
        assert!(parse_byte_size("memory", m).is_err(), "{m}");
    }
    assert_eq!(parse_byte_size("memory", "64MiB").unwrap(), 64 << 20);
}

#[test]
fn tune_measures_briefly() {
    let r = tune(100_000, Target::Fpr(0.01)).unwrap();
    let budget = MeasureBudget {
        max_bytes: 64 << 10,
        fill_time: std::time::Duration::from_millis(100),
        lookups: 4096,
    };
    let m = measure(&r, budget, 7).unwrap();
    assert!(m.bytes <= 64 << 10);
    assert!(m.note.contains("same parameters"));
    assert!(m.hit.median_ns > 0.0 && m.miss.median_ns > 0.0 && m.batched_miss.median_ns > 0.0);
    assert!(m.filled > 0.0 && m.filled <= 1.0);
}

#[test]
fn tune_command_exit_codes() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_linebloom"))
            .args(args)
            .output()
            .unwrap()
    };
    for args in [
        &["tune", "--items", "0", "--fpr", "0.01"][..],
        &["tune", "--items", "1000", "--fpr", "2"],
        &["tune", "--items", "1000", "--memory", "garbage"],
        &["tune", "--items", "1000"],
        &[
            "tune", "--items", "1000", "--fpr", "0.01", "--memory", "1MiB",
        ],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let out = run(&["tune", "--items", "1000", "--fpr", "0.01", "--no-measure"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("recommended    blocked filter"), "{text}");
    let out = run(&[
        "tune",
        "--items",
        "1000",
        "--bits-per-key",
        "10",
        "--no-measure",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["recommendation"]["chosen"]["filter"], "blocked");
    assert!(json["recommendation"]["chosen"].get("grown").is_none());
    let out = run(&[
        "tune",
        "--items",
        "1000",
        "--fpr",
        "1e-6",
        "--deletes",
        "--no-measure",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("recommended    counting filter"), "{text}");
    let out = run(&[
        "tune",
        "--items",
        "1000",
        "--fpr",
        "0.01",
        "--grows",
        "--no-measure",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("recommended    scalable filter"), "{text}");
    assert!(
        text.contains("grown 1000x    1000000 keys: 10 filters"),
        "{text}"
    );
    for args in [
        &[
            "tune",
            "--items",
            "1000",
            "--fpr",
            "0.01",
            "--grows",
            "--deletes",
        ][..],
        &["tune", "--items", "1000", "--memory", "1MiB", "--grows"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn contenders_parse() {
    assert_eq!(
        "blocked".parse::<Contender>().unwrap(),
        Contender::Ours(FilterKind::Blocked)
    );
    for peer in [
        "bloomfilter",
        "cuckoofilter",
        "fastbloom",
        "sbbf-rs",
        "xorf-bfuse8",
        "growable-bloom-filter",
    ] {
        assert!(peer.parse::<Contender>().unwrap().is_peer(), "{peer}");
    }
    assert_eq!(
        "split-block".parse::<Contender>().unwrap(),
        Contender::Ours(FilterKind::SplitBlock)
    );
    assert_eq!(Contender::available().len(), 12);
}
