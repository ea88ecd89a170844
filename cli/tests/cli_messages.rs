//! What the command says, word for word, with its exit code: `build`'s summary line, an empty
//! input, a filter filled far past `--items`, a size a kind rounds, an output directory that
//! does not exist, `build --help`, the counting filter's FPR estimate in `stats`, and `tune`'s
//! warnings. (`redis stats` is checked in `redis.rs`, which starts a server.)

mod common;

use common::*;
use linebloom::{BlockedBloom, CountingBlockedBloom, Filter, FilterKind};
use linebloom_cli::report::figures::fpr_md;

#[test]
fn build_ends_with_one_summary_line() {
    let dir = scratch("summary");
    let keys = write_keys(&dir, 2_000);
    let (o, filter) = build(&dir, "blocked", &keys, &["--bits-per-key", "10"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(filter.exists());
    // 2,000 keys at 10 bits: 20,000 bits in whole 512-bit lines, 40 of them.
    let model = BlockedBloom::with_bits_per_key(2_000, 10.0)
        .unwrap()
        .expected_fpr(2_000);
    assert_eq!(
        stderr(&o),
        format!(
            "linebloom: built a blocked filter from 2000 keys: 2560 bytes (2.50 KiB), 10.24 \
             bits/key, model FPR {}; --bits-per-key 10 gives 10.24 for 2000 keys (the filter \
             has whole 64-byte lines)\n",
            fpr_md(model)
        )
    );
    assert_eq!(stdout(&o), "");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_input_says_0_keys() {
    let dir = scratch("empty-input");
    let keys = dir.join("none.txt");
    std::fs::write(&keys, "").unwrap();
    let (o, filter) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "linebloom: built a blocked filter from 0 keys ({} is empty): 64 bytes\n",
            keys.display()
        )
    );
    assert!(filter.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keys_far_past_items_fail_unless_allowed() {
    let dir = scratch("overfill");
    let keys = write_keys(&dir, 2_000);
    let (o, filter) = build(&dir, "blocked", &keys, &["--fpr", "0.01", "--items", "10"]);
    assert_eq!(
        stderr(&o),
        "linebloom: 2000 keys are more than --items 10 allows: the filter's model FPR would be \
         100.0 % instead of the 1.00 % asked; give --items 2000 or more, or leave --items out to \
         size the filter for the keys read (--allow-overfill writes it anyway)\n"
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!filter.exists(), "no filter is written");
    assert!(
        !dir.read_dir()
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().contains(".tmp")),
        "a temporary file was left behind"
    );

    // Opted in: written, with a warning before the summary.
    let (o, filter) = build(
        &dir,
        "blocked",
        &keys,
        &["--fpr", "0.01", "--items", "10", "--allow-overfill"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(filter.exists());
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[0],
        "linebloom: warning: 2000 keys went into a blocked filter sized for 10 (--items): its \
         model FPR is 100.0 % instead of the 1.00 % asked"
    );
    assert!(
        lines[1].starts_with("linebloom: built a blocked filter from 2000 keys: 64 bytes"),
        "{err}"
    );
    assert_eq!(lines.len(), 2, "{err}");

    // A little past --items is a warning only.
    let (o, _) = build(
        &dir,
        "classic",
        &keys,
        &["--fpr", "0.01", "--items", "1900"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with(
            "linebloom: warning: 2000 keys went into a classic filter sized for 1900 (--items)"
        ),
        "{err}"
    );
    // --allow-overfill means nothing without --items.
    let (o, _) = build(
        &dir,
        "blocked",
        &keys,
        &["--fpr", "0.01", "--allow-overfill"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rounded_bits_per_key_is_reported() {
    let dir = scratch("rounded");
    let keys = write_keys(&dir, 2_000);
    let (o, _) = build(&dir, "cuckoo", &keys, &["--bits-per-key", "14"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("linebloom: built a cuckoo filter from 2000 keys"),
        "{err}"
    );
    assert!(
        err.ends_with(
            "; --bits-per-key 14 gives 12.67 for 2000 keys (a cuckoo filter's fingerprints are \
             8, 12 or 16 bits at 95 % load, the widest that fits)\n"
        ),
        "{err}"
    );
    // A size the kind has exactly: no note.
    let keys = write_keys(&dir, 4_096);
    let (o, _) = build(&dir, "blocked", &keys, &["--bits-per-key", "8"]);
    assert!(!stderr(&o).contains("gives"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_name_the_users_path() {
    let dir = scratch("paths");
    let keys = write_keys(&dir, 10);
    let output = dir.join("no/such/dir/f.lbf");
    let o = run(linebloom()
        .args(["build", "--filter", "blocked", "--fpr", "0.01", "--input"])
        .arg(&keys)
        .arg("--output")
        .arg(&output));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "linebloom: cannot write {}: the directory {} does not exist\n",
            output.display(),
            dir.join("no/such/dir").display()
        )
    );
    // A file where the directory should be.
    let output = keys.join("f.lbf");
    let o = run(linebloom()
        .args(["build", "--filter", "blocked", "--fpr", "0.01", "--input"])
        .arg(&keys)
        .arg("--output")
        .arg(&output));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "linebloom: cannot write {}: {} is not a directory\n",
            output.display(),
            keys.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn build_help_lists_every_kind() {
    let o = run(linebloom().args(["build", "--help"]));
    assert_eq!(o.status.code(), Some(0));
    let names: Vec<&str> = FilterKind::ALL.iter().map(|k| k.name()).collect();
    let listed = format!("[possible values: {}]", names.join(", "));
    assert!(stdout(&o).contains(&listed), "{}", stdout(&o));
    let o = run(linebloom().args(["fpr", "--help"]));
    assert!(stdout(&o).contains(&listed), "{}", stdout(&o));
    // The other name of the split-block filter still works.
    let dir = scratch("kinds");
    let keys = write_keys(&dir, 100);
    let (o, _) = build(&dir, "sbbf", &keys, &["--fpr", "0.01"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A wrong name lists them too.
    let (o, _) = build(&dir, "bloom", &keys, &["--fpr", "0.01"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&listed), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn counting_stats_estimate_matches_measurement() {
    let dir = scratch("counting-fpr");
    let keys = write_keys(&dir, 20_000);
    let (o, filter) = build(&dir, "counting", &keys, &["--fpr", "0.01"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(linebloom().arg("stats").arg("--json").arg(&filter));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let estimate = json["current_fpr"].as_f64().unwrap();
    // 200,000 keys never inserted, through `query`: the estimate lies within 4 standard
    // deviations of what they measure (fixed keys: the test is deterministic).
    let probes = 200_000;
    let absent = dir.join("absent.txt");
    let text: String = (0..probes).map(|i| format!("absent:{i}\n")).collect();
    std::fs::write(&absent, text).unwrap();
    let o = run(linebloom()
        .arg("query")
        .arg(&filter)
        .arg("--input")
        .arg(&absent));
    let yes = stdout(&o).lines().filter(|l| l.ends_with("\tyes")).count();
    let measured = yes as f64 / probes as f64;
    let sd = (estimate * (1.0 - estimate) / probes as f64).sqrt();
    assert!(
        (measured - estimate).abs() < 4.0 * sd,
        "estimate {estimate}, measured {measured}"
    );
    // And the library's estimate is the one stats prints.
    let bytes = std::fs::read(&filter).unwrap();
    let f = match linebloom::format::read_any(&bytes).unwrap() {
        linebloom::format::AnyFilter::Counting(f) => f,
        other => panic!("{:?}", other.kind()),
    };
    let f: &CountingBlockedBloom = &f;
    assert_eq!(f.current_fpr(), estimate);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tune_warnings_read_as_sentences() {
    let o = run(linebloom().args([
        "tune",
        "--items",
        "1000",
        "--memory",
        "1GiB",
        "--no-measure",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.ends_with(
            "\nwarning: the budget allows 8589935 bits per key; no filter here needs more than \
             64 (FPR below 1e-8 for every one), so the recommendation uses 64 bits per key and \
             leaves the rest\n"
        ),
        "{text}"
    );
    let o = run(linebloom().args([
        "tune",
        "--items",
        "1000",
        "--bits-per-key",
        "100",
        "--no-measure",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.ends_with(
            "\nwarning: 100 bits per key is more than any filter here needs: at 64 every one \
             is below 1e-8 FPR\n"
        ),
        "{text}"
    );
    // No run of spaces inside a sentence, in any answer (the tables align with spaces, so
    // only lines that are prose are checked).
    for args in [
        &["--fpr", "0.01"][..],
        &["--fpr", "1e-5"],
        &["--fpr", "1e-6", "--deletes"],
        &["--fpr", "0.01", "--grows"],
        &["--memory", "375000"],
        &["--memory", "1GiB"],
        &["--bits-per-key", "100"],
    ] {
        let o = run(linebloom()
            .args(["tune", "--items", "1000000", "--no-measure"])
            .args(args));
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        for line in stdout(&o).lines() {
            let prose = line.len() > 60 && !line.starts_with("  ") && line.contains(". ")
                || line.starts_with("warning:");
            assert!(
                !prose || !line.contains("  "),
                "{args:?}: a run of spaces in {line:?}"
            );
        }
    }
}
