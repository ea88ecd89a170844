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
//!   The text ends with a checksum and holds the filter's random id: an edited config is
//!   refused.
//! - `NAME:{NAME:i}` for shard `i` in `0..shards`: a string of `lines_per_shard * 64` bytes of
//!   lines and a 64-byte trailer (the filter id, the config's checksum, the shard's index). The
//!   hash tags differ per shard, so Redis Cluster spreads the shards over its nodes; a string
//!   holds at most 512 MiB, so larger filters need more shards. A key's line is chosen over all
//!   the filter's lines; the shards' lines laid end to end are one blocked filter.
//!
//! # Failures
//! A server that cannot be reached, or goes away during a request, is an
//! [`Error::Unavailable`], never a "no". Nothing is then known about that request's keys: some
//! of a batch's inserts may have landed. Retrying is safe (setting a bit twice is setting it
//! once); only the "was it new" answers of a retried insert may say "not new" for a key the
//! failed attempt stored. The connection is made again on the next call, so a server that comes
//! back is used without reopening the filter.
//!
//! A server that keeps answering but lost the filter's data (a shard deleted, expired, evicted,
//! truncated, retyped, renamed, or a cluster node restarted empty) is an [`Error::Damaged`],
//! never a "no": every request reads, in the same round trip and after its data, the trailer of
//! each shard it touches, and any difference fails the request. A write into a lost shard makes
//! a short string without a trailer, so the damage stays visible to every later request until
//! the filter is dropped ([`RedisBlockedBloom::delete`]) and built again. Run the servers with
//! `maxmemory-policy noeviction` (or a `volatile-*` policy: linebloom sets no TTL);
//! [`RedisBlockedBloom::warnings`] names settings that can evict the filter, and a create that
//! the servers' `maxmemory` cannot hold is refused before anything is written.
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
mod health;
mod layout;
#[cfg(test)]
mod tests;
mod url;

use std::time::Duration;

use redis::{Cmd, Value};

use crate::blocked::setops::estimated_items_from;
use crate::blocked::{BlockedBloom, LINE_BITS, Line};
use crate::blocked::{Placement, Probes};
use crate::engine::mask::lookup_mask_for;
use crate::error::{Error, Result};
use crate::filter::Sizing;
use crate::hash::{DEFAULT_SEED, Key};
use crate::model;
use conn::Conn;
pub use conn::ConnectOptions;
pub use health::{NodeMemory, ShardProblem, ShardState};
use layout::{CONFIG_FIELD, Params, TRAILER_BYTES, check_name, shard_key};
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
    /// Each shard's trailer, as the server must hold it.
    trailers: Vec<[u8; TRAILER_BYTES as usize]>,
    lookup: LookupMethod,
    /// Scratch for bit offsets, kept between calls.
    offsets: Vec<u64>,
    /// Scratch: whether each shard is in `touched_list` (all false between round trips).
    touched: Vec<bool>,
    /// Scratch: the shards a round trip touches, in first-touch order, so a round trip reads
    /// their trailers without scanning every shard (a filter may have 65,536).
    touched_list: Vec<u32>,
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
    /// [`Error::Foreign`]; shard keys left by an earlier filter of that name (whose config is
    /// gone) an [`Error::Incompatible`], never reused.
    ///
    /// A new filter that the servers' `maxmemory` cannot hold is refused before anything is
    /// written ([`Error::Server`] with the figures); a create that fails part way (the server
    /// out of memory, a connection lost) removes what it wrote.
    pub fn create(self, urls: &str, name: &str) -> Result<RedisBlockedBloom> {
        check_name(name)?;
        let params = Params::new(self.items, self.sizing, self.hashes, self.seed, self.shards)?;
        let mut conn = Conn::open(urls, &self.connect)?;
        if !check_config_type(&mut conn, name)? {
            // A server that refuses `INFO` (an ACL without +info) skips this check; the undo
            // below still leaves nothing behind.
            if let Some(nodes) = server_memory(&mut conn) {
                let servers = if conn.is_cluster() {
                    "the cluster's primaries"
                } else {
                    "the server"
                };
                health::check_room(&nodes, params.shards, params.shard_len(), servers)?;
            }
        }
        let config = params.encode();
        let created = conn.query(
            redis::cmd("HSETNX")
                .arg(name)
                .arg(CONFIG_FIELD)
                .arg(&config),
        )?;
        if created == Value::Int(1) {
            let mut filter = RedisBlockedBloom::with_params(conn, name, params);
            filter.allocate(&config)?;
            return Ok(filter);
        }
        let existing = read_config(&mut conn, name)?;
        if !existing.same_shape(&params) {
            return Err(Error::Incompatible(format!(
                "{name:?} exists with {}; this create asks for {}",
                existing.encode(),
                params.encode()
            )));
        }
        let mut filter = RedisBlockedBloom::with_params(conn, name, existing);
        filter.await_shards()?;
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
    /// [`Error::Foreign`] when the key holds something else or its config was edited. The
    /// shards are checked by every request that touches them ([`Error::Damaged`]), and all at
    /// once by [`Self::verify`].
    pub fn open(urls: &str, name: &str) -> Result<Self> {
        Self::open_with(urls, name, &ConnectOptions::default())
    }

    /// [`open`](Self::open) with connection options (timeout, TLS trust).
    pub fn open_with(urls: &str, name: &str, options: &ConnectOptions) -> Result<Self> {
        check_name(name)?;
        let mut conn = Conn::open(urls, options)?;
        if !check_config_type(&mut conn, name)? {
            let shard0 = shard_key(name, 0);
            let left = conn.query(&cmd1("EXISTS", &shard0))? == Value::Int(1);
            let why = if left {
                format!(
                    "; its shard key {shard0:?} exists, so the config was deleted or evicted \
                     (drop the filter and insert its keys again)"
                )
            } else {
                " (create it first)".to_owned()
            };
            return Err(Error::NotFound(format!(
                "no linebloom filter named {name:?} at {}{why}",
                conn.urls()
            )));
        }
        let params = read_config(&mut conn, name)?;
        Ok(Self::with_params(conn, name, params))
    }

    /// Deletes the filter `name`: its shards and its config. A filter whose config is gone or
    /// edited is found through its first shard's trailer. Returns how many keys were deleted
    /// ([`Error::NotFound`] when there was nothing of that name; [`Error::Foreign`] when the
    /// key is not a linebloom filter's, which is left alone).
    pub fn delete(urls: &str, name: &str) -> Result<u64> {
        Self::delete_with(urls, name, &ConnectOptions::default())
    }

    /// [`delete`](Self::delete) with connection options (timeout, TLS trust).
    pub fn delete_with(urls: &str, name: &str, options: &ConnectOptions) -> Result<u64> {
        check_name(name)?;
        let mut conn = Conn::open(urls, options)?;
        let has_config = check_config_type(&mut conn, name)?;
        let mut shards = 0u64;
        if has_config {
            let text = match conn.query(redis::cmd("HGET").arg(name).arg(CONFIG_FIELD))? {
                Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
                _ => {
                    return Err(Error::Foreign(format!(
                        "key {name:?} is a hash without a {CONFIG_FIELD:?} field (left alone)"
                    )));
                }
            };
            shards = layout::shard_count_of(&text).unwrap_or(0);
        }
        let shard0 = shard_key(name, 0);
        let tail = conn.query(redis::cmd("GETRANGE").arg(&shard0).arg(-64).arg(-1));
        if let Ok(Value::BulkString(bytes)) = tail {
            shards = shards.max(u64::from(layout::trailer_shards(&bytes).unwrap_or(0)));
        }
        if !has_config && shards == 0 {
            return Err(Error::NotFound(format!(
                "no linebloom filter named {name:?} at {}",
                conn.urls()
            )));
        }
        let mut batch = conn.batch();
        for i in 0..shards.max(1) {
            batch.command("DEL", &shard_key(name, i as usize), 0);
        }
        batch.command("DEL", name, 0);
        let mut deleted = 0;
        for reply in conn.run(batch)? {
            deleted += int_of(&reply)?;
        }
        Ok(deleted)
    }

    fn with_params(conn: Conn, name: &str, params: Params) -> Self {
        let shard_keys = (0..params.shards as usize)
            .map(|i| shard_key(name, i))
            .collect();
        let trailers = (0..params.shards).map(|i| params.trailer(i)).collect();
        Self {
            conn,
            name: name.to_owned(),
            touched: vec![false; params.shards as usize],
            touched_list: Vec::new(),
            params,
            shard_keys,
            trailers,
            lookup: LookupMethod::LineRead,
            offsets: Vec::new(),
        }
    }

    /// Writes a new filter's shards (zeros and their trailers) after its config `config` was
    /// written. Shard keys that exist already belong to an earlier filter and are never
    /// reused. On any failure the config and the shards this create wrote are removed.
    fn allocate(&mut self, config: &str) -> Result<()> {
        let mut exists = self.conn.batch();
        for key in &self.shard_keys {
            exists.command("EXISTS", key, 0);
        }
        let left =
            self.conn.run(exists).and_then(|replies| {
                replies.iter().position(|r| *r != Value::Int(0)).map_or(Ok(()), |i| {
                Err(Error::Incompatible(format!(
                    "shard key {:?} exists already, left by an earlier filter named {:?} whose \
                     config is gone; drop it (`linebloom redis drop`) or choose another name",
                    self.shard_keys[i], self.name
                )))
            })
            });
        if let Err(e) = left {
            return Err(self.undo(e, config, false));
        }
        // `SETRANGE` past a string's end pads it with zeros: one command per shard makes the
        // whole string, lines zero and trailer in place.
        let at = self.params.lines_bytes();
        let mut batch = self.conn.batch();
        for (key, trailer) in self.shard_keys.iter().zip(&self.trailers) {
            batch.command("SETRANGE", key, 2);
            batch.arg_u64(at);
            batch.arg(trailer);
        }
        match self.conn.run(batch) {
            Ok(_) => Ok(()),
            Err(e) => Err(self.undo(e, config, true)),
        }
    }

    /// Removes what a failed create wrote: its shards when `shards` (they did not exist before
    /// it), and its config when the config still holds `config`. Returns `e` saying so.
    fn undo(&mut self, e: Error, config: &str, shards: bool) -> Error {
        self.conn.reset();
        let mut batch = self.conn.batch();
        if shards {
            for key in &self.shard_keys {
                batch.command("DEL", key, 0);
            }
        }
        let result = self.conn.run(batch).and_then(|_| {
            let held = self
                .conn
                .query(redis::cmd("HGET").arg(&self.name).arg(CONFIG_FIELD))?;
            if held == Value::BulkString(config.as_bytes().to_vec()) {
                self.conn.query(&cmd1("DEL", &self.name))?;
            }
            Ok(())
        });
        let note = match result {
            Ok(()) => "; the create was undone, nothing of it is left on the server".to_owned(),
            Err(undo) => format!(
                "; undoing the create failed too ({undo}): drop the filter \
                 (`linebloom redis drop`) before creating it again"
            ),
        };
        with_note(e, &note)
    }

    /// Waits (up to about 2 s) for the shards of a filter that another client is creating;
    /// any other problem, or shards still missing then, is [`Error::Damaged`].
    fn await_shards(&mut self) -> Result<()> {
        for attempt in 0..20 {
            let problems = self.shard_problems()?;
            let creating = problems.iter().all(|p| p.state == ShardState::Missing);
            if problems.is_empty() {
                return Ok(());
            }
            if !creating || attempt == 19 {
                return Err(self.damage(&problems));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        unreachable!("the last attempt returns")
    }

    /// Checks every shard (type, length, trailer): [`Error::Damaged`] naming the first
    /// problem and how many there are.
    pub fn verify(&mut self) -> Result<()> {
        let problems = self.shard_problems()?;
        if problems.is_empty() {
            Ok(())
        } else {
            Err(self.damage(&problems))
        }
    }

    /// Every shard that is missing, of another type or length, or has another trailer.
    pub fn shard_problems(&mut self) -> Result<Vec<ShardProblem>> {
        // STRLEN of a key of another type is a WRONGTYPE error that fails the batch: ask TYPE
        // first, then read only the strings.
        let mut types = self.conn.batch();
        for key in &self.shard_keys {
            types.command("TYPE", key, 0);
        }
        let replies = self.conn.run(types)?;
        let mut problems = Vec::new();
        let mut strings = Vec::new();
        for (i, reply) in replies.iter().enumerate() {
            let state = match status_text(reply) {
                "string" => {
                    strings.push(i);
                    continue;
                }
                "none" => ShardState::Missing,
                other => ShardState::WrongType(other.to_owned()),
            };
            problems.push(self.problem(i, state));
        }
        let (start, expected) = (self.params.lines_bytes(), self.params.shard_len());
        let mut reads = self.conn.batch();
        for &i in &strings {
            reads.command("STRLEN", &self.shard_keys[i], 0);
            reads.command("GETRANGE", &self.shard_keys[i], 2);
            reads.arg_u64(start);
            reads.arg_u64(expected - 1);
        }
        let replies = self.conn.run(reads)?;
        for (&i, pair) in strings.iter().zip(replies.chunks(2)) {
            let bytes = int_of(&pair[0])?;
            let state = if bytes != expected {
                ShardState::Length { bytes, expected }
            } else {
                match self.params.trailer_mismatch(i as u32, bulk_bytes(&pair[1])) {
                    None => continue,
                    Some(why) => ShardState::Trailer(why),
                }
            };
            problems.push(self.problem(i, state));
        }
        problems.sort_by_key(|p| p.shard);
        Ok(problems)
    }

    fn problem(&self, shard: usize, state: ShardState) -> ShardProblem {
        ShardProblem {
            shard: shard as u32,
            key: self.shard_keys[shard].clone(),
            state,
        }
    }

    /// The error for `problems`, with the servers' eviction policy when it explains them.
    fn damage(&mut self, problems: &[ShardProblem]) -> Error {
        let hint = server_memory(&mut self.conn)
            .and_then(|nodes| nodes.into_iter().find(NodeMemory::evicts_any_key))
            .map(|n| format!("maxmemory-policy {} evicts any key", n.policy));
        health::damaged(&self.name, problems, hint)
    }

    /// What a failed request becomes: the connection is made again (replies of a pipelined
    /// round trip may be unread), and a refused command (a shard of another type) or a
    /// trailer that differs is explained by checking every shard.
    fn failed(&mut self, e: Error) -> Error {
        self.conn.reset();
        if !matches!(e, Error::Server(_) | Error::Damaged(_)) {
            return e;
        }
        match self.shard_problems() {
            Ok(problems) if !problems.is_empty() => self.damage(&problems),
            _ => e,
        }
    }

    /// Settings of the servers that put the filter at risk: an eviction policy that can evict
    /// its keys, a TTL on one of them. Empty when none is found (a server that refuses `INFO`
    /// to this user is not checked for its policy).
    pub fn warnings(&mut self) -> Result<Vec<String>> {
        let mut warnings = server_memory(&mut self.conn)
            .map(|nodes| health::eviction_warnings(&nodes))
            .unwrap_or_default();
        let mut ttls = self.conn.batch();
        ttls.command("PTTL", &self.name, 0);
        for key in &self.shard_keys {
            ttls.command("PTTL", key, 0);
        }
        let keys = std::iter::once(&self.name).chain(&self.shard_keys);
        for (key, reply) in keys.zip(self.conn.run(ttls)?) {
            if let Value::Int(ms) = reply
                && ms >= 0
            {
                warnings.push(format!(
                    "key {key:?} expires in {} s (a TTL was set on it): run PERSIST on it, or \
                     the filter is lost when it expires",
                    (ms as u64).div_ceil(1000)
                ));
            }
        }
        Ok(warnings)
    }

    /// The filter's name on the server.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Probes per key.
    pub fn k(&self) -> u32 {
        self.params.hashes
    }

    /// Where each key's bits go in its line: [`Placement::Salted`] for every shared filter, so
    /// that clients of every version place them alike (its configuration records no
    /// placement); [`export`](Self::export) gives a local filter of the same placement.
    pub fn placement(&self) -> Placement {
        Placement::Salted
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
    /// one's replies are read, so the client encodes while the server works; each ends with
    /// the trailers of the shards it touched, checked before any answer is given.
    fn bit_commands(
        &mut self,
        command: &str,
        hashes: &[u64],
        answer: impl FnMut(bool, usize),
    ) -> Result<()> {
        let result = self.bit_round_trips(command, hashes, answer);
        result.map_err(|e| self.failed(e))
    }

    fn bit_round_trips(
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
                self.answer_bits(command, sent, plan, &mut answer)?;
            }
        }
        if let Some((sent, plan)) = pending {
            self.answer_bits(command, sent, plan, &mut answer)?;
        }
        Ok(())
    }

    /// Reads one round trip of [`Self::bit_round_trips`]: the trailers first, then the answers.
    fn answer_bits(
        &mut self,
        command: &str,
        sent: conn::Sent,
        plan: Plan,
        answer: &mut impl FnMut(bool, usize),
    ) -> Result<()> {
        let replies = self.conn.receive(sent)?;
        let data = self.check_trailers(command, &replies, plan.runs.len(), &plan.checked)?;
        plan.answer(command, data, answer)
    }

    /// Marks `shard` as touched by the round trip being encoded.
    #[inline]
    fn touch(&mut self, shard: usize) {
        if !std::mem::replace(&mut self.touched[shard], true) {
            self.touched_list.push(shard as u32);
        }
    }

    /// Adds a read of the trailer of every touched shard to `batch`, clearing the marks, and
    /// returns those shards in the order of their reads.
    fn add_trailer_reads(&mut self, batch: &mut conn::Batch) -> Vec<u32> {
        let start = self.params.lines_bytes();
        let checked = std::mem::take(&mut self.touched_list);
        for &shard in &checked {
            self.touched[shard as usize] = false;
            batch.command("GETRANGE", &self.shard_keys[shard as usize], 2);
            batch.arg_u64(start);
            batch.arg_u64(start + TRAILER_BYTES - 1);
        }
        checked
    }

    /// Checks a round trip's replies: `data` replies to its commands, then one trailer per
    /// shard in `checked`, each exactly that shard's. Returns the data replies.
    fn check_trailers<'r>(
        &self,
        command: &str,
        replies: &'r [Value],
        data: usize,
        checked: &[u32],
    ) -> Result<&'r [Value]> {
        if replies.len() != data + checked.len() {
            return Err(Error::Server(format!(
                "{} replies to {} {command} commands and {} trailer reads",
                replies.len(),
                data,
                checked.len()
            )));
        }
        for (&shard, reply) in checked.iter().zip(&replies[data..]) {
            if let Some(why) = self.params.trailer_mismatch(shard, bulk_bytes(reply)) {
                return Err(Error::Damaged(format!(
                    "{:?}: shard key {:?}: {why}",
                    self.name, self.shard_keys[shard as usize]
                )));
            }
        }
        Ok(&replies[..data])
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
            self.touch(shard);
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
        let checked = self.add_trailer_reads(&mut batch);
        let order = order.into_iter().map(|i| base + i).collect();
        (
            batch,
            Plan {
                order,
                counts,
                runs,
                checked,
            },
        )
    }

    /// Lookups by reading each key's line (`GETRANGE`, 64 bytes) and testing it here, one
    /// round trip per [`KEYS_PER_ROUND_TRIP`] keys, overlapped as in `bit_commands`, each
    /// checking the trailers of the shards it touched.
    fn read_lines(&mut self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        let result = self.line_round_trips(hashes, found);
        result.map_err(|e| self.failed(e))
    }

    fn line_round_trips(&mut self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        let mut pending: Option<(conn::Sent, usize, Vec<u32>)> = None;
        for (c, chunk) in hashes.chunks(KEYS_PER_ROUND_TRIP).enumerate() {
            let mut batch = self.conn.batch();
            for &hash in chunk {
                let (shard, line) = self.params.locate(hash);
                self.touch(shard);
                let start = line * LINE_BYTES;
                batch.command("GETRANGE", &self.shard_keys[shard], 2);
                batch.arg_u64(start);
                batch.arg_u64(start + LINE_BYTES - 1);
            }
            let checked = self.add_trailer_reads(&mut batch);
            let sent = self.conn.send(batch)?;
            let start = c * KEYS_PER_ROUND_TRIP;
            if let Some((sent, start, checked)) = pending.replace((sent, start, checked)) {
                self.answer_lines(sent, start, &checked, hashes, found)?;
            }
        }
        if let Some((sent, start, checked)) = pending {
            self.answer_lines(sent, start, &checked, hashes, found)?;
        }
        Ok(())
    }

    /// Reads one round trip of [`Self::line_round_trips`] whose first key is `start`.
    fn answer_lines(
        &mut self,
        sent: conn::Sent,
        start: usize,
        checked: &[u32],
        hashes: &[u64],
        found: &mut [bool],
    ) -> Result<()> {
        let replies = self.conn.receive(sent)?;
        let count = replies.len().saturating_sub(checked.len());
        let lines = self.check_trailers("GETRANGE", &replies, count, checked)?;
        let end = start + lines.len();
        if end > hashes.len() {
            return Err(Error::Server(format!(
                "{} replies to GETRANGE",
                lines.len()
            )));
        }
        for ((reply, &hash), found) in lines
            .iter()
            .zip(&hashes[start..end])
            .zip(&mut found[start..end])
        {
            // A shard whose trailer is in place holds every line whole.
            let Value::BulkString(bytes) = reply else {
                return Err(unexpected("GETRANGE", reply));
            };
            if bytes.len() != LINE_BYTES as usize {
                return Err(Error::Damaged(format!(
                    "{:?}: a line read {} bytes, not {LINE_BYTES}",
                    self.name,
                    bytes.len()
                )));
            }
            *found = line_from(bytes).test(lookup_mask_for(hash, self.params.hashes));
        }
        Ok(())
    }

    /// Set bits and fill estimates, from one `BITCOUNT` per sound shard, and every shard's
    /// problems ([`RedisStats::problems`]): a damaged filter is reported, not refused.
    pub fn stats(&mut self) -> Result<RedisStats> {
        let problems = self.shard_problems()?;
        let mut batch = self.conn.batch();
        let mut damaged = problems.iter().map(|p| p.shard as usize).peekable();
        for (i, key) in self.shard_keys.iter().enumerate() {
            if damaged.next_if_eq(&i).is_some() {
                continue;
            }
            batch.command("BITCOUNT", key, 2);
            batch.arg_u64(0);
            batch.arg_u64(self.params.lines_bytes() - 1);
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
            problems,
        })
    }

    /// The whole filter as a local [`BlockedBloom`] (one `GET` per shard): it answers every
    /// key as this filter does, and [`BlockedBloom::to_bytes`] writes it as a filter file. A
    /// damaged shard is an [`Error::Damaged`].
    pub fn export(&mut self) -> Result<BlockedBloom> {
        let result = self.export_lines();
        result.map_err(|e| self.failed(e))
    }

    fn export_lines(&mut self) -> Result<BlockedBloom> {
        let mut batch = self.conn.batch();
        for key in &self.shard_keys {
            batch.command("GET", key, 0);
        }
        let lines_bytes = self.params.lines_bytes() as usize;
        let mut all = Vec::new();
        all.try_reserve_exact(self.size_bytes() as usize)
            .map_err(|_| Error::TooLarge {
                items: self.params.items,
                bits_per_key: self.num_bits() as f64 / self.params.items as f64,
            })?;
        for (shard, reply) in self.conn.run(batch)?.iter().enumerate() {
            let bytes = bulk_bytes(reply);
            let trailer = bytes.get(lines_bytes..).unwrap_or_default();
            if let Some(why) = self.params.trailer_mismatch(shard as u32, trailer) {
                return Err(Error::Damaged(format!(
                    "{:?}: shard key {:?}: {why}",
                    self.name, self.shard_keys[shard]
                )));
            }
            all.extend_from_slice(&bytes[..lines_bytes]);
        }
        let lines = crate::format::lines_from(&all)?;
        let probes = Probes::new(self.params.hashes, self.placement());
        BlockedBloom::from_parts(lines, probes, self.params.seed)
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
    /// The damaged shards (empty for a sound filter); their bits are not counted in `ones`.
    pub problems: Vec<ShardProblem>,
}

/// How to read one round trip's `BITFIELD` replies: the keys in command order (their indices
/// in the whole batch), each key's number of fields, and where each command's keys end.
struct Plan {
    order: Vec<usize>,
    counts: Vec<usize>,
    runs: Vec<usize>,
    /// The shards whose trailers the round trip reads after its commands.
    checked: Vec<u32>,
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

/// A 64-byte line from a `GETRANGE` reply (zeros past the end of a shorter one).
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

/// The servers' memory from `INFO memory`, or `None` when it cannot be had (a user without
/// `+info`, a reply without the fields).
fn server_memory(conn: &mut Conn) -> Option<Vec<NodeMemory>> {
    let reply = conn.query(redis::cmd("INFO").arg("memory")).ok()?;
    health::parse_info(&reply)
}

/// The bytes of a string reply; none for a missing key (`Nil`) or any other reply.
fn bulk_bytes(reply: &Value) -> &[u8] {
    match reply {
        Value::BulkString(b) => b,
        _ => &[],
    }
}

/// `e` with `note` appended to its message (for the variants that carry one).
fn with_note(e: Error, note: &str) -> Error {
    match e {
        Error::Server(m) => Error::Server(m + note),
        Error::Unavailable(m) => Error::Unavailable(m + note),
        Error::Incompatible(m) => Error::Incompatible(m + note),
        Error::Foreign(m) => Error::Foreign(m + note),
        Error::Damaged(m) => Error::Damaged(m + note),
        other => other,
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
