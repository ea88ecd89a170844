//! Measured false-positive rate of the three filters and the peers at 6, 8, ..., 20 bits per
//! key, beside each filter's model. Not a timing: a plain program (`harness = false`) that
//! prints one table, from the same measurement as the report's FPR sweep.
//!
//! ```sh
//! cargo bench --bench fpr                                  # 1M keys, 10M probes per point
//! cargo bench --bench fpr -- blocked                       # one filter
//! LINEBLOOM_FPR_ITEMS=100000 LINEBLOOM_FPR_PROBES=1000000 cargo bench --bench fpr   # quick
//! ```

use linebloom_cli::report::figures::fpr_md;
use linebloom_cli::report::fpr::measure_fpr_point;
use linebloom_cli::report::subject::Contender;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let items = env_usize("LINEBLOOM_FPR_ITEMS", 1_000_000);
    let probes = env_usize("LINEBLOOM_FPR_PROBES", 10_000_000);
    // `cargo bench` passes its own flags (`--bench`); a bare word selects filters by name.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    println!("{items} keys inserted, {probes} never-inserted keys probed per point\n");
    println!(
        "{:<13} {:>6} {:>9} {:<12} {:>11} {:>11} {:>9}",
        "filter", "asked", "bits/key", "params", "measured", "model", "meas/mod"
    );
    for c in Contender::available() {
        if !only.is_empty() && !only.iter().any(|o| c.name().contains(o.as_str())) {
            continue;
        }
        let mut last: Option<(usize, String)> = None;
        for b in (3..=10).map(|i| 2.0 * i as f64) {
            match measure_fpr_point(c, b, items, probes, linebloom::hash::DEFAULT_SEED) {
                // Fixed-size filters give the same filter at several points: print it once.
                Ok(r) if last.as_ref() == Some(&(r.bytes, r.params.clone())) => {}
                Ok(r) => {
                    last = Some((r.bytes, r.params.clone()));
                    let ratio = r
                        .model_fpr
                        .filter(|&m| m > 0.0)
                        .map_or("—".into(), |m| format!("{:.3}", r.measured_fpr / m));
                    println!(
                        "{:<13} {:>6} {:>9.2} {:<12} {:>11} {:>11} {:>9}{}",
                        c.name(),
                        b,
                        r.bits_per_key,
                        r.params,
                        fpr_md(r.measured_fpr),
                        r.model_fpr.map_or("—".into(), fpr_md),
                        ratio,
                        if r.false_negatives > 0 {
                            format!("  {} FALSE NEGATIVES", r.false_negatives)
                        } else {
                            String::new()
                        }
                    );
                }
                Err(e) => println!("{:<13} {:>6} skipped: {e}", c.name(), b),
            }
        }
    }
}
