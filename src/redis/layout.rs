//! Where a shared filter's bits live in Redis: its parameters as stored in the config hash, the
//! names of its shard keys, and the Redis bit offsets of a key's probes. No I/O here.

use std::fmt::Write as _;

use crate::blocked::simd::mask_for;
use crate::blocked::{LINE_BITS, MAX_HASHES};
use crate::error::{Error, Result};
use crate::filter::Sizing;
use crate::format::HASH_SCHEME;
use crate::hash::reduce;

/// The largest value a Redis string holds (`proto-max-bulk-len` and the string limit): 512 MiB,
/// so a shard holds at most 8 Mi lines of 64 bytes.
pub const MAX_SHARD_BYTES: u64 = 512 << 20;

/// The most shards a filter may have (each is one Redis key).
pub const MAX_SHARDS: u32 = 1 << 16;

/// The field of the config hash that marks a linebloom filter and holds its parameters.
pub(crate) const CONFIG_FIELD: &str = "linebloom";

/// The version of the stored layout; a filter of another version is refused, never guessed at.
const LAYOUT_VERSION: u32 = 1;

/// What a filter was created with: the layout every client must agree on, and the sizing the
/// creator asked for (kept so a second `create` can be compared with the first).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Params {
    pub shards: u32,
    pub lines_per_shard: u64,
    pub hashes: u32,
    pub seed: u64,
    pub items: u64,
    pub sizing: Sizing,
}

impl Params {
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
        let max_lines = MAX_SHARD_BYTES / (LINE_BITS as u64 / 8);
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
        })
    }

    /// The config hash's value: `key=value` pairs separated by spaces, in a fixed order, so two
    /// creates with the same parameters write the same text.
    pub fn encode(&self) -> String {
        let mut s = format!(
            "version={LAYOUT_VERSION} scheme={HASH_SCHEME} shards={} lines_per_shard={} \
             hashes={} seed={} items={}",
            self.shards, self.lines_per_shard, self.hashes, self.seed, self.items
        );
        // `{:?}` prints the shortest text that reads back to the same f64.
        match self.sizing {
            Sizing::Fpr(p) => write!(s, " fpr={p:?}"),
            Sizing::BitsPerKey(b) => write!(s, " bits_per_key={b:?}"),
        }
        .expect("writing to a String cannot fail");
        s
    }

    /// Reads [`Self::encode`]'s text back; anything else is an error naming what is wrong.
    pub fn decode(text: &str) -> Result<Self> {
        let bad = |why: String| Error::Corrupt(format!("filter config {text:?}: {why}"));
        let mut fields = std::collections::HashMap::new();
        for pair in text.split_ascii_whitespace() {
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
                "layout version {version}; this linebloom reads version {LAYOUT_VERSION}"
            )));
        }
        let scheme = int("scheme")?;
        if scheme != u64::from(HASH_SCHEME) {
            return Err(bad(format!(
                "hash scheme {scheme}; this linebloom uses {HASH_SCHEME}"
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
        let max_lines = MAX_SHARD_BYTES / 64;
        if !(1..=u64::from(MAX_SHARDS)).contains(&shards)
            || !(1..=max_lines).contains(&lines_per_shard)
            || !(1..=u64::from(MAX_HASHES)).contains(&hashes)
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
        })
    }
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
