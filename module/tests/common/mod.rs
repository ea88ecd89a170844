//! `redis-server` processes with the module loaded: started on free loopback ports in scratch
//! directories, stopped by PID when dropped (never by name). `.ci/run` installs Debian's
//! `redis-server` where it is missing.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::{Connection, ConnectionLike, Value};

/// The module's shared library: `LINEBLOOM_MODULE` if set, else the one cargo built beside
/// this test or example binary (`target/<profile>/deps/liblinebloom_module.so`).
pub fn module_path() -> PathBuf {
    if let Some(path) = std::env::var_os("LINEBLOOM_MODULE") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let here = exe.parent().expect("the test binary's folder");
    let profile = here.parent().unwrap_or(here);
    for dir in [
        here.to_path_buf(),
        profile.to_path_buf(),
        profile.join("deps"),
    ] {
        let candidate = dir.join("liblinebloom_module.so");
        if candidate.exists() {
            return candidate;
        }
    }
    panic!(
        "liblinebloom_module.so not found beside {} (cargo test -p linebloom-module builds it)",
        exe.display()
    );
}

/// One server process with a module loaded (this one unless [`Server::start_loading`] names
/// another).
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    module: PathBuf,
    extra: Vec<String>,
    child: Option<Child>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Server {
    /// A server without persistence.
    pub fn start(name: &str) -> Self {
        Self::start_with(name, &["--save", "", "--appendonly", "no"])
    }

    /// A server with these extra arguments, in a fresh scratch directory.
    pub fn start_with(name: &str, extra: &[&str]) -> Self {
        Self::start_loading(name, &module_path(), extra)
    }

    /// A server loading the module at `module` (this one or another that implements the same
    /// commands), with these extra arguments, in a fresh scratch directory.
    pub fn start_loading(name: &str, module: &Path, extra: &[&str]) -> Self {
        let dir =
            std::env::temp_dir().join(format!("linebloom-module-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = Server {
            port: 0,
            dir,
            module: module.to_path_buf(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
        };
        // Another process may take the port between the probe and the bind: try again.
        for _ in 0..5 {
            server.port = free_port();
            if server.launch() {
                return server;
            }
        }
        panic!("redis-server did not start (see {})", server.dir.display());
    }

    /// Starts the process again on the same port and directory, loading what it saved.
    pub fn restart(&mut self) {
        assert!(
            self.launch(),
            "redis-server did not restart (see {})",
            self.dir.display()
        );
    }

    fn launch(&mut self) -> bool {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", self.dir.to_str().unwrap(), "--daemonize", "no"])
            .args(["--logfile", "server.log", "--enable-debug-command", "yes"])
            .arg("--loadmodule")
            .arg(&self.module)
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                panic!("redis-server is not installed: `apt-get install -y redis-server`")
            }
            Err(e) => panic!("cannot start redis-server: {e}"),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return false;
            }
            if let Ok(mut con) = self.try_connect()
                && redis::cmd("PING").query::<String>(&mut con).is_ok()
            {
                self.child = Some(child);
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    fn try_connect(&self) -> redis::RedisResult<Connection> {
        redis::Client::open(format!("redis://127.0.0.1:{}", self.port))?
            .get_connection_with_timeout(Duration::from_secs(5))
    }

    /// A new connection.
    pub fn connect(&self) -> Connection {
        self.try_connect().expect("connect to the test server")
    }

    /// `SHUTDOWN` with a modifier (`SAVE`, `NOSAVE`), then waits for the process to end.
    pub fn shutdown(&mut self, how: &str) {
        if let Ok(mut con) = self.try_connect() {
            let _ = redis::cmd("SHUTDOWN").arg(how).query::<Value>(&mut con);
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    /// Whether the process is still running (a crash ends it).
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sends a command and returns the reply as it came, errors (nested ones too) included.
pub fn raw(con: &mut Connection, args: &[&[u8]]) -> Value {
    let mut cmd = redis::cmd(std::str::from_utf8(args[0]).unwrap());
    for a in &args[1..] {
        cmd.arg(*a);
    }
    con.req_command(&cmd).expect("a reply")
}

/// Sends a command given as words.
pub fn cmd(con: &mut Connection, words: &str) -> Value {
    let args: Vec<&[u8]> = words.split_whitespace().map(str::as_bytes).collect();
    raw(con, &args)
}

/// The error text of a reply that must be an error.
pub fn error_text(value: &Value) -> String {
    match value {
        Value::ServerError(e) => match e.details() {
            Some(details) => format!("{} {details}", e.code()),
            None => e.code().to_string(),
        },
        other => panic!("expected an error, got {other:?}"),
    }
}

/// The integers of an array reply (booleans read as 1 and 0).
pub fn ints(value: &Value) -> Vec<i64> {
    match value {
        Value::Array(items) => items.iter().map(int).collect(),
        other => panic!("expected an array, got {other:?}"),
    }
}

/// An integer reply (a boolean reads as 1 or 0).
pub fn int(value: &Value) -> i64 {
    match value {
        Value::Int(i) => *i,
        Value::Boolean(b) => i64::from(*b),
        other => panic!("expected an integer, got {other:?}"),
    }
}

/// Waits until `check` holds, polling every 20 ms, for up to 30 s.
pub fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out waiting for {what}");
}
