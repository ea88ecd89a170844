//! The `BF.*` commands over the raw protocol on a real `redis-server` with the module loaded:
//! replies and error texts as RedisBloom gives them, the rate asked for, `SCANDUMP` /
//! `LOADCHUNK` into a fresh server, wrong types and bad arguments.

mod common;

use common::{Server, cmd, error_text, int, ints, raw};
use redis::Value;

fn items(prefix: &str, range: std::ops::Range<u64>) -> Vec<Vec<u8>> {
    range.map(|i| format!("{prefix}{i}").into_bytes()).collect()
}

/// `BF.MADD` / `BF.MEXISTS` with many items: the integers of the reply.
fn many(con: &mut redis::Connection, command: &str, key: &str, items: &[Vec<u8>]) -> Vec<i64> {
    let mut args: Vec<&[u8]> = vec![command.as_bytes(), key.as_bytes()];
    args.extend(items.iter().map(Vec::as_slice));
    ints(&raw(con, &args))
}

fn info(con: &mut redis::Connection, key: &str) -> Vec<(String, Value)> {
    match cmd(con, &format!("BF.INFO {key}")) {
        Value::Array(flat) => flat
            .chunks(2)
            .map(|pair| match &pair[0] {
                Value::SimpleString(name) => (name.clone(), pair[1].clone()),
                other => panic!("field name {other:?}"),
            })
            .collect(),
        other => panic!("BF.INFO: {other:?}"),
    }
}

#[test]
fn add_exists_card_and_info_answer_as_redisbloom() {
    let server = Server::start("basics");
    let mut con = server.connect();
    assert_eq!(cmd(&mut con, "BF.RESERVE bf 0.01 1000"), Value::Okay);
    assert_eq!(int(&cmd(&mut con, "BF.ADD bf apple")), 1);
    assert_eq!(int(&cmd(&mut con, "BF.ADD bf apple")), 0);
    assert_eq!(
        ints(&cmd(&mut con, "BF.MADD bf pear apple fig pear")),
        [1, 0, 1, 0]
    );
    assert_eq!(int(&cmd(&mut con, "BF.EXISTS bf fig")), 1);
    assert_eq!(int(&cmd(&mut con, "BF.EXISTS bf kiwi")), 0);
    assert_eq!(
        ints(&cmd(&mut con, "BF.MEXISTS bf apple kiwi pear")),
        [1, 0, 1]
    );
    assert_eq!(int(&cmd(&mut con, "BF.CARD bf")), 3);
    // Binary items, the empty one included.
    for item in [&b""[..], b"a\x00b\xff", &[b'x'; 4096]] {
        assert_eq!(int(&raw(&mut con, &[b"BF.ADD", b"bf", item])), 1);
        assert_eq!(int(&raw(&mut con, &[b"BF.EXISTS", b"bf", item])), 1);
    }

    let fields = info(&mut con, "bf");
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Capacity",
            "Size",
            "Number of filters",
            "Number of items inserted",
            "Expansion rate"
        ]
    );
    assert_eq!(fields[0].1, Value::Int(1000));
    assert!(int(&fields[1].1) > 1000);
    assert_eq!(fields[2].1, Value::Int(1));
    assert_eq!(fields[3].1, Value::Int(6));
    assert_eq!(fields[4].1, Value::Int(2));
    for (field, value) in [
        ("CAPACITY", 1000),
        ("filters", 1),
        ("Items", 6),
        ("EXPANSION", 2),
    ] {
        assert_eq!(
            ints(&cmd(&mut con, &format!("BF.INFO bf {field}"))),
            [value]
        );
    }
    assert_eq!(ints(&cmd(&mut con, "BF.INFO bf SIZE")), [int(&fields[1].1)]);

    // Missing keys: EXISTS, MEXISTS and CARD answer 0; ADD and MADD create a default filter.
    assert_eq!(int(&cmd(&mut con, "BF.EXISTS none x")), 0);
    assert_eq!(ints(&cmd(&mut con, "BF.MEXISTS none x y")), [0, 0]);
    assert_eq!(int(&cmd(&mut con, "BF.CARD none")), 0);
    assert_eq!(int(&cmd(&mut con, "BF.ADD auto x")), 1);
    assert_eq!(ints(&cmd(&mut con, "BF.INFO auto CAPACITY")), [100]);
    assert_eq!(ints(&cmd(&mut con, "BF.MADD auto2 x y")), [1, 1]);
    assert_eq!(
        cmd(&mut con, "TYPE auto2"),
        Value::SimpleString("linebloom".into())
    );
}

#[test]
fn insert_creates_with_its_options_and_honours_nocreate() {
    let server = Server::start("insert");
    let mut con = server.connect();
    let reply = cmd(
        &mut con,
        "BF.INSERT bf CAPACITY 10 ERROR 0.001 EXPANSION 3 ITEMS a b c a",
    );
    assert_eq!(ints(&reply), [1, 1, 1, 0]);
    assert_eq!(ints(&cmd(&mut con, "BF.INFO bf CAPACITY")), [10]);
    assert_eq!(ints(&cmd(&mut con, "BF.INFO bf EXPANSION")), [3]);
    // An existing filter keeps its own parameters.
    assert_eq!(
        ints(&cmd(&mut con, "BF.INSERT bf CAPACITY 500 ITEMS d")),
        [1]
    );
    assert_eq!(ints(&cmd(&mut con, "BF.INFO bf CAPACITY")), [10]);
    assert_eq!(
        ints(&cmd(&mut con, "BF.INSERT bf NOCREATE ITEMS a e")),
        [0, 1]
    );
    assert_eq!(
        error_text(&cmd(&mut con, "BF.INSERT none NOCREATE ITEMS a")),
        "ERR not found"
    );
    assert_eq!(int(&cmd(&mut con, "EXISTS none")), 0);
    assert_eq!(
        ints(&cmd(&mut con, "BF.INSERT fixed NONSCALING ITEMS a")),
        [1]
    );
    let fields = info(&mut con, "fixed");
    assert_eq!(fields[0].1, Value::Int(100));
    assert_eq!(fields[4], ("Expansion rate".to_string(), Value::Nil));
    match cmd(&mut con, "BF.INFO fixed EXPANSION") {
        Value::Array(v) => assert_eq!(v, [Value::Nil]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn errors_are_redisblooms() {
    let server = Server::start("errors");
    let mut con = server.connect();
    cmd(&mut con, "SET text hello");
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for command in [
        "BF.ADD text x",
        "BF.MADD text x",
        "BF.INSERT text ITEMS x",
        "BF.RESERVE text 0.01 100",
        "BF.INFO text",
        "BF.CARD text",
        "BF.SCANDUMP text 0",
        "BF.LOADCHUNK text 2 x",
    ] {
        assert_eq!(error_text(&cmd(&mut con, command)), wrongtype, "{command}");
    }
    // RedisBloom answers "not there" for a key of another type.
    assert_eq!(int(&cmd(&mut con, "BF.EXISTS text x")), 0);
    assert_eq!(ints(&cmd(&mut con, "BF.MEXISTS text x y")), [0, 0]);

    cmd(&mut con, "BF.RESERVE bf 0.01 100");
    for (command, error) in [
        ("BF.RESERVE bf 0.01 100", "ERR item exists"),
        ("BF.RESERVE new abc 100", "ERR bad error rate"),
        ("BF.RESERVE new 0 100", "ERR (0 < error rate range < 1)"),
        ("BF.RESERVE new 1 100", "ERR (0 < error rate range < 1)"),
        ("BF.RESERVE new 0.01 many", "ERR bad capacity"),
        (
            "BF.RESERVE new 0.01 0",
            "ERR (capacity should be larger than 0)",
        ),
        (
            "BF.RESERVE new 0.01 -5",
            "ERR (capacity should be larger than 0)",
        ),
        ("BF.RESERVE new 0.01 100 EXPANSION x", "ERR bad expansion"),
        ("BF.RESERVE new 0.01 100 EXPANSION -1", "ERR bad expansion"),
        (
            "BF.RESERVE new 0.01 100 EXPANSION 2 NONSCALING",
            "ERR Nonscaling filters cannot expand",
        ),
        (
            "BF.INSERT new ERROR 2 ITEMS a",
            "ERR (0 < error rate range < 1)",
        ),
        (
            "BF.INSERT new CAPACITY 0 ITEMS a",
            "ERR (capacity should be larger than 0)",
        ),
        ("BF.INFO none", "ERR not found"),
        ("BF.INFO bf ERROR", "ERR Invalid information value"),
        ("BF.SCANDUMP none 0", "ERR not found"),
        ("BF.SCANDUMP bf x", "ERR Second argument must be numeric"),
        ("BF.LOADCHUNK none 9 abc", "ERR not found"),
        (
            "BF.LOADCHUNK bf x abc",
            "ERR Second argument must be numeric",
        ),
    ] {
        assert_eq!(error_text(&cmd(&mut con, command)), error, "{command}");
    }
    for command in [
        "BF.ADD bf",
        "BF.ADD bf a b",
        "BF.MADD bf",
        "BF.EXISTS bf",
        "BF.MEXISTS bf",
        "BF.RESERVE bf 0.01",
        "BF.INSERT bf ITEMS",
        "BF.INSERT bf CAPACITY 10",
        "BF.CARD",
        "BF.INFO bf CAPACITY SIZE",
        "BF.SCANDUMP bf",
        "BF.LOADCHUNK bf 1",
    ] {
        let text = error_text(&cmd(&mut con, command));
        assert!(
            text.starts_with("ERR wrong number of arguments"),
            "{command}: {text}"
        );
    }
    assert_eq!(int(&cmd(&mut con, "EXISTS new")), 0);
    // A filter larger than the machine is refused, and the server lives on.
    let text = error_text(&cmd(&mut con, "BF.RESERVE huge 0.01 100000000000000"));
    assert!(text.starts_with("ERR could not create filter"), "{text}");
    assert_eq!(cmd(&mut con, "PING"), Value::SimpleString("PONG".into()));
}

#[test]
fn a_full_non_scaling_filter_stops_the_batch() {
    let server = Server::start("full");
    let mut con = server.connect();
    cmd(&mut con, "BF.RESERVE fixed 0.01 3 NONSCALING");
    // RedisBloom stops at the first item that does not fit and shortens the array.
    match cmd(&mut con, "BF.MADD fixed a b a c d e") {
        Value::Array(v) => {
            assert_eq!(ints(&Value::Array(v[..4].to_vec())), [1, 1, 0, 1]);
            assert_eq!(v.len(), 5);
            assert_eq!(error_text(&v[4]), "ERR non scaling filter is full");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(int(&cmd(&mut con, "BF.CARD fixed")), 3);
    assert_eq!(int(&cmd(&mut con, "BF.ADD fixed a")), 0);
    assert_eq!(
        error_text(&cmd(&mut con, "BF.ADD fixed z")),
        "ERR non scaling filter is full"
    );
    // EXPANSION 0 makes a non-scaling filter too, as in RedisBloom.
    cmd(&mut con, "BF.RESERVE zero 0.01 1 EXPANSION 0");
    cmd(&mut con, "BF.ADD zero a");
    assert_eq!(
        error_text(&cmd(&mut con, "BF.ADD zero b")),
        "ERR non scaling filter is full"
    );
}

/// The filter grows layer by layer and the rate asked for holds on the server: 20,000 items
/// into a filter reserved for 1,000 at 1 %, then 50,000 items never added.
#[test]
fn a_grown_filter_keeps_every_item_and_the_rate_asked() {
    let server = Server::start("grow");
    let mut con = server.connect();
    cmd(&mut con, "BF.RESERVE bf 0.01 1000");
    let members = items("member:", 0..20_000);
    let mut added = 0;
    for batch in members.chunks(1000) {
        added += many(&mut con, "BF.MADD", "bf", batch).iter().sum::<i64>();
    }
    assert_eq!(int(&cmd(&mut con, "BF.CARD bf")), added);
    assert!(added > 19_800, "{added} of 20000 new");
    let filters = ints(&cmd(&mut con, "BF.INFO bf FILTERS"))[0];
    assert_eq!(filters, 5, "1000 + 2000 + 4000 + 8000 + 16000 >= 20000");
    assert_eq!(ints(&cmd(&mut con, "BF.INFO bf CAPACITY")), [31_000]);
    for batch in members.chunks(1000) {
        assert!(
            many(&mut con, "BF.MEXISTS", "bf", batch)
                .iter()
                .all(|&f| f == 1)
        );
    }
    let mut false_positives = 0;
    let strangers = items("stranger:", 0..50_000);
    for batch in strangers.chunks(1000) {
        false_positives += many(&mut con, "BF.MEXISTS", "bf", batch)
            .iter()
            .sum::<i64>();
    }
    let fpr = false_positives as f64 / strangers.len() as f64;
    assert!(fpr < 0.01, "measured FPR {fpr}");
}

fn scandump(con: &mut redis::Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut iter = 0;
    loop {
        let reply = cmd(con, &format!("BF.SCANDUMP {key} {iter}"));
        let Value::Array(pair) = reply else {
            panic!("SCANDUMP: {reply:?}")
        };
        let Value::BulkString(data) = &pair[1] else {
            panic!("SCANDUMP data: {pair:?}")
        };
        iter = int(&pair[0]);
        if iter == 0 {
            assert!(data.is_empty());
            return chunks;
        }
        chunks.push((iter, data.clone()));
    }
}

#[test]
fn scandump_and_loadchunk_rebuild_a_filter_in_a_fresh_server() {
    let source = Server::start("dump-source");
    let target = Server::start("dump-target");
    let (mut src, mut dst) = (source.connect(), target.connect());
    cmd(&mut src, "BF.RESERVE bf 0.001 500 EXPANSION 4");
    let members = items("k", 0..3_000);
    for batch in members.chunks(500) {
        many(&mut src, "BF.MADD", "bf", batch);
    }
    let chunks = scandump(&mut src, "bf");
    assert_eq!(chunks[0].0, 1);
    assert_eq!(
        chunks.len(),
        1 + ints(&cmd(&mut src, "BF.INFO bf FILTERS"))[0] as usize
    );
    for (iter, data) in &chunks {
        let reply = raw(
            &mut dst,
            &[b"BF.LOADCHUNK", b"copy", iter.to_string().as_bytes(), data],
        );
        assert_eq!(reply, Value::Okay);
    }
    assert_eq!(info(&mut src, "bf"), info(&mut dst, "copy"));
    assert_eq!(scandump(&mut dst, "copy"), chunks);
    for batch in members.chunks(500) {
        assert!(
            many(&mut dst, "BF.MEXISTS", "copy", batch)
                .iter()
                .all(|&f| f == 1)
        );
    }
    // The copy grows on as the original would.
    assert_eq!(
        many(&mut dst, "BF.MADD", "copy", &items("more", 0..5)),
        many(&mut src, "BF.MADD", "bf", &items("more", 0..5))
    );
    // A header overwrites a filter under the key; a damaged one is refused and creates nothing.
    let (_, header) = &chunks[0];
    let reply = raw(&mut dst, &[b"BF.LOADCHUNK", b"copy", b"1", header]);
    assert_eq!(reply, Value::Okay);
    assert_eq!(ints(&cmd(&mut dst, "BF.MEXISTS copy k1 k2")), [0, 0]);
    let mut damaged = header.clone();
    damaged[20] ^= 1;
    for bad in [&damaged[..], &header[..header.len() - 1], b"", b"corrupt"] {
        let text = error_text(&raw(&mut dst, &[b"BF.LOADCHUNK", b"other", b"1", bad]));
        assert!(text.starts_with("ERR invalid filter header"), "{text}");
    }
    assert_eq!(int(&cmd(&mut dst, "EXISTS other")), 0);
    let text = error_text(&cmd(&mut dst, "BF.LOADCHUNK copy 999999999 abc"));
    assert!(text.starts_with("ERR invalid offset"), "{text}");
}
