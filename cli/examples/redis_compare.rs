//! Shared filters in Redis on loopback, side by side: linebloom's line layout (`BITFIELD` inserts;
//! `GETRANGE` or `BITFIELD_RO` lookups), a Redisson-style classic filter (one `EVALSHA` of k
//! `SETBIT` / `GETBIT` per key), RedisBloom's `BF.MADD` / `BF.MEXISTS` (only when a
//! `redisbloom.so` is given), and pipelined `PING` as the ceiling of one command per key.
//!
//! For each: keys per second batched (16,384 keys per round trip) and one at a time, and per key
//! the server's CPU, commands, round trips and bytes in and out (from `INFO`), the bits per key
//! and the measured FPR. It starts its own `redis-server` on a free loopback port.
//!
//! Every filter is sized for KEYS keys (default 1 M) and the timed operations use the first
//! 1 M. Past 1 M the filters are filled first, untimed: linebloom's and the classic bitmap by
//! uploading a filter built here (`SETRANGE`), RedisBloom by `BF.MADD` of the other keys; the
//! timed adds then re-add keys linebloom and the bitmap already hold (the same server work).
//!
//! ```text
//! cargo run --release -p linebloom-cli --example redis_compare -- [KEYS] [PATH/redisbloom.so]
//! ```
//! `results/redis.md` holds a run and says where `redisbloom.so` came from.

#[path = "../tests/common/redis_server.rs"]
mod redis_server;

use std::time::Instant;

use linebloom::hash::hash_bytes;
use linebloom::redis::{LookupMethod, RedisBlockedBloom};
use redis::{Connection, Value};
use redis_server::RedisServer;

/// Keys per round trip of every batched design.
const ROUND_TRIP: usize = 16_384;
/// Keys timed batched (the filters hold more when KEYS is larger).
const MEASURED: usize = 1_000_000;
/// Bytes per `SETRANGE` of an upload.
const UPLOAD: usize = 64 << 20;
/// Keys per RedisBloom `BF.MADD` / `BF.MEXISTS` command.
const PER_COMMAND: usize = 1_000;
/// Keys timed one at a time (each a full round trip).
const SINGLES: usize = 20_000;
/// Keys never inserted, probed for the FPR.
const PROBES: usize = 200_000;
const FPR: f64 = 0.01;

struct Snapshot {
    cpu: f64,
    net_in: u64,
    net_out: u64,
    commands: u64,
}

fn snapshot(con: &mut Connection) -> Snapshot {
    let info: String = redis::cmd("INFO").arg("all").query(con).unwrap();
    let field = |name: &str| -> f64 {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    };
    Snapshot {
        cpu: field("used_cpu_sys") + field("used_cpu_user"),
        net_in: field("total_net_input_bytes") as u64,
        net_out: field("total_net_output_bytes") as u64,
        commands: field("total_commands_processed") as u64,
    }
}

struct Row {
    design: String,
    op: &'static str,
    keys: usize,
    secs: f64,
    round_trips: usize,
    cpu: f64,
    commands: u64,
    net_in: u64,
    net_out: u64,
}

/// Runs `work` over `keys` keys in `round_trips` round trips and reads the server's counters
/// around it (the two `INFO` calls add 2 commands and a few hundred bytes: noise at these
/// counts).
fn measure(
    con: &mut Connection,
    design: &str,
    op: &'static str,
    keys: usize,
    round_trips: usize,
    work: impl FnOnce(),
) -> Row {
    let before = snapshot(con);
    let start = Instant::now();
    work();
    let secs = start.elapsed().as_secs_f64();
    let after = snapshot(con);
    let row = Row {
        design: design.to_owned(),
        op,
        keys,
        secs,
        round_trips,
        cpu: after.cpu - before.cpu,
        commands: after.commands - before.commands - 1,
        net_in: after.net_in - before.net_in,
        net_out: after.net_out - before.net_out,
    };
    eprintln!(
        "{:<34} {:<14} {:>8.3} M keys/s",
        row.design,
        row.op,
        keys as f64 / secs / 1e6
    );
    row
}

fn key(i: usize) -> String {
    format!("key:{i}")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(1_000_000, |a| a.parse().expect("KEYS"));
    let module = args.get(1);
    let mut extra = vec!["--save", "", "--appendonly", "no"];
    if let Some(m) = module {
        extra.extend(["--loadmodule", m.as_str()]);
    }
    let server = RedisServer::start_with("compare", &extra);
    let url = server.url();
    let mut con = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let (full, m) = (n, n.min(MEASURED));
    let inserted: Vec<String> = (0..m).map(key).collect();
    let absent: Vec<String> = (n..n + PROBES).map(key).collect();
    let mut rows = Vec::new();
    let mut sizes = Vec::new();

    // linebloom: the line layout.
    let mut f = RedisBlockedBloom::builder(n as u64)
        .fpr(FPR)
        .create(&url, "lb")
        .unwrap();
    let seed = f.seed();
    let hashes: Vec<u64> = inserted
        .iter()
        .map(|k| hash_bytes(k.as_bytes(), seed))
        .collect();
    let misses: Vec<u64> = absent
        .iter()
        .map(|k| hash_bytes(k.as_bytes(), seed))
        .collect();
    if full > m {
        let mut local =
            linebloom::BlockedBloom::with_lines(f.num_lines() as usize, f.k(), seed).unwrap();
        let all: Vec<u64> = (0..full)
            .map(|i| hash_bytes(key(i).as_bytes(), seed))
            .collect();
        local.par_insert_hashes(&all);
        let bytes = local.to_bytes();
        let lines = &bytes[linebloom::format::HEADER_LEN..][..local.size_bytes()];
        upload(&mut con, f.shard_key(0).unwrap(), lines);
    }
    let n = m;
    let trips = n.div_ceil(ROUND_TRIP);
    rows.push(measure(
        &mut con,
        "linebloom BITFIELD",
        "add, batched",
        n,
        trips,
        || {
            f.insert_hashes(&hashes).unwrap();
        },
    ));
    let mut found = vec![false; n.max(PROBES)];
    let mut fpr = 0.0;
    for (method, name) in [
        (LookupMethod::LineRead, "linebloom GETRANGE"),
        (LookupMethod::BitRead, "linebloom BITFIELD_RO"),
    ] {
        f.set_lookup_method(method);
        rows.push(measure(&mut con, name, "query, batched", n, trips, || {
            f.contains_hashes(&hashes, &mut found[..n]).unwrap();
        }));
        assert!(found[..n].iter().all(|&y| y));
        f.contains_hashes(&misses, &mut found[..PROBES]).unwrap();
        fpr = found[..PROBES].iter().filter(|&&y| y).count() as f64 / PROBES as f64;
        rows.push(measure(
            &mut con,
            name,
            "query, single",
            SINGLES,
            SINGLES,
            || {
                for &h in &hashes[..SINGLES] {
                    assert!(f.contains_hash(h).unwrap());
                }
            },
        ));
    }
    let exported = f.export().unwrap();
    pages(
        &mut con, &url, &exported, &hashes, full, &mut rows, &mut sizes,
    );
    let mut g = RedisBlockedBloom::builder(n as u64)
        .fpr(FPR)
        .create(&url, "lb-single")
        .unwrap();
    rows.push(measure(
        &mut con,
        "linebloom BITFIELD",
        "add, single",
        SINGLES,
        SINGLES,
        || {
            for &h in &hashes[..SINGLES] {
                g.insert_hash(h).unwrap();
            }
        },
    ));
    sizes.push((
        "linebloom".to_string(),
        f.size_bytes() as f64 * 8.0 / full as f64,
        fpr,
        f.k(),
    ));

    // Redisson-style: a classic bitmap, k offsets by double hashing, one EVALSHA per key.
    let bits_per_key = linebloom::model::classic_bits_per_key(FPR).unwrap();
    let k = linebloom::model::classic_optimal_k(bits_per_key);
    let bits = (full as f64 * bits_per_key).ceil() as u64;
    let offsets = |key: &str| -> Vec<u64> {
        let h1 = hash_bytes(key.as_bytes(), 1);
        let h2 = hash_bytes(key.as_bytes(), 2) | 1;
        (0..u64::from(k))
            .map(|i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
            .collect()
    };
    if full > n {
        // SETBIT's order: bit 0 is the most significant bit of byte 0.
        let mut bitmap = vec![0u8; bits.div_ceil(8) as usize];
        for i in 0..full {
            for o in offsets(&key(i)) {
                bitmap[(o / 8) as usize] |= 0x80 >> (o % 8);
            }
        }
        upload(&mut con, "classic", &bitmap);
    }
    let add_script = "local new = 0 for i = 1, #ARGV do \
        if redis.call('SETBIT', KEYS[1], ARGV[i], 1) == 0 then new = 1 end end return new";
    let has_script = "local all = 1 for i = 1, #ARGV do \
        if redis.call('GETBIT', KEYS[1], ARGV[i]) == 0 then all = 0 end end return all";
    let load = |con: &mut Connection, s: &str| -> String {
        redis::cmd("SCRIPT").arg("LOAD").arg(s).query(con).unwrap()
    };
    let (add_sha, has_sha) = (load(&mut con, add_script), load(&mut con, has_script));
    let evals = |con: &mut Connection, sha: &str, keys: &[String]| -> Vec<i64> {
        let mut p = redis::pipe();
        for key in keys {
            p.cmd("EVALSHA")
                .arg(sha)
                .arg(1)
                .arg("classic")
                .arg(offsets(key));
        }
        p.query(con).unwrap()
    };
    let mut classic = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    rows.push(measure(
        &mut con,
        "Redisson-style EVAL",
        "add, batched",
        n,
        trips,
        || {
            for chunk in inserted.chunks(ROUND_TRIP) {
                evals(&mut classic, &add_sha, chunk);
            }
        },
    ));
    rows.push(measure(
        &mut con,
        "Redisson-style EVAL",
        "query, batched",
        n,
        trips,
        || {
            for chunk in inserted.chunks(ROUND_TRIP) {
                assert!(evals(&mut classic, &has_sha, chunk).iter().all(|&y| y == 1));
            }
        },
    ));
    let fp: i64 = absent
        .chunks(ROUND_TRIP)
        .map(|c| evals(&mut classic, &has_sha, c).iter().sum::<i64>())
        .sum();
    rows.push(measure(
        &mut con,
        "Redisson-style EVAL",
        "query, single",
        SINGLES,
        SINGLES,
        || {
            for key in &inserted[..SINGLES] {
                assert_eq!(
                    evals(&mut classic, &has_sha, std::slice::from_ref(key)),
                    [1]
                );
            }
        },
    ));
    sizes.push((
        "Redisson-style".to_string(),
        bits as f64 / full as f64,
        fp as f64 / PROBES as f64,
        k,
    ));

    // RedisBloom, when loaded.
    if module.is_some() {
        redis::cmd("BF.RESERVE")
            .arg("rb")
            .arg(FPR)
            .arg(full)
            .query::<()>(&mut con)
            .unwrap();
        let bf = |con: &mut Connection, cmd: &str, keys: &[String]| -> Vec<Vec<i64>> {
            let mut p = redis::pipe();
            for part in keys.chunks(PER_COMMAND) {
                p.cmd(cmd).arg("rb").arg(part);
            }
            p.query(con).unwrap()
        };
        let mut rb = redis::Client::open(url.as_str())
            .unwrap()
            .get_connection()
            .unwrap();
        for start in (n..full).step_by(ROUND_TRIP) {
            let chunk: Vec<String> = (start..(start + ROUND_TRIP).min(full)).map(key).collect();
            bf(&mut rb, "BF.MADD", &chunk);
        }
        rows.push(measure(
            &mut con,
            "RedisBloom BF.MADD",
            "add, batched",
            n,
            trips,
            || {
                for chunk in inserted.chunks(ROUND_TRIP) {
                    bf(&mut rb, "BF.MADD", chunk);
                }
            },
        ));
        rows.push(measure(
            &mut con,
            "RedisBloom BF.MEXISTS",
            "query, batched",
            n,
            trips,
            || {
                for chunk in inserted.chunks(ROUND_TRIP) {
                    assert!(
                        bf(&mut rb, "BF.MEXISTS", chunk)
                            .iter()
                            .flatten()
                            .all(|&y| y == 1)
                    );
                }
            },
        ));
        let fp: i64 = absent
            .chunks(ROUND_TRIP)
            .map(|c| bf(&mut rb, "BF.MEXISTS", c).iter().flatten().sum::<i64>())
            .sum();
        rows.push(measure(
            &mut con,
            "RedisBloom BF.EXISTS",
            "query, single",
            SINGLES,
            SINGLES,
            || {
                for key in &inserted[..SINGLES] {
                    let y: i64 = redis::cmd("BF.EXISTS")
                        .arg("rb")
                        .arg(key)
                        .query(&mut rb)
                        .unwrap();
                    assert_eq!(y, 1);
                }
            },
        ));
        let info: Vec<Value> = redis::cmd("BF.INFO").arg("rb").query(&mut con).unwrap();
        let size = info
            .iter()
            .position(|v| matches!(v, Value::SimpleString(s) if s == "Size"))
            .and_then(|i| match &info[i + 1] {
                Value::Int(b) => Some(*b as f64),
                _ => None,
            })
            .unwrap_or(f64::NAN);
        sizes.push((
            "RedisBloom".to_string(),
            size * 8.0 / full as f64,
            fp as f64 / PROBES as f64,
            0,
        ));
    }

    // The ceiling of one command per key: pipelined PING.
    let mut ping = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    rows.push(measure(
        &mut con,
        "PING (one command per key)",
        "batched",
        n,
        trips,
        || {
            for start in (0..n).step_by(ROUND_TRIP) {
                let mut p = redis::pipe();
                for _ in start..(start + ROUND_TRIP).min(n) {
                    p.cmd("PING");
                }
                p.query::<Vec<String>>(&mut ping).unwrap();
            }
        },
    ));

    print_tables(full, n, &rows, &sizes);
}

/// The design with fewer than one command per lookup: the lines in "page" keys of 1 or 16
/// lines each, read with `MGET` of 1,000 pages (a prototype here, single server only; a
/// cluster would need the pages of one `MGET` in one slot).
fn pages(
    con: &mut Connection,
    url: &str,
    filter: &linebloom::BlockedBloom,
    hashes: &[u64],
    full: usize,
    rows: &mut Vec<Row>,
    sizes: &mut Vec<(String, f64, f64, u32)>,
) {
    let bytes = filter.to_bytes();
    let lines = &bytes[linebloom::format::HEADER_LEN..][..filter.size_bytes()];
    let n = hashes.len();
    let k = filter.k();
    let mut reader = redis::Client::open(url).unwrap().get_connection().unwrap();
    for per_page in [1usize, 16] {
        let name = |page: usize| format!("lbp{per_page}:{page}");
        let before = used_memory(con);
        for (c, group) in lines
            .chunks(per_page * 64)
            .collect::<Vec<_>>()
            .chunks(1_000)
            .enumerate()
        {
            let mut mset = redis::cmd("MSET");
            for (j, page) in group.iter().enumerate() {
                mset.arg(name(c * 1_000 + j)).arg(*page);
            }
            mset.query::<()>(con).unwrap();
        }
        let memory = used_memory(con) - before;
        let design = format!("linebloom pages of {per_page} line(s), MGET");
        let trips = n.div_ceil(ROUND_TRIP);
        rows.push(measure(con, &design, "query, batched", n, trips, || {
            for chunk in hashes.chunks(ROUND_TRIP) {
                let at: Vec<usize> = chunk
                    .iter()
                    .map(|&h| linebloom::hash::reduce(h, filter.num_lines()))
                    .collect();
                let mut p = redis::pipe();
                for part in at.chunks(PER_COMMAND) {
                    let mut mget = redis::cmd("MGET");
                    for &line in part {
                        mget.arg(name(line / per_page));
                    }
                    p.add_command(mget);
                }
                let replies: Vec<Vec<Vec<u8>>> = p.query(&mut reader).unwrap();
                for ((&h, &line), page) in chunk.iter().zip(&at).zip(replies.iter().flatten()) {
                    let start = (line % per_page) * 64;
                    let mut words = [0u32; 16];
                    for (w, b) in words.iter_mut().zip(page[start..start + 64].chunks(4)) {
                        *w = u32::from_le_bytes(b.try_into().unwrap());
                    }
                    let mask = linebloom::internals::lookup_mask_for(h, k);
                    let line = linebloom::blocked::Line::from_words(words);
                    assert!(linebloom::internals::line_test(&line, mask));
                }
            }
        }));
        sizes.push((
            format!("{design} (server memory)"),
            memory as f64 * 8.0 / full as f64,
            f64::NAN,
            k,
        ));
        let pages = lines.len().div_ceil(per_page * 64);
        for start in (0..pages).step_by(1_000) {
            let mut del = redis::cmd("UNLINK");
            for page in start..(start + 1_000).min(pages) {
                del.arg(name(page));
            }
            del.query::<()>(con).unwrap();
        }
    }
}

fn used_memory(con: &mut Connection) -> i64 {
    let info: String = redis::cmd("INFO").arg("memory").query(con).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Writes `bytes` to the string `key` with `SETRANGE`, 64 MiB at a time.
fn upload(con: &mut Connection, key: &str, bytes: &[u8]) {
    for (i, piece) in bytes.chunks(UPLOAD).enumerate() {
        redis::cmd("SETRANGE")
            .arg(key)
            .arg(i * UPLOAD)
            .arg(piece)
            .query::<()>(con)
            .unwrap();
    }
}

fn print_tables(full: usize, n: usize, rows: &[Row], sizes: &[(String, f64, f64, u32)]) {
    println!(
        "Filters of {full} keys, {FPR} target FPR; {n} keys timed, {ROUND_TRIP} keys per round \
         trip when batched\n"
    );
    println!(
        "| design | operation | M keys/s | server CPU µs/key | commands/key | round trips/key \
         | bytes in/key | bytes out/key |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let per = |x: f64| x / r.keys as f64;
        println!(
            "| {} | {} | {:.3} | {:.2} | {:.3} | {:.4} | {:.0} | {:.0} |",
            r.design,
            r.op,
            r.keys as f64 / r.secs / 1e6,
            per(r.cpu) * 1e6,
            per(r.commands as f64),
            per(r.round_trips as f64),
            per(r.net_in as f64),
            per(r.net_out as f64),
        );
    }
    println!("\n| filter | bits/key | measured FPR | k |\n|---|---:|---:|---:|");
    for (name, bits, fpr, k) in sizes {
        let k = if *k == 0 {
            "-".to_string()
        } else {
            k.to_string()
        };
        let fpr = if fpr.is_nan() {
            "-".to_string()
        } else {
            format!("{:.3} %", fpr * 100.0)
        };
        println!("| {name} | {bits:.2} | {fpr} | {k} |");
    }
}
