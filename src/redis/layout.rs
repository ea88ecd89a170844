//! Where a shared filter's bits live in Redis: its parameters as stored in the config hash, the
//! names of its shard keys, each shard's trailer, and the Redis bit offsets of a key's probes.
//! No I/O here.
//!
//! Every shard is `lines_per_shard * 64` bytes of lines followed by a 64-byte trailer that
//! names the filter (its random id, the config's checksum) and the shard's place in it. A shard
//! that was deleted, evicted, truncated, re-created by a write, or copied from another filter
//! lacks the exact trailer, so every request reads the trailers of the shards it touches in the
//! same round trip and fails instead of reading zeros as "no".

use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};

use crate::blocked::Placement;
use crate::blocked::{LINE_BITS, MAX_K};
use crate::engine::mask::mask_for;
use crate::error::{Error, Result};
use crate::filter::Sizing;
use crate::hash::reduce;

/// The largest value a Redis string holds (`proto-max-bulk-len` and the string limit): 512 MiB,
/// so a shard holds at most 8 Mi − 1 lines of 64 bytes and its trailer.
pub const MAX_SHARD_BYTES: u64 = 512 << 20;

/// Bytes of a shard's trailer, after its lines.
pub(crate) const TRAILER_BYTES: u64 = 64;

/// The most lines one shard holds.
pub(crate) const MAX_LINES_PER_SHARD: u64 = (MAX_SHARD_BYTES - TRAILER_BYTES) / 64;

/// The first bytes of every shard's trailer.
const TRAILER_MAGIC: &[u8; 8] = b"LBSHARD\0";

/// The most shards a filter may have (each is one Redis key).
pub const MAX_SHARDS: u32 = 1 << 16;

/// The field of the config hash that marks a linebloom filter and holds its parameters.
pub(crate) const CONFIG_FIELD: &str = "linebloom";

/// The version of the stored layout; a filter of another version is refused, never guessed at.
/// Version 1 had no shard trailers and no config checksum.
const LAYOUT_VERSION: u32 = 2;

/// The hash scheme a shared filter's config records and requires: the salted placement's (2),
/// the one every client of every version places a shared filter's bits with (the config has no
/// other placement to name).
const SCHEME: u8 = Placement::Salted.hash_scheme();

/// What a filter was created with: the layout every client must agree on, the sizing the
/// creator asked for (kept so a second `create` can be compared with the first), and the
/// filter's random id, which its shards' trailers repeat.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Params {
    pub shards: u32,
    pub lines_per_shard: u64,
    pub hashes: u32,
    pub seed: u64,
    pub items: u64,
    pub sizing: Sizing,
    pub id: u64,
}

impl Params {
    /// Whether `other` describes the same filter shape (everything but the id): what a second
    /// `create` must match.
    pub fn same_shape(&self, other: &Self) -> bool {
        Self {
            id: 0,
            ..self.clone()
        } == Self {
            id: 0,
            ..other.clone()
        }
    }

    /// Bytes of one shard's lines; the trailer starts here.
    pub fn lines_bytes(&self) -> u64 {
        self.lines_per_shard * 64
    }

    /// Bytes of one whole shard: its lines and its trailer.
    pub fn shard_len(&self) -> u64 {
        self.lines_bytes() + TRAILER_BYTES
    }

    /// Shard `i`'s trailer: the magic, the layout version, the shard's index and the shard
    /// count, k, lines per shard, the seed, the filter id, the config's checksum, and a
    /// checksum of those 56 bytes (all little-endian).
    pub fn trailer(&self, shard: u32) -> [u8; TRAILER_BYTES as usize] {
        let mut t = [0u8; TRAILER_BYTES as usize];
        t[..8].copy_from_slice(TRAILER_MAGIC);
        t[8..12].copy_from_slice(&LAYOUT_VERSION.to_le_bytes());
        t[12..16].copy_from_slice(&shard.to_le_bytes());
        t[16..20].copy_from_slice(&self.shards.to_le_bytes());
        t[20..24].copy_from_slice(&self.hashes.to_le_bytes());
        t[24..32].copy_from_slice(&self.lines_per_shard.to_le_bytes());
        t[32..40].copy_from_slice(&self.seed.to_le_bytes());
        t[40..48].copy_from_slice(&self.id.to_le_bytes());
        t[48..56].copy_from_slice(&checksum(self.body().as_bytes()).to_le_bytes());
        let sum = checksum(&t[..56]);
        t[56..].copy_from_slice(&sum.to_le_bytes());
        t
    }

    /// Why `bytes` (a shard's trailer as read) is not shard `shard`'s trailer of this filter.
    pub fn trailer_mismatch(&self, shard: u32, bytes: &[u8]) -> Option<String> {
        if bytes == self.trailer(shard) {
            return None;
        }
        if bytes.len() != TRAILER_BYTES as usize || &bytes[..8] != TRAILER_MAGIC {
            return Some("its trailer is missing: the shard was truncated or re-created".into());
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        Some(if u64_at(40) != self.id {
            format!(
                "it belongs to another filter (id {:016x}, this one {:016x})",
                u64_at(40),
                self.id
            )
        } else if u32_at(12) != shard {
            format!("it holds shard {} of this filter", u32_at(12))
        } else {
            "its trailer does not match the filter's config (edited?)".into()
        })
    }

    /// All the filter's lines: the shards' lines one after another.
    pub fn total_lines(&self) -> u64 {
        u64::from(self.shards) * self.lines_per_shard
    }

    /// The shard and the line within it of a key's hash. The line is chosen over all lines at
    /// once (as in one [`crate::BlockedBloom`] of [`Self::total_lines`] lines), so the shards
    /// laid end to end are exactly that filter.
    #[inline]
    pub fn locate(&self, hash: u64) -> (usize, u64) {
        let line = reduce(hash, self.total_lines() as usize) as u64;
        (
            (line / self.lines_per_shard) as usize,
            line % self.lines_per_shard,
        )
    }

    /// Appends the Redis bit offsets (within the key's shard) of `hash`'s probes to `out`, and
    /// returns the shard and how many offsets were appended (k, or fewer where two probes of
    /// more than 8 share a bit).
    ///
    /// Redis numbers the bits of a string from the most significant bit of byte 0, the engine
    /// from the least significant: the engine's bit `p` of a line (byte `p / 8`, bit `p % 8`)
    /// is Redis's bit `8 * (p / 8) + 7 - p % 8`, that is `p ^ 7`. With that, the bytes a `GET`
    /// returns are exactly the engine's line bytes.
    #[inline]
    pub fn offsets(&self, hash: u64, out: &mut Vec<u64>) -> (usize, usize) {
        let (shard, line) = self.locate(hash);
        let base = line * LINE_BITS as u64;
        let start = out.len();
        // The salted placement: the configuration records none, so every client of every
        // version places a shared filter's bits alike (a network round trip per request dwarfs
        // the instructions the shifted placement saves).
        let mask = mask_for(hash, self.hashes).to_line();
        for (w, &word) in mask.0.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let p = w as u64 * 32 + u64::from(bits.trailing_zeros());
                out.push(base + (p ^ 7));
                bits &= bits - 1;
            }
        }
        (shard, out.len() - start)
    }

    /// The checked parameters of a new filter.
    pub fn new(
        items: u64,
        sizing: Sizing,
        hashes: Option<u32>,
        seed: u64,
        shards: u32,
    ) -> Result<Self> {
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(Error::InvalidParameter {
                name: "shards",
                value: shards.to_string(),
                allowed: "in [1, 65536]",
            });
        }
        let shape = crate::BlockedBloom::shape_for(items, sizing, hashes)?;
        let lines_per_shard = shape.lines.div_ceil(u64::from(shards));
        let max_lines = MAX_LINES_PER_SHARD;
        if lines_per_shard > max_lines {
            let needed = shape.lines.div_ceil(max_lines);
            return Err(Error::InvalidParameter {
                name: "shards",
                value: format!(
                    "{shards}, which puts {} MiB in each shard; this filter needs {needed} or more",
                    (lines_per_shard * 64) >> 20
                ),
                allowed: "enough that each shard holds at most 512 MiB (a Redis string's limit)",
            });
        }
        Ok(Self {
            shards,
            lines_per_shard,
            hashes: shape.hashes,
            seed,
            items,
            sizing,
            id: fresh_id(),
        })
    }

    /// The config hash's value: `key=value` pairs separated by spaces, in a fixed order, ending
    /// with `check=`, the checksum of the text before it, so an edited config is refused.
    pub fn encode(&self) -> String {
        let body = self.body();
        let check = checksum(body.as_bytes());
        format!("{body} check={check:016x}")
    }

    /// The config's text without its checksum.
    fn body(&self) -> String {
        let mut s = format!(
            "version={LAYOUT_VERSION} id={:016x} scheme={SCHEME} shards={} \
             lines_per_shard={} hashes={} seed={} items={}",
            self.id, self.shards, self.lines_per_shard, self.hashes, self.seed, self.items
        );
        // `{:?}` prints the shortest text that reads back to the same f64.
        match self.sizing {
            Sizing::Fpr(p) => write!(s, " fpr={p:?}"),
            Sizing::BitsPerKey(b) => write!(s, " bits_per_key={b:?}"),
        }
        .expect("writing to a String cannot fail");
        s
    }

    /// Reads [`Self::encode`]'s text back; anything else (an edit, a field out of range) is an
    /// error naming what is wrong.
    pub fn decode(text: &str) -> Result<Self> {
        let bad = |why: String| Error::Corrupt(format!("filter config {text:?}: {why}"));
        let (body, check) = text
            .rsplit_once(" check=")
            .ok_or_else(|| bad("no check= field".into()))?;
        let mut fields = std::collections::HashMap::new();
        for pair in body.split_ascii_whitespace() {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("{pair:?} is not key=value")))?;
            fields.insert(k, v);
        }
        let get = |k: &str| fields.get(k).copied().ok_or_else(|| bad(format!("no {k}")));
        let int = |k: &str| {
            get(k)?
                .parse::<u64>()
                .map_err(|_| bad(format!("{k} is not a number")))
        };
        let version = int("version")?;
        if version != u64::from(LAYOUT_VERSION) {
            return Err(bad(format!(
                "layout version {version}; this linebloom reads version {LAYOUT_VERSION} \
                 (export the filter with the linebloom that made it, then create it again)"
            )));
        }
        if u64::from_str_radix(check, 16).ok() != Some(checksum(body.as_bytes())) {
            return Err(bad(
                "its checksum does not match: the config was edited (refused, since the \
                 shards' bits mean something only under the parameters they were made with)"
                    .into(),
            ));
        }
        let scheme = int("scheme")?;
        if scheme != u64::from(SCHEME) {
            return Err(bad(format!(
                "hash scheme {scheme}; this linebloom uses {SCHEME}"
            )));
        }
        let sizing = match (fields.get("fpr"), fields.get("bits_per_key")) {
            (Some(p), None) => Sizing::Fpr(p.parse().map_err(|_| bad("bad fpr".into()))?),
            (None, Some(b)) => {
                Sizing::BitsPerKey(b.parse().map_err(|_| bad("bad bits_per_key".into()))?)
            }
            _ => return Err(bad("needs exactly one of fpr and bits_per_key".into())),
        };
        let shards = int("shards")?;
        let lines_per_shard = int("lines_per_shard")?;
        let hashes = int("hashes")?;
        if !(1..=u64::from(MAX_SHARDS)).contains(&shards)
            || !(1..=MAX_LINES_PER_SHARD).contains(&lines_per_shard)
            || !(1..=u64::from(MAX_K)).contains(&hashes)
        {
            return Err(bad("shards, lines_per_shard or hashes out of range".into()));
        }
        Ok(Self {
            shards: shards as u32,
            lines_per_shard,
            hashes: hashes as u32,
            seed: int("seed")?,
            items: int("items")?,
            sizing,
            id: u64::from_str_radix(get("id")?, 16).map_err(|_| bad("bad id".into()))?,
        })
    }
}

/// The shard count a config text names, read leniently (for deleting a filter whose config was
/// edited).
pub(crate) fn shard_count_of(text: &str) -> Option<u64> {
    text.split_ascii_whitespace()
        .find_map(|pair| pair.strip_prefix("shards="))?
        .parse()
        .ok()
        .filter(|&n| (1..=u64::from(MAX_SHARDS)).contains(&n))
}

/// The shard count a shard's trailer names, when `bytes` is a linebloom trailer.
pub(crate) fn trailer_shards(bytes: &[u8]) -> Option<u32> {
    if bytes.len() != TRAILER_BYTES as usize || &bytes[..8] != TRAILER_MAGIC {
        return None;
    }
    let n = u32::from_le_bytes(bytes[16..20].try_into().unwrap());
    (1..=MAX_SHARDS).contains(&n).then_some(n)
}

/// The checksum of the config text and of a trailer: XXH64 with seed 0.
fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(bytes, 0)
}

/// A random filter id: the standard library's randomly keyed hasher over the time and the
/// process id (no dependency on a random-number crate; the id only has to differ between
/// creates).
fn fresh_id() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish()
}

/// Checks a filter's name: not empty, and no `{` or `}`, so the hash tags of its shard keys
/// are the ones [`shard_key`] writes.
pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains(['{', '}']) {
        return Err(Error::InvalidParameter {
            name: "filter name",
            value: format!("{name:?}"),
            allowed: "non-empty, without '{' or '}' (they would change the shards' hash tags)",
        });
    }
    Ok(())
}

/// Shard `i`'s key: `NAME:{NAME:i}`. The hash tag `{NAME:i}` differs per shard, so Redis
/// Cluster spreads a filter's shards over its slots (and nodes), and names the filter, so two
/// filters' shards do not pile onto the same slots.
pub(crate) fn shard_key(name: &str, i: usize) -> String {
    format!("{name}:{{{name}:{i}}}")
}
