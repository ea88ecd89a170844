//! RedisBloom against this module on the same `redis-server`, with the same client: `BF.MADD`
//! and `BF.MEXISTS` keys per second, the server's CPU per key, bytes per key and the measured
//! false-positive rate of `BF.RESERVE bf 0.01 KEYS`.
//!
//! Each module is loaded into its own server process (the two implement the same commands, so
//! one server cannot load both), started here on a free loopback port with the same arguments
//! and no persistence. Commands carry 1,000 keys each and go 16 to a round trip; every round
//! trip is encoded (by the `redis` crate) before the clock starts, and the replies are counted
//! straight off the socket, so the client's timed work is small and the same for both. The two
//! servers take turns round trip by round trip, so both meet the same load from the rest of the
//! machine; the tables give the median over the rounds.
//!
//! Up to [`TIMED`] keys, every round reserves a fresh filter, adds all KEYS keys (`BF.MADD` of
//! new keys into the filling filter), asks for them (`BF.MEXISTS`, present) and for KEYS keys
//! never added (absent). Past it, each filter is first filled, untimed, with all but
//! `ROUNDS * TIMED` keys; each round then adds `TIMED` new keys (the filter holds KEYS after
//! the last round), asks for `TIMED` present and `TIMED` absent ones. The FPR is then measured
//! on the full filter with KEYS absent keys.
//!
//! Per key, "server CPU" is the change of `used_cpu_user + used_cpu_sys` (all the server's
//! work: reading, parsing, the command, the reply) and "command" the change of the command's
//! `usec` in `INFO commandstats` (the module's function alone, its reply building included).
//! A `BF.MEXISTS` of a key that does not exist (both modules answer all zeros without
//! touching a filter) gives the floor of a command that does no filter work.
//!
//! ```text
//! cargo run --release -p linebloom-module --example bf_compare -- KEYS PATH/redisbloom.so [ROUNDS]
//! ```
//! `results/module.md` holds runs and says where `redisbloom.so` comes from; the module under
//! test is the one cargo builds beside this example (or `LINEBLOOM_MODULE`).

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Instant;

use common::Server;
use redis::{Connection, Value};

/// Keys per `BF.MADD` / `BF.MEXISTS` command.
const PER_COMMAND: usize = 1_000;
/// Commands per round trip.
const DEPTH: usize = 16;
/// Keys timed per operation and round when the filter holds more.
const TIMED: u64 = 2_000_000;
/// The error rate asked for.
const ERROR_RATE: f64 = 0.01;
/// The filter's key.
const KEY: &str = "bf";

fn key(i: u64) -> String {
    format!("key:{i}")
}

/// Round trips encoded ahead of time: each one's bytes and its number of commands.
struct Trips {
    trips: Vec<(Vec<u8>, usize)>,
    keys: u64,
}

/// `command KEY item...` over the keys `range` (mapped through [`key`]), packed.
fn pack(command: &str, target: &str, range: std::ops::Range<u64>) -> Trips {
    let keys = range.end - range.start;
    let per_trip = (PER_COMMAND * DEPTH) as u64;
    let mut trips = Vec::new();
    let mut start = range.start;
    while start < range.end {
        let end = (start + per_trip).min(range.end);
        let mut pipe = redis::pipe();
        let mut at = start;
        let mut commands = 0;
        while at < end {
            let stop = (at + PER_COMMAND as u64).min(end);
            let cmd = pipe.cmd(command).arg(target);
            for i in at..stop {
                cmd.arg(key(i));
            }
            commands += 1;
            at = stop;
        }
        trips.push((pipe.get_packed_pipeline(), commands));
        start = end;
    }
    Trips { trips, keys }
}

/// A connection that sends packed commands and reads their replies straight off the socket:
/// the timed client work is a write and a scan of the reply bytes, so the servers' differences
/// are not hidden under a client's reply decoding.
struct Pipe {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    line: Vec<u8>,
}

impl Pipe {
    fn connect(port: u16) -> Self {
        let writer = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
        writer.set_nodelay(true).unwrap();
        let reader = BufReader::with_capacity(1 << 16, writer.try_clone().unwrap());
        Pipe {
            writer,
            reader,
            line: Vec::new(),
        }
    }

    /// The next reply line, without its `\r\n`.
    fn next_line(&mut self) -> &[u8] {
        self.line.clear();
        self.reader.read_until(b'\n', &mut self.line).unwrap();
        assert!(self.line.ends_with(b"\r\n"), "a cut reply: {:?}", self.line);
        &self.line[..self.line.len() - 2]
    }

    /// The number of 1s in an array reply of integers (RESP2 sends the booleans as 1 and 0).
    fn count_ones(&mut self) -> u64 {
        let head = self.next_line();
        let items: usize = match head.split_first() {
            Some((b'*', n)) => std::str::from_utf8(n).unwrap().parse().unwrap(),
            _ => panic!("unexpected reply {}", String::from_utf8_lossy(head)),
        };
        let mut ones = 0;
        for _ in 0..items {
            match self.next_line() {
                b":1" => ones += 1,
                b":0" => {}
                other => panic!("unexpected item {}", String::from_utf8_lossy(other)),
            }
        }
        ones
    }
}

/// Sends the round trips in order; returns the number of 1s answered.
fn send(pipe: &mut Pipe, trips: &Trips) -> u64 {
    trips.trips.iter().map(|trip| send_one(pipe, trip)).sum()
}

/// Sends one round trip; returns the number of 1s answered.
fn send_one(pipe: &mut Pipe, (bytes, commands): &(Vec<u8>, usize)) -> u64 {
    pipe.writer.write_all(bytes).unwrap();
    (0..*commands).map(|_| pipe.count_ones()).sum()
}

/// The server's counters that a measurement reads before and after.
struct Counters {
    cpu: f64,
    usec: f64,
}

fn info(con: &mut Connection, sections: &[&str]) -> String {
    redis::cmd("INFO").arg(sections).query(con).unwrap()
}

fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
}

fn counters(con: &mut Connection, command: &str) -> Counters {
    let text = info(con, &["cpu", "commandstats"]);
    let number = |name: &str| -> f64 {
        field(&text, name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    // `cmdstat_bf.madd:calls=…,usec=…,usec_per_call=…`, the name as the module registered
    // it (RedisBloom's lower case, this module's upper case).
    let usec = field(
        &text.to_lowercase(),
        &format!("cmdstat_{}", command.to_lowercase()),
    )
    .and_then(|v| {
        v.split(',')
            .find_map(|kv| kv.strip_prefix("usec="))
            .and_then(|u| u.parse().ok())
    })
    .unwrap_or(0.0);
    Counters {
        cpu: number("used_cpu_user") + number("used_cpu_sys"),
        usec,
    }
}

/// One timed operation on one server.
#[derive(Clone)]
struct Sample {
    keys_per_sec: f64,
    /// Seconds of each round trip, in order.
    trip_secs: Vec<f64>,
    cpu_us_per_key: f64,
    command_us_per_key: f64,
    ones: u64,
}

/// Times the same round trips on every target, taking turns round trip by round trip (the
/// first to go alternating), so that both meet the same load from the rest of the machine.
fn measure(targets: &mut [Target], command: &str, trips: &Trips) -> Vec<Sample> {
    let before: Vec<Counters> = targets
        .iter_mut()
        .map(|t| counters(&mut t.con, command))
        .collect();
    let mut secs = vec![Vec::with_capacity(trips.trips.len()); targets.len()];
    let mut ones = vec![0; targets.len()];
    for (i, trip) in trips.trips.iter().enumerate() {
        for turn in 0..targets.len() {
            let which = (turn + i) % targets.len();
            let started = Instant::now();
            ones[which] += send_one(&mut targets[which].pipe, trip);
            secs[which].push(started.elapsed().as_secs_f64());
        }
    }
    let keys = trips.keys as f64;
    targets
        .iter_mut()
        .enumerate()
        .zip(secs)
        .map(|((which, t), trip_secs)| {
            let after = counters(&mut t.con, command);
            Sample {
                keys_per_sec: keys / trip_secs.iter().sum::<f64>(),
                trip_secs,
                cpu_us_per_key: (after.cpu - before[which].cpu) * 1e6 / keys,
                command_us_per_key: (after.usec - before[which].usec) / keys,
                ones: ones[which],
            }
        })
        .collect()
}

/// The operations each round times, in order.
const OPERATIONS: [(&str, &str); 4] = [
    ("BF.MADD", "add new keys"),
    ("BF.MEXISTS", "present keys"),
    ("BF.MEXISTS", "absent keys"),
    ("BF.MEXISTS", "missing filter"),
];

/// One module under test.
struct Target {
    name: &'static str,
    _server: Server,
    con: Connection,
    /// The connection the timed commands go through.
    pipe: Pipe,
    /// Per operation, one sample per round.
    samples: Vec<Vec<Sample>>,
    memory: i64,
    false_positives: u64,
    probes: u64,
}

impl Target {
    fn start(name: &'static str, module: &Path) -> Self {
        let server = Server::start_loading(
            &format!("bf-compare-{}", name.to_lowercase()),
            module,
            &["--save", "", "--appendonly", "no"],
        );
        let con = server.connect();
        let pipe = Pipe::connect(server.port);
        Target {
            name,
            _server: server,
            con,
            pipe,
            samples: vec![Vec::new(); OPERATIONS.len()],
            memory: 0,
            false_positives: 0,
            probes: 0,
        }
    }

    fn reserve(&mut self, keys: u64) {
        let _: i64 = redis::cmd("DEL").arg(KEY).query(&mut self.con).unwrap();
        redis::cmd("BF.RESERVE")
            .arg(KEY)
            .arg(ERROR_RATE)
            .arg(keys)
            .query::<()>(&mut self.con)
            .unwrap();
    }

    /// Adds the keys `range`, untimed, encoding one round trip at a time.
    fn fill(&mut self, range: std::ops::Range<u64>) {
        let per_trip = (PER_COMMAND * DEPTH) as u64;
        let mut start = range.start;
        while start < range.end {
            let end = (start + per_trip).min(range.end);
            send(&mut self.pipe, &pack("BF.MADD", KEY, start..end));
            start = end;
        }
    }

    /// Asks for the absent keys `range`, untimed, and counts the false positives.
    fn probe(&mut self, range: std::ops::Range<u64>) {
        let per_trip = (PER_COMMAND * DEPTH) as u64;
        let mut start = range.start;
        while start < range.end {
            let end = (start + per_trip).min(range.end);
            self.false_positives += send(&mut self.pipe, &pack("BF.MEXISTS", KEY, start..end));
            start = end;
        }
        self.probes += range.end - range.start;
    }

    fn module_version(&mut self) -> String {
        let list: Value = redis::cmd("MODULE")
            .arg("LIST")
            .query(&mut self.con)
            .unwrap();
        let Value::Array(modules) = list else {
            return "?".into();
        };
        let mut out = Vec::new();
        for m in modules {
            let pairs: Vec<(Value, Value)> = match m {
                Value::Array(flat) => flat
                    .chunks(2)
                    .map(|p| (p[0].clone(), p[1].clone()))
                    .collect(),
                Value::Map(pairs) => pairs,
                _ => continue,
            };
            let get = |name: &str| {
                pairs.iter().find_map(|(k, v)| match k {
                    Value::BulkString(b) if b == name.as_bytes() => Some(v.clone()),
                    Value::SimpleString(s) if s == name => Some(v.clone()),
                    _ => None,
                })
            };
            let name = match get("name") {
                Some(Value::BulkString(b)) => String::from_utf8_lossy(&b).into_owned(),
                Some(Value::SimpleString(s)) => s,
                _ => "?".into(),
            };
            let version = match get("ver") {
                Some(Value::Int(v)) => v,
                _ => 0,
            };
            out.push(format!("{name} {version}"));
        }
        out.join(", ")
    }
}

/// The median of some values (the mean of the two middle ones for an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(redisbloom)) = (args.first(), args.get(1)) else {
        eprintln!("usage: bf_compare KEYS PATH/redisbloom.so [ROUNDS]");
        std::process::exit(2);
    };
    let n: u64 = n.parse().expect("KEYS: a number of keys");
    let rounds: u64 = args.get(2).map_or(5, |r| r.parse().expect("ROUNDS"));
    // Absolute: the server loads modules after moving into its scratch directory.
    let absolute = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    let redisbloom = absolute(PathBuf::from(redisbloom));
    let linebloom = absolute(common::module_path());

    let mut targets = [
        Target::start("RedisBloom", &redisbloom),
        Target::start("linebloom", &linebloom),
    ];
    let server_info = info(&mut targets[0].con, &["server"]);
    let versions: Vec<String> = targets.iter_mut().map(Target::module_version).collect();

    // Up to TIMED keys every round fills a fresh filter; past it the rounds add the last
    // ROUNDS * TIMED keys of one filter filled first.
    let rolling = n > TIMED;
    let timed = n.min(TIMED);
    let filled = if rolling {
        n.checked_sub(rounds * TIMED)
            .expect("KEYS at least ROUNDS * 2,000,000 past 2,000,000")
    } else {
        0
    };
    if rolling {
        for t in &mut targets {
            eprintln!("{}: filling {filled} keys", t.name);
            let started = Instant::now();
            t.reserve(n);
            t.fill(0..filled);
            eprintln!("  {:.1} s", started.elapsed().as_secs_f64());
        }
    }
    for round in 0..rounds {
        let (add, present, absent) = if rolling {
            let from = filled + round * timed;
            (
                from..from + timed,
                round * timed..(round + 1) * timed,
                n + round * timed..n + (round + 1) * timed,
            )
        } else {
            (0..n, 0..n, n..2 * n)
        };
        let plans = [
            pack("BF.MADD", KEY, add),
            pack("BF.MEXISTS", KEY, present),
            pack("BF.MEXISTS", KEY, absent),
            pack("BF.MEXISTS", "no-such-filter", 0..timed),
        ];
        if !rolling {
            for t in &mut targets {
                t.reserve(n);
            }
        }
        for (op, plan) in plans.iter().enumerate() {
            let samples = measure(&mut targets, OPERATIONS[op].0, plan);
            for (t, sample) in targets.iter_mut().zip(samples) {
                if op == 1 {
                    assert_eq!(sample.ones, plan.keys, "{}: a wrong no", t.name);
                }
                if op == 2 && !rolling {
                    t.false_positives += sample.ones;
                    t.probes += plan.keys;
                }
                t.samples[op].push(sample);
            }
        }
        for t in &targets {
            eprintln!(
                "round {round} {:<10} MADD {:.2} M/s, MEXISTS {:.2} / {:.2} M/s",
                t.name,
                t.samples[0].last().unwrap().keys_per_sec / 1e6,
                t.samples[1].last().unwrap().keys_per_sec / 1e6,
                t.samples[2].last().unwrap().keys_per_sec / 1e6,
            );
        }
    }
    for t in &mut targets {
        if rolling {
            eprintln!("{}: measuring the FPR with {n} absent keys", t.name);
            t.probe(n..2 * n);
        }
        t.memory = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(KEY)
            .query(&mut t.con)
            .unwrap();
    }

    print_tables(n, rounds, timed, rolling, &server_info, &versions, &targets);
}

fn print_tables(
    n: u64,
    rounds: u64,
    timed: u64,
    rolling: bool,
    server_info: &str,
    versions: &[String],
    targets: &[Target],
) {
    let version = field(server_info, "redis_version").unwrap_or_default();
    println!(
        "`BF.RESERVE bf {ERROR_RATE} {n}`; redis-server {version}; modules: {}",
        versions.join("; ")
    );
    if rolling {
        println!(
            "Filled with {} keys first; each of {rounds} rounds times {timed} keys per operation \
             (the adds are new keys, so the filter holds {n} after the last round).",
            n - rounds * timed
        );
    } else {
        println!(
            "Each of {rounds} rounds reserves a fresh filter and times {timed} keys per operation."
        );
    }
    println!(
        "{PER_COMMAND} keys per command, {DEPTH} commands per round trip; medians over the \
         rounds.\n"
    );
    println!(
        "| operation | module | M keys/s | range over rounds | server CPU µs/key | command µs/key |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (op, (command, what)) in OPERATIONS.iter().enumerate() {
        for t in targets {
            let s = &t.samples[op];
            let rates: Vec<f64> = s.iter().map(|x| x.keys_per_sec / 1e6).collect();
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(0.0, f64::max);
            println!(
                "| {command}, {what} | {} | {:.2} | {lo:.2}-{hi:.2} | {:.3} | {:.3} |",
                t.name,
                median(rates),
                median(s.iter().map(|x| x.cpu_us_per_key).collect()),
                median(s.iter().map(|x| x.command_us_per_key).collect()),
            );
        }
    }
    let [rb, lb] = targets else {
        return;
    };
    println!(
        "\n| operation | linebloom / RedisBloom keys/s | per round (median) | per round-trip pair \
         (median) | server CPU per key, linebloom / RedisBloom |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (op, (command, what)) in OPERATIONS.iter().enumerate() {
        let med = |t: &Target, f: fn(&Sample) -> f64| median(t.samples[op].iter().map(f).collect());
        let per_round: Vec<f64> = lb.samples[op]
            .iter()
            .zip(&rb.samples[op])
            .map(|(l, r)| l.keys_per_sec / r.keys_per_sec)
            .collect();
        // Each round trip was sent to one server right after the other: the pair's ratio is
        // the comparison least touched by the load of the rest of the machine.
        let per_pair: Vec<f64> = lb.samples[op]
            .iter()
            .zip(&rb.samples[op])
            .flat_map(|(l, r)| l.trip_secs.iter().zip(&r.trip_secs).map(|(l, r)| r / l))
            .collect();
        println!(
            "| {command}, {what} | {:.2}x | {:.2}x | {:.2}x | {:.2} |",
            med(lb, |s| s.keys_per_sec) / med(rb, |s| s.keys_per_sec),
            median(per_round),
            median(per_pair),
            med(lb, |s| s.cpu_us_per_key) / med(rb, |s| s.cpu_us_per_key),
        );
    }
    println!(
        "\n| module | MEMORY USAGE bytes | bytes/key | bits/key | measured FPR | absent keys |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for t in targets {
        println!(
            "| {} | {} | {:.3} | {:.2} | {:.3} % | {} |",
            t.name,
            t.memory,
            t.memory as f64 / n as f64,
            t.memory as f64 * 8.0 / n as f64,
            t.false_positives as f64 * 100.0 / t.probes as f64,
            t.probes,
        );
    }
}
