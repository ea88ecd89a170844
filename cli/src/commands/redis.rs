//! `linebloom redis create|add|query|stats|export|drop`: a blocked filter shared through Redis
//! or Valkey (`linebloom::redis`), one command per key on a plain server.
//!
//! Every failure to reach the server, a key of another type, a key that is not a linebloom
//! filter, a filter that does not exist, or a `create` whose parameters differ from the
//! existing filter's is exit code 2 with one line on standard error; a filter that lost data on
//! its server (a damaged shard) and a refused command are exit code 1 (the library's errors map
//! through `Failure::from`). Settings that put a filter at risk (an eviction policy, a TTL) are
//! warnings on standard error after `create` and `stats`.
//!
//! The URL comes from `--url`, else the first line of `--url-file`, else `LINEBLOOM_REDIS_URL`,
//! else `REDIS_URL`: a password on the command line is visible to every user of the machine
//! (`ps`, `/proc/PID/cmdline`), so it belongs in the file (`chmod 600`) or the environment.
//! Messages show URLs with their passwords hidden.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::ArgGroup;
use linebloom::filter::Sizing;
use linebloom::format::AnyFilter;
use linebloom::hash::{DEFAULT_SEED, hash_bytes};
use linebloom::redis::{ConnectOptions, RedisBlockedBloom, RedisBlockedBloomBuilder, RedisStats};
use linebloom_cli::report::byte_size::format_byte_size;
use linebloom_cli::report::figures::fpr_md;

use super::keys::{DEFAULT_MAX_KEY_BYTES, KeySource, answer_keys};
use super::output::{self, OutputFile};
use crate::Failure;

/// Keys read, hashed and sent together (the library pipelines them in round trips of its own).
const BATCH: usize = 16_384;

#[derive(clap::Subcommand)]
pub enum RedisCommand {
    /// Create a shared filter (or agree with the existing one of the same parameters).
    Create(CreateArgs),
    /// Insert keys, one per line, into a shared filter.
    Add(AddArgs),
    /// Look up keys, one per line: prints each key, a tab, and yes or no.
    Query(AddArgs),
    /// Print a shared filter's parameters and fill.
    Stats(StatsArgs),
    /// Save a shared filter as a linebloom filter file (readable by `stats` and `query`).
    Export(ExportArgs),
    /// Delete a shared filter: its shards and its config (also one whose config was lost).
    Drop(DropArgs),
}

/// The environment variables read for the URL when neither `--url` nor `--url-file` is given,
/// in order.
const URL_VARIABLES: [&str; 2] = ["LINEBLOOM_REDIS_URL", "REDIS_URL"];

/// Where the filter lives and how to reach it.
#[derive(clap::Args)]
pub struct Server {
    /// The filter's name (its config key; shards are NAME:{NAME:i}).
    name: String,
    /// redis://HOST:PORT of the server (rediss:// for TLS), or of cluster seed nodes,
    /// comma-separated. Default: --url-file, else $LINEBLOOM_REDIS_URL, else $REDIS_URL. Never
    /// put a password here: every user of the machine can read the command line.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Read the URL from the first line of FILE (keep it private: chmod 600).
    #[arg(long, value_name = "FILE", conflicts_with = "url")]
    url_file: Option<PathBuf>,
    /// Seconds to wait for a connection or a reply.
    #[arg(long, value_name = "SECONDS", default_value_t = ConnectOptions::DEFAULT_TIMEOUT.as_secs_f64())]
    timeout: f64,
    /// Trust the CA certificate(s) in FILE (PEM) for rediss:// URLs.
    #[arg(long, value_name = "FILE")]
    tls_ca: Option<PathBuf>,
}

impl Server {
    fn open(&self) -> Result<RedisBlockedBloom, Failure> {
        RedisBlockedBloom::open_with(&self.urls()?, &self.name, &self.options()?)
            .map_err(Failure::from)
    }

    /// Creates (or agrees with) the filter with `builder`'s parameters.
    fn create(&self, builder: RedisBlockedBloomBuilder) -> Result<RedisBlockedBloom, Failure> {
        let builder = builder.connect_options(self.options()?);
        builder
            .create(&self.urls()?, &self.name)
            .map_err(Failure::from)
    }

    /// The URL list, from the first of `--url`, `--url-file` and the environment that is given.
    fn urls(&self) -> Result<String, Failure> {
        if let Some(url) = &self.url {
            return Ok(url.clone());
        }
        if let Some(path) = &self.url_file {
            return url_from_file(path);
        }
        for name in URL_VARIABLES {
            if let Some(url) = std::env::var_os(name) {
                let Some(url) = url.to_str() else {
                    return Err(Failure::usage(format!("${name} is not UTF-8")));
                };
                if !url.trim().is_empty() {
                    return Ok(url.trim().to_owned());
                }
            }
        }
        Err(Failure::usage(format!(
            "no Redis URL: give --url-file FILE, or set {} or {} (--url URL shows a password \
             to every user of the machine)",
            URL_VARIABLES[0], URL_VARIABLES[1]
        )))
    }

    fn options(&self) -> Result<ConnectOptions, Failure> {
        let timeout = Duration::try_from_secs_f64(self.timeout).map_err(|_| {
            Failure::usage(format!(
                "--timeout must be a positive number of seconds (got {})",
                self.timeout
            ))
        })?;
        let mut options = ConnectOptions::default().timeout(timeout);
        if let Some(path) = &self.tls_ca {
            let pem = std::fs::read(path).map_err(|e| {
                Failure::usage(format!("cannot read --tls-ca {}: {e}", path.display()))
            })?;
            options = options.tls_ca_pem(pem);
        }
        Ok(options)
    }
}

/// The first line of `path`, trimmed (the rest is ignored: room for a comment). Its text is
/// never quoted in a message.
fn url_from_file(path: &Path) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read --url-file {}: {e}", path.display())))?;
    let url = text.lines().next().unwrap_or("").trim();
    if url.is_empty() {
        return Err(Failure::usage(format!(
            "--url-file {}: the first line is empty (it holds the URL)",
            path.display()
        )));
    }
    Ok(url.to_owned())
}

#[derive(clap::Args)]
#[command(group(ArgGroup::new("size").required(true).args(["bits_per_key", "fpr"])))]
pub struct CreateArgs {
    #[command(flatten)]
    server: Server,
    /// Size the filter for this many keys.
    #[arg(long)]
    items: u64,
    /// Size the filter for this false-positive rate.
    #[arg(long)]
    fpr: Option<f64>,
    /// Size the filter at this many bits per key.
    #[arg(long)]
    bits_per_key: Option<f64>,
    /// Split the lines over this many Redis keys (needed past 512 MiB; spreads a cluster).
    #[arg(long, default_value_t = 1)]
    shards: u32,
    /// Probes per key (default: the model's best for the size).
    #[arg(long)]
    hashes: Option<u32>,
    /// Hash seed, stored with the filter (default: the crate's fixed seed).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
}

#[derive(clap::Args)]
pub struct AddArgs {
    #[command(flatten)]
    server: Server,
    /// The keys, one per line; "-" or none: standard input.
    #[arg(long)]
    input: Option<PathBuf>,
    /// The longest key accepted, in bytes; a longer line is an error naming it.
    #[arg(long, default_value_t = DEFAULT_MAX_KEY_BYTES)]
    max_key_bytes: usize,
}

#[derive(clap::Args)]
pub struct StatsArgs {
    #[command(flatten)]
    server: Server,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    server: Server,
    /// Where to write the filter file (replaced whole, or left as it was on failure).
    #[arg(long)]
    output: PathBuf,
}

#[derive(clap::Args)]
pub struct DropArgs {
    #[command(flatten)]
    server: Server,
}

pub fn run(command: RedisCommand) -> Result<(), Failure> {
    match command {
        RedisCommand::Create(args) => create(args),
        RedisCommand::Add(args) => add(args),
        RedisCommand::Query(args) => query(args),
        RedisCommand::Stats(args) => stats(args),
        RedisCommand::Export(args) => export(args),
        RedisCommand::Drop(args) => drop_filter(args),
    }
}

/// Prints each warning on standard error, one line each.
fn warn(filter: &mut RedisBlockedBloom) -> Result<(), Failure> {
    for warning in filter.warnings()? {
        eprintln!("linebloom: warning: {warning}");
    }
    Ok(())
}

fn create(args: CreateArgs) -> Result<(), Failure> {
    let sizing = match (args.bits_per_key, args.fpr) {
        (Some(b), _) => Sizing::BitsPerKey(b),
        (None, Some(p)) => Sizing::Fpr(p),
        (None, None) => return Err(Failure::usage("give --bits-per-key or --fpr")),
    };
    let mut builder = RedisBlockedBloom::builder(args.items)
        .sizing(sizing)
        .shards(args.shards)
        .seed(args.seed);
    if let Some(k) = args.hashes {
        builder = builder.k(k);
    }
    let mut filter = args.server.create(builder)?;
    output::print(&format!(
        "{}: {} bytes in {} shard(s), {} hashes per key\n",
        filter.name(),
        filter.size_bytes(),
        filter.shards(),
        filter.k()
    ))?;
    warn(&mut filter)
}

fn drop_filter(args: DropArgs) -> Result<(), Failure> {
    let server = &args.server;
    let deleted =
        RedisBlockedBloom::delete_with(&server.urls()?, &server.name, &server.options()?)?;
    output::print(&format!("{}: {deleted} keys deleted\n", args.server.name))
}

fn add(args: AddArgs) -> Result<(), Failure> {
    let mut filter = args.server.open()?;
    let mut keys = KeySource::from_arg(args.input.as_deref()).open(args.max_key_bytes)?;
    let seed = filter.seed();
    let mut hashes = Vec::with_capacity(BATCH);
    let (mut total, mut new) = (0u64, 0u64);
    loop {
        let more = match keys.next_key()? {
            Some(key) => {
                hashes.push(hash_bytes(key, seed));
                true
            }
            None => false,
        };
        if hashes.len() == BATCH || (!more && !hashes.is_empty()) {
            new += filter.insert_hashes(&hashes)?;
            total += hashes.len() as u64;
            hashes.clear();
        }
        if !more {
            break;
        }
    }
    output::print(&format!("{total} keys added, {new} new\n"))
}

fn query(args: AddArgs) -> Result<(), Failure> {
    let mut filter = args.server.open()?;
    let mut keys = KeySource::from_arg(args.input.as_deref()).open(args.max_key_bytes)?;
    let mut out = output::stdout();
    answer_keys(
        filter.seed(),
        &mut keys,
        &mut out,
        BATCH,
        |hashes, found| filter.contains_hashes(hashes, found).map_err(Failure::from),
    )?;
    out.flush().map_err(output::stdout_failure)
}

fn stats(args: StatsArgs) -> Result<(), Failure> {
    let mut filter = args.server.open()?;
    let s = filter.stats()?;
    let (fpr, bits_per_key) = match s.sizing {
        Sizing::Fpr(p) => (Some(p), None),
        Sizing::BitsPerKey(b) => (None, Some(b)),
    };
    let finite = |x: f64| x.is_finite().then_some(x);
    let json = serde_json::json!({
        "name": filter.name(),
        "cluster": s.cluster,
        "shards": s.shards,
        "lines": s.lines,
        "bits": s.bits,
        "bytes": s.bytes,
        "hashes": s.hashes,
        "seed": s.seed,
        "ones": s.ones,
        "fill_ratio": s.ones as f64 / s.bits as f64,
        "items_estimate": finite(s.items_estimate),
        "fpr_estimate": s.fpr_estimate,
        "created_items": s.created_items,
        "created_fpr": fpr,
        "created_bits_per_key": bits_per_key,
        "damaged_shards": s.problems.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
    });
    if args.json {
        output::print(&format!("{json}\n"))?;
    } else {
        output::print(&stats_text(filter.name(), &s))?;
    }
    warn(&mut filter)?;
    // A damaged filter is reported above and fails, so scripts notice.
    filter.verify().map_err(Failure::from)
}

/// `redis stats` as `stats` prints a saved filter: one aligned name per line, sizes in bytes
/// and binary units, rates in percent.
fn stats_text(name: &str, s: &RedisStats) -> String {
    let mut text = String::new();
    let mut field = |label: &str, value: String| output::field(&mut text, label, value);
    field("filter", format!("blocked, shared as {name:?}"));
    field(
        "servers",
        if s.cluster { "cluster" } else { "single node" }.to_string(),
    );
    field("shards", s.shards.to_string());
    field("lines", s.lines.to_string());
    field("hashes", s.hashes.to_string());
    field("seed", format!("{:#x}", s.seed));
    field(
        "bytes",
        format!("{} ({})", s.bytes, format_byte_size(s.bytes as usize)),
    );
    field(
        "created for",
        match s.sizing {
            Sizing::Fpr(p) => format!("{} items at FPR {}", s.created_items, fpr_md(p)),
            Sizing::BitsPerKey(b) => format!("{} items at {b} bits per key", s.created_items),
        },
    );
    field("set bits", format!("{} of {}", s.ones, s.bits));
    field(
        "fill ratio",
        format!("{:.4}", s.ones as f64 / s.bits.max(1) as f64),
    );
    if s.items_estimate.is_finite() {
        field("estimated items", format!("{:.0}", s.items_estimate));
        if s.items_estimate >= 1.0 {
            field(
                "bits per key",
                format!("{:.3}", s.bits as f64 / s.items_estimate),
            );
        }
    } else {
        field("estimated items", "- (every bit is set)".to_string());
    }
    field(
        "model FPR",
        format!("{:.5} % (at the estimated items)", s.fpr_estimate * 100.0),
    );
    field("damaged shards", s.problems.len().to_string());
    for problem in &s.problems {
        text.push_str(&format!("  {problem}\n"));
    }
    text
}

fn export(args: ExportArgs) -> Result<(), Failure> {
    let mut filter = args.server.open()?;
    let output = OutputFile::create(&args.output)?;
    let local = filter.export()?;
    // The count recorded is the fill's estimate: the server does not count keys.
    let items = local.estimated_items();
    let items = if items.is_finite() {
        items.round() as u64
    } else {
        0
    };
    let local = AnyFilter::Blocked(local);
    output.commit(|out| {
        local
            .write_to_with_items(items, out)
            .map_err(std::io::Error::other)
    })
}
