//! A blocked filter shared by many processes and machines through Redis or Valkey (feature
//! `redis`), on plain servers with no module.
//!
//! The filter's lines are the bytes of Redis strings: each key's k bits sit in one 64-byte
//! line, so an insert is one `BITFIELD ... SET u1 p1 1 ... SET u1 pk 1` (whose reply, the old
//! bits, says whether the key was new) and a lookup one `GETRANGE` of 64 bytes or one
//! `BITFIELD_RO` of k bits. Batched operations put many keys in one command and many commands
//! in one round trip. The bit offsets follow Redis's order (bit 0 is the most significant bit of
//! byte 0), so a `GET` of a shard returns exactly the engine's line bytes, and
//! [`RedisBlockedBloom::export`] is a plain [`BlockedBloom`] that answers every key alike.
//!
//! # Keys on the server
//! - `NAME`: a hash whose field `linebloom` holds the parameters (written once, with `HSETNX`,
//!   so every client that opens the filter agrees on them).
//! - `NAME:{NAME:i}` for shard `i` in `0..shards`: a string of `lines_per_shard * 64` bytes.
//!   The hash tags differ per shard, so Redis Cluster spreads the shards over its nodes; a
//!   string holds at most 512 MiB, so larger filters need more shards. A key's line is chosen
//!   over all the filter's lines; the shards laid end to end are one blocked filter.
//!
//! # Failures
//! A server that cannot be reached, or goes away during a request, is an
//! [`Error::Unavailable`], never a "no". Nothing is then known about that request's keys: some
//! of a batch's inserts may have landed. Retrying is safe (setting a bit twice is setting it
//! once); only the "was it new" answers of a retried insert may say "not new" for a key the
//! failed attempt stored. The connection is made again on the next call, so a server that comes
//! back is used without reopening the filter.
//!
//! # Connecting
//! [`ConnectOptions`] set the timeout (10 s by default) and, for `rediss://` URLs (feature
//! `redis-tls`, rustls), a private CA to trust; `#insecure` at the end of the URL skips the
//! certificate check. Error messages show the URLs with their passwords hidden
//! ([`redact_urls`]).
//!
//! ```no_run
//! use linebloom::redis::RedisBlockedBloom;
//!
//! // Every client runs the same `create` (or `open`): the first creates, the others agree.
//! let mut seen = RedisBlockedBloom::builder(1_000_000)
//!     .fpr(0.01)
//!     .create("redis://127.0.0.1:6379", "crawler:seen")?;
//! assert!(seen.insert("https://example.com/")?); // new
//! assert!(seen.contains("https://example.com/")?);
//! let mut found = vec![false; 2];
//! seen.contains_hashes(&[seen.hash("a"), seen.hash("b")], &mut found)?;
//! # Ok::<(), linebloom::Error>(())
//! ```

mod conn;
mod layout;
#[cfg(test)]
mod tests;
mod url;

use redis::{Cmd, Value};

use crate::blocked::setops::estimated_items_from;
use crate::blocked::simd::lookup_mask_for;
use crate::blocked::{BlockedBloom, LINE_BITS, Line};
use crate::error::{Error, Result};
use crate::filter::Sizing;
use crate::hash::{DEFAULT_SEED, Key};
use crate::model;
use conn::Conn;
pub use conn::ConnectOptions;
use layout::{CONFIG_FIELD, Params, check_name, shard_key};
pub use layout::{MAX_SHARD_BYTES, MAX_SHARDS};
pub use url::redact_urls;

/// Keys per `BITFIELD` / `BITFIELD_RO` command of a batch.
const KEYS_PER_COMMAND: usize = 1_000;

/// Keys per round trip of a batch (its commands go out together, per node).
const KEYS_PER_ROUND_TRIP: usize = 16_384;

/// Bytes of one line.
const LINE_BYTES: u64 = LINE_BITS as u64 / 8;

/// How a lookup reads its key's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupMethod {
    /// One `GETRANGE` of the key's 64-byte line per key; the bits are tested here.
    LineRead,
    /// One `BITFIELD_RO ... GET u1 p` per probe, many keys per command (one key's k fields in a
    /// one-key lookup).
    BitRead,
}

/// A blocked filter whose lines live in Redis or Valkey, shared by every client that opens it.
/// See [the module](self) for the layout and what a failure means.
pub struct RedisBlockedBloom {
    conn: Conn,
    name: String,
    params: Params,
    shard_keys: Vec<String>,
    lookup: LookupMethod,
    /// Scratch for bit offsets, kept between calls.
    offsets: Vec<u64>,
}

/// The parameters of a shared filter to create: sizing as for [`BlockedBloom`], plus the
/// number of shards. Made by [`RedisBlockedBloom::builder`].
#[derive(Clone, Debug)]
pub struct RedisBlockedBloomBuilder {
    items: u64,
    sizing: Sizing,
    hashes: Option<u32>,
    seed: u64,
    shards: u32,
    connect: ConnectOptions,
}

impl RedisBlockedBloomBuilder {
    crate::filter::sizing_setters!(sizing);
    crate::filter::probe_setters!("`1..=16`.");

    /// Split the lines over this many Redis keys (default 1): needed past 512 MiB, and what
    /// spreads the filter over a cluster's nodes.
    pub fn shards(mut self, shards: u32) -> Self {
        self.shards = shards;
        self
    }

    /// How to connect (timeout, TLS trust); the default is [`ConnectOptions::default`].
    pub fn connect_options(mut self, options: ConnectOptions) -> Self {
        self.connect = options;
        self
    }

    /// Creates the filter `name` on the server(s) at `urls` (one `redis://HOST:PORT`, or
    /// several comma-separated seed nodes of a cluster), or opens it when it exists with the
    /// same parameters (its bits are kept). Another filter of that name with other parameters
    /// is an [`Error::Incompatible`]; a key of that name that is not a linebloom filter an
    /// [`Error::Foreign`].
    pub fn create(self, urls: &str, name: &str) -> Result<RedisBlockedBloom> {
        check_name(name)?;
        let params = Params::new(self.items, self.sizing, self.hashes, self.seed, self.shards)?;
        let mut conn = Conn::open(urls, &self.connect)?;
        check_config_type(&mut conn, name)?;
        let created = conn.query(
            redis::cmd("HSETNX")
                .arg(name)
                .arg(CONFIG_FIELD)
                .arg(params.encode()),
        )?;
        if created != Value::Int(1) {
            let existing = read_config(&mut conn, name)?;
            if existing != params {
                return Err(Error::Incompatible(format!(
                    "{name:?} exists with {}; this create asks for {}",
                    existing.encode(),
                    params.encode()
                )));
            }
        }
        let mut filter = RedisBlockedBloom::with_params(conn, name, params);
        filter.check_shards()?;
        filter.allocate()?;
        Ok(filter)
    }
}

impl RedisBlockedBloom {
    /// A builder for a filter of `items` expected keys (1 % FPR unless told otherwise).
    pub fn builder(items: u64) -> RedisBlockedBloomBuilder {
        RedisBlockedBloomBuilder {
            items,
            sizing: Sizing::Fpr(0.01),
            hashes: None,
            seed: DEFAULT_SEED,
            shards: 1,
            connect: ConnectOptions::default(),
        }
    }

    /// Opens the existing filter `name`: [`Error::NotFound`] when there is none,
    /// [`Error::Foreign`] when the key holds something else.
    pub fn open(urls: &str, name: &str) -> Result<Self> {
        Self::open_with(urls, name, &ConnectOptions::default())
    }

    /// [`open`](Self::open) with connection options (timeout, TLS trust).
    pub fn open_with(urls: &str, name: &str, options: &ConnectOptions) -> Result<Self> {
        check_name(name)?;
        let mut conn = Conn::open(urls, options)?;
        if !check_config_type(&mut conn, name)? {
            return Err(Error::NotFound(format!(
                "no linebloom filter named {name:?} at {} (create it first)",
                conn.urls()
            )));
        }
        let params = read_config(&mut conn, name)?;
        let mut filter = Self::with_params(conn, name, params);
        filter.check_shards()?;
        Ok(filter)
    }

    fn with_params(conn: Conn, name: &str, params: Params) -> Self {
        let shard_keys = (0..params.shards as usize)
            .map(|i| shard_key(name, i))
            .collect();
        Self {
            conn,
            name: name.to_owned(),
            params,
            shard_keys,
            lookup: LookupMethod::LineRead,
            offsets: Vec::new(),
        }
    }

    /// Every shard key is a string (or not there yet) no longer than its lines.
    fn check_shards(&mut self) -> Result<()> {
        // STRLEN of a key of another type is a WRONGTYPE error that fails the batch: ask TYPE
        // alone first, so the message names the key.
        let mut types = self.conn.batch();
        for key in &self.shard_keys {
            types.command("TYPE", key, 0);
        }
        let replies = self.conn.run(types)?;
        for (key, reply) in self.shard_keys.iter().zip(&replies) {
            let kind = status_text(reply);
            if kind != "string" && kind != "none" {
                return Err(Error::Foreign(format!(
                    "shard key {key:?} holds a {kind}, not a string of filter lines"
                )));
            }
        }
        let mut lens = self.conn.batch();
        for key in &self.shard_keys {
            lens.command("STRLEN", key, 0);
        }
        let max = self.shard_bytes();
        for (key, reply) in self.shard_keys.iter().zip(self.conn.run(lens)?) {
            let len = int_of(&reply)?;
            if len > max {
                return Err(Error::Foreign(format!(
                    "shard key {key:?} holds {len} bytes, more than the filter's {max}"
                )));
            }
        }
        Ok(())
    }

    /// Gives every shard its full length at once (zeros), so inserts never grow a string:
    /// `BITFIELD key INCRBY u1 LAST 0` extends a shorter string with zeros and leaves every
    /// bit as it is, so it is safe to run while other clients insert.
    fn allocate(&mut self) -> Result<()> {
        let last = self.shard_bytes() * 8 - 1;
        let mut batch = self.conn.batch();
        for key in &self.shard_keys {
            batch.command("BITFIELD", key, 4);
            batch.arg(b"INCRBY");
            batch.arg(b"u1");
            batch.arg_u64(last);
            batch.arg(b"0");
        }
        self.conn.run(batch).map(drop)
    }

    /// The filter's name on the server.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Probes per key.
    pub fn hashes(&self) -> u32 {
        self.params.hashes
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.params.seed
    }

    /// Number of shards (Redis keys holding lines).
    pub fn shards(&self) -> u32 {
        self.params.shards
    }

    /// The Redis key of shard `i` (`NAME:{NAME:i}`), or `None` past the last shard.
    pub fn shard_key(&self, i: usize) -> Option<&str> {
        self.shard_keys.get(i).map(String::as_str)
    }

    /// Lines in all shards together.
    pub fn num_lines(&self) -> u64 {
        self.params.total_lines()
    }

    /// Bits in all shards together.
    pub fn num_bits(&self) -> u64 {
        self.num_lines() * LINE_BITS as u64
    }

    /// Bytes of filter data in all shards together.
    pub fn size_bytes(&self) -> u64 {
        self.num_lines() * LINE_BYTES
    }

    /// Whether the servers form a cluster.
    pub fn is_cluster(&self) -> bool {
        self.conn.is_cluster()
    }

    fn shard_bytes(&self) -> u64 {
        self.params.lines_per_shard * LINE_BYTES
    }

    /// A key's hash under this filter's seed (what the `*_hash` methods take).
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.hash_with_seed(self.params.seed)
    }

    /// Chooses how lookups read bits (both answer alike; see `results/redis.md` for which is
    /// faster). The default is [`LookupMethod::LineRead`].
    pub fn set_lookup_method(&mut self, method: LookupMethod) {
        self.lookup = method;
    }

    /// Adds a key: one command, one round trip. True when the key was new (some of its bits
    /// were not set).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        self.insert_hash(self.hash(key))
    }

    /// Whether the key may have been inserted: one command, one round trip.
    pub fn contains<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        self.contains_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a key given by its hash.
    pub fn insert_hash(&mut self, hash: u64) -> Result<bool> {
        let mut new = [false];
        self.insert_hashes_reporting(&[hash], &mut new)?;
        Ok(new[0])
    }

    /// [`contains`](Self::contains) for a key given by its hash.
    pub fn contains_hash(&mut self, hash: u64) -> Result<bool> {
        let mut found = [false];
        self.contains_hashes(&[hash], &mut found)?;
        Ok(found[0])
    }

    /// Adds many keys given by their hashes, pipelined: one `BITFIELD` per shard and 1,000
    /// keys, one round trip per 16,384 keys. Returns how many were new. The bits are those of
    /// inserting the keys one by one.
    pub fn insert_hashes(&mut self, hashes: &[u64]) -> Result<u64> {
        self.insert_batch(hashes, None)
    }

    /// [`insert_hashes`](Self::insert_hashes), also saying for each key whether it was new (as
    /// if inserted one by one in order: a key repeated in the batch is new only once).
    /// `new.len()` must equal `hashes.len()`.
    pub fn insert_hashes_reporting(&mut self, hashes: &[u64], new: &mut [bool]) -> Result<()> {
        check_lengths(hashes.len(), new.len())?;
        self.insert_batch(hashes, Some(new)).map(drop)
    }

    /// Looks up many keys given by their hashes, pipelined, into `found` (same length).
    pub fn contains_hashes(&mut self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        check_lengths(hashes.len(), found.len())?;
        match self.lookup {
            LookupMethod::LineRead => self.read_lines(hashes, found),
            LookupMethod::BitRead => {
                self.bit_commands("BITFIELD_RO", hashes, |all, i| found[i] = all)
            }
        }
    }

    fn insert_batch(&mut self, hashes: &[u64], mut new: Option<&mut [bool]>) -> Result<u64> {
        let mut count = 0;
        self.bit_commands("BITFIELD", hashes, |all, i| {
            count += u64::from(!all);
            if let Some(new) = new.as_deref_mut() {
                new[i] = !all;
            }
        })?;
        Ok(count)
    }

    /// Sends `hashes` as `BITFIELD`-style commands, one per shard and [`KEYS_PER_COMMAND`]
    /// keys (`SET u1 p 1` fields for `BITFIELD`, `GET u1 p` for `BITFIELD_RO`), one round trip
    /// per [`KEYS_PER_ROUND_TRIP`] keys, and calls `answer` with whether all of each key's
    /// returned bits were set, and its index. Each round trip is sent before the previous
    /// one's replies are read, so the client encodes while the server works.
    fn bit_commands(
        &mut self,
        command: &str,
        hashes: &[u64],
        mut answer: impl FnMut(bool, usize),
    ) -> Result<()> {
        let mut pending: Option<(conn::Sent, Plan)> = None;
        for (c, chunk) in hashes.chunks(KEYS_PER_ROUND_TRIP).enumerate() {
            let (batch, plan) = self.encode_bits(command, chunk, c * KEYS_PER_ROUND_TRIP);
            let sent = self.conn.send(batch)?;
            if let Some((sent, plan)) = pending.replace((sent, plan)) {
                let replies = self.conn.receive(sent)?;
                plan.answer(command, &replies, &mut answer)?;
            }
        }
        if let Some((sent, plan)) = pending {
            let replies = self.conn.receive(sent)?;
            plan.answer(command, &replies, &mut answer)?;
        }
        Ok(())
    }

    /// One round trip's commands for [`Self::bit_commands`], and how to read their replies.
    fn encode_bits(&mut self, command: &str, hashes: &[u64], base: usize) -> (conn::Batch, Plan) {
        let write = command == "BITFIELD";
        let order = by_shard(&self.params, hashes);
        self.offsets.clear();
        let mut counts = Vec::with_capacity(order.len());
        let mut shard_of = Vec::with_capacity(order.len());
        for &i in &order {
            let (shard, n) = self.params.offsets(hashes[i], &mut self.offsets);
            counts.push(n);
            shard_of.push(shard);
        }
        let mut batch = self.conn.batch();
        let mut runs = Vec::new();
        let (mut at, mut bit) = (0, 0);
        while at < order.len() {
            let shard = shard_of[at];
            let mut end = at;
            while end < order.len() && shard_of[end] == shard && end - at < KEYS_PER_COMMAND {
                end += 1;
            }
            let bits: usize = counts[at..end].iter().sum();
            let per_field = if write { 4 } else { 3 };
            batch.command(command, &self.shard_keys[shard], bits * per_field);
            for &offset in &self.offsets[bit..bit + bits] {
                if write {
                    batch.arg(b"SET");
                    batch.arg(b"u1");
                    batch.arg_u64(offset);
                    batch.arg(b"1");
                } else {
                    batch.arg(b"GET");
                    batch.arg(b"u1");
                    batch.arg_u64(offset);
                }
            }
            runs.push(end);
            (at, bit) = (end, bit + bits);
        }
        let order = order.into_iter().map(|i| base + i).collect();
        (
            batch,
            Plan {
                order,
                counts,
                runs,
            },
        )
    }

    /// Lookups by reading each key's line (`GETRANGE`, 64 bytes) and testing it here, one
    /// round trip per [`KEYS_PER_ROUND_TRIP`] keys, overlapped as in `bit_commands`.
    fn read_lines(&mut self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        let mut pending: Option<(conn::Sent, usize)> = None;
        let mut finish = |conn: &mut Conn, sent, start: usize| -> Result<()> {
            let replies = conn.receive(sent)?;
            let end = start + replies.len();
            for ((reply, &hash), found) in replies
                .iter()
                .zip(&hashes[start..end])
                .zip(&mut found[start..end])
            {
                let bytes: &[u8] = match reply {
                    Value::BulkString(b) => b,
                    Value::Nil => &[],
                    other => return Err(unexpected("GETRANGE", other)),
                };
                *found = line_from(bytes).test(lookup_mask_for(hash, self.params.hashes));
            }
            Ok(())
        };
        for (c, chunk) in hashes.chunks(KEYS_PER_ROUND_TRIP).enumerate() {
            let mut batch = self.conn.batch();
            for &hash in chunk {
                let (shard, line) = self.params.locate(hash);
                let start = line * LINE_BYTES;
                batch.command("GETRANGE", &self.shard_keys[shard], 2);
                batch.arg_u64(start);
                batch.arg_u64(start + LINE_BYTES - 1);
            }
            let sent = self.conn.send(batch)?;
            if let Some((sent, start)) = pending.replace((sent, c * KEYS_PER_ROUND_TRIP)) {
                finish(&mut self.conn, sent, start)?;
            }
        }
        if let Some((sent, start)) = pending {
            finish(&mut self.conn, sent, start)?;
        }
        Ok(())
    }

    /// Set bits and fill estimates, from one `BITCOUNT` per shard.
    pub fn stats(&mut self) -> Result<RedisStats> {
        let mut batch = self.conn.batch();
        for key in &self.shard_keys {
            batch.command("BITCOUNT", key, 0);
        }
        let mut ones = 0u64;
        for reply in self.conn.run(batch)? {
            ones += int_of(&reply)?;
        }
        let p = &self.params;
        let items_estimate = estimated_items_from(ones, p.total_lines(), p.hashes).max(0.0) + 0.0;
        let fpr_estimate = if items_estimate == 0.0 {
            0.0
        } else if items_estimate.is_finite() {
            model::blocked_fpr(self.num_bits() as f64 / items_estimate, p.hashes)
        } else {
            1.0
        };
        Ok(RedisStats {
            shards: p.shards,
            lines: p.total_lines(),
            bits: self.num_bits(),
            bytes: self.size_bytes(),
            hashes: p.hashes,
            seed: p.seed,
            ones,
            items_estimate,
            fpr_estimate,
            created_items: p.items,
            sizing: p.sizing,
            cluster: self.is_cluster(),
        })
    }

    /// The whole filter as a local [`BlockedBloom`] (one `GET` per shard): it answers every
    /// key as this filter does, and [`BlockedBloom::to_bytes`] writes it as a filter file.
    pub fn export(&mut self) -> Result<BlockedBloom> {
        let mut batch = self.conn.batch();
        for key in &self.shard_keys {
            batch.command("GET", key, 0);
        }
        let shard_bytes = self.shard_bytes() as usize;
        let mut all = Vec::new();
        all.try_reserve_exact(self.size_bytes() as usize)
            .map_err(|_| Error::TooLarge {
                items: self.params.items,
                bits_per_key: self.num_bits() as f64 / self.params.items as f64,
            })?;
        for (key, reply) in self.shard_keys.iter().zip(self.conn.run(batch)?) {
            let bytes: &[u8] = match &reply {
                Value::BulkString(b) => b,
                Value::Nil => &[],
                other => return Err(unexpected("GET", other)),
            };
            if bytes.len() > shard_bytes {
                return Err(Error::Foreign(format!(
                    "shard key {key:?} holds {} bytes, more than the filter's {shard_bytes}",
                    bytes.len()
                )));
            }
            all.extend_from_slice(bytes);
            all.resize(all.len() + shard_bytes - bytes.len(), 0);
        }
        let lines = crate::format::lines_from(&all)?;
        BlockedBloom::from_parts(lines, self.params.hashes, self.params.seed)
    }
}

/// What [`RedisBlockedBloom::stats`] reports.
#[derive(Clone, Debug, PartialEq)]
pub struct RedisStats {
    /// Shards (Redis keys holding lines).
    pub shards: u32,
    /// Lines in all shards.
    pub lines: u64,
    /// Bits in all shards.
    pub bits: u64,
    /// Bytes of filter data in all shards.
    pub bytes: u64,
    /// Probes per key.
    pub hashes: u32,
    /// The hash seed.
    pub seed: u64,
    /// Set bits (`BITCOUNT` over the shards).
    pub ones: u64,
    /// Distinct keys inserted, estimated from the set bits (as
    /// [`BlockedBloom::estimated_items`]).
    pub items_estimate: f64,
    /// The FPR the model gives at the estimated count.
    pub fpr_estimate: f64,
    /// The item count the filter was created for.
    pub created_items: u64,
    /// The size the filter was created with.
    pub sizing: Sizing,
    /// Whether the servers form a cluster.
    pub cluster: bool,
}

/// How to read one round trip's `BITFIELD` replies: the keys in command order (their indices
/// in the whole batch), each key's number of fields, and where each command's keys end.
struct Plan {
    order: Vec<usize>,
    counts: Vec<usize>,
    runs: Vec<usize>,
}

impl Plan {
    fn answer(
        &self,
        command: &str,
        replies: &[Value],
        answer: &mut impl FnMut(bool, usize),
    ) -> Result<()> {
        if replies.len() != self.runs.len() {
            return Err(Error::Server(format!(
                "{} replies to {} {command} commands",
                replies.len(),
                self.runs.len()
            )));
        }
        let mut at = 0;
        for (reply, &end) in replies.iter().zip(&self.runs) {
            let Value::Array(values) = reply else {
                return Err(unexpected(command, reply));
            };
            let mut values = values.iter();
            for (&i, &n) in self.order[at..end].iter().zip(&self.counts[at..end]) {
                let mut all = true;
                for _ in 0..n {
                    match values.next() {
                        Some(Value::Int(0)) => all = false,
                        Some(Value::Int(1)) => {}
                        other => return Err(unexpected(command, other.unwrap_or(&Value::Nil))),
                    }
                }
                answer(all, i);
            }
            at = end;
        }
        Ok(())
    }
}

/// The indices of `hashes` ordered by shard (stable), so each shard's keys are one run.
fn by_shard(params: &Params, hashes: &[u64]) -> Vec<usize> {
    if params.shards == 1 {
        return (0..hashes.len()).collect();
    }
    let mut order: Vec<(usize, usize)> = hashes
        .iter()
        .enumerate()
        .map(|(i, &h)| (params.locate(h).0, i))
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, i)| i).collect()
}

/// A 64-byte line from a `GETRANGE` reply, zeros past its end (a shard not yet allocated).
fn line_from(bytes: &[u8]) -> Line {
    let mut line = Line::ZERO;
    let n = bytes.len().min(LINE_BYTES as usize);
    bytemuck::bytes_of_mut(&mut line)[..n].copy_from_slice(&bytes[..n]);
    if cfg!(target_endian = "big") {
        for w in &mut line.0 {
            *w = u32::from_le(*w);
        }
    }
    line
}

/// The config key's type: true when it is a hash, false when there is no such key, an
/// [`Error::Foreign`] for any other type.
fn check_config_type(conn: &mut Conn, name: &str) -> Result<bool> {
    let reply = conn.query(&cmd1("TYPE", name))?;
    match status_text(&reply) {
        "hash" => Ok(true),
        "none" => Ok(false),
        other => Err(Error::Foreign(format!(
            "key {name:?} holds a {other}, not a linebloom filter's config hash"
        ))),
    }
}

fn read_config(conn: &mut Conn, name: &str) -> Result<Params> {
    match conn.query(redis::cmd("HGET").arg(name).arg(CONFIG_FIELD))? {
        Value::BulkString(b) => {
            let text = String::from_utf8_lossy(&b);
            Params::decode(&text).map_err(|e| Error::Foreign(format!("{name:?}: {e}")))
        }
        Value::Nil => Err(Error::Foreign(format!(
            "key {name:?} is a hash without a {CONFIG_FIELD:?} field"
        ))),
        other => Err(unexpected("HGET", &other)),
    }
}

fn cmd1(name: &str, key: &str) -> Cmd {
    let mut c = redis::cmd(name);
    c.arg(key);
    c
}

fn status_text(reply: &Value) -> &str {
    match reply {
        Value::SimpleString(s) => s,
        Value::Okay => "OK",
        _ => "?",
    }
}

fn int_of(reply: &Value) -> Result<u64> {
    match reply {
        Value::Int(n) if *n >= 0 => Ok(*n as u64),
        other => Err(unexpected("an integer reply", other)),
    }
}

fn unexpected(what: &str, reply: &Value) -> Error {
    Error::Server(format!(
        "unexpected reply to {what}: {}",
        conn::reply_text(reply)
    ))
}

fn check_lengths(hashes: usize, answers: usize) -> Result<()> {
    if hashes != answers {
        return Err(Error::InvalidParameter {
            name: "answer slice length",
            value: format!("{answers} for {hashes} hashes"),
            allowed: "equal to the number of hashes",
        });
    }
    Ok(())
}
