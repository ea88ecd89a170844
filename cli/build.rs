//! Records how the crate was built, for the tuning report's machine section: the compiler's
//! version, the optimisation level and the flags (`-C target-cpu=native` decides which SIMD
//! instructions `wide` uses, so a report without it would not say what it measured).

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=LINEBLOOM_RUSTC_VERSION={version}");
    // CARGO_ENCODED_RUSTFLAGS separates flags with 0x1f; a space reads better in a report.
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .unwrap_or_default()
        .replace('\u{1f}', " ");
    println!("cargo:rustc-env=LINEBLOOM_RUSTFLAGS={flags}");
    let opt = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "?".to_string());
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "?".to_string());
    println!("cargo:rustc-env=LINEBLOOM_BUILD_PROFILE={profile} (opt-level {opt})");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
