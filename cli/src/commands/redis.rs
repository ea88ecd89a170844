//! `linebloom redis create|add|query|stats|export|drop`: a blocked filter shared through Redis
//! or Valkey (`linebloom::redis`), one command per key on a plain server.
//!
//! Every failure to reach the server, a key of another type, a key that is not a linebloom
//! filter, a filter that does not exist, or a `create` whose parameters differ from the
//! existing filter's is exit code 2 with one line on standard error; a filter that lost data on
//! its server (a damaged shard) and a refused command are exit code 1 (the library's errors map
//! through `Failure::from`). Settings that put a filter at risk (an eviction policy, a TTL) are
//! warnings on standard error after `create` and `stats`.

use std::io::Write;
use std::path::PathBuf;

use clap::ArgGroup;
use linebloom::filter::Sizing;
use linebloom::format::AnyFilter;
use linebloom::hash::{DEFAULT_SEED, hash_bytes};
use linebloom::redis::RedisBlockedBloom;

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

/// Where the filter lives.
#[derive(clap::Args)]
pub struct Server {
    /// The filter's name (its config key; shards are NAME:{NAME:i}).
    name: String,
    /// redis://HOST:PORT of the server, or of cluster seed nodes, comma-separated.
    #[arg(long)]
    url: String,
}

impl Server {
    fn open(&self) -> Result<RedisBlockedBloom, Failure> {
        RedisBlockedBloom::open(&self.url, &self.name).map_err(Failure::from)
    }
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
        builder = builder.hashes(k);
    }
    let mut filter = builder.create(&args.server.url, &args.server.name)?;
    output::print(&format!(
        "{}: {} bytes in {} shard(s), {} hashes per key\n",
        filter.name(),
        filter.size_bytes(),
        filter.shards(),
        filter.hashes()
    ))?;
    warn(&mut filter)
}

fn drop_filter(args: DropArgs) -> Result<(), Failure> {
    let deleted = RedisBlockedBloom::delete(&args.server.url, &args.server.name)?;
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
        let mut text = String::new();
        for (key, value) in json.as_object().expect("an object") {
            if key == "damaged_shards" {
                text.push_str(&format!("{key:<22}{}\n", s.problems.len()));
                for problem in &s.problems {
                    text.push_str(&format!("  {problem}\n"));
                }
            } else if !value.is_null() {
                text.push_str(&format!("{key:<22}{value}\n"));
            }
        }
        output::print(&text)?;
    }
    warn(&mut filter)?;
    // A damaged filter is reported above and fails, so scripts notice.
    filter.verify().map_err(Failure::from)
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
