//! The command's input and output under the conditions a shell creates: keys from pipes, FIFOs
//! and `/dev/stdin`, endless input under a memory limit, standard output that is full or
//! closed, planted links, unwritable outputs, a signal during `build`, sparse and truncated
//! filter files. Each runs the built binary, as a user would.
#![cfg(unix)]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Runs `script` with `sh -c`, with `$LB` the binary and `$D` the scratch directory.
fn sh(dir: &Path, script: &str) -> Output {
    run(Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("LB", env!("CARGO_BIN_EXE_linebloom"))
        .env("D", dir))
}

/// The answers `query` gives for `keys` against `filter`, as a count of "yes" lines.
fn yes_count(filter: &Path, keys: &Path) -> usize {
    let o = run(linebloom()
        .arg("query")
        .arg(filter)
        .arg("--input")
        .arg(keys));
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().filter(|l| l.ends_with("\tyes")).count()
}

/// Whether a file of the directory has a name containing `.tmp`.
fn temp_left(dir: &Path) -> bool {
    dir.read_dir()
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().contains(".tmp"))
}

#[test]
fn keys_from_pipes_fifos_and_stdin_are_all_inserted() {
    let dir = scratch("pipes");
    let keys = write_keys(&dir, 5_000);
    let ways = [
        (
            "stdin",
            "cat \"$D/keys.txt\" | \"$LB\" build --filter blocked --fpr 0.01 --output \"$D/f1.lbf\"",
        ),
        (
            "dash",
            "cat \"$D/keys.txt\" | \"$LB\" build --filter classic --fpr 0.01 --input - --output \"$D/f2.lbf\"",
        ),
        (
            "dev-stdin",
            "cat \"$D/keys.txt\" | \"$LB\" build --filter cuckoo --fpr 0.01 --input /dev/stdin --output \"$D/f3.lbf\"",
        ),
        (
            "items",
            "cat \"$D/keys.txt\" | \"$LB\" build --filter blocked --fpr 0.01 --items 5000 --input /dev/stdin --output \"$D/f4.lbf\"",
        ),
        (
            "fifo",
            "mkfifo \"$D/fifo\" && (cat \"$D/keys.txt\" > \"$D/fifo\" &) && \"$LB\" build --filter blocked --fpr 0.01 --input \"$D/fifo\" --output \"$D/f5.lbf\"",
        ),
    ];
    for (i, (name, script)) in ways.iter().enumerate() {
        let o = sh(&dir, script);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let filter = dir.join(format!("f{}.lbf", i + 1));
        assert_eq!(yes_count(&filter, &keys), 5_000, "{name}: keys were lost");
    }
    // The same filter whether the keys came from a file or a pipe, with or without --items.
    let (o, from_file) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success());
    assert_eq!(
        std::fs::read(&from_file).unwrap(),
        std::fs::read(dir.join("f1.lbf")).unwrap()
    );
    // Queries read their keys from a pipe and from a FIFO too.
    let o = sh(
        &dir,
        "cat \"$D/keys.txt\" | \"$LB\" query \"$D/f1.lbf\" --input - | grep -c 'yes$'",
    );
    assert_eq!(stdout(&o).trim(), "5000");
    let o = sh(
        &dir,
        "mkfifo \"$D/qfifo\" && (cat \"$D/keys.txt\" > \"$D/qfifo\" &) && \"$LB\" query \"$D/f1.lbf\" --input \"$D/qfifo\" | grep -c 'yes$'",
    );
    assert_eq!(stdout(&o).trim(), "5000", "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn long_and_endless_keys_are_refused_within_a_memory_limit() {
    let dir = scratch("endless");
    let keys = write_keys(&dir, 100);
    let (o, filter) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success());
    // A key over the limit names its line.
    std::fs::write(dir.join("long.txt"), format!("a\nb\n{}\n", "x".repeat(100))).unwrap();
    let o = run(linebloom()
        .args([
            "build",
            "--filter",
            "blocked",
            "--fpr",
            "0.01",
            "--max-key-bytes",
            "64",
        ])
        .arg("--input")
        .arg(dir.join("long.txt"))
        .arg("--output")
        .arg(dir.join("long.lbf")));
    assert_usage_failure(&o, "line 3");
    assert!(!dir.join("long.lbf").exists());
    assert!(!temp_left(&dir));
    // Endless input without a line break, under a 1 GiB address-space limit: refused at the
    // first line, quickly, by build and by query.
    let started = Instant::now();
    for script in [
        "ulimit -v 1048576 && \"$LB\" query \"$D/blocked.lbf\" --input /dev/zero",
        "ulimit -v 1048576 && \"$LB\" build --filter blocked --fpr 0.01 --input /dev/zero --output \"$D/z.lbf\"",
        "ulimit -v 1048576 && \"$LB\" build --filter blocked --fpr 0.01 --items 10 --input /dev/zero --output \"$D/z.lbf\"",
    ] {
        let o = sh(&dir, script);
        assert_usage_failure(&o, "line 1");
    }
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(filter.exists() && !dir.join("z.lbf").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_stdout_is_an_error_and_a_closed_one_ends_quietly() {
    let dir = scratch("stdout");
    let keys = write_keys(&dir, 50_000);
    let (o, _) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success());
    let commands = [
        "stats \"$D/blocked.lbf\"",
        "stats \"$D/blocked.lbf\" --json",
        "fpr --filter blocked --items 1000 --fpr 0.01 --probes 1000",
        "fpr --filter blocked --items 1000 --fpr 0.01 --probes 1000 --json",
        "tune --items 1000 --fpr 0.01 --no-measure",
        "query \"$D/blocked.lbf\" --input \"$D/keys.txt\"",
    ];
    for cmd in commands {
        // A full device: one line on stderr, exit 1, no panic.
        let o = sh(&dir, &format!("\"$LB\" {cmd} > /dev/full"));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
        assert!(
            err.contains("standard output") && !err.contains("panicked"),
            "{err}"
        );
        // A reader that stops early: the command ends quietly with success.
        let o = run(Command::new("bash")
            .arg("-c")
            .arg(format!(
                "set -o pipefail; \"$LB\" {cmd} | head -c 1 > /dev/null"
            ))
            .env("LB", env!("CARGO_BIN_EXE_linebloom"))
            .env("D", &dir));
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{cmd}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn outputs_are_replaced_whole_and_never_follow_planted_links() {
    let dir = scratch("output");
    let keys = write_keys(&dir, 1_000);
    // Links planted at the names an older build used for its temporary file.
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.join("blocked.lbf");
    for name in [
        format!("blocked.lbf.tmp{}", std::process::id()),
        ".blocked.lbf.tmp".to_string(),
    ] {
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
    }
    let (o, _) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(yes_count(&out, &keys), 1_000);
    // A failed build leaves the old output as it was, and no temporary file.
    let before = std::fs::read(&out).unwrap();
    std::fs::write(dir.join("long.txt"), "x".repeat(100)).unwrap();
    let o = run(linebloom()
        .args([
            "build",
            "--filter",
            "blocked",
            "--fpr",
            "0.01",
            "--max-key-bytes",
            "10",
        ])
        .arg("--input")
        .arg(dir.join("long.txt"))
        .arg("--output")
        .arg(&out));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // An output that is a directory, or in a missing directory: exit 2 before reading input.
    let o = run(linebloom()
        .args(["build", "--filter", "blocked", "--fpr", "0.01", "--output"])
        .arg(&dir)
        .stdin(Stdio::null()));
    assert_usage_failure(&o, "directory");
    let o = run(linebloom()
        .args(["build", "--filter", "blocked", "--fpr", "0.01", "--output"])
        .arg(dir.join("missing/f.lbf"))
        .stdin(Stdio::null()));
    assert_usage_failure(&o, "cannot write");
    let leftover: Vec<_> = dir
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.contains(".tmp")
                && !n.starts_with(".blocked.lbf.tmp")
                && !n.starts_with("blocked.lbf.tmp")
        })
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_signal_during_build_removes_the_temporary_file() {
    let dir = scratch("signal");
    let keys = write_keys(&dir, 100);
    let (o, out) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success());
    let before = std::fs::read(&out).unwrap();
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        // The build waits on a pipe that never ends, after creating its temporary file.
        let mut child = linebloom()
            .args(["build", "--filter", "blocked", "--fpr", "0.01", "--output"])
            .arg(&out)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(b"a\nb\n").unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !temp_left(&dir) {
            assert!(Instant::now() < deadline, "no temporary file appeared");
            std::thread::sleep(Duration::from_millis(10));
        }
        let kill = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -{signal} {}", child.id()))
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        drop(input);
        assert_eq!(status.code(), Some(code), "{signal}");
        assert!(!temp_left(&dir), "{signal}: the temporary file was left");
        assert_eq!(std::fs::read(&out).unwrap(), before, "{signal}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn filter_files_are_read_by_their_header() {
    let dir = scratch("header");
    let keys = write_keys(&dir, 1_000);
    let (o, filter) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success());
    let bytes = std::fs::read(&filter).unwrap();
    // A valid header followed by 2 GiB of holes: refused from its size, without reading it,
    // under a 1 GiB address-space limit.
    let sparse = dir.join("sparse.lbf");
    std::fs::write(&sparse, &bytes[..64]).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .unwrap();
    file.set_len(2 << 30).unwrap();
    drop(file);
    for cmd in ["stats", "query"] {
        let o = sh(
            &dir,
            &format!("ulimit -v 1048576 && \"$LB\" {cmd} \"$D/sparse.lbf\" < /dev/null"),
        );
        assert_usage_failure(&o, "length mismatch");
    }
    // One byte short, one byte long.
    std::fs::write(dir.join("short.lbf"), &bytes[..bytes.len() - 1]).unwrap();
    let o = run(linebloom().arg("stats").arg(dir.join("short.lbf")));
    assert_usage_failure(&o, "truncated");
    let mut long = bytes.clone();
    long.push(0);
    std::fs::write(dir.join("long.lbf"), &long).unwrap();
    let o = run(linebloom().arg("stats").arg(dir.join("long.lbf")));
    assert_usage_failure(&o, "length mismatch");
    // A filter read from a pipe (no size to check) still loads.
    let o = sh(&dir, "cat \"$D/blocked.lbf\" | \"$LB\" stats /dev/stdin");
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stats_of_empty_and_implausible_filters_read_sensibly() {
    let dir = scratch("stats");
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let (o, filter) = build(&dir, "blocked", &empty, &["--fpr", "0.01"]);
    assert!(o.status.success());
    let o = run(linebloom().arg("stats").arg(&filter));
    let text = stdout(&o);
    assert!(text.contains("estimated items   0\n"), "{text}");
    assert!(!text.contains("-0"), "{text}");
    // A recorded count of u64::MAX (bytes 24..32 of the header; the checksum is recomputed by
    // rewriting the file through the library).
    let keys = write_keys(&dir, 1_000);
    let (o, filter) = build(&dir, "blocked", &keys, &["--fpr", "0.01"]);
    assert!(o.status.success());
    let any = linebloom::format::read_any(&std::fs::read(&filter).unwrap()).unwrap();
    let mut absurd = Vec::new();
    any.write_to_with_items(u64::MAX, &mut absurd).unwrap();
    std::fs::write(dir.join("absurd.lbf"), &absurd).unwrap();
    let o = run(linebloom().arg("stats").arg(dir.join("absurd.lbf")));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("not used below"), "{text}");
    assert!(!text.contains("100.00000 %"), "{text}");
    let o = run(linebloom()
        .arg("stats")
        .arg(dir.join("absurd.lbf"))
        .arg("--json"));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["recorded_items_plausible"], false);
    assert!(json.get("model_fpr_at_recorded_items").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
#[test]
fn errors_print_numbers_readably() {
    let o = run(linebloom().args([
        "fpr", "--filter", "blocked", "--items", "10", "--fpr", "1e-300",
    ]));
    assert_usage_failure(&o, "1e-300");
    assert!(stderr(&o).len() < 300, "{}", stderr(&o));
}
