//! Reaching a shared filter's server: where the URL comes from (never the command line for a
//! password), ACL users, timeouts and TLS, and what every failure prints: one line on stderr,
//! the server's own words, and never a password. Real `redis-server` processes, started here.

mod common;
#[path = "common/redis_server.rs"]
mod redis_server;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{linebloom, run, scratch, stderr, stdout, write_keys};
use linebloom::Error;
use linebloom::redis::{ConnectOptions, RedisBlockedBloom};
use redis_server::{RedisCluster, RedisServer, TestCa};

/// `linebloom redis ARGS`, with none of the URL variables of the environment the tests run in.
fn redis(args: &[&str]) -> Command {
    let mut c = linebloom();
    c.arg("redis")
        .args(args)
        .env_remove("LINEBLOOM_REDIS_URL")
        .env_remove("REDIS_URL");
    c
}

/// A failure: non-zero exit, exactly one line on stderr that mentions `mentions` and does not
/// contain `password`, no panic. Returns the line.
fn assert_one_line_failure(o: &Output, mentions: &str, password: &str) -> String {
    let err = stderr(o);
    assert!(!o.status.success(), "succeeded: {}", stdout(o));
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(!err.contains("panicked"), "stderr: {err}");
    assert!(!err.contains(password), "the password is in: {err}");
    assert!(err.contains(mentions), "expected {mentions:?} in: {err}");
    err.trim_end().to_owned()
}

fn assert_success(o: &Output) -> String {
    assert!(o.status.success(), "stderr: {}", stderr(o));
    stdout(o)
}

#[test]
fn every_failure_is_one_line_without_the_password() {
    let server = RedisServer::start("access-errors");
    let port = server.port;
    server.add_user("alice", "alicePW9", &["~*", "+@all"]);
    server.add_user(
        "reader",
        "readerPW7",
        &["~*", "+hget", "+type", "+strlen", "+info"],
    );
    let alice = format!("redis://alice:alicePW9@127.0.0.1:{port}");
    assert_success(&run(redis(&[
        "create", "f", "--items", "1000", "--fpr", "0.01",
    ])
    .env("LINEBLOOM_REDIS_URL", &alice)));
    let dead = redis_server::free_port();
    let cases: [(&str, String, &str, &str); 9] = [
        (
            "wrong password",
            format!("redis://alice:WRONGpw1@127.0.0.1:{port}"),
            "WRONGpw1",
            "authentication failed",
        ),
        (
            "unknown user",
            format!("redis://mallory:malloryPW3@127.0.0.1:{port}"),
            "malloryPW3",
            "authentication failed",
        ),
        (
            "password-only URL, no password set",
            format!("redis://:defaultPW2@127.0.0.1:{port}"),
            "defaultPW2",
            "authentication failed",
        ),
        (
            "filter not found",
            format!("redis://alice:alicePW9@127.0.0.1:{port}"),
            "alicePW9",
            "no linebloom filter named \"nofilter\" at redis://alice:***@",
        ),
        (
            "unreachable port",
            format!("redis://alice:alicePW9@127.0.0.1:{dead}"),
            "alicePW9",
            "unavailable",
        ),
        (
            "database out of range",
            format!("redis://alice:alicePW9@127.0.0.1:{port}/99"),
            "alicePW9",
            "DB index is out of range",
        ),
        (
            "ACL denial",
            format!("redis://reader:readerPW7@127.0.0.1:{port}"),
            "readerPW7",
            "no permissions to run the 'getrange' command",
        ),
        (
            "URL that does not parse",
            format!("redis://alice:alicePW9@127.0.0.1:{port}x"),
            "alicePW9",
            "Redis URL",
        ),
        (
            "cluster seed list, every node dead",
            format!("redis://alice:alicePW9@127.0.0.1:{dead},redis://alice:alicePW9@127.0.0.1:1"),
            "alicePW9",
            "alice:***@",
        ),
    ];
    let keys = write_keys(&scratch("access-errors"), 10);
    for (case, url, password, mentions) in &cases {
        let name = if *case == "filter not found" {
            "nofilter"
        } else {
            "f"
        };
        // Through --url and through the environment: the same line.
        for (how, o) in [
            (
                "--url",
                run(redis(&["query", name, "--url", url, "--input"]).arg(&keys)),
            ),
            (
                "env",
                run(redis(&["query", name, "--input"])
                    .arg(&keys)
                    .env("LINEBLOOM_REDIS_URL", url)),
            ),
        ] {
            let line = assert_one_line_failure(&o, mentions, password);
            assert!(
                !line.contains("Kind") && !line.contains(" {"),
                "{case}: {line}"
            );
            println!("{case} ({how}): {line}");
        }
    }
    // The same for create, add and stats against the denied user.
    let reader = format!("redis://reader:readerPW7@127.0.0.1:{port}");
    for args in [
        &["create", "g", "--items", "10", "--fpr", "0.01"][..],
        &["add", "f", "--input", keys.to_str().unwrap()],
        &["stats", "f"],
    ] {
        let o = run(redis(args).env("REDIS_URL", &reader));
        let line = assert_one_line_failure(&o, "NOPERM", "readerPW7");
        println!("ACL denial ({}): {line}", args[0]);
    }
}

#[test]
fn a_user_without_info_is_served_as_a_single_node() {
    let server = RedisServer::start("access-noinfo");
    server.add_user("noinfo", "noinfoPW5", &["~*", "+@all", "-info"]);
    let url = format!("redis://noinfo:noinfoPW5@127.0.0.1:{}", server.port);
    let dir = scratch("access-noinfo");
    let keys = write_keys(&dir, 2_000);
    let with_url = |args: &[&str]| run(redis(args).env("LINEBLOOM_REDIS_URL", &url));
    assert_success(&with_url(&[
        "create", "f", "--items", "2000", "--fpr", "0.01",
    ]));
    let out = assert_success(&with_url(&["add", "f", "--input", keys.to_str().unwrap()]));
    assert!(out.contains("2000 keys added"), "{out}");
    let out = assert_success(&with_url(&[
        "query",
        "f",
        "--input",
        keys.to_str().unwrap(),
    ]));
    assert_eq!(out.lines().count(), 2_000);
    assert!(
        out.lines().all(|l| l.ends_with("\tyes")),
        "a false negative"
    );
    let out = assert_success(&with_url(&["stats", "f", "--json"]));
    assert!(out.contains("\"cluster\":false"), "{out}");
}

#[test]
fn a_cluster_node_seen_as_a_single_server_says_what_to_do() {
    let cluster = RedisCluster::start("access-moved");
    for node in &cluster.nodes {
        node.add_user("noinfo", "noinfoPW5", &["~*", "+@all", "-info"]);
    }
    let url = format!(
        "redis://noinfo:noinfoPW5@127.0.0.1:{}",
        cluster.nodes[0].port
    );
    // Six shards with their own hash tags: some live on the other nodes.
    let o = run(redis(&[
        "create", "f", "--items", "1000", "--fpr", "0.01", "--shards", "6",
    ])
    .env("LINEBLOOM_REDIS_URL", &url));
    let line = assert_one_line_failure(&o, "Redis Cluster node", "noinfoPW5");
    assert!(line.contains("+info") && line.contains("MOVED"), "{line}");
    println!("cluster node without +info: {line}");
}

#[test]
fn the_url_comes_from_the_environment_or_a_file_never_argv() {
    let server = RedisServer::start("access-sources");
    server.add_user("alice", "alicePW9", &["~*", "+@all"]);
    let url = format!("redis://alice:alicePW9@127.0.0.1:{}", server.port);
    let dead = format!(
        "redis://alice:alicePW9@127.0.0.1:{}",
        redis_server::free_port()
    );
    let dir = scratch("access-sources");
    let keys = write_keys(&dir, 500);
    let keys = keys.to_str().unwrap();
    let url_file = dir.join("redis-url");
    std::fs::write(
        &url_file,
        format!("  {url}  \n# the first line is the URL\n"),
    )
    .unwrap();
    let url_file = url_file.to_str().unwrap().to_owned();
    // Each source in turn; a source below the one used holds a dead URL, never read.
    type Source<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<&'a str>);
    let sources: [Source; 3] = [
        (
            "LINEBLOOM_REDIS_URL",
            vec![("LINEBLOOM_REDIS_URL", &url), ("REDIS_URL", &dead)],
            vec![],
        ),
        ("REDIS_URL", vec![("REDIS_URL", &url)], vec![]),
        (
            "--url-file",
            vec![("LINEBLOOM_REDIS_URL", &dead)],
            vec!["--url-file", &url_file],
        ),
    ];
    for (i, (source, env, extra)) in sources.iter().enumerate() {
        let name = format!("f{i}");
        let go = |args: &[&str]| {
            let mut c = redis(args);
            c.args(extra).envs(env.iter().copied());
            let argv: Vec<String> = c
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            assert!(!argv.concat().contains("alicePW9"), "a password on argv");
            run(&mut c)
        };
        assert_success(&go(&["create", &name, "--items", "500", "--fpr", "0.01"]));
        let out = assert_success(&go(&["add", &name, "--input", keys]));
        assert!(out.contains("500 keys added"), "{source}: {out}");
        let out = assert_success(&go(&["query", &name, "--input", keys]));
        assert_eq!(out.lines().count(), 500, "{source}");
        assert!(out.lines().all(|l| l.ends_with("\tyes")), "{source}");
    }
    // No URL anywhere: exit 2, one line naming the ways to give one.
    let o = run(&mut redis(&["stats", "f0"]));
    let line = assert_one_line_failure(&o, "--url-file", "alicePW9");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        line.contains("LINEBLOOM_REDIS_URL") && line.contains("REDIS_URL"),
        "{line}"
    );
    // An empty variable counts as unset.
    let o = run(redis(&["stats", "f0"])
        .env("LINEBLOOM_REDIS_URL", "")
        .env("REDIS_URL", &url));
    assert_success(&o);
    // A URL file that is missing, or whose first line is empty: exit 2, the file named, its
    // text never quoted.
    let missing = dir.join("no-such-file");
    let o = run(redis(&["stats", "f0", "--url-file"]).arg(&missing));
    assert_one_line_failure(&o, "no-such-file", "alicePW9");
    assert_eq!(o.status.code(), Some(2));
    let blank = dir.join("blank");
    std::fs::write(&blank, format!("\n{url}\n")).unwrap();
    let o = run(redis(&["stats", "f0", "--url-file"]).arg(&blank));
    assert_one_line_failure(&o, "empty", "alicePW9");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_stopped_server_times_out_and_says_so() {
    let server = RedisServer::start("access-timeout");
    let url = server.url();
    assert_success(&run(&mut redis(&[
        "create", "f", "--url", &url, "--items", "100", "--fpr", "0.01",
    ])));
    let paused = server.pause();
    let start = Instant::now();
    let o =
        run(redis(&["query", "f", "--url", &url, "--timeout", "1"])
            .stdin(std::process::Stdio::null()));
    let took = start.elapsed();
    drop(paused);
    let line = assert_one_line_failure(&o, "timed out after 1 s", "\u{0}");
    assert!(line.contains(&url), "{line}");
    assert!(took < Duration::from_secs(8), "took {took:?}");
    println!("timeout: {line}");
    // Resumed, it answers again; a zero or negative timeout is a usage error.
    assert_success(&run(
        redis(&["query", "f", "--url", &url]).stdin(std::process::Stdio::null())
    ));
    for bad in ["0", "-1", "nan", "1e30"] {
        let flag = format!("--timeout={bad}");
        let o = run(&mut redis(&["stats", "f", "--url", &url, &flag]));
        assert_one_line_failure(&o, "timeout", "\u{0}");
        assert_eq!(o.status.code(), Some(2), "--timeout {bad}");
    }
    // The library: the same through `ConnectOptions`.
    let options = ConnectOptions::default().timeout(Duration::from_millis(500));
    let _paused = server.pause();
    let e = RedisBlockedBloom::open_with(&url, "f", &options)
        .err()
        .unwrap();
    assert!(matches!(e, Error::Unavailable(_)), "{e}");
    assert!(e.to_string().contains("timed out after 0.5 s"), "{e}");
}

#[test]
fn tls_round_trip_with_a_private_ca_and_with_insecure() {
    let dir = scratch("access-tls");
    let ca = TestCa::make(&dir);
    let server = RedisServer::start_tls("access-tls", &ca);
    let url = server.tls_url();
    let keys = write_keys(&dir, 3_000);
    let keys = keys.to_str().unwrap();
    let ca_file = ca.ca_cert.to_str().unwrap();
    let insecure = format!("{url}/#insecure");
    for (name, url, trust) in [
        ("trusted", url.as_str(), vec!["--tls-ca", ca_file]),
        ("insecure", insecure.as_str(), vec![]),
    ] {
        let go = |args: &[&str]| {
            let mut c = redis(args);
            c.args(["--url", url]).args(&trust);
            run(&mut c)
        };
        assert_success(&go(&["create", name, "--items", "3000", "--fpr", "0.01"]));
        let out = assert_success(&go(&["add", name, "--input", keys]));
        assert!(out.contains("3000 keys added"), "{name}: {out}");
        let out = assert_success(&go(&["query", name, "--input", keys]));
        assert_eq!(out.lines().count(), 3_000, "{name}");
        assert!(out.lines().all(|l| l.ends_with("\tyes")), "{name}");
        let out = assert_success(&go(&["stats", name, "--json"]));
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let estimate = json["items_estimate"].as_f64().unwrap();
        assert!((estimate - 3_000.0).abs() < 300.0, "{name}: {json}");
    }
    // No trust in the server's CA: one line about the certificate.
    let secret = format!("rediss://:tlsPW4@127.0.0.1:{}", server.port);
    let o = run(&mut redis(&["stats", "trusted", "--url", &secret]));
    let line = assert_one_line_failure(&o, "certificate", "tlsPW4");
    println!("untrusted: {line}");
    // A CA file that is not PEM, or missing: exit 2.
    let o = run(&mut redis(&[
        "stats", "trusted", "--url", &url, "--tls-ca", keys,
    ]));
    assert_one_line_failure(&o, "CERTIFICATE", "\u{0}");
    assert_eq!(o.status.code(), Some(2));
    let o = run(&mut redis(&[
        "stats",
        "trusted",
        "--url",
        &url,
        "--tls-ca",
        "/nonexistent/ca.pem",
    ]));
    assert_one_line_failure(&o, "--tls-ca", "\u{0}");
    assert_eq!(o.status.code(), Some(2));
}
