//! The CSV files of a report: one row per measurement, every figure in its own column (the
//! median, fastest and slowest sample of each). This module owns the columns; the file names
//! belong to `write/mod.rs`.

use std::fmt::Write as _;

use crate::report::measure::Stat;
use crate::report::sweep::Report;

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

fn stat_cells(s: &Stat) -> String {
    format!("{},{},{}", num(s.median_ns), num(s.min_ns), num(s.max_ns))
}

fn opt_stat_cells(s: &Option<Stat>) -> String {
    s.as_ref().map_or_else(|| ",,".to_string(), stat_cells)
}

fn stat_header(name: &str) -> String {
    format!("{name}_ns_median,{name}_ns_min,{name}_ns_max")
}

/// `speed.csv`: one row per filter and size.
pub fn speed_csv(report: &Report) -> String {
    let mut out = format!(
        "filter,peer,params,target_bytes,bytes,items,bits_per_key,{},{},{},{},{},limit_ns,\
         hit_ratio,miss_ratio,batched_hit_ratio,batched_miss_ratio,measured_fpr,model_fpr,\
         hits_not_found,insert_failures,simd_path,build\n",
        stat_header("insert"),
        stat_header("hit"),
        stat_header("miss"),
        stat_header("batched_hit"),
        stat_header("batched_miss"),
    );
    for r in &report.speed {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&r.filter),
            r.peer,
            field(&r.params),
            r.target_bytes,
            r.bytes,
            r.items,
            num(r.bits_per_key),
            stat_cells(&r.insert),
            stat_cells(&r.hit),
            stat_cells(&r.miss),
            opt_stat_cells(&r.batched_hit),
            opt_stat_cells(&r.batched_miss),
            num(r.limit_ns),
            num(r.hit_ratio),
            num(r.miss_ratio),
            opt(r.batched_hit_ratio),
            opt(r.batched_miss_ratio),
            num(r.measured_fpr),
            opt(r.model_fpr),
            r.hits_not_found,
            r.insert_failures,
            field(&r.simd_path),
            r.build,
        );
    }
    out
}

/// `bulk_insert.csv`: one row per filter, size and thread count.
pub fn bulk_csv(report: &Report) -> String {
    let mut out = format!(
        "filter,target_bytes,bytes,items,threads,{},mkeys_per_s,speedup,{},ceiling_speedup,{},\
         one_task_bound,{},par_miss_speedup\n",
        stat_header("insert"),
        stat_header("ceiling"),
        stat_header("one_task"),
        stat_header("par_miss")
    );
    for r in &report.bulk {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&r.filter),
            r.target_bytes,
            r.bytes,
            r.items,
            r.threads,
            stat_cells(&r.insert),
            num(r.mkeys_per_s),
            num(r.speedup),
            opt_stat_cells(&r.ceiling),
            r.ceiling_speedup.map(num).unwrap_or_default(),
            opt_stat_cells(&r.one_task),
            r.one_task_bound.map(num).unwrap_or_default(),
            opt_stat_cells(&r.par_miss),
            r.par_miss_speedup.map(num).unwrap_or_default(),
        );
    }
    out
}

/// `build.csv`: one row per size and way of building a blocked filter from all its keys.
pub fn build_csv(report: &Report) -> String {
    let mut out = format!(
        "target_bytes,bytes,items,method,threads,partitioned,{},mkeys_per_s,speedup\n",
        stat_header("insert")
    );
    for r in &report.builds {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            r.target_bytes,
            r.bytes,
            r.items,
            field(&r.method),
            r.threads,
            r.partitioned,
            stat_cells(&r.insert),
            num(r.mkeys_per_s),
            num(r.speedup),
        );
    }
    out
}

/// `fpr.csv`: one row per filter and bits-per-key value.
pub fn fpr_csv(report: &Report) -> String {
    let mut out = String::from(
        "filter,peer,target_bits_per_key,bits_per_key,params,items,probes,measured_fpr,\
         model_fpr,false_positives,false_negatives,insert_failures,bytes\n",
    );
    for r in &report.fpr {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&r.filter),
            r.peer,
            num(r.target_bits_per_key),
            num(r.bits_per_key),
            field(&r.params),
            r.items,
            r.probes,
            num(r.measured_fpr),
            opt(r.model_fpr),
            r.false_positives,
            r.false_negatives,
            r.insert_failures,
            r.bytes,
        );
    }
    out
}

/// `memory_limit.csv`: one row per buffer size.
pub fn limit_csv(report: &Report) -> String {
    let mut out = format!(
        "bytes,{},{},{},{},best_ns\n",
        stat_header("independent"),
        stat_header("prefetched"),
        stat_header("hashed_ring"),
        stat_header("dependent"),
    );
    for l in &report.limits {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{}",
            l.bytes,
            stat_cells(&l.independent),
            stat_cells(&l.prefetched),
            stat_cells(&l.ring),
            stat_cells(&l.dependent),
            num(l.best_ns()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_when_needed() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("k=7"), "k=7");
    }
}
