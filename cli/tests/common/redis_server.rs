//! Real `redis-server` processes for tests and the comparison example: started on free
//! loopback ports in a scratch directory, stopped by PID when dropped. `.ci/run` installs
//! Debian's `redis-server` where it is missing.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One server process.
pub struct RedisServer {
    pub port: u16,
    pub dir: PathBuf,
    extra: Vec<String>,
    child: Option<Child>,
}

fn binary() -> &'static str {
    "redis-server"
}

/// A port that nothing listens on now, and whose cluster bus port (+10000) is free too.
pub fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        if port < 50_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

impl RedisServer {
    /// A server with no persistence, in its own scratch directory.
    pub fn start(name: &str) -> Self {
        Self::start_with(name, &["--save", "", "--appendonly", "no"])
    }

    /// A server with these extra `redis-server` arguments.
    pub fn start_with(name: &str, extra: &[&str]) -> Self {
        let dir =
            std::env::temp_dir().join(format!("linebloom-redis-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = RedisServer {
            port: 0,
            dir,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
        };
        // Another process may take the chosen port before the server binds it: try again.
        for _ in 0..5 {
            server.port = free_port();
            if server.launch() {
                return server;
            }
        }
        panic!("redis-server did not start (see {})", server.dir.display());
    }

    /// Starts the process again on the same port and directory (after `shutdown`), loading
    /// what it saved.
    pub fn restart(&mut self) {
        assert!(
            self.launch(),
            "redis-server did not restart on port {}",
            self.port
        );
    }

    fn launch(&mut self) -> bool {
        let child = Command::new(binary())
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", self.dir.to_str().unwrap(), "--daemonize", "no"])
            .args(["--logfile", "server.log", "--protected-mode", "no"])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "redis-server is not installed: `apt-get install -y redis-server` (.ci/run does)"
            ),
            Err(e) => panic!("cannot start redis-server: {e}"),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return false;
            }
            if ping(self.port) {
                self.child = Some(child);
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Sends one command (inline protocol) and returns the raw reply text.
    pub fn command(&self, args: &[&str]) -> String {
        raw_command(self.port, args)
    }

    /// `SHUTDOWN` with these modifiers (`SAVE`, `NOSAVE`), then waits for the process to end.
    pub fn shutdown(&mut self, how: &str) {
        let _ = raw_command(self.port, &["SHUTDOWN", how]);
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    /// Stops the process at once (SIGKILL): what a crashed or unplugged server looks like.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits for a process that was told to stop by someone else.
    pub fn child_reaped(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a server answers `PING` on the port.
fn ping(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port))
        .ok()
        .and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
            s.write_all(b"PING\r\n").ok()?;
            let mut buf = [0u8; 7];
            s.read_exact(&mut buf).ok()?;
            Some(&buf == b"+PONG\r\n")
        })
        .unwrap_or(false)
}

/// One command in RESP, its reply read until a short quiet spell (enough for test commands).
pub fn raw_command(port: u16, args: &[&str]) -> String {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    if s.write_all(req.as_bytes()).is_err() {
        return String::new();
    }
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Three cluster nodes (no replicas) on loopback, joined with `redis-cli --cluster create`.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    pub fn start(name: &str) -> Self {
        let nodes: Vec<RedisServer> = (0..3)
            .map(|i| {
                RedisServer::start_with(
                    &format!("{name}-{i}"),
                    &[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-node-timeout",
                        "5000",
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                    ],
                )
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli runs (it comes with redis-server)");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while !nodes
            .iter()
            .all(|n| n.command(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        {
            assert!(
                Instant::now() < deadline,
                "the cluster never reached state ok"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        RedisCluster { nodes }
    }

    /// Every node's URL, comma-separated.
    pub fn urls(&self) -> String {
        let urls: Vec<String> = self.nodes.iter().map(RedisServer::url).collect();
        urls.join(",")
    }
}

impl RedisServer {
    /// The server's process id (to stop it with SIGSTOP and resume it).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server runs").id()
    }

    /// Adds (or resets) the ACL user `name` with `password` and these rules (`~*`, `+get`,
    /// `+@all`, `-info`, ...), through `ACL SETUSER`.
    pub fn add_user(&self, name: &str, password: &str, rules: &[&str]) {
        let password = format!(">{password}");
        let mut args = vec!["ACL", "SETUSER", name, "reset", "on", password.as_str()];
        args.extend_from_slice(rules);
        let reply = self.command(&args);
        assert!(reply.starts_with("+OK"), "ACL SETUSER {name}: {reply}");
    }

    /// Stops the process with SIGSTOP until the returned guard is dropped (SIGCONT): a server
    /// that accepts connections (the kernel does) and never answers.
    pub fn pause(&self) -> Paused<'_> {
        signal(self.pid(), "-STOP");
        Paused(self)
    }

    /// A server that speaks only TLS (`--port 0 --tls-port P`), with `ca`'s server certificate
    /// and no client certificates asked for.
    pub fn start_tls(name: &str, ca: &TestCa) -> Self {
        let cert = |p: &Path| p.to_str().unwrap().to_owned();
        let extra = [
            "--port".to_owned(),
            "0".to_owned(),
            "--tls-cert-file".to_owned(),
            cert(&ca.server_cert),
            "--tls-key-file".to_owned(),
            cert(&ca.server_key),
            "--tls-ca-cert-file".to_owned(),
            cert(&ca.ca_cert),
            "--tls-auth-clients".to_owned(),
            "no".to_owned(),
            "--save".to_owned(),
            String::new(),
            "--appendonly".to_owned(),
            "no".to_owned(),
        ];
        let dir =
            std::env::temp_dir().join(format!("linebloom-redis-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = RedisServer {
            port: 0,
            dir,
            extra: extra.to_vec(),
            child: None,
        };
        for _ in 0..5 {
            server.port = free_port();
            if server.launch_tls() {
                return server;
            }
        }
        panic!(
            "redis-server did not start with TLS (see {})",
            server.dir.display()
        );
    }

    /// `launch` for a TLS-only server: the TLS port is `port`, and ready once it accepts a
    /// TCP connection (a plain PING gets no answer there).
    fn launch_tls(&mut self) -> bool {
        let mut child = Command::new(binary())
            .args(["--tls-port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", self.dir.to_str().unwrap(), "--daemonize", "no"])
            .args(["--logfile", "server.log", "--protected-mode", "no"])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                self.child = Some(child);
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    /// `rediss://127.0.0.1:PORT`.
    pub fn tls_url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.port)
    }
}

/// A server stopped by [`RedisServer::pause`]; dropping this resumes it.
pub struct Paused<'a>(&'a RedisServer);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        signal(self.0.pid(), "-CONT");
    }
}

/// `kill -SIGNAL PID`: one process, by its id.
fn signal(pid: u32, which: &str) {
    let status = Command::new("kill")
        .args([which, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {which} {pid}");
}

/// A certificate authority made for one test with the `openssl` command, and a server
/// certificate it signed for 127.0.0.1 and localhost (P-256 keys, valid two days).
pub struct TestCa {
    pub ca_cert: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
}

impl TestCa {
    /// Writes `ca.crt`, `ca.key`, `server.crt` and `server.key` into `dir`.
    pub fn make(dir: &Path) -> Self {
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(dir)
                .output()
                .expect("openssl is installed");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
        openssl(
            &[
                &["req", "-x509", "-new", "-nodes"][..],
                &ec,
                &["-keyout", "ca.key", "-out", "ca.crt", "-days", "2"],
                &["-subj", "/CN=linebloom test CA"],
            ]
            .concat(),
        );
        openssl(
            &[
                &["req", "-new", "-nodes"][..],
                &ec,
                &["-keyout", "server.key", "-out", "server.csr"],
                &["-subj", "/CN=localhost"],
            ]
            .concat(),
        );
        std::fs::write(
            dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        TestCa {
            ca_cert: dir.join("ca.crt"),
            server_cert: dir.join("server.crt"),
            server_key: dir.join("server.key"),
        }
    }
}
