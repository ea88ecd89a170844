//! `report.md`: the machine, how to read the figures, one table per question and links to the
//! plots. This module owns the Markdown layout and the words beside the tables.

use std::fmt::Write as _;

use crate::report::byte_size::format_byte_size;
use crate::report::figures::fpr_md;
use crate::report::measure::Stat;
use crate::report::summary::summary_markdown;
use crate::report::sweep::Report;
use linebloom::blocked::HUGE_PAGE_MIN_BYTES;

/// ns with three significant digits.
fn ns(x: f64) -> String {
    if !x.is_finite() {
        "—".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// "12.3 (11.9–13.0)": the median and, in parentheses, the fastest and slowest sample.
fn stat_md(s: &Stat) -> String {
    if s.samples < 2 {
        return ns(s.median_ns);
    }
    format!("{} ({}–{})", ns(s.median_ns), ns(s.min_ns), ns(s.max_ns))
}

fn opt_stat_md(s: &Option<Stat>) -> String {
    s.as_ref().map_or_else(|| "—".into(), stat_md)
}

fn ratio_md(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.2}×"),
        _ => "—".into(),
    }
}

fn opt_fpr_md(p: Option<f64>) -> String {
    p.map_or_else(|| "—".into(), fpr_md)
}

/// The Markdown report; `plots` are the SVG files to link.
pub fn to_markdown(report: &Report, plots: &[String]) -> String {
    let m = &report.machine;
    let c = &report.config;
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# linebloom tuning report\n");
    let _ = writeln!(w, "Measured {} on {}.\n", report.started, m.cpu_model);
    w.push_str(&summary_markdown(report));
    let _ = writeln!(w);
    let _ = writeln!(w, "## The run\n");
    let _ = writeln!(w, "```sh\n{}\n```\n", report.command);
    if m.debug_assertions {
        let _ = writeln!(
            w,
            "**Warning: this binary was built without optimisations (debug assertions on); \
             its figures say nothing about the filters. Run `cargo run --release -- report`.**\n"
        );
    }
    if !report.pinning.pinned {
        let _ = writeln!(w, "**Note: {}.**\n", report.pinning.note);
    }

    let _ = writeln!(w, "## Machine\n");
    let _ = writeln!(w, "| | |\n|---|---|");
    let _ = writeln!(
        w,
        "| CPU | {} ({} logical CPUs) |",
        m.cpu_model, m.logical_cpus
    );
    let _ = writeln!(w, "| Caches (CPU 0) | {} |", m.caches_line());
    let _ = writeln!(
        w,
        "| Memory | {} |",
        m.memory_bytes
            .map_or_else(|| "unknown".into(), |b| format_byte_size(b as usize))
    );
    let _ = writeln!(
        w,
        "| Transparent huge pages | `{}` |",
        m.transparent_hugepages
    );
    let _ = writeln!(w, "| Kernel | {} |", m.kernel);
    let _ = writeln!(w, "| Compiler | {} |", m.rustc);
    let _ = writeln!(
        w,
        "| Build | {}, RUSTFLAGS `{}` |",
        m.build_profile,
        if m.rustflags.is_empty() {
            "(none)"
        } else {
            &m.rustflags
        }
    );
    let _ = writeln!(
        w,
        "| Target features compiled in | {} |",
        m.target_features.join(", ")
    );
    let _ = writeln!(
        w,
        "| SIMD path of linebloom's filters | {} (chosen at run time; `LINEBLOOM_SIMD` lowers it) |",
        m.simd_path
    );
    let _ = writeln!(w, "| Thread pinning | {} |", report.pinning.note);
    let _ = writeln!(w, "| Date | {} |\n", report.started);

    let _ = writeln!(w, "## How to read this report\n");
    // A batch of lookups touches one line per key: compared with the cache this machine has.
    let batch_bytes = c.lookups.saturating_mul(64);
    let batch_against_cache = match m.last_level_cache_bytes() {
        Some(b) if batch_bytes > b => format!(
            ", more than this machine's {} last-level cache holds",
            format_byte_size(b)
        ),
        Some(b) => format!(
            ", which this machine's {} last-level cache can hold: figures of filters that fit \
             in it come partly from the cache",
            format_byte_size(b)
        ),
        None => String::new(),
    };
    let _ = writeln!(
        w,
        "- Every figure is **ns per key** (lower is better): the median of {} samples after one \
         warm-up, with the fastest and slowest sample in parentheses. A sample runs at least \
         {} ms. Keys are pre-hashed 64-bit values, so no figure includes hashing a key (except \
         `bloomfilter` and `growable-bloom-filter`, which have no pre-hashed path).",
        c.reps, c.min_sample_ms
    );
    let _ = writeln!(
        w,
        "- Filters are sized for the given number of bytes at {} bits per key and filled to \
         that load. A cuckoo filter takes the widest fingerprint that fits the budget, so it \
         can be smaller; `bits/key` is what each filter actually uses.",
        c.bits_per_key
    );
    let _ = writeln!(
        w,
        "- **insert**: building a new filter one key at a time, from empty to full, \
         first-touch page faults included. Filters of up to 2 Mi keys are built again and \
         again; a larger one is built once, in timed chunks shared in turn with the bulk \
         inserts, so its slowest insert sample is the first chunk (which takes the page \
         faults). **hit** / **miss**: looking up inserted / never-inserted keys one at a time. \
         **batched**: the same keys through the filter's batched lookup, which prefetches \
         the line of the key {} places ahead into L2, and {} places ahead into L1, before \
         testing each key (the blocked filter's only past {}: a smaller one runs the plain \
         loop; the cuckoo filter's lookup hints its buckets into L2 only). A lookup batch is {} random \
         keys, so repeated batches touch {} of lines{}. The keys of a \
         loop are independent, so the processor overlaps their cache misses: these are \
         throughput figures, not latencies.",
        linebloom::internals::PREFETCH_AHEAD,
        linebloom::internals::NEAR,
        format_byte_size(linebloom::internals::PLAIN_LOOP_BYTES),
        c.lookups,
        format_byte_size(batch_bytes),
        batch_against_cache
    );
    let _ = writeln!(
        w,
        "- **memory limit**: what reading one random 64-byte line from a buffer of the same \
         size, allocated as the blocked filter's lines are (huge pages from 8 MiB up), costs: \
         the fastest of independent loads, loads prefetched as the batched lookups do, and a \
         hashed ring (line indices hashed inline from a counter, prefetched into L2 when \
         computed and into L1 just before the read: the leanest loop, so the tightest \
         ceiling), each probed before and after the size's filters and the faster of the two \
         kept. A lookup that touches one line cannot beat it; the **× limit** columns divide each lookup figure \
         by it, so 1.0× means the filter runs at the memory system's speed and 7× means it \
         pays about seven line reads per key. The latency column (dependent loads) is what a \
         caller that waits for each answer before asking the next pays per miss."
    );
    if c.filters
        .iter()
        .any(|f| matches!(f.name(), "scalable" | "growable-bloom-filter"))
    {
        let _ = writeln!(
            w,
            "- **scalable** and **growable-bloom-filter** grow: each starts sized for a \
             thousandth of the keys (at least 1) and grows as they arrive (1000×), with the \
             blocked filter's model FPR at {} bits per key as its target (growable-bloom-filter \
             as `GrowableBloom::new(fpr, n / 1000)`: growth 2, tightening 0.85). Both skip a \
             key the chain already answers \"maybe\" to. growable-bloom-filter has no size \
             accessor: its bytes are computed from its sizing rule (per sub-filter \
             ⌈log2(1/p)⌉ slices of ⌈capacity / ln 2⌉ bits; a test checks the sum against its \
             serialized buffers), and it hashes each u64 again (xxh3) as it takes `Hash` keys \
             only.",
            c.bits_per_key
        );
    }
    let _ = writeln!(
        w,
        "- **FPR**: the share of never-inserted keys a filter answers \"maybe\" to, beside the \
         filter's model. Below about 100 / probes a measured rate rests on few events and \
         scatters around the model.\n"
    );

    write_speed_tables(w, report);
    write_ratio_table(w, report);
    write_limit_table(w, report);
    write_bulk_table(w, report);
    write_build_table(w, report);
    write_fpr_table(w, report);

    if !report.skipped.is_empty() {
        let _ = writeln!(w, "## Not measured\n");
        for s in &report.skipped {
            let _ = writeln!(w, "- {} — {}: {}", s.filter, s.what, s.reason);
        }
        let _ = writeln!(w);
    }
    if !plots.is_empty() {
        let _ = writeln!(w, "## Plots\n");
        for p in plots {
            let _ = writeln!(w, "![{p}]({p})\n");
        }
    }
    out
}

fn write_speed_tables(w: &mut String, report: &Report) {
    let _ = writeln!(
        w,
        "## Inserts and lookups at {} bits per key\n",
        report.config.bits_per_key
    );
    for &size in &report.config.sizes {
        let rows: Vec<_> = report
            .speed
            .iter()
            .filter(|r| r.target_bytes == size)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let limit = rows[0].limit_ns;
        let _ = writeln!(
            w,
            "### {} filter ({} keys; memory limit {} ns per line)\n",
            format_byte_size(size),
            rows[0].items,
            ns(limit)
        );
        let _ = writeln!(
            w,
            "| filter | params | bits/key | insert | hit | miss | batched hit | batched miss \
             | FPR measured | FPR model |"
        );
        let _ = writeln!(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        for r in &rows {
            let mut notes = String::new();
            if r.hits_not_found > 0 {
                let _ = write!(notes, " ({} hits not found)", r.hits_not_found);
            }
            if r.insert_failures > 0 {
                let _ = write!(notes, " ({} inserts refused)", r.insert_failures);
            }
            let _ = writeln!(
                w,
                "| {}{} | {} | {:.2} | {} | {} | {} | {} | {} | {} | {} |",
                r.filter,
                notes,
                r.params,
                r.bits_per_key,
                stat_md(&r.insert),
                stat_md(&r.hit),
                stat_md(&r.miss),
                opt_stat_md(&r.batched_hit),
                opt_stat_md(&r.batched_miss),
                fpr_md(r.measured_fpr),
                opt_fpr_md(r.model_fpr),
            );
        }
        let _ = writeln!(w);
        for r in rows.iter().filter(|r| r.bytes >= HUGE_PAGE_MIN_BYTES) {
            if let Some(huge) = r.huge_page_bytes {
                let _ = writeln!(
                    w,
                    "{} on transparent huge pages: {} of {}.\n",
                    r.filter,
                    format_byte_size(huge),
                    format_byte_size(r.bytes)
                );
            }
        }
    }
}

fn write_ratio_table(w: &mut String, report: &Report) {
    if report.speed.is_empty() {
        return;
    }
    let _ = writeln!(w, "## Lookups as multiples of the memory limit\n");
    let _ = writeln!(
        w,
        "| filter | size | limit ns | hit × limit | miss × limit | batched hit × limit | \
         batched miss × limit |"
    );
    let _ = writeln!(w, "|---|--:|--:|--:|--:|--:|--:|");
    for r in &report.speed {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.filter,
            format_byte_size(r.target_bytes),
            ns(r.limit_ns),
            ratio_md(Some(r.hit_ratio)),
            ratio_md(Some(r.miss_ratio)),
            ratio_md(r.batched_hit_ratio),
            ratio_md(r.batched_miss_ratio),
        );
    }
    let _ = writeln!(w);
}

fn write_limit_table(w: &mut String, report: &Report) {
    if report.limits.is_empty() {
        return;
    }
    let _ = writeln!(w, "## Memory limit: ns per random 64-byte line\n");
    let _ = writeln!(
        w,
        "| buffer | independent loads | prefetched loads | hashed ring | dependent loads (latency) |"
    );
    let _ = writeln!(w, "|--:|--:|--:|--:|--:|");
    for l in &report.limits {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            format_byte_size(l.bytes),
            stat_md(&l.independent),
            stat_md(&l.prefetched),
            stat_md(&l.ring),
            stat_md(&l.dependent),
        );
    }
    let _ = writeln!(w);
}

fn write_bulk_table(w: &mut String, report: &Report) {
    if report.bulk.is_empty() {
        return;
    }
    let _ = writeln!(w, "## Bulk insert (parallel, threads pinned)\n");
    let _ = writeln!(
        w,
        "Filling a new filter through its parallel insert; ns per key of wall-clock time. \
         Filters without a parallel insert (cuckoo, the peers) are not listed. **Ceiling** \
         (blocked only): every thread fills a blocked filter of its own with the keys its task \
         of the bulk insert takes (those of its run of lines, split beforehand, off the \
         clock; the prefetching sequential insert, nothing shared), so only the memory system \
         limits how the rate grows; one shared filter cannot scale better, and the ceiling moves \
         with the machine, hence measured in the same run: for filters filled in chunks, on \
         the same chunks as the bulk insert, each timed just before or after it. **One task** \
         (blocked): the first of the bulk insert's tasks for that many threads alone on the \
         measuring thread, no pool, timed likewise, ns per key of all the keys: it scans \
         every key and inserts those of its run of lines, as each task does (all of them on \
         one thread, or below the 16 Ki keys at which the bulk insert splits its work), so the **bound** (its rate over the first thread count's) is the \
         most this design can give that many threads even if they shared no cache and no \
         memory bandwidth. **Parallel batched miss** (blocked): `par_contains_hashes` of the \
         never-inserted keys on the same pool, ns per key of all threads together, and its \
         speedup over the first thread count.\n"
    );
    let _ = writeln!(
        w,
        "| filter | size | threads | ns/key | Mkeys/s | speedup | ceiling ns/key | ceiling \
         speedup | one task ns/key | bound | parallel batched miss ns/key | its speedup |"
    );
    let _ = writeln!(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in &report.bulk {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {:.1} | {:.2}× | {} | {} | {} | {} | {} | {} |",
            r.filter,
            format_byte_size(r.target_bytes),
            r.threads,
            stat_md(&r.insert),
            r.mkeys_per_s,
            r.speedup,
            opt_stat_md(&r.ceiling),
            times(r.ceiling_speedup),
            opt_stat_md(&r.one_task),
            times(r.one_task_bound),
            opt_stat_md(&r.par_miss),
            times(r.par_miss_speedup),
        );
    }
    let _ = writeln!(w);
}

fn write_build_table(w: &mut String, report: &Report) {
    if report.builds.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "## Building a blocked filter from all its keys at once
"
    );
    let _ = writeln!(
        w,
        "Each sample builds a new filter from every key of its size, the ways taking turns \
         (the input-order one last in each round); the filter's lines are touched before the \
         clock starts, the partitioned insert's buffers are not (their page faults count). \
         `insert_hashes per 1 Mi keys` inserts the keys in input \
         order (the prefetching insert, as the bulk-insert table's one-thread row), and so \
         does `insert_hashes whole batch`, in one call. On {} threads or more, a call with at \
         least 4 keys per line into a filter of at least 32 MiB is **partitioned**: its keys \
         are first sorted by range of 4096 lines (256 KiB), then each range takes its keys \
         with its lines in the cache; each thread sorts its share and inserts its own ranges, \
         so no thread reads all the keys. On fewer threads each task reads every key and \
         inserts those of its run of lines, as in the bulk-insert table. \
         `par_insert_hashes_with` keeps those buffers from one call to the next (one \
         `BuildBuffers` per pool, kept from sample to sample, so only its first sample pays \
         their page faults), as a storage engine building one file's filter after another \
         would; with them kept, partitioning starts at {} threads. `par_fill` fills the \
         filter 1 Mi keys per push with the same buffers: it sorts each push by range of \
         lines and inserts the buffers' keys once they hold 16 per line, and the rest at the \
         end. **Speedup** is over \
         `insert_hashes whole batch` (the sequential rate).\n",
        linebloom::internals::PARTITION_MIN_THREADS,
        linebloom::internals::PARTITION_MIN_THREADS_KEPT
    );
    let _ = writeln!(
        w,
        "| size | way | threads | partitioned | ns/key | Mkeys/s | speedup |"
    );
    let _ = writeln!(w, "|--:|---|--:|---|--:|--:|--:|");
    for r in &report.builds {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {:.1} | {:.2}× |",
            format_byte_size(r.target_bytes),
            r.method,
            r.threads,
            if r.partitioned { "yes" } else { "no" },
            stat_md(&r.insert),
            r.mkeys_per_s,
            r.speedup,
        );
    }
    let _ = writeln!(w);
}

/// `1.23×`, or a dash for none.
fn times(x: Option<f64>) -> String {
    x.map_or_else(|| "—".to_string(), |x| format!("{x:.2}×"))
}

fn write_fpr_table(w: &mut String, report: &Report) {
    if report.fpr.is_empty() {
        return;
    }
    let c = &report.config;
    let _ = writeln!(w, "## False-positive rate against bits per key\n");
    let _ = writeln!(
        w,
        "{} keys inserted, {} never-inserted keys probed per filter.\n",
        c.fpr_items, c.fpr_probes
    );
    let _ = writeln!(
        w,
        "| filter | asked bits/key | bits/key used | params | FPR measured | FPR model | \
         measured / model |"
    );
    let _ = writeln!(w, "|---|--:|--:|---|--:|--:|--:|");
    for r in &report.fpr {
        let ratio = r
            .model_fpr
            .filter(|&m| m > 0.0)
            .map_or_else(|| "—".into(), |m| format!("{:.3}", r.measured_fpr / m));
        let mut name = r.filter.clone();
        if r.false_negatives > 0 {
            let _ = write!(name, " (**{} false negatives**)", r.false_negatives);
        }
        let _ = writeln!(
            w,
            "| {} | {} | {:.2} | {} | {} | {} | {} |",
            name,
            r.target_bits_per_key,
            r.bits_per_key,
            r.params,
            fpr_md(r.measured_fpr),
            opt_fpr_md(r.model_fpr),
            ratio,
        );
    }
    let _ = writeln!(w);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_keeps_three_digits() {
        assert_eq!(ns(3.456), "3.46");
        assert_eq!(ns(123.4), "123");
    }
}
