//! `linebloom build`, `query` and `stats`: filters saved to files in the library's serialized
//! format (`linebloom::format`).
//!
//! Key files hold one key per line: the key is the line's bytes without its `\n`, and without a
//! `\r` before it (so files written on Windows give the same keys). The bytes need not be UTF-8;
//! they are hashed as they are. A line with nothing on it is the empty key; a final `\n` does not
//! start another key. `build` streams its input (never holding the file in memory): when
//! `--items` is not given it counts the lines in a first pass, then inserts in a second.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use clap::ArgGroup;
use indicatif::{ProgressBar, ProgressStyle};
use linebloom::Error;
use linebloom::filter::{Filter, FilterKind, Sizing};
use linebloom::format::{AnyFilter, read_any, read_header};
use linebloom::hash::{DEFAULT_SEED, hash_bytes};

use crate::Failure;

/// Keys hashed and looked up together by `query` (the batched, prefetching lookup).
const QUERY_BATCH: usize = 4096;

/// Inputs larger than this get a progress bar (when standard error is a terminal).
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

#[derive(clap::Args)]
#[command(group(ArgGroup::new("size").required(true).args(["bits_per_key", "fpr"])))]
pub struct BuildArgs {
    /// Which filter: blocked, classic or cuckoo.
    #[arg(long)]
    filter: FilterKind,
    /// Size the filter for this false-positive rate.
    #[arg(long)]
    fpr: Option<f64>,
    /// Size the filter at this many bits per key.
    #[arg(long)]
    bits_per_key: Option<f64>,
    /// Probes per key (Bloom filters) or fingerprint bits (cuckoo); default: the model's best.
    #[arg(long)]
    hashes: Option<u32>,
    /// Hash seed, stored in the file (default: the crate's fixed seed).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Size for this many keys instead of counting the input's lines first.
    #[arg(long)]
    items: Option<usize>,
    /// The keys, one per line (a trailing "\r" is stripped).
    #[arg(long)]
    input: PathBuf,
    /// Where to write the filter.
    #[arg(long)]
    output: PathBuf,
}

#[derive(clap::Args)]
pub struct QueryArgs {
    /// A filter written by `linebloom build`.
    filter: PathBuf,
    /// Keys to look up, one per line (default: standard input).
    #[arg(long)]
    input: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct StatsArgs {
    /// A filter written by `linebloom build`.
    filter: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn build(args: BuildArgs) -> Result<(), Failure> {
    let sizing = match (args.bits_per_key, args.fpr) {
        (Some(b), _) => Sizing::BitsPerKey(b),
        (None, Some(p)) => Sizing::Fpr(p),
        (None, None) => return Err(Failure::usage("give --bits-per-key or --fpr")),
    };
    let input_len = open(&args.input)?.metadata().map(|m| m.len()).unwrap_or(0);
    let items = match args.items {
        Some(n) => n,
        None => {
            let progress = progress(input_len, "counting");
            let n = count_lines(open(&args.input)?, &progress)
                .map_err(|e| read_failure(&args.input, e))?;
            progress.finish_and_clear();
            // An empty key file still gives a valid (empty) filter.
            n.max(1)
        }
    };
    let mut filter = AnyFilter::new(args.filter, items, sizing, args.hashes, args.seed)?;
    let is_cuckoo = filter.kind() == FilterKind::Cuckoo;
    let seed = filter.seed();

    let progress = progress(input_len, "inserting");
    let mut inserted = 0u64;
    let mut line_number = 0u64;
    for_each_key(open(&args.input)?, &progress, |key| {
        line_number += 1;
        let hash = hash_bytes(key, seed);
        // A cuckoo filter stores a fingerprint per insert, so a repeated key would take a slot
        // each time (and a ninth copy cannot be placed); a key it already reports present needs
        // no slot to keep answering yes.
        if is_cuckoo && filter.contains_hash(hash) {
            return Ok(());
        }
        match filter.insert_hash(hash) {
            Ok(()) => {
                inserted += 1;
                Ok(())
            }
            Err(Error::Full) => Err(Failure::other(format!(
                "the cuckoo filter is full at line {line_number} of {} after {inserted} keys \
                 (nothing was lost); build it for more items (--items) or more bits per key",
                args.input.display()
            ))),
            Err(e) => Err(e.into()),
        }
    })
    .map_err(|e| e.unwrap_or_else(|io| read_failure(&args.input, io)))?;
    progress.finish_and_clear();
    if !is_cuckoo && args.items.is_some_and(|n| inserted > n as u64) {
        eprintln!(
            "linebloom: warning: {inserted} keys went into a filter sized for {} (--items); \
             its false-positive rate is higher than asked",
            args.items.unwrap_or(0)
        );
    }
    write_filter(&filter, inserted, &args.output)
}

pub fn query(args: QueryArgs) -> Result<(), Failure> {
    let filter = load(&args.filter)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = match &args.input {
        Some(path) => query_keys(&filter, open(path)?, &mut out, path),
        None => query_keys(
            &filter,
            std::io::stdin().lock(),
            &mut out,
            Path::new("standard input"),
        ),
    };
    match result.and_then(|()| out.flush().map_err(|e| write_failure(e, "standard output"))) {
        Err(f) if f.code == STOPPED => Ok(()),
        other => other,
    }
}

pub fn stats(args: StatsArgs) -> Result<(), Failure> {
    let bytes = read_file(&args.filter)?;
    let filter = read_any(&bytes).map_err(|e| corrupt_failure(&args.filter, e))?;
    let header = read_header(&bytes).map_err(|e| corrupt_failure(&args.filter, e))?;
    let size_bytes = filter.size_bytes();
    let estimated = filter.estimated_items();
    let recorded = header.items;
    // Bits per key over the keys the writer counted, else over the estimate.
    let per_key_items = if recorded > 0 {
        recorded as f64
    } else {
        estimated
    };
    let bits_per_key = (size_bytes * 8) as f64 / per_key_items;
    let mut json = serde_json::json!({
        "filter": filter.kind().name(),
        "format_version": header.version,
        "seed": filter.seed(),
        "bytes": size_bytes,
        "file_bytes": bytes.len(),
        "recorded_items": recorded,
        "estimated_items": finite(estimated),
        "bits_per_key": finite(bits_per_key),
        "fill_ratio": filter.fill_ratio(),
        "current_fpr": filter.current_fpr(),
    });
    let params: Vec<(&str, serde_json::Value)> = match &filter {
        AnyFilter::Blocked(f) => vec![
            ("lines", f.num_lines().into()),
            ("hashes", f.hashes().into()),
        ],
        AnyFilter::Classic(f) => vec![
            ("num_bits", f.num_bits().into()),
            ("hashes", f.hashes().into()),
        ],
        AnyFilter::Cuckoo(f) => vec![
            ("buckets", f.num_buckets().into()),
            ("fingerprint_bits", f.fingerprint_bits().into()),
            ("len", f.len().into()),
        ],
    };
    for (name, value) in &params {
        json[*name] = value.clone();
    }
    if recorded > 0 {
        json["model_fpr_at_recorded_items"] = filter.expected_fpr(recorded).into();
    }
    // Whether the loaded lines or table got transparent huge pages (blocked and cuckoo filters
    // of 8 MiB and up ask).
    let huge = match &filter {
        AnyFilter::Blocked(f) => f.huge_page_bytes(),
        AnyFilter::Cuckoo(f) => f.huge_page_bytes(),
        _ => None,
    };
    if let Some(huge) = huge {
        json["huge_page_bytes"] = huge.into();
    }
    if args.json {
        println!("{json}");
        return Ok(());
    }
    println!("filter            {}", filter.kind());
    for (name, value) in &params {
        println!("{:<17} {value}", name.replace('_', " "));
    }
    println!("seed              {:#x}", filter.seed());
    println!(
        "bytes             {size_bytes} (file: {} bytes)",
        bytes.len()
    );
    if recorded > 0 {
        println!("recorded items    {recorded}");
    }
    println!("estimated items   {estimated:.0}");
    println!("bits per key      {bits_per_key:.3}");
    println!("fill ratio        {:.4}", filter.fill_ratio());
    println!("current FPR       {:.5} %", filter.current_fpr() * 100.0);
    if let Some(huge) = huge {
        println!("huge pages        {huge} of {size_bytes} bytes (asked for from 8 MiB up)");
    }
    if recorded > 0 {
        println!(
            "model FPR         {:.5} % (at the recorded items)",
            filter.expected_fpr(recorded) * 100.0
        );
    }
    Ok(())
}

/// Looks up every key of `input`, printing `key\tyes|no` lines, in batches of hashes.
fn query_keys(
    filter: &AnyFilter,
    input: impl Read,
    out: &mut impl Write,
    name: &Path,
) -> Result<(), Failure> {
    let seed = filter.seed();
    // The batch's keys back to back, with their end offsets.
    let mut keys: Vec<u8> = Vec::new();
    let mut ends: Vec<usize> = Vec::with_capacity(QUERY_BATCH);
    let mut hashes: Vec<u64> = Vec::with_capacity(QUERY_BATCH);
    let mut found = vec![false; QUERY_BATCH];
    let mut flush = |keys: &mut Vec<u8>, ends: &mut Vec<usize>, hashes: &mut Vec<u64>| {
        let found = &mut found[..hashes.len()];
        filter.contains_hashes(hashes, found)?;
        let mut start = 0;
        for (&end, &yes) in ends.iter().zip(found.iter()) {
            let line = [&keys[start..end], if yes { b"\tyes\n" } else { b"\tno\n" }];
            for part in line {
                out.write_all(part)
                    .map_err(|e| write_failure(e, "standard output"))?;
            }
            start = end;
        }
        keys.clear();
        ends.clear();
        hashes.clear();
        Ok::<(), Failure>(())
    };
    let hidden = ProgressBar::hidden();
    for_each_key(input, &hidden, |key| {
        keys.extend_from_slice(key);
        ends.push(keys.len());
        hashes.push(hash_bytes(key, seed));
        if hashes.len() == QUERY_BATCH {
            flush(&mut keys, &mut ends, &mut hashes)?;
        }
        Ok(())
    })
    .map_err(|e| e.unwrap_or_else(|io| read_failure(name, io)))?;
    flush(&mut keys, &mut ends, &mut hashes)
}

/// Calls `f` with every key of `input` (see the module docs for what a key is), reusing one
/// buffer. Stops at the first error: `Ok(failure)` from `f`, `Err(io)` from reading.
fn for_each_key(
    input: impl Read,
    progress: &ProgressBar,
    mut f: impl FnMut(&[u8]) -> Result<(), Failure>,
) -> Result<(), Result<Failure, std::io::Error>> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(Err)?;
        if read == 0 {
            return Ok(());
        }
        progress.inc(read as u64);
        f(strip_line_end(&line)).map_err(Ok)?;
    }
}

/// The key on a line: without its `\n`, and without a `\r` just before it.
fn strip_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The number of keys in `input`: its `\n`s, plus one for a last line without one.
fn count_lines(input: impl Read, progress: &ProgressBar) -> std::io::Result<usize> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut lines = 0;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        last = buf[buf.len() - 1];
        let n = buf.len();
        progress.inc(n as u64);
        reader.consume(n);
    }
    Ok(lines + usize::from(last != b'\n'))
}

/// Writes the filter next to `path` and renames it into place, so a failed build never leaves
/// a partial filter under the final name.
fn write_filter(filter: &AnyFilter, items: u64, path: &Path) -> Result<(), Failure> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let file = File::create(&tmp)
        .map_err(|e| Failure::usage(format!("cannot create {}: {e}", path.display())))?;
    let written = filter
        .write_to_with_items(items, BufWriter::new(file))
        .map_err(|e| Failure::other(format!("cannot write {}: {e}", path.display())))
        .and_then(|()| {
            std::fs::rename(&tmp, path)
                .map_err(|e| Failure::other(format!("cannot write {}: {e}", path.display())))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Reads and checks a saved filter; every problem is exit code 2.
fn load(path: &Path) -> Result<AnyFilter, Failure> {
    let bytes = read_file(path)?;
    read_any(&bytes).map_err(|e| corrupt_failure(path, e))
}

/// A file that is not a valid filter: exit code 2, naming the file.
fn corrupt_failure(path: &Path, e: Error) -> Failure {
    Failure::usage(format!("{}: {e}", path.display()))
}

fn read_file(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| read_failure(path, e))
}

fn open(path: &Path) -> Result<File, Failure> {
    File::open(path).map_err(|e| read_failure(path, e))
}

/// An unreadable input: exit code 2.
fn read_failure(path: &Path, e: std::io::Error) -> Failure {
    Failure::usage(format!("cannot read {}: {e}", path.display()))
}

/// The exit code `write_failure` gives a closed pipe: a reader that stops early (`| head`) is
/// not a failure of the query, which then ends quietly with success.
const STOPPED: u8 = 0;

fn write_failure(e: std::io::Error, what: &str) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Failure {
            code: STOPPED,
            message: String::new(),
        };
    }
    Failure::other(format!("cannot write {what}: {e}"))
}

/// A progress bar on standard error for inputs large enough to wait for; hidden otherwise, and
/// whenever standard error is not a terminal.
fn progress(len: u64, what: &'static str) -> ProgressBar {
    if len < PROGRESS_MIN_BYTES || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {bytes}/{total_bytes} ({eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what);
    bar
}

/// JSON has no infinity: an unbounded estimate (every bit set) becomes `null`.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_lose_their_line_ends_only() {
        assert_eq!(strip_line_end(b"abc\n"), b"abc");
        assert_eq!(strip_line_end(b"abc\r\n"), b"abc");
        assert_eq!(strip_line_end(b"abc"), b"abc");
        assert_eq!(strip_line_end(b"a\rb\n"), b"a\rb");
        assert_eq!(strip_line_end(b"\n"), b"");
    }

    #[test]
    fn lines_are_counted_like_keys() {
        let hidden = ProgressBar::hidden();
        for (text, n) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"a\n", 1),
            (b"a\nb", 2),
            (b"\n\n", 2),
        ] {
            assert_eq!(count_lines(text, &hidden).unwrap(), n);
            let mut keys = 0;
            for_each_key(text, &hidden, |_| {
                keys += 1;
                Ok(())
            })
            .map_err(|_| ())
            .unwrap();
            assert_eq!(keys, n);
        }
    }
}
