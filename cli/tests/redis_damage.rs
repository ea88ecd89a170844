//! A shared filter whose server loses, evicts or changes its keys: every such damage is an
//! error, never a "no" for an inserted key; edited and re-created configs are refused; a create
//! the server cannot hold leaves nothing behind. Real `redis-server` processes (and a 3-node
//! cluster), started here on free loopback ports.

mod common;
#[path = "common/redis_server.rs"]
mod redis_server;

use common::{linebloom, run, scratch, stderr, stdout, write_keys};
use linebloom::Error;
use linebloom::hash::mix64;
use linebloom::redis::{RedisBlockedBloom, ShardState};
use redis_server::{RedisCluster, RedisServer};

fn keys(range: std::ops::Range<u64>) -> Vec<u64> {
    range.map(mix64).collect()
}

/// A connection for changing the server behind the filter's back.
fn admin(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

fn cmd(con: &mut redis::Connection, args: &[&str]) -> redis::Value {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(con).unwrap()
}

/// A 4-shard filter holding 50,000 keys.
fn filled(url: &str, name: &str) -> (RedisBlockedBloom, Vec<u64>) {
    let mut f = RedisBlockedBloom::builder(50_000)
        .fpr(0.01)
        .shards(4)
        .create(url, name)
        .unwrap();
    let inserted = keys(0..50_000);
    f.insert_hashes(&inserted).unwrap();
    (f, inserted)
}

/// Every lookup of `inserted` (batched, one at a time, by bits, and the export) is an
/// `Error::Damaged` naming `shard_key`.
fn assert_damaged(f: &mut RedisBlockedBloom, inserted: &[u64], shard_key: &str) {
    let mut found = vec![false; inserted.len()];
    for method in [
        linebloom::redis::LookupMethod::LineRead,
        linebloom::redis::LookupMethod::BitRead,
    ] {
        f.set_lookup_method(method);
        let e = f.contains_hashes(inserted, &mut found).unwrap_err();
        assert!(matches!(e, Error::Damaged(_)), "{method:?}: {e}");
        assert!(e.to_string().contains(shard_key), "{e}");
    }
    f.set_lookup_method(linebloom::redis::LookupMethod::LineRead);
    // One key at a time: the keys of the damaged shard fail, never answer "no".
    for &h in &inserted[..2_000] {
        match f.contains_hash(h) {
            Ok(found) => assert!(found, "a wrong no"),
            Err(e) => assert!(matches!(e, Error::Damaged(_)), "{e}"),
        }
    }
    assert!(matches!(f.export(), Err(Error::Damaged(_))));
    assert!(matches!(f.verify(), Err(Error::Damaged(_))));
    let stats = f.stats().unwrap();
    assert!(
        stats.problems.iter().any(|p| p.key == shard_key),
        "{:?}",
        stats.problems
    );
}

#[test]
fn lost_truncated_retyped_expired_renamed_and_swapped_shards_are_errors() {
    let server = RedisServer::start("damage");
    let url = server.url();
    let mut con = admin(&url);
    type Damage = fn(&mut redis::Connection, &str, &str);
    let cases: [(&str, Damage); 6] = [
        ("deleted", |c, key, _| {
            cmd(c, &["DEL", key]);
        }),
        ("truncated", |c, key, _| {
            cmd(c, &["SET", key, "short"]);
        }),
        ("retyped", |c, key, _| {
            cmd(c, &["DEL", key]);
            cmd(c, &["LPUSH", key, "x"]);
        }),
        ("expired", |c, key, _| {
            cmd(c, &["PEXPIRE", key, "1"]);
            std::thread::sleep(std::time::Duration::from_millis(50));
        }),
        ("renamed", |c, key, name| {
            cmd(c, &["RENAME", key, &format!("{name}-moved")]);
        }),
        ("swapped", |c, key, name| {
            let other = format!("{name}:{{{name}:3}}");
            cmd(c, &["RENAME", key, "tmp"]);
            cmd(c, &["RENAME", &other, key]);
            cmd(c, &["RENAME", "tmp", &other]);
        }),
    ];
    for (what, damage) in cases {
        let name = format!("f-{what}");
        let (mut f, inserted) = filled(&url, &name);
        let key = f.shard_key(1).unwrap().to_owned();
        damage(&mut con, &key, &name);
        assert_damaged(&mut f, &inserted, &key);
        // A fresh client fares the same.
        let mut g = RedisBlockedBloom::open(&url, &name).unwrap();
        assert_damaged(&mut g, &inserted, &key);
    }
    // A shard replaced by the same shard of another filter of the same shape.
    let (mut f, inserted) = filled(&url, "f-foreign");
    RedisBlockedBloom::builder(50_000)
        .fpr(0.01)
        .shards(4)
        .create(&url, "twin")
        .unwrap();
    let key = f.shard_key(2).unwrap().to_owned();
    cmd(&mut con, &["DEL", &key]);
    cmd(&mut con, &["COPY", "twin:{twin:2}", &key]);
    assert_damaged(&mut f, &inserted, &key);
    let p = &f.stats().unwrap().problems[0];
    assert!(matches!(&p.state, ShardState::Trailer(why) if why.contains("another filter")));
}

#[test]
fn an_insert_into_a_lost_shard_fails_and_the_damage_stays_visible() {
    let server = RedisServer::start("stub");
    let url = server.url();
    let (mut f, inserted) = filled(&url, "f");
    let key = f.shard_key(0).unwrap().to_owned();
    cmd(&mut admin(&url), &["DEL", &key]);
    // The insert's BITFIELD makes a short string again; the same round trip sees it.
    let e = f.insert_hashes(&keys(100_000..101_000)).unwrap_err();
    assert!(matches!(e, Error::Damaged(_)), "{e}");
    let problems = f.stats().unwrap().problems;
    assert_eq!(problems.len(), 1);
    assert!(
        matches!(problems[0].state, ShardState::Length { .. }),
        "{problems:?}"
    );
    assert_damaged(&mut f, &inserted, &key);
    // A second create of the same shape refuses to adopt it.
    let e = RedisBlockedBloom::builder(50_000)
        .fpr(0.01)
        .shards(4)
        .create(&url, "f")
        .err()
        .unwrap();
    assert!(matches!(e, Error::Damaged(_)), "{e}");
    // Dropping it removes every key; a new create starts clean.
    assert_eq!(RedisBlockedBloom::delete(&url, "f").unwrap(), 5);
    let mut g = RedisBlockedBloom::builder(50_000)
        .fpr(0.01)
        .shards(4)
        .create(&url, "f")
        .unwrap();
    g.insert_hashes(&inserted).unwrap();
    g.verify().unwrap();
}

#[test]
fn edited_and_recreated_configs_are_refused() {
    let server = RedisServer::start("config");
    let url = server.url();
    let mut con = admin(&url);
    let (_, _) = filled(&url, "f");
    let config = match cmd(&mut con, &["HGET", "f", "linebloom"]) {
        redis::Value::BulkString(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    let fields = ["seed=", "shards=", "hashes=", "lines_per_shard="];
    for field in fields {
        let at = config.find(field).unwrap() + field.len();
        let edited = format!("{}9{}", &config[..at], &config[at..]);
        cmd(&mut con, &["HSET", "f", "linebloom", &edited]);
        let e = RedisBlockedBloom::open(&url, "f").err().unwrap();
        assert!(
            matches!(e, Error::Foreign(_)) && e.to_string().contains("edited"),
            "{field}: {e}"
        );
    }
    cmd(&mut con, &["HSET", "f", "linebloom", &config]);
    RedisBlockedBloom::open(&url, "f")
        .unwrap()
        .verify()
        .unwrap();
    // The config deleted (or evicted): open says so, and a create with other parameters
    // does not reinterpret the old shards; it leaves no config behind.
    cmd(&mut con, &["DEL", "f"]);
    let e = RedisBlockedBloom::open(&url, "f").err().unwrap();
    assert!(
        matches!(e, Error::NotFound(_)) && e.to_string().contains("evicted"),
        "{e}"
    );
    for shards in [4, 2] {
        let e = RedisBlockedBloom::builder(80_000)
            .fpr(0.01)
            .shards(shards)
            .create(&url, "f")
            .err()
            .unwrap();
        assert!(
            matches!(e, Error::Incompatible(_)) && e.to_string().contains("exists already"),
            "{e}"
        );
        assert_eq!(cmd(&mut con, &["EXISTS", "f"]), redis::Value::Int(0));
    }
    // Drop finds the shards through their trailers.
    assert_eq!(RedisBlockedBloom::delete(&url, "f").unwrap(), 4);
    assert_eq!(cmd(&mut con, &["DBSIZE"]), redis::Value::Int(0));
}

#[test]
fn evicted_shards_are_errors_and_the_policy_is_named() {
    let server = RedisServer::start_with(
        "evict",
        &[
            "--save",
            "",
            "--appendonly",
            "no",
            "--maxmemory-policy",
            "allkeys-lru",
        ],
    );
    let url = server.url();
    let mut con = admin(&url);
    let mut f = RedisBlockedBloom::builder(200_000)
        .fpr(0.01)
        .shards(8)
        .create(&url, "f")
        .unwrap();
    let warnings = f.warnings().unwrap();
    assert!(
        warnings.iter().any(|w| w.contains("allkeys-lru")),
        "{warnings:?}"
    );
    let inserted = keys(0..200_000);
    f.insert_hashes(&inserted).unwrap();
    // Other traffic under a small maxmemory: LRU evicts the filter's shards, the keys least
    // recently used (its clock ticks once a second; the config is read after the shards were
    // written, as clients opening the filter do), until the first shard is gone.
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let config = match cmd(&mut con, &["HGET", "f", "linebloom"]) {
        redis::Value::BulkString(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    cmd(&mut con, &["CONFIG", "SET", "maxmemory", "2mb"]);
    let value = "x".repeat(4_096);
    let shard_keys: Vec<String> = (0..8).map(|i| f.shard_key(i).unwrap().to_owned()).collect();
    for i in 0..5_000 {
        let _: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("other:{i}"))
            .arg(&value)
            .query(&mut con);
        let exists: i64 = redis::cmd("EXISTS")
            .arg(&shard_keys)
            .query(&mut con)
            .unwrap();
        if exists < 8 {
            break;
        }
    }
    // The pressure ends: nothing more is evicted. LRU is approximate and may have taken the
    // config too; it is put back, as this test is about the shards.
    cmd(&mut con, &["CONFIG", "SET", "maxmemory", "0"]);
    cmd(&mut con, &["HSET", "f", "linebloom", &config]);
    let lost = f.stats().unwrap().problems;
    assert!(!lost.is_empty(), "nothing was evicted");
    let mut found = vec![false; inserted.len()];
    let e = f.contains_hashes(&inserted, &mut found).unwrap_err();
    assert!(matches!(e, Error::Damaged(_)), "{e}");
    // The CLI: query and stats fail with one line naming the policy, never "no".
    let dir = scratch("redis-evict");
    let input = write_keys(&dir, 1_000);
    let o = run(linebloom()
        .args(["redis", "query", "f", "--url", &url, "--input"])
        .arg(&input));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).contains("\tno"), "a wrong no");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("damaged") && err.contains("allkeys-lru"),
        "{err}"
    );
    let o = run(linebloom().args(["redis", "stats", "f", "--url", &url]));
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("missing"), "{}", stdout(&o));
    assert!(stderr(&o).contains("warning") && stderr(&o).contains("damaged"));
}

#[test]
fn a_create_the_server_cannot_hold_is_refused_or_undone() {
    let server = RedisServer::start_with(
        "oom",
        &["--save", "", "--appendonly", "no", "--maxmemory", "10mb"],
    );
    let url = server.url();
    let mut con = admin(&url);
    // Refused before anything is written, with the figures.
    let e = RedisBlockedBloom::builder(20_000_000)
        .fpr(0.01)
        .shards(4)
        .create(&url, "big")
        .err()
        .unwrap();
    let text = e.to_string();
    assert!(text.contains("MiB free under maxmemory 10.0 MiB"), "{text}");
    assert_eq!(cmd(&mut con, &["DBSIZE"]), redis::Value::Int(0));
    // A user who may not run INFO skips the check: the server's OOM refusal part way through
    // is undone, and the next create succeeds.
    cmd(
        &mut con,
        &[
            "ACL", "SETUSER", "app", "on", ">apppw", "~*", "+@all", "-info",
        ],
    );
    let app = format!("redis://app:apppw@127.0.0.1:{}", server.port);
    let e = RedisBlockedBloom::builder(20_000_000)
        .fpr(0.01)
        .shards(4)
        .create(&app, "big")
        .err()
        .unwrap();
    assert!(e.to_string().contains("undone"), "{e}");
    assert!(!e.to_string().contains("apppw"), "{e}");
    assert_eq!(cmd(&mut con, &["DBSIZE"]), redis::Value::Int(0));
    let mut f = RedisBlockedBloom::builder(100_000)
        .fpr(0.01)
        .shards(2)
        .create(&app, "big")
        .unwrap();
    f.insert_hash(7).unwrap();
    f.verify().unwrap();
}

#[test]
fn a_cluster_node_that_lost_its_data_is_an_error() {
    let cluster = RedisCluster::start("damage-cluster");
    let urls = cluster.urls();
    let mut f = RedisBlockedBloom::builder(100_000)
        .fpr(0.01)
        .shards(6)
        .create(&urls, "f")
        .unwrap();
    let inserted = keys(0..100_000);
    f.insert_hashes(&inserted).unwrap();
    // Empty the node holding shard 0 (its config may be there too: the filter stays open).
    let shard0 = f.shard_key(0).unwrap().to_owned();
    let node = cluster
        .nodes
        .iter()
        .find(|n| n.command(&["EXISTS", &shard0]).contains(":1"))
        .expect("a node holds shard 0");
    node.command(&["FLUSHALL"]);
    let mut found = vec![false; inserted.len()];
    let e = f.contains_hashes(&inserted, &mut found).unwrap_err();
    assert!(matches!(e, Error::Damaged(_)), "{e}");
    assert!(e.to_string().contains(&shard0), "{e}");
    let stats = f.stats().unwrap();
    assert!(
        stats
            .problems
            .iter()
            .all(|p| p.state == ShardState::Missing)
    );
}

#[test]
fn a_refused_pipelined_request_leaves_no_stale_reply_for_the_next() {
    let server = RedisServer::start_with(
        "stale",
        &[
            "--save",
            "",
            "--appendonly",
            "no",
            "--maxmemory-policy",
            "noeviction",
        ],
    );
    let url = server.url();
    let mut con = admin(&url);
    let (mut f, inserted) = filled(&url, "f");
    // Out of memory: every write is refused, while reads go on.
    cmd(&mut con, &["CONFIG", "SET", "maxmemory", "1"]);
    let more = keys(1_000_000..1_060_000); // four round trips, pipelined two at a time
    let e = f.insert_hashes(&more).unwrap_err();
    assert!(matches!(e, Error::Server(_)), "{e}");
    assert!(e.to_string().contains("OOM"), "{e}");
    cmd(&mut con, &["CONFIG", "SET", "maxmemory", "0"]);
    // The next requests read their own replies: every inserted key is there.
    let mut found = vec![false; inserted.len()];
    f.contains_hashes(&inserted, &mut found).unwrap();
    assert!(found.iter().all(|&y| y));
    let mut found = vec![false; more.len()];
    f.contains_hashes(&more, &mut found).unwrap();
    let local = f.export().unwrap();
    for (&h, &y) in more.iter().zip(&found) {
        assert_eq!(y, local.contains_hash(h));
    }
}
