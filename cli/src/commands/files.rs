//! `linebloom build`, `query` and `stats`: filters saved to files in the library's serialized
//! format (`linebloom::format`).
//!
//! Keys are read once, streamed, by `keys.rs` (one key per line, from a file, standard input, a
//! pipe or a FIFO). `build` without `--items` keeps only each key's 8-byte hash while it reads,
//! then sizes the filter for the keys it saw and fills it (a blocked filter in one batch,
//! bit-identical to one at a time); with `--items` it inserts as it reads. The filter file is
//! written by `output.rs`: created before any input is read, whole or not at all.
//! A saved filter is read by its header: the file's size is checked against the length the
//! header declares before the payload is read.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use clap::ArgGroup;
use indicatif::{ProgressBar, ProgressStyle};
use linebloom::Error;
use linebloom::filter::{Filter, FilterKind, Sizing};
use linebloom::format::{AnyFilter, HEADER_LEN, read_any, read_header};
use linebloom::hash::{DEFAULT_SEED, hash_bytes, hash_xxh64};
use linebloom_cli::report::byte_size::format_byte_size;
use linebloom_cli::report::figures::fpr_md;

use super::keys::{DEFAULT_MAX_KEY_BYTES, KeyReader, KeySource, answer_keys_with, read_failure};
use super::output::{self, OutputFile, outln};
use crate::Failure;

/// Keys hashed and looked up together by `query` (the batched, prefetching lookup).
const QUERY_BATCH: usize = 4096;

/// Inputs larger than this get a progress bar (when standard error is a terminal).
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

#[derive(clap::Args)]
#[command(group(ArgGroup::new("size").required(true).args(["bits_per_key", "fpr"])))]
pub struct BuildArgs {
    /// Which filter.
    #[arg(long, value_parser = super::filter_kind_parser())]
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
    /// Size for this many keys and insert while reading (default: size for the keys read).
    /// Keys enough to put the model FPR past twice the asked one fail the build (exit 2, no
    /// file) unless --allow-overfill.
    #[arg(long)]
    items: Option<usize>,
    /// Write the filter even when the keys put its model FPR past twice the asked one.
    #[arg(long, requires = "items")]
    allow_overfill: bool,
    /// The keys, one per line (a trailing "\r" is stripped); "-" or none: standard input.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Where to write the filter (replaced whole, or left as it was on failure).
    #[arg(long)]
    output: PathBuf,
    /// The longest key accepted, in bytes; a longer line is an error naming it.
    #[arg(long, default_value_t = DEFAULT_MAX_KEY_BYTES)]
    max_key_bytes: usize,
}

#[derive(clap::Args)]
pub struct QueryArgs {
    /// A filter written by `linebloom build`.
    filter: PathBuf,
    /// Keys to look up, one per line; "-" or none: standard input.
    #[arg(long)]
    input: Option<PathBuf>,
    /// The longest key accepted, in bytes; a longer line is an error naming it.
    #[arg(long, default_value_t = DEFAULT_MAX_KEY_BYTES)]
    max_key_bytes: usize,
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
    // The parameters and the output are checked before any input is read: a mistake in either
    // costs nothing, and a pipe's keys are not consumed for a build that cannot finish.
    let new =
        |items: usize| AnyFilter::new(args.filter, items as u64, sizing, args.hashes, args.seed);
    let sized = match args.items {
        Some(items) => Some(new(items)?),
        None => new(1).map(|_| None)?,
    };
    let output = OutputFile::create(&args.output)?;
    let mut keys = KeySource::from_arg(args.input.as_deref()).open(args.max_key_bytes)?;
    keys.set_progress(progress(keys.len(), "reading"));
    let built = match (sized, args.items) {
        (Some(mut filter), Some(items)) => {
            let mut inserter = Inserter::new(&filter);
            while let Some(key) = keys.next_key()? {
                let hash = filter.hash_key(key);
                inserter.insert(&mut filter, hash, keys.line_number(), keys.name())?;
            }
            let built = Built {
                read: keys.line_number(),
                inserted: inserter.inserted,
                sized_for: items,
                filter,
            };
            check_load(&built, sizing, args.allow_overfill)?;
            built
        }
        _ => {
            // One pass keeps only the hashes (8 bytes per key); the seed is fixed before the
            // filter exists, as the filter records it.
            let mut hashes = Vec::new();
            while let Some(key) = keys.next_key()? {
                hashes.push(key_hash(args.filter, key, args.seed));
            }
            // An empty key file still gives a valid (empty) filter.
            let items = hashes.len().max(1);
            let mut filter = new(items)?;
            let inserted = match &mut filter {
                // One batch: bit-identical to inserting one by one, and partitioned by line
                // range when the batch is large.
                AnyFilter::Blocked(f) => {
                    f.par_insert_hashes(&hashes);
                    hashes.len() as u64
                }
                _ => {
                    let mut inserter = Inserter::new(&filter);
                    for (i, &hash) in hashes.iter().enumerate() {
                        inserter.insert(&mut filter, hash, i as u64 + 1, keys.name())?;
                    }
                    inserter.inserted
                }
            };
            Built {
                read: hashes.len() as u64,
                inserted,
                sized_for: items,
                filter,
            }
        }
    };
    keys.finish_progress();
    output.commit(|out| {
        built
            .filter
            .write_to_with_items(built.inserted, out)
            .map_err(std::io::Error::other)
    })?;
    eprintln_quietly(format_args!(
        "{}",
        build_summary(&built, args.bits_per_key, keys.name())
    ));
    Ok(())
}

/// A filter `build` made, and the counts its summary line reports.
struct Built {
    filter: AnyFilter,
    /// Keys (lines) read from the input.
    read: u64,
    /// Keys inserted: all of them, except keys a cuckoo filter already reported present.
    inserted: u64,
    /// The keys the filter was sized for (`--items`, else the keys read, at least 1).
    sized_for: usize,
}

/// How far past its asked FPR a filter sized by `--items` may be filled before `build` refuses
/// to write it: twice the asked rate (about 20 % more keys than `--items` at 1 %).
const OVERFILL_FPR_FACTOR: f64 = 2.0;

/// With `--items`, more keys than the filter was sized for raise its FPR. A little is a warning;
/// past [`OVERFILL_FPR_FACTOR`] times the asked rate the build fails (exit 2, no file) unless
/// `--allow-overfill` keeps it. A cuckoo filter refuses keys when full instead, and a scalable
/// one grows, so neither is checked.
fn check_load(built: &Built, sizing: Sizing, allow: bool) -> Result<(), Failure> {
    let filter = &built.filter;
    let items = built.sized_for as u64;
    if matches!(filter.kind(), FilterKind::Cuckoo | FilterKind::Scalable) || built.inserted <= items
    {
        return Ok(());
    }
    // The rate asked for: `--fpr`, or the model's at `--items` for `--bits-per-key`.
    let asked = match sizing {
        Sizing::Fpr(p) => p,
        Sizing::BitsPerKey(_) => filter.expected_fpr(items),
    };
    let now = filter.expected_fpr(built.inserted);
    if now > OVERFILL_FPR_FACTOR * asked && !allow {
        return Err(Failure::usage(overfill_message(
            built.inserted,
            items,
            now,
            asked,
        )));
    }
    eprintln_quietly(format_args!(
        "linebloom: warning: {} keys went into a {} filter sized for {items} (--items): its \
         model FPR is {} instead of the {} asked",
        built.inserted,
        filter.kind(),
        fpr_md(now),
        fpr_md(asked)
    ));
    Ok(())
}

/// The refusal of a filter filled far past `--items`: what happened and what to do.
fn overfill_message(inserted: u64, items: u64, now: f64, asked: f64) -> String {
    format!(
        "{inserted} keys are more than --items {items} allows: the filter's model FPR would be \
         {} instead of the {} asked; give --items {inserted} or more, or leave --items out to size the \
         filter for the keys read (--allow-overfill writes it anyway)",
        fpr_md(now),
        fpr_md(asked)
    )
}

/// The line `build` ends with on standard error: the keys read, the filter's size and bits per
/// key, and its model FPR at the keys it holds; and where `--bits-per-key` asked for a size the
/// kind cannot have, what it has instead.
fn build_summary(built: &Built, asked_bits: Option<f64>, input: &str) -> String {
    let filter = &built.filter;
    let kind = filter.kind();
    let bytes = filter.size_bytes();
    let mut line = format!("linebloom: built a {kind} filter from {} keys", built.read);
    if built.read == 0 {
        line.push_str(&format!(" ({input} is empty)"));
    }
    if built.inserted != built.read {
        // A cuckoo filter does not store a key it already reports present: a repeat, or a
        // false positive.
        line.push_str(&format!(
            " ({} stored; {} were already reported present)",
            built.inserted,
            built.read - built.inserted
        ));
    }
    line.push_str(&format!(": {bytes} bytes"));
    if bytes >= 1024 {
        line.push_str(&format!(" ({})", format_byte_size(bytes)));
    }
    if built.inserted > 0 {
        let per_key = (bytes * 8) as f64 / built.inserted as f64;
        line.push_str(&format!(
            ", {} bits/key, model FPR {}",
            if per_key >= 1.0 {
                format!("{per_key:.2}")
            } else {
                format!("{per_key:.2e}")
            },
            fpr_md(filter.expected_fpr(built.inserted))
        ));
    }
    if let Some(asked) = asked_bits
        && built.read > 0
    {
        let has = (bytes * 8) as f64 / built.sized_for as f64;
        if (has - asked).abs() > 0.01 * asked {
            line.push_str(&format!(
                "; --bits-per-key {asked} gives {has:.2} for {} keys ({})",
                built.sized_for,
                size_steps(kind)
            ));
        }
    }
    line
}

/// Why a kind's size can differ from the bits per key asked.
fn size_steps(kind: FilterKind) -> &'static str {
    match kind {
        FilterKind::Cuckoo => {
            "a cuckoo filter's fingerprints are 8, 12 or 16 bits at 95 % load, the widest \
             that fits"
        }
        FilterKind::Blocked | FilterKind::Counting => "the filter has whole 64-byte lines",
        FilterKind::SplitBlock => "the filter has whole 32-byte blocks",
        FilterKind::Classic => "the filter has whole 64-bit words",
        FilterKind::Scalable => "the chain's parts have whole 64-byte lines",
    }
}

/// Inserts hashes one at a time, counting them; for a cuckoo filter, a key it already reports
/// present is skipped (each insert stores a fingerprint, so a repeated key would take a slot
/// each time and a ninth copy could not be placed).
struct Inserter {
    skip_present: bool,
    inserted: u64,
}

impl Inserter {
    fn new(filter: &AnyFilter) -> Self {
        Inserter {
            skip_present: filter.kind() == FilterKind::Cuckoo,
            inserted: 0,
        }
    }

    fn insert(
        &mut self,
        filter: &mut AnyFilter,
        hash: u64,
        line: u64,
        input: &str,
    ) -> Result<(), Failure> {
        if self.skip_present && filter.contains_hash(hash) {
            return Ok(());
        }
        match filter.insert_hash(hash) {
            Ok(()) => {
                self.inserted += 1;
                Ok(())
            }
            Err(Error::Full) => Err(Failure::other(format!(
                "the cuckoo filter is full at line {line} of {input} after {} keys (nothing \
                 was lost); build it for more items (--items) or more bits per key",
                self.inserted
            ))),
            Err(e) => Err(e.into()),
        }
    }
}

/// A warning on standard error; a standard error that cannot be written to is not a reason to
/// fail the command.
fn eprintln_quietly(message: std::fmt::Arguments) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

pub fn query(args: QueryArgs) -> Result<(), Failure> {
    let filter = load(&args.filter)?;
    let mut keys = KeySource::from_arg(args.input.as_deref()).open(args.max_key_bytes)?;
    let mut out = output::stdout();
    query_keys(&filter, &mut keys, &mut out)?;
    out.flush().map_err(output::stdout_failure)
}

pub fn stats(args: StatsArgs) -> Result<(), Failure> {
    let bytes = read_filter_file(&args.filter)?;
    let filter = read_any(&bytes).map_err(|e| corrupt_failure(&args.filter, e))?;
    let header = read_header(&bytes).map_err(|e| corrupt_failure(&args.filter, e))?;
    let size_bytes = filter.size_bytes();
    // `+ 0.0` turns the estimate of an empty filter, -0, into 0.
    let estimated = filter.estimated_items().max(0.0) + 0.0;
    let recorded = header.items;
    // A count the writer recorded is used only when it could be true: more keys than the
    // filter has bits says the header was written by something else.
    let plausible = recorded <= (size_bytes as u64).saturating_mul(8);
    let used = (recorded > 0 && plausible).then_some(recorded);
    // Bits per key over the keys the writer counted, else over the estimate.
    let per_key_items = used.map_or(estimated, |n| n as f64);
    let bits_per_key = (size_bytes * 8) as f64 / per_key_items;
    let mut json = serde_json::json!({
        "filter": filter.kind().name(),
        "format_version": header.version,
        "hash_scheme": header.hash_scheme,
        "seed": filter.seed(),
        "bytes": size_bytes,
        "file_bytes": bytes.len(),
        "recorded_items": recorded,
        "recorded_items_plausible": plausible,
        "estimated_items": finite(estimated),
        "bits_per_key": finite(bits_per_key),
        "fill_ratio": filter.fill_ratio(),
        "current_fpr": filter.current_fpr(),
        "simd_path": linebloom::simd_path().name(),
    });
    let params: Vec<(&str, serde_json::Value)> = match &filter {
        AnyFilter::Blocked(f) => vec![
            ("lines", f.num_lines().into()),
            ("hashes", f.k().into()),
            ("placement", f.placement().name().into()),
        ],
        AnyFilter::Classic(f) => vec![("num_bits", f.num_bits().into()), ("hashes", f.k().into())],
        AnyFilter::Cuckoo(f) => vec![
            ("buckets", f.num_buckets().into()),
            ("fingerprint_bits", f.fingerprint_bits().into()),
            ("len", f.len().into()),
        ],
        AnyFilter::Counting(f) => vec![
            ("lines", f.num_lines().into()),
            ("hashes", f.k().into()),
            ("saturated_counters", f.saturated_counters().into()),
        ],
        AnyFilter::Scalable(f) => vec![
            ("filters", f.filters().into()),
            ("len", f.len().into()),
            ("capacity", f.capacity().into()),
            ("initial_items", f.initial_items().into()),
            ("growth", f.growth().into()),
            ("tightening", f.tightening().into()),
            ("fpr_bound", f.fpr().into()),
            ("placement", f.placement().name().into()),
        ],
        AnyFilter::SplitBlock(f) => vec![
            ("blocks", f.num_blocks().into()),
            ("set_bits", f.count_ones().into()),
        ],
    };
    for (name, value) in &params {
        json[*name] = value.clone();
    }
    if let Some(n) = used {
        json["model_fpr_at_recorded_items"] = filter.expected_fpr(n).into();
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
    let mut text = String::new();
    if args.json {
        outln!(text, "{json}");
        return output::print(&text);
    }
    outln!(text, "filter            {}", filter.kind());
    for (name, value) in &params {
        outln!(text, "{:<17} {value}", name.replace('_', " "));
    }
    outln!(text, "seed              {:#x}", filter.seed());
    outln!(text, "hash scheme       {}", header.hash_scheme);
    outln!(
        text,
        "bytes             {size_bytes} (file: {} bytes)",
        bytes.len()
    );
    if used.is_some() {
        outln!(text, "recorded items    {recorded}");
    } else if recorded > 0 {
        outln!(
            text,
            "recorded items    {recorded} (more than the filter's bits: not used below)"
        );
    }
    outln!(text, "estimated items   {estimated:.0}");
    match finite(bits_per_key) {
        Some(b) => outln!(text, "bits per key      {b:.3}"),
        None => outln!(text, "bits per key      - (no items)"),
    }
    outln!(text, "fill ratio        {:.4}", filter.fill_ratio());
    outln!(
        text,
        "current FPR       {:.5} %",
        filter.current_fpr() * 100.0
    );
    if let Some(huge) = huge {
        outln!(
            text,
            "huge pages        {huge} of {size_bytes} bytes (asked for from 8 MiB up)"
        );
    }
    if let Some(n) = used {
        outln!(
            text,
            "model FPR         {:.5} % (at the recorded items)",
            filter.expected_fpr(n) * 100.0
        );
    }
    outln!(text, "simd path         {}", linebloom::simd_path());
    output::print(&text)
}

/// Looks up every key, printing `key\tyes|no` lines, in batches of hashes (the batched,
/// prefetching lookup).
fn query_keys(
    filter: &AnyFilter,
    keys: &mut KeyReader,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let seed = filter.seed();
    answer_keys_with(
        |key| key_hash(filter.kind(), key, seed),
        keys,
        out,
        QUERY_BATCH,
        |hashes, found| filter.contains_hashes(hashes, found).map_err(Failure::from),
    )
}

/// A key's hash for a filter of `kind` with `seed`: the Parquet hash (XXH64, seed 0) for the
/// split-block filter, xxh3 with the seed for the others ([`AnyFilter::hash_key`]).
fn key_hash(kind: FilterKind, key: &[u8], seed: u64) -> u64 {
    match kind {
        FilterKind::SplitBlock => hash_xxh64(key),
        _ => hash_bytes(key, seed),
    }
}

/// Reads and checks a saved filter; every problem is exit code 2.
fn load(path: &Path) -> Result<AnyFilter, Failure> {
    let bytes = read_filter_file(path)?;
    read_any(&bytes).map_err(|e| corrupt_failure(path, e))
}

/// Reads a saved filter by its header: the 64-byte header first, then exactly the length it
/// declares. A regular file's size is checked against that length before the payload is read,
/// so a damaged or foreign file (even a sparse one of many GiB) is refused at once; other
/// inputs are read no further than one byte past it.
fn read_filter_file(path: &Path) -> Result<Vec<u8>, Failure> {
    let name = path.display().to_string();
    let mut file = File::open(path).map_err(|e| read_failure(&name, e))?;
    let size = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    (&mut file)
        .take(HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| read_failure(&name, e))?;
    let header = read_header(&bytes).map_err(|e| corrupt_failure(path, e))?;
    let declared = header.encoded_len() as u64;
    let mismatch = |actual: u64| {
        let why = if actual < declared {
            "truncated"
        } else {
            "length mismatch"
        };
        corrupt_failure(
            path,
            Error::Corrupt(format!(
                "{why}: the header declares {declared} bytes, the file holds {actual}"
            )),
        )
    };
    if let Some(size) = size
        && size != declared
    {
        return Err(mismatch(size));
    }
    if size.is_some() {
        // The file holds exactly that many bytes; other inputs grow the buffer as they deliver.
        bytes.reserve_exact((declared as usize).saturating_sub(HEADER_LEN));
    }
    (&mut file)
        .take(declared.saturating_add(1) - HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| read_failure(&name, e))?;
    if bytes.len() as u64 != declared {
        return Err(mismatch(bytes.len() as u64));
    }
    Ok(bytes)
}

/// A file that is not a valid filter: exit code 2, naming the file.
fn corrupt_failure(path: &Path, e: Error) -> Failure {
    Failure::usage(format!("{}: {e}", path.display()))
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
