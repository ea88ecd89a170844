//! What can go wrong with a shared filter's keys on the server, and what the server's memory
//! settings mean for it: the problems a shard can have, the servers' memory as `INFO memory`
//! reports it, the check a `create` makes before allocating, and the warnings about settings
//! that can evict a filter.

use std::fmt;

use redis::Value;

use crate::error::{Error, Result};

/// What is wrong with one shard of a shared filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardState {
    /// The key does not exist: deleted, expired, evicted, renamed, or on a node that lost its
    /// data.
    Missing,
    /// The key holds another type (the type's name).
    WrongType(String),
    /// The string has another length than the shard's lines and trailer: truncated, or made
    /// again by a write after the shard was lost.
    Length {
        /// Bytes the key holds.
        bytes: u64,
        /// Bytes a shard of this filter holds.
        expected: u64,
    },
    /// The length is right but the trailer is not this shard's: why.
    Trailer(String),
}

/// One damaged shard, as [`super::RedisBlockedBloom::stats`] and the errors report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardProblem {
    /// The shard's index.
    pub shard: u32,
    /// Its Redis key.
    pub key: String,
    /// What is wrong with it.
    pub state: ShardState,
}

impl fmt::Display for ShardProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shard key {:?} ", self.key)?;
        match &self.state {
            ShardState::Missing => write!(f, "is missing (deleted, expired or evicted)"),
            ShardState::WrongType(kind) => write!(f, "holds a {kind}, not the filter's lines"),
            ShardState::Length { bytes, expected } => write!(
                f,
                "holds {bytes} bytes, not {expected} (truncated, or written again after it was lost)"
            ),
            ShardState::Trailer(why) => write!(f, "is not this filter's shard: {why}"),
        }
    }
}

/// The error for a filter with damaged shards: the first problem, how many there are, what the
/// server's settings suggest, and what to do.
pub(crate) fn damaged(name: &str, problems: &[ShardProblem], hint: Option<String>) -> Error {
    let mut text = format!("{name:?}: {}", problems[0]);
    if problems.len() > 1 {
        text.push_str(&format!(" (and {} more shards)", problems.len() - 1));
    }
    if let Some(hint) = hint {
        text.push_str(&format!(" ({hint})"));
    }
    text.push_str(
        "; its keys are lost: drop the filter (`linebloom redis drop`) and add them again",
    );
    Error::Damaged(text)
}

/// One server's memory figures and eviction policy, from `INFO memory`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMemory {
    /// The node (its address for a cluster, empty for a single server).
    pub node: String,
    /// `used_memory`, bytes.
    pub used: u64,
    /// `maxmemory`, bytes (0: no limit).
    pub maxmemory: u64,
    /// `maxmemory_policy`.
    pub policy: String,
}

impl NodeMemory {
    /// Bytes that may still be allocated under `maxmemory` (`None`: no limit).
    pub fn free(&self) -> Option<u64> {
        (self.maxmemory > 0).then(|| self.maxmemory.saturating_sub(self.used))
    }

    /// Whether the policy evicts keys without a TTL, which a filter's keys are.
    pub fn evicts_any_key(&self) -> bool {
        self.policy.starts_with("allkeys-")
    }
}

/// The servers' memory from an `INFO memory` reply: one text for a single server, a map of
/// node address to text for a cluster. `None` when the reply has no memory section.
pub(crate) fn parse_info(reply: &Value) -> Option<Vec<NodeMemory>> {
    fn text(v: &Value) -> Option<String> {
        match v {
            Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::VerbatimString { text, .. } => Some(text.clone()),
            Value::SimpleString(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn node(name: String, info: &str) -> Option<NodeMemory> {
        let field = |k: &str| {
            info.lines()
                .find_map(|l| l.trim().strip_prefix(k)?.strip_prefix(':'))
                .map(str::to_owned)
        };
        Some(NodeMemory {
            node: name,
            used: field("used_memory")?.parse().ok()?,
            maxmemory: field("maxmemory")?.parse().ok()?,
            policy: field("maxmemory_policy")?,
        })
    }
    match reply {
        Value::Map(nodes) => nodes
            .iter()
            .map(|(addr, info)| node(text(addr)?, &text(info)?))
            .collect(),
        other => Some(vec![node(String::new(), &text(other)?)?]),
    }
}

/// Refuses a create of `shard_bytes` per shard, `shards` shards, when the servers' `maxmemory`
/// cannot hold it: on a single server its free memory must hold every shard; on a cluster (where
/// the shards spread over the primaries by hash slot) the primaries' free memory together must
/// hold them all and the freest primary one shard.
pub(crate) fn check_room(
    nodes: &[NodeMemory],
    shards: u32,
    shard_bytes: u64,
    where_: &str,
) -> Result<()> {
    let needed = shard_bytes.saturating_mul(u64::from(shards));
    let frees: Option<Vec<u64>> = nodes.iter().map(NodeMemory::free).collect();
    let Some(frees) = frees else {
        return Ok(()); // some node has no limit
    };
    let total_free: u64 = frees.iter().sum();
    let most_free = frees.iter().copied().max().unwrap_or(0);
    let used: u64 = nodes.iter().map(|n| n.used).sum();
    let max: u64 = nodes.iter().map(|n| n.maxmemory).sum();
    if needed > total_free || shard_bytes > most_free {
        return Err(Error::Server(format!(
            "the filter needs {} in {shards} shard(s) of {}, but {where_} has {} free under \
             maxmemory {} ({} used); nothing was created: raise maxmemory, free memory, or \
             create a smaller filter",
            mib(needed),
            mib(shard_bytes),
            mib(total_free),
            mib(max),
            mib(used),
        )));
    }
    Ok(())
}

/// The warnings a filter's operator should see about the servers' settings.
pub(crate) fn eviction_warnings(nodes: &[NodeMemory]) -> Vec<String> {
    nodes
        .iter()
        .filter(|n| n.evicts_any_key())
        .map(|n| {
            let at = if n.node.is_empty() {
                "the server".to_owned()
            } else {
                format!("node {}", n.node)
            };
            format!(
                "{at} uses maxmemory-policy {}, which can evict the filter's keys under memory \
                 pressure (every lookup would then fail): use noeviction, or a volatile-* policy \
                 (linebloom sets no TTL on its keys)",
                n.policy
            )
        })
        .collect()
}

/// A byte count in MiB with one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(used: u64, maxmemory: u64, policy: &str) -> NodeMemory {
        NodeMemory {
            node: String::new(),
            used,
            maxmemory,
            policy: policy.into(),
        }
    }

    #[test]
    fn info_memory_parses_for_a_server_and_a_cluster() {
        let info = "# Memory\r\nused_memory:1000\r\nused_memory_human:1K\r\nmaxmemory:5000\r\n\
                    maxmemory_human:5K\r\nmaxmemory_policy:allkeys-lru\r\n";
        let one = parse_info(&Value::BulkString(info.as_bytes().to_vec())).unwrap();
        assert_eq!(one, vec![node(1000, 5000, "allkeys-lru")]);
        let map = Value::Map(vec![(
            Value::BulkString(b"127.0.0.1:7000".to_vec()),
            Value::BulkString(info.as_bytes().to_vec()),
        )]);
        let nodes = parse_info(&map).unwrap();
        assert_eq!(nodes[0].node, "127.0.0.1:7000");
        assert!(parse_info(&Value::BulkString(b"# Server\r\n".to_vec())).is_none());
    }

    #[test]
    fn room_is_checked_against_maxmemory() {
        assert!(check_room(&[node(10, 0, "noeviction")], 4, 1 << 30, "s").is_ok());
        assert!(check_room(&[node(1 << 20, 10 << 20, "noeviction")], 1, 8 << 20, "s").is_ok());
        let err = check_room(&[node(1 << 20, 10 << 20, "noeviction")], 2, 8 << 20, "s")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("needs 16.0 MiB") && err.contains("9.0 MiB free"),
            "{err}"
        );
        // A cluster: together enough, but no node holds a whole shard.
        let two = [
            node(0, 4 << 20, "noeviction"),
            node(0, 4 << 20, "noeviction"),
        ];
        assert!(check_room(&two, 2, 4 << 20, "c").is_ok());
        assert!(check_room(&two, 1, 6 << 20, "c").is_err());
    }

    #[test]
    fn only_policies_that_evict_any_key_warn() {
        assert!(eviction_warnings(&[node(0, 0, "noeviction")]).is_empty());
        assert!(eviction_warnings(&[node(0, 0, "volatile-lru")]).is_empty());
        let w = eviction_warnings(&[node(0, 1, "allkeys-lru")]);
        assert!(w[0].contains("allkeys-lru"), "{w:?}");
    }
}
