//! What the binary-driving tests share: running the binary, scratch directories, key files and
//! the checks of a usage failure.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn linebloom() -> Command {
    Command::new(env!("CARGO_BIN_EXE_linebloom"))
}

/// A fresh directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("linebloom-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2 with exactly one line on standard error and no panic.
pub fn assert_usage_failure(o: &Output, mentions: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(!err.contains("panicked"), "stderr: {err}");
    assert!(err.contains(mentions), "expected {mentions:?} in: {err}");
}

pub fn write_keys(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("keys.txt");
    let mut text = String::new();
    for i in 0..n {
        // Mixed line ends: a "\r\n" line gives the same key as a "\n" line.
        text.push_str(&format!(
            "user:{i}{}",
            if i % 3 == 0 { "\r\n" } else { "\n" }
        ));
    }
    std::fs::write(&path, text).unwrap();
    path
}

pub fn build(dir: &Path, kind: &str, keys: &Path, extra: &[&str]) -> (Output, PathBuf) {
    let out = dir.join(format!("{kind}.lbf"));
    let o = run(linebloom()
        .args(["build", "--filter", kind, "--input"])
        .arg(keys)
        .arg("--output")
        .arg(&out)
        .args(extra));
    (o, out)
}
