//! The data type on a real server: restart from RDB and from AOF (replayed and rewritten),
//! `DEBUG RELOAD`, `COPY` / `RENAME` / `DEL`, `MEMORY USAGE`, `DEBUG DIGEST-VALUE`, and a
//! replica that answers as its primary.

mod common;

use common::{Server, cmd, int, ints, raw, wait_for};
use redis::{Connection, Value};

/// Fills a few filters of every shape: grown (four layers), non-scaling, and one large enough
/// (about 24 MB) that its bits go to RDB and AOF in several chunks.
fn fill(con: &mut Connection) {
    cmd(con, "BF.RESERVE grown 0.01 500");
    cmd(con, "BF.RESERVE fixed 0.001 1000 NONSCALING");
    cmd(con, "BF.RESERVE large 0.0001 10000000 NONSCALING");
    let items: Vec<String> = (0..4_000).map(|i| format!("item:{i}")).collect();
    for batch in items.chunks(500) {
        let mut args: Vec<&[u8]> = vec![b"BF.MADD", b"grown"];
        args.extend(batch.iter().map(|i| i.as_bytes()));
        raw(con, &args);
        args[1] = b"large";
        raw(con, &args);
    }
    for item in &items[..1_000] {
        raw(con, &[b"BF.ADD", b"fixed", item.as_bytes()]);
    }
}

/// What a client can see of the filters: every reply of interest.
fn observe(con: &mut Connection) -> Vec<Value> {
    let mut seen = Vec::new();
    for key in ["grown", "fixed", "large"] {
        seen.push(cmd(con, &format!("BF.INFO {key}")));
        seen.push(cmd(con, &format!("BF.CARD {key}")));
        seen.push(cmd(con, &format!("DEBUG DIGEST-VALUE {key}")));
    }
    let probes: Vec<String> = (0..5_000).map(|i| format!("item:{i}")).collect();
    for key in ["grown", "fixed", "large"] {
        let mut args: Vec<&[u8]> = vec![b"BF.MEXISTS", key.as_bytes()];
        args.extend(probes.iter().map(|p| p.as_bytes()));
        seen.push(raw(con, &args));
    }
    seen
}

#[test]
fn rdb_restart_and_debug_reload_keep_every_filter() {
    let mut server = Server::start_with("rdb", &["--save", "", "--appendonly", "no"]);
    let mut con = server.connect();
    fill(&mut con);
    let before = observe(&mut con);
    assert_eq!(ints(&cmd(&mut con, "BF.INFO grown FILTERS")), [4]);
    assert_eq!(cmd(&mut con, "DEBUG RELOAD"), Value::Okay);
    assert_eq!(observe(&mut con), before);
    assert_eq!(cmd(&mut con, "SAVE"), Value::Okay);
    server.shutdown("NOSAVE");
    server.restart();
    let mut con = server.connect();
    assert_eq!(observe(&mut con), before);
    // DUMP / RESTORE use the same encoding.
    let Value::BulkString(payload) = cmd(&mut con, "DUMP grown") else {
        panic!("DUMP")
    };
    assert_eq!(
        raw(&mut con, &[b"RESTORE", b"restored", b"0", &payload]),
        Value::Okay
    );
    assert_eq!(
        cmd(&mut con, "DEBUG DIGEST-VALUE restored"),
        cmd(&mut con, "DEBUG DIGEST-VALUE grown")
    );
}

#[test]
fn aof_replay_and_rewrite_keep_every_filter() {
    for preamble in ["no", "yes"] {
        let mut server = Server::start_with(
            &format!("aof-{preamble}"),
            &[
                "--save",
                "",
                "--appendonly",
                "yes",
                "--aof-use-rdb-preamble",
                preamble,
            ],
        );
        let mut con = server.connect();
        fill(&mut con);
        let before = observe(&mut con);
        // Replayed from the commands as they were logged.
        server.shutdown("NOSAVE");
        server.restart();
        let mut con = server.connect();
        assert_eq!(observe(&mut con), before, "replay, preamble {preamble}");
        // Rewritten: BF.LOADCHUNK commands (or RDB, with the preamble).
        cmd(&mut con, "BGREWRITEAOF");
        wait_for("the AOF rewrite", || {
            let Value::BulkString(info) = cmd(&mut con, "INFO persistence") else {
                return false;
            };
            let info = String::from_utf8_lossy(&info);
            info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrite_scheduled:0")
        });
        let Value::BulkString(info) = cmd(&mut con, "INFO persistence") else {
            panic!("INFO")
        };
        assert!(String::from_utf8_lossy(&info).contains("aof_last_bgrewrite_status:ok"));
        server.shutdown("NOSAVE");
        server.restart();
        let mut con = server.connect();
        assert_eq!(observe(&mut con), before, "rewrite, preamble {preamble}");
    }
}

#[test]
fn copy_rename_del_and_memory_usage_work_as_for_any_key() {
    let server = Server::start("keys");
    let mut con = server.connect();
    fill(&mut con);
    let digest = cmd(&mut con, "DEBUG DIGEST-VALUE grown");
    assert_eq!(int(&cmd(&mut con, "COPY grown copy")), 1);
    assert_eq!(cmd(&mut con, "DEBUG DIGEST-VALUE copy"), digest);
    // The copy is its own filter.
    let fresh = (0..1000)
        .map(|i| format!("fresh:{i}"))
        .find(|f| int(&raw(&mut con, &[b"BF.EXISTS", b"grown", f.as_bytes()])) == 0)
        .expect("an item the filter does not hold");
    assert_eq!(
        int(&raw(&mut con, &[b"BF.ADD", b"copy", fresh.as_bytes()])),
        1
    );
    assert_eq!(
        int(&raw(&mut con, &[b"BF.EXISTS", b"grown", fresh.as_bytes()])),
        0
    );
    assert_eq!(cmd(&mut con, "DEBUG DIGEST-VALUE grown"), digest);
    assert_eq!(cmd(&mut con, "RENAME copy renamed"), Value::Okay);
    assert_eq!(
        int(&raw(
            &mut con,
            &[b"BF.EXISTS", b"renamed", fresh.as_bytes()]
        )),
        1
    );
    assert_eq!(int(&cmd(&mut con, "DEL renamed")), 1);
    assert_eq!(int(&cmd(&mut con, "EXISTS renamed")), 0);

    let usage = int(&cmd(&mut con, "MEMORY USAGE large"));
    let size = ints(&cmd(&mut con, "BF.INFO large SIZE"))[0];
    assert!(
        usage >= size && size > 20_000_000,
        "usage {usage}, size {size}"
    );
    // The filters live on the server's heap: deleting one gives its memory back.
    let used = |con: &mut Connection| {
        let Value::BulkString(info) = cmd(con, "INFO memory") else {
            panic!("INFO")
        };
        let info = String::from_utf8_lossy(&info).to_string();
        let line = info
            .lines()
            .find(|l| l.starts_with("used_memory:"))
            .unwrap();
        line["used_memory:".len()..].trim().parse::<i64>().unwrap()
    };
    let with_large = used(&mut con);
    cmd(&mut con, "DEL large");
    assert!(with_large - used(&mut con) > 20_000_000);
}

#[test]
fn a_replica_answers_as_its_primary() {
    let primary = Server::start("primary");
    let mut con = primary.connect();
    cmd(&mut con, "BF.ADD before-sync a");
    let port = primary.port.to_string();
    let replica = Server::start_with(
        "replica",
        &[
            "--save",
            "",
            "--appendonly",
            "no",
            "--replicaof",
            "127.0.0.1",
            &port,
        ],
    );
    let mut rep = replica.connect();
    wait_for("the replica to sync", || {
        let Value::BulkString(info) = cmd(&mut rep, "INFO replication") else {
            return false;
        };
        String::from_utf8_lossy(&info).contains("master_link_status:up")
    });
    fill(&mut con);
    cmd(&mut con, "BF.INSERT inserted CAPACITY 2 ITEMS x y z");
    let Value::Array(dump) = cmd(&mut con, "BF.SCANDUMP grown 0") else {
        panic!("SCANDUMP")
    };
    let Value::BulkString(header) = &dump[1] else {
        panic!("header")
    };
    raw(&mut con, &[b"BF.LOADCHUNK", b"loaded", b"1", header]);
    assert_eq!(int(&cmd(&mut con, "WAIT 1 10000")), 1);
    assert_eq!(observe(&mut rep), observe(&mut con));
    assert_eq!(ints(&cmd(&mut rep, "BF.MEXISTS inserted x y z")), [1, 1, 1]);
    assert_eq!(int(&cmd(&mut rep, "BF.EXISTS before-sync a")), 1);
    assert_eq!(
        cmd(&mut rep, "BF.INFO loaded"),
        cmd(&mut con, "BF.INFO loaded")
    );
    // A replica refuses writes, as for any key.
    let Value::ServerError(e) = cmd(&mut rep, "BF.ADD grown new") else {
        panic!("a write on a replica")
    };
    assert_eq!(e.code(), "READONLY");
}
