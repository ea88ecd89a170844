//! `linebloom build`, `query` and `stats` driven through the built binary: the round trip for
//! every kind, and the exit codes and single-line messages of every failure.

use std::io::Write;
use std::process::Stdio;

mod common;

use common::*;

#[test]
fn build_query_stats_for_every_kind() {
    let dir = scratch("roundtrip");
    let keys = write_keys(&dir, 2_000);
    let probes = dir.join("probes.txt");
    let probe_text: String = (0..2_000)
        .step_by(7)
        .map(|i| format!("user:{i}\n"))
        .chain((0..500).map(|i| format!("absent:{i}\r\n")))
        .collect();
    std::fs::write(&probes, &probe_text).unwrap();

    for (kind, size) in [
        ("blocked", ["--fpr", "0.01"]),
        ("classic", ["--bits-per-key", "10"]),
        ("cuckoo", ["--fpr", "0.01"]),
        ("counting", ["--fpr", "0.01"]),
        ("scalable", ["--fpr", "0.01"]),
        ("split-block", ["--fpr", "0.01"]),
    ] {
        let (o, filter) = build(&dir, kind, &keys, &size);
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        assert!(filter.exists());
        assert!(
            !dir.read_dir().unwrap().any(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp")),
            "{kind}: a temporary file was left behind"
        );

        // Keys from a file: every inserted key answers yes, in input order.
        let o = run(linebloom()
            .arg("query")
            .arg(&filter)
            .arg("--input")
            .arg(&probes));
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        let text = stdout(&o);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 286 + 500, "{kind}");
        for (line, i) in lines.iter().zip((0..2_000).step_by(7)) {
            assert_eq!(*line, format!("user:{i}\tyes"), "{kind}");
        }
        let false_positives = lines[286..].iter().filter(|l| l.ends_with("\tyes")).count();
        assert!(false_positives < 25, "{kind}: {false_positives} of 500");
        assert!(lines[286..].iter().all(|l| l.starts_with("absent:")));

        // Keys from standard input.
        let mut child = linebloom()
            .arg("query")
            .arg(&filter)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"user:3\nuser:1999\r\n")
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        assert_eq!(stdout(&o), "user:3\tyes\nuser:1999\tyes\n", "{kind}");

        // Stats, as a table and as JSON.
        let o = run(linebloom().arg("stats").arg(&filter));
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        let table = stdout(&o);
        for field in [
            "filter",
            "seed",
            "bytes",
            "bits per key",
            "fill ratio",
            "estimated items",
        ] {
            assert!(table.contains(field), "{kind}: no {field:?} in\n{table}");
        }
        let o = run(linebloom().arg("stats").arg(&filter).arg("--json"));
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(json["filter"], kind);
        // The Bloom filters record the keys read; the cuckoo filter its stored fingerprints
        // (keys it already reported present, false positives included, take no slot).
        let recorded = json["recorded_items"].as_u64().unwrap();
        assert!(recorded <= 2_000 && recorded > 1_980, "{kind}: {recorded}");
        let estimated = json["estimated_items"].as_f64().unwrap();
        assert!((estimated - 2_000.0).abs() < 100.0, "{kind}: {estimated}");
        let fpr = json["current_fpr"].as_f64().unwrap();
        assert!(fpr > 0.0 && fpr < 0.03, "{kind}: {fpr}");
        let fill = json["fill_ratio"].as_f64().unwrap();
        assert!(fill > 0.0 && fill < 1.0, "{kind}: {fill}");
        assert!(json["bits_per_key"].as_f64().unwrap() > 5.0);
        // Blocked and cuckoo filters ask for huge pages; on Linux they say how many they got.
        let asks = kind == "blocked" || kind == "cuckoo";
        if asks && cfg!(target_os = "linux") {
            let huge = json["huge_page_bytes"].as_u64().unwrap();
            assert!(huge <= json["bytes"].as_u64().unwrap(), "{kind}: {huge}");
        } else if !asks {
            assert!(json.get("huge_page_bytes").is_none(), "{kind}");
        }
        assert!(json["bytes"].as_u64().unwrap() > 1_000);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn seed_items_and_hashes_are_honoured() {
    let dir = scratch("options");
    let keys = write_keys(&dir, 300);
    let (o, filter) = build(
        &dir,
        "blocked",
        &keys,
        &[
            "--bits-per-key",
            "12",
            "--hashes",
            "5",
            "--seed",
            "1234",
            "--items",
            "1000",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(linebloom().arg("stats").arg(&filter).arg("--json"));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["seed"], 1234);
    assert_eq!(json["hashes"], 5);
    assert_eq!(
        (json["placement"].as_str(), json["hash_scheme"].as_u64()),
        (Some("shifted"), Some(3))
    );
    // 1000 items at 12 bits: 12 000 bits, 24 lines.
    assert_eq!(json["lines"], 24);
    assert_eq!(json["recorded_items"], 300);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_key_file_builds_an_empty_filter() {
    let dir = scratch("empty");
    let keys = dir.join("none.txt");
    std::fs::write(&keys, "").unwrap();
    let (o, filter) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(linebloom()
        .arg("query")
        .arg(&filter)
        .arg("--input")
        .arg(&keys));
    assert!(o.status.success());
    assert_eq!(stdout(&o), "");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failures_exit_2_with_one_line() {
    let dir = scratch("failures");
    let keys = write_keys(&dir, 100);
    let (o, filter) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success());

    // Missing files.
    let missing = dir.join("missing.txt");
    let (o, _) = build(&dir, "classic", &missing, &["--fpr", "0.01"]);
    assert_usage_failure(&o, "missing.txt");
    let o = run(linebloom().arg("query").arg(&missing));
    assert_usage_failure(&o, "missing.txt");
    let o = run(linebloom().arg("stats").arg(&missing));
    assert_usage_failure(&o, "missing.txt");
    let o = run(linebloom()
        .arg("query")
        .arg(&filter)
        .arg("--input")
        .arg(&missing));
    assert_usage_failure(&o, "missing.txt");

    // A corrupt filter (one flipped bit), a truncated one, and something else entirely.
    let bytes = std::fs::read(&filter).unwrap();
    let mut flipped = bytes.clone();
    flipped[100] ^= 4;
    let corrupt = dir.join("corrupt.lbf");
    std::fs::write(&corrupt, &flipped).unwrap();
    let truncated = dir.join("truncated.lbf");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for cmd in ["query", "stats"] {
        let o = run(linebloom().arg(cmd).arg(&corrupt));
        assert_usage_failure(&o, "checksum mismatch");
        let o = run(linebloom().arg(cmd).arg(&truncated));
        assert_usage_failure(&o, "truncated");
        let o = run(linebloom().arg(cmd).arg(&keys));
        assert_usage_failure(&o, "magic");
    }

    // Bad sizes.
    let (o, _) = build(&dir, "blocked", &keys, &["--fpr", "2"]);
    assert_usage_failure(&o, "false-positive rate");
    let (o, _) = build(
        &dir,
        "blocked",
        &keys,
        &["--bits-per-key", "10", "--hashes", "40"],
    );
    assert_usage_failure(&o, "probe count k");

    // An output path that cannot be created.
    let o = run(linebloom()
        .args(["build", "--filter", "blocked", "--fpr", "0.01", "--input"])
        .arg(&keys)
        .arg("--output")
        .arg(dir.join("no/such/dir/f.lbf")));
    assert_usage_failure(&o, "cannot write");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_full_cuckoo_filter_exits_1() {
    let dir = scratch("full");
    let keys = write_keys(&dir, 2_000);
    let (o, out) = build(&dir, "cuckoo", &keys, &["--fpr", "0.01", "--items", "100"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("full"), "{err}");
    assert!(!err.contains("panicked"));
    assert!(!out.exists(), "no filter is written after a failed build");
    // Repeated keys take no extra slots: a file of one key 100 times fits a tiny filter.
    let repeated = dir.join("repeated.txt");
    std::fs::write(&repeated, "same\n".repeat(100)).unwrap();
    let (o, _) = build(
        &dir,
        "cuckoo",
        &repeated,
        &["--fpr", "0.01", "--items", "1"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fpr_measures_the_counting_and_scalable_filters() {
    let fpr = |args: &[&str]| -> serde_json::Value {
        let o = run(linebloom().arg("fpr").args(args).arg("--json"));
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let counting = fpr(&[
        "--filter", "counting", "--items", "20000", "--fpr", "0.01", "--probes", "200000",
    ]);
    assert_eq!(counting["false_negatives"], 0);
    let measured = counting["measured_fpr"].as_f64().unwrap();
    assert!(measured < 0.015, "{measured}");
    // 20,000 keys into a chain sized for 20 at first (1000x growth): under the bound.
    let scalable = fpr(&[
        "--filter",
        "scalable",
        "--items",
        "20000",
        "--initial-items",
        "20",
        "--fpr",
        "0.01",
        "--probes",
        "200000",
    ]);
    assert_eq!(scalable["false_negatives"], 0);
    let measured = scalable["measured_fpr"].as_f64().unwrap();
    assert!(measured < 0.01, "{measured}");
    assert!(scalable["bits_per_key"].as_f64().unwrap() > 10.0);
    // A scalable filter needs an FPR, not bits per key.
    let o = run(linebloom().args([
        "fpr",
        "--filter",
        "scalable",
        "--items",
        "100",
        "--bits-per-key",
        "10",
    ]));
    assert_usage_failure(&o, "scalable");
}

#[test]
fn version_and_stats_name_the_simd_path_and_the_variable_lowers_it() {
    let best = linebloom::simd_path();
    let o = run(linebloom().arg("--version"));
    assert!(o.status.success());
    assert!(
        stdout(&o).contains(&format!("SIMD path: {best}")),
        "{}",
        stdout(&o)
    );
    for (asked, want) in [
        ("portable", "portable"),
        ("PORTABLE", "portable"),
        ("nonsense", best.name()),
    ] {
        let o = run(linebloom().arg("--version").env("LINEBLOOM_SIMD", asked));
        assert!(
            stdout(&o).contains(&format!("SIMD path: {want}")),
            "{asked}: {}",
            stdout(&o)
        );
    }
    // A higher path than the CPU has is never taken.
    let o = run(linebloom().arg("--version").env("LINEBLOOM_SIMD", "avx512"));
    assert!(stdout(&o).contains(&format!(
        "SIMD path: {}",
        best.min(linebloom::SimdPath::Avx512)
    )));
    let dir = scratch("simd-path");
    let keys = write_keys(&dir, 1_000);
    let (o, file) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(linebloom()
        .args(["stats", "--json"])
        .arg(&file)
        .env("LINEBLOOM_SIMD", "portable"));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["simd_path"], "portable");
    // Every path answers the same keys alike.
    let mut answers = Vec::new();
    for path in linebloom::SimdPath::available() {
        let o = run(linebloom()
            .arg("query")
            .arg(&file)
            .arg("--input")
            .arg(&keys)
            .env("LINEBLOOM_SIMD", path.name()));
        assert!(o.status.success());
        answers.push(stdout(&o));
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
    assert!(!answers[0].contains("\tno"));
}
