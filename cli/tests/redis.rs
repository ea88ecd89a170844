//! The shared filter against real servers: a `redis-server` per test (and a 3-node cluster),
//! started here on free loopback ports and stopped when the test ends.

mod common;
#[path = "common/redis_server.rs"]
mod redis_server;

use std::sync::{Arc, Barrier};

use common::{assert_usage_failure, linebloom, run, scratch, stdout};
use linebloom::hash::{hash_bytes, mix64};
use linebloom::redis::{LookupMethod, RedisBlockedBloom};
use linebloom::{BlockedBloom, Error};
use redis_server::{RedisCluster, RedisServer};

fn keys(range: std::ops::Range<u64>) -> Vec<u64> {
    range.map(mix64).collect()
}

/// The local filter the shared one must equal bit for bit: same lines, probes and seed.
fn local_twin(filter: &RedisBlockedBloom, hashes: &[u64]) -> BlockedBloom {
    let (lines, k) = (filter.num_lines() as usize, filter.k());
    let mut local =
        BlockedBloom::with_lines_placed(lines, k, filter.placement(), filter.seed()).unwrap();
    for &h in hashes {
        local.insert_hash(h);
    }
    local
}

/// Inserts, looks up (both lookup methods), compares with the local twin, and checks the FPR.
fn exercise(urls: &str, name: &str, shards: u32) {
    let mut f = RedisBlockedBloom::builder(20_000)
        .fpr(0.01)
        .shards(shards)
        .create(urls, name)
        .unwrap();
    assert_eq!(f.shards(), shards);
    let inserted = keys(0..20_000);
    // One at a time: new, then not new.
    assert!(f.insert_hash(inserted[0]).unwrap());
    assert!(!f.insert_hash(inserted[0]).unwrap());
    let mut new = vec![false; inserted.len()];
    f.insert_hashes_reporting(&inserted, &mut new).unwrap();
    assert!(!new[0], "inserted before");
    let fresh = new.iter().filter(|&&n| n).count();
    assert!(fresh > 19_500 && fresh < 20_000, "{fresh} new");
    let absent = keys(1_000_000..1_020_000);
    for method in [LookupMethod::LineRead, LookupMethod::BitRead] {
        f.set_lookup_method(method);
        let mut found = vec![false; inserted.len()];
        f.contains_hashes(&inserted, &mut found).unwrap();
        assert!(found.iter().all(|&y| y), "{method:?}: a false negative");
        f.contains_hashes(&absent, &mut found).unwrap();
        let fp = found.iter().filter(|&&y| y).count();
        // About 1 % of 20,000 expected (200); 400 is a bound a correct filter never reaches.
        assert!(fp < 400, "{method:?}: {fp} false positives");
        let local = local_twin(&f, &inserted);
        for (i, &h) in absent.iter().enumerate().take(2_000) {
            assert_eq!(found[i], local.contains_hash(h), "{method:?}: key {i}");
            assert_eq!(f.contains_hash(h).unwrap(), found[i]);
        }
    }
    // The server's bytes are the engine's: the export equals the local twin.
    let exported = f.export().unwrap();
    assert_eq!(exported, local_twin(&f, &inserted));
    let stats = f.stats().unwrap();
    assert_eq!(stats.ones, exported.count_ones());
    assert!(
        (stats.items_estimate - 20_000.0).abs() < 1_000.0,
        "{stats:?}"
    );
    // A second create with the same parameters agrees and keeps the bits.
    let mut again = RedisBlockedBloom::builder(20_000)
        .fpr(0.01)
        .shards(shards)
        .create(urls, name)
        .unwrap();
    assert!(again.contains_hash(inserted[7]).unwrap());
    // Other parameters are refused.
    let other = RedisBlockedBloom::builder(30_000)
        .fpr(0.01)
        .shards(shards)
        .create(urls, name);
    assert!(
        matches!(other, Err(Error::Incompatible(_))),
        "{:?}",
        other.err()
    );
}

#[test]
fn a_single_server_holds_the_engines_bits() {
    let server = RedisServer::start("single");
    exercise(&server.url(), "seen", 1);
    exercise(&server.url(), "sharded", 5);
}

#[test]
fn a_cluster_spreads_the_shards_and_answers_alike() {
    let cluster = RedisCluster::start("cluster");
    exercise(&cluster.urls(), "seen", 6);
    // One seed node is enough to find the rest.
    let mut f = RedisBlockedBloom::open(&cluster.nodes[1].url(), "seen").unwrap();
    assert!(f.is_cluster());
    assert!(f.contains_hash(mix64(5)).unwrap());
    // The shards sit on more than one node.
    let holding = cluster
        .nodes
        .iter()
        .filter(|n| n.command(&["DBSIZE"]).trim() != ":0")
        .count();
    assert!(holding >= 2, "all shards on one node");
}

#[test]
fn wrong_keys_missing_filters_and_unreachable_servers_are_errors() {
    let server = RedisServer::start("errors");
    let url = server.url();
    assert!(matches!(
        RedisBlockedBloom::open(&url, "nothing"),
        Err(Error::NotFound(_))
    ));
    server.command(&["SET", "plain", "x"]);
    let e = RedisBlockedBloom::open(&url, "plain").err().unwrap();
    assert!(matches!(e, Error::Foreign(_)), "{e}");
    assert!(e.to_string().contains("string"), "{e}");
    let e = RedisBlockedBloom::builder(10)
        .create(&url, "plain")
        .err()
        .unwrap();
    assert!(matches!(e, Error::Foreign(_)), "{e}");
    server.command(&["HSET", "somehash", "a", "b"]);
    assert!(matches!(
        RedisBlockedBloom::open(&url, "somehash"),
        Err(Error::Foreign(_))
    ));
    server.command(&["HSET", "damaged", "linebloom", "version=1 nonsense"]);
    assert!(matches!(
        RedisBlockedBloom::open(&url, "damaged"),
        Err(Error::Foreign(_))
    ));
    // A shard key of another type.
    RedisBlockedBloom::builder(10).create(&url, "f").unwrap();
    server.command(&["DEL", "f:{f:0}"]);
    server.command(&["LPUSH", "f:{f:0}", "x"]);
    let mut f = RedisBlockedBloom::open(&url, "f").unwrap();
    let e = f.contains_hash(1).err().unwrap();
    assert!(
        matches!(e, Error::Damaged(_)) && e.to_string().contains("list"),
        "{e}"
    );
    // Bad names and URLs.
    assert!(RedisBlockedBloom::open(&url, "a{b}").is_err());
    assert!(RedisBlockedBloom::open("not a url", "f").is_err());
    // Nothing listening.
    let port = redis_server::free_port();
    let e = RedisBlockedBloom::open(&format!("redis://127.0.0.1:{port}"), "f")
        .err()
        .unwrap();
    assert!(matches!(e, Error::Unavailable(_)), "{e}");
}

#[test]
fn concurrent_clients_lose_no_insert_and_a_restart_keeps_every_key() {
    for persistence in [["--appendonly", "no"], ["--appendonly", "yes"]] {
        let mut server = RedisServer::start_with(
            &format!("persist-{}", persistence[1]),
            &["--save", "", persistence[0], persistence[1]],
        );
        let url = server.url();
        RedisBlockedBloom::builder(40_000)
            .fpr(0.01)
            .shards(3)
            .create(&url, "shared")
            .unwrap();
        let start = Arc::new(Barrier::new(4));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let (url, start) = (url.clone(), start.clone());
                std::thread::spawn(move || {
                    let mut f = RedisBlockedBloom::open(&url, "shared").unwrap();
                    start.wait();
                    // Disjoint keys, in small batches and one at a time, interleaved.
                    for chunk in keys(t * 10_000..(t + 1) * 10_000).chunks(500) {
                        f.insert_hashes(&chunk[..400]).unwrap();
                        for &h in &chunk[400..] {
                            f.insert_hash(h).unwrap();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let all = keys(0..40_000);
        let check = |url: &str| {
            let mut f = RedisBlockedBloom::open(url, "shared").unwrap();
            let mut found = vec![false; all.len()];
            f.contains_hashes(&all, &mut found).unwrap();
            assert!(found.iter().all(|&y| y), "a key was lost");
        };
        check(&url);
        // With AOF, a plain SHUTDOWN flushes the log; without, SAVE writes the RDB file.
        server.shutdown(if persistence[1] == "yes" {
            "NOSAVE"
        } else {
            "SAVE"
        });
        if persistence[1] == "no" {
            assert!(server.dir().join("dump.rdb").exists());
        }
        server.restart();
        check(&url);
    }
}

#[test]
fn a_server_that_goes_away_is_an_error_never_a_no_and_a_reconnect_resumes() {
    let mut server = RedisServer::start_with("away", &["--save", "", "--appendonly", "yes"]);
    let url = server.url();
    let mut f = RedisBlockedBloom::builder(100_000)
        .create(&url, "f")
        .unwrap();
    let inserted = keys(0..100_000);
    f.insert_hashes(&inserted).unwrap();
    server.shutdown("NOSAVE");
    let mut found = vec![false; inserted.len()];
    for method in [LookupMethod::LineRead, LookupMethod::BitRead] {
        f.set_lookup_method(method);
        let e = f.contains_hashes(&inserted, &mut found).unwrap_err();
        assert!(matches!(e, Error::Unavailable(_)), "{e}");
        assert!(matches!(
            f.contains_hash(inserted[0]),
            Err(Error::Unavailable(_))
        ));
        assert!(matches!(f.insert_hash(1), Err(Error::Unavailable(_))));
    }
    // Killed in the middle of batches: every call is all yes or an error.
    server.restart();
    let killer = {
        let port = server.port;
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            redis_server::raw_command(port, &["SHUTDOWN", "NOSAVE"]);
        })
    };
    let mut errors = 0;
    for _ in 0..200 {
        match f.contains_hashes(&inserted, &mut found) {
            Ok(()) => assert!(found.iter().all(|&y| y), "a wrong no"),
            Err(e) => {
                assert!(matches!(e, Error::Unavailable(_)), "{e}");
                errors += 1;
                break;
            }
        }
    }
    killer.join().unwrap();
    assert_eq!(errors, 1, "the server never went away");
    server.child_reaped();
    server.restart();
    // The same handle reconnects and finds every key (the AOF kept them).
    f.contains_hashes(&inserted, &mut found).unwrap();
    assert!(found.iter().all(|&y| y));
    assert!(!f.insert_hash(inserted[3]).unwrap());
}

#[test]
fn the_cli_creates_adds_queries_and_exports() {
    let server = RedisServer::start("cli");
    let url = server.url();
    let dir = scratch("redis-cli");
    let keys_file = common::write_keys(&dir, 5_000);
    let redis = |args: &[&str]| {
        let mut c = linebloom();
        c.arg("redis").args(args);
        run(&mut c)
    };
    let o = redis(&[
        "create", "f", "--url", &url, "--items", "5000", "--fpr", "0.01",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let o = redis(&[
        "add",
        "f",
        "--url",
        &url,
        "--input",
        keys_file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(stdout(&o).contains("5000 keys added"), "{}", stdout(&o));
    // Same parameters: success, bits kept; other parameters: exit 2.
    let o = redis(&[
        "create", "f", "--url", &url, "--items", "5000", "--fpr", "0.01",
    ]);
    assert!(o.status.success());
    let o = redis(&[
        "create", "f", "--url", &url, "--items", "5000", "--fpr", "0.02",
    ]);
    assert_usage_failure(&o, "incompatible");
    let o = redis(&[
        "query",
        "f",
        "--url",
        &url,
        "--input",
        keys_file.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 5_000);
    assert!(
        out.lines().all(|l| l.ends_with("\tyes")),
        "a false negative"
    );
    assert!(out.starts_with("user:0\tyes\n"));
    let o = redis(&["stats", "f", "--url", &url, "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for field in [
        "items_estimate",
        "bits",
        "shards",
        "hashes",
        "fpr_estimate",
        "bytes",
    ] {
        assert!(json.get(field).is_some(), "no {field} in {json}");
    }
    let estimate = json["items_estimate"].as_f64().unwrap();
    assert!((estimate - 5_000.0).abs() < 250.0, "{json}");
    // As text, as `stats` prints a saved filter: names in words, values in one column,
    // readable numbers.
    let o = redis(&["stats", "f", "--url", &url]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = stdout(&o);
    let names: Vec<&str> = text.lines().map(|l| l[..17].trim_end()).collect();
    assert_eq!(
        names,
        [
            "filter",
            "servers",
            "shards",
            "lines",
            "hashes",
            "seed",
            "bytes",
            "created for",
            "set bits",
            "fill ratio",
            "estimated items",
            "bits per key",
            "model FPR",
            "damaged shards",
        ],
        "{text}"
    );
    let value = |name: &str| -> String {
        let line = text.lines().find(|l| l[..17].trim_end() == name).unwrap();
        assert_eq!(&line[17..18], " ", "{line:?}");
        line[18..].to_string()
    };
    assert_eq!(value("filter"), "blocked, shared as \"f\"");
    assert_eq!(value("servers"), "single node");
    assert_eq!(value("created for"), "5000 items at FPR 1.00 %");
    assert_eq!(
        value("seed"),
        format!("{:#x}", json["seed"].as_u64().unwrap())
    );
    let bytes = json["bytes"].as_u64().unwrap();
    assert!(
        value("bytes").starts_with(&format!("{bytes} (")) && value("bytes").ends_with("KiB)"),
        "{text}"
    );
    assert_eq!(value("estimated items"), format!("{estimate:.0}"));
    let fill = value("fill ratio");
    assert!(fill.starts_with("0.") && fill.len() == 6, "{fill}");
    let fpr = json["fpr_estimate"].as_f64().unwrap();
    assert_eq!(
        value("model FPR"),
        format!("{:.5} % (at the estimated items)", fpr * 100.0)
    );
    assert_eq!(value("damaged shards"), "0");
    let exported = dir.join("f.lbf");
    let o = redis(&[
        "export",
        "f",
        "--url",
        &url,
        "--output",
        exported.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let o = run(linebloom()
        .arg("query")
        .arg(&exported)
        .arg("--input")
        .arg(&keys_file));
    assert!(stdout(&o).lines().all(|l| l.ends_with("\tyes")));
    let o = run(linebloom().arg("stats").arg(&exported).arg("--json"));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["filter"], "blocked");
    // The keys hash as the library hashes them.
    let mut f = RedisBlockedBloom::open(&url, "f").unwrap();
    assert!(f.contains_hash(hash_bytes(b"user:17", f.seed())).unwrap());
}

#[test]
fn cli_failures_are_exit_2_with_one_line() {
    let server = RedisServer::start("cli-errors");
    let url = server.url();
    server.command(&["SET", "plain", "x"]);
    let redis = |args: &[&str]| {
        let mut c = linebloom();
        c.arg("redis").args(args);
        run(&mut c)
    };
    assert_usage_failure(&redis(&["stats", "missing", "--url", &url]), "not found");
    assert_usage_failure(&redis(&["query", "plain", "--url", &url]), "string");
    assert_usage_failure(
        &redis(&[
            "create", "plain", "--url", &url, "--items", "10", "--fpr", "0.01",
        ]),
        "not a linebloom filter",
    );
    let dead = format!("redis://127.0.0.1:{}", redis_server::free_port());
    assert_usage_failure(&redis(&["add", "f", "--url", &dead]), "unavailable");
    assert_usage_failure(
        &redis(&[
            "create", "f", "--url", &dead, "--items", "10", "--fpr", "0.01",
        ]),
        "unavailable",
    );
    assert_usage_failure(
        &redis(&[
            "create", "f", "--url", &url, "--items", "0", "--fpr", "0.01",
        ]),
        "items",
    );
}
