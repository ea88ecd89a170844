//! One connection to a single Redis/Valkey server or a Redis Cluster, with the two things the
//! filter needs from it: one command, and a pipeline of commands (one round trip per node).
//! A connection that failed is dropped and made again on the next request, so a server that
//! comes back is used again without reopening the filter.
//!
//! This file also owns how a connection is made ([`ConnectOptions`]: the timeout, TLS trust)
//! and what its errors say: one line, the server's own words for a refused command, the URLs
//! with their passwords hidden ([`super::redact_urls`]). It does not own what the filter asks.

use std::fmt;
use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterConnection, ClusterPipeline};
use redis::{Client, Cmd, Connection, ErrorKind, RedisError, ServerError, ServerErrorKind, Value};

use super::url::{passwords, redact_urls, scrub};
use crate::error::{Error, Result};

/// How often a cluster request is retried (redirections, a node failing over) before it is an
/// error.
const CLUSTER_RETRIES: u32 = 4;

/// The longest timeout accepted: a day. Longer ones are typos, and a deadline computed from an
/// unbounded `Duration` can overflow.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// How to reach the server(s): how long to wait, and which certificate authority to trust for
/// `rediss://`. The default waits [`Self::DEFAULT_TIMEOUT`] and trusts the system's roots.
///
/// ```
/// use std::time::Duration;
/// use linebloom::redis::ConnectOptions;
///
/// let pem = b"-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n".to_vec();
/// let options = ConnectOptions::default()
///     .timeout(Duration::from_secs(3))
///     .tls_ca_pem(pem);
/// # let _ = options;
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectOptions {
    timeout: Duration,
    tls_ca: Option<Vec<u8>>,
}

impl ConnectOptions {
    /// How long connecting, and waiting for one reply, may take by default.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// The defaults: [`Self::DEFAULT_TIMEOUT`], the system's trust roots.
    pub fn new() -> Self {
        Self {
            timeout: Self::DEFAULT_TIMEOUT,
            tls_ca: None,
        }
    }

    /// How long connecting (TLS handshake included), and waiting for one reply, may take before
    /// the request is an [`Error::Unavailable`] that says `timed out after N s`. More than zero,
    /// at most a day (checked when connecting).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Trust the certificate authorities in `pem` (PEM text, one or more `CERTIFICATE` blocks)
    /// for `rediss://` URLs, instead of the system's roots: a private CA's certificate. Plain
    /// `redis://` URLs ignore it. Needs the feature `redis-tls`.
    pub fn tls_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls_ca = Some(pem.into());
        self
    }

    fn check(&self) -> Result<()> {
        if self.timeout.is_zero() || self.timeout > MAX_TIMEOUT {
            return Err(Error::InvalidParameter {
                name: "connection timeout",
                value: format!("{} s", seconds(self.timeout)),
                allowed: "more than 0 s and at most a day (86400 s)",
            });
        }
        if let Some(pem) = &self.tls_ca
            && !pem
                .windows(CERT_BLOCK.len())
                .any(|w| w == CERT_BLOCK.as_bytes())
        {
            return Err(Error::InvalidParameter {
                name: "TLS CA certificate",
                value: format!("{} bytes without a {CERT_BLOCK} line", pem.len()),
                allowed: "PEM text with one or more CERTIFICATE blocks",
            });
        }
        Ok(())
    }
}

/// The line that opens a certificate in PEM.
const CERT_BLOCK: &str = "-----BEGIN CERTIFICATE-----";

impl Default for ConnectOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// Says whether a CA is set, not its bytes.
impl fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("timeout", &self.timeout)
            .field(
                "tls_ca",
                &self
                    .tls_ca
                    .as_ref()
                    .map(|p| format!("{} bytes of PEM", p.len())),
            )
            .finish()
    }
}

/// A duration in seconds as messages show it: `10`, `0.5`.
fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The cluster connection is boxed: it is several times the size of a single one.
enum Link {
    Single(Client, Option<Connection>),
    Cluster(ClusterClient, Box<Option<ClusterConnection>>),
}

/// A connection to the server(s) named by a URL list.
pub(crate) struct Conn {
    link: Link,
    says: Speaker,
}

/// What a connection's error messages need: the URLs as shown, the passwords to scrub from
/// redis-rs's texts (none is known to quote one: this is a second line of defence), and the
/// timeout to name.
struct Speaker {
    shown: String,
    secrets: Vec<String>,
    timeout: Duration,
}

impl Speaker {
    /// `e` as the crate's error: [`Error::Unavailable`] when the server could not be reached
    /// or talked to (refused, reset, timed out, TLS failed), [`Error::Server`] when it refused
    /// (a server error reply, a failed login). `single`: the link is to one node.
    fn error(&self, e: &RedisError, single: bool) -> Error {
        let text = format!("{}: {}", self.shown, self.describe(e, single));
        if e.is_io_error()
            || e.is_timeout()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.kind() == ErrorKind::ClusterConnectionNotFound
        {
            Error::Unavailable(text)
        } else {
            Error::Server(text)
        }
    }

    /// A server's error reply, as the crate's error.
    fn reply_error(&self, e: &ServerError, single: bool) -> Error {
        Error::Server(format!("{}: {}", self.shown, self.server_text(e, single)))
    }

    /// One line about `e`, in the server's words where it answered, with no Rust debug text.
    fn describe(&self, e: &RedisError, single: bool) -> String {
        if e.is_timeout() {
            return format!("timed out after {} s", seconds(self.timeout));
        }
        if let Some(errors) = e.clone().into_server_errors()
            && let Some((_, first)) = errors.first()
        {
            return self.server_text(first, single);
        }
        if e.kind() == ErrorKind::AuthenticationFailed {
            return "authentication failed: wrong user name or password, or the user is disabled"
                .into();
        }
        // redis-rs writes `description - Kind: detail`; the kind is a Rust debug name.
        let mut text = e.to_string();
        let kind = format!(" - {:?}", e.kind());
        if let Some(at) = text.find(&kind) {
            text.replace_range(at..at + kind.len(), "");
        }
        let mut text = text.replace(".: ", ": ");
        if text.contains("certificate") {
            text.push_str(
                " (the server's TLS certificate is not trusted: give the CA certificate that \
                 signed it, `--tls-ca FILE` or `ConnectOptions::tls_ca_pem`)",
            );
        }
        scrub(&text, &self.secrets)
    }

    /// A server error reply as the server wrote it (`NOPERM this user has no permissions to run
    /// the 'getrange' command`); a redirection on a single-node link says what to do.
    fn server_text(&self, e: &ServerError, single: bool) -> String {
        let text = match e.details() {
            Some(detail) => format!("{} {detail}", e.code()),
            None => e.code().to_owned(),
        };
        let text = scrub(&text, &self.secrets);
        let redirected = matches!(
            e.kind(),
            Some(ServerErrorKind::Moved | ServerErrorKind::Ask)
        );
        if redirected && single {
            format!(
                "the server is a Redis Cluster node (it answered {text}): grant the user +info \
                 so the cluster is detected, or list several cluster nodes, comma-separated"
            )
        } else {
            text
        }
    }
}

/// A reply as an error message shows it: its kind and size, or its short text.
pub(crate) fn reply_text(reply: &Value) -> String {
    match reply {
        Value::Nil => "nil".into(),
        Value::Int(n) => format!("the integer {n}"),
        Value::BulkString(b) => format!("a string of {} bytes", b.len()),
        Value::Array(a) => format!("an array of {} replies", a.len()),
        Value::SimpleString(s) => format!("the status {s:?}"),
        Value::Okay => "OK".into(),
        Value::ServerError(e) => match e.details() {
            Some(detail) => format!("the error {} {detail}", e.code()),
            None => format!("the error {}", e.code()),
        },
        _ => "a RESP3 reply".into(),
    }
}

/// Whether a URL asks for TLS.
fn is_tls(url: &str) -> bool {
    let url = url.trim_start().as_bytes();
    [&b"rediss://"[..], b"valkeys://"]
        .iter()
        .any(|scheme| url.len() >= scheme.len() && url[..scheme.len()].eq_ignore_ascii_case(scheme))
}

/// A `rediss://` URL with the `#insecure` fragment (no certificate check at all).
#[cfg(feature = "redis-tls")]
fn is_insecure(url: &str) -> bool {
    url.trim_end().ends_with("#insecure")
}

/// Makes rustls use ring, the provider this crate compiles in, unless the process chose one
/// already: with two providers compiled in (another crate may enable aws-lc-rs), rustls would
/// otherwise refuse to pick.
#[cfg(feature = "redis-tls")]
fn choose_crypto_provider() {
    // An error only says that a provider is installed already; that one is used.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(feature = "redis-tls")]
fn ca_certificates(pem: &[u8]) -> redis::TlsCertificates {
    redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(pem.to_vec()),
    }
}

/// A client for one URL, trusting `options`' CA for `rediss://`.
fn single_client(url: &str, options: &ConnectOptions) -> redis::RedisResult<Client> {
    #[cfg(feature = "redis-tls")]
    if let Some(pem) = &options.tls_ca
        && is_tls(url)
    {
        return Client::build_with_tls(url, ca_certificates(pem));
    }
    #[cfg(not(feature = "redis-tls"))]
    let _ = options;
    Client::open(url)
}

/// The commands of one round trip, for a single server or a cluster. For a single server the
/// commands are written in RESP as they are added (one buffer, no allocation per argument: a
/// batched insert sends about 28 arguments per key); for a cluster they are `redis::Cmd`s
/// that the cluster pipeline routes by key.
pub(crate) struct Batch {
    pipe: Pipe,
    len: usize,
}

enum Pipe {
    Single(Vec<u8>),
    Cluster(ClusterPipeline, Option<Cmd>),
}

impl Batch {
    /// Starts a command `name key` followed by `args` more arguments (given next with
    /// [`Self::arg`] and [`Self::arg_u64`]).
    pub fn command(&mut self, name: &str, key: &str, args: usize) {
        match &mut self.pipe {
            Pipe::Single(buf) => {
                header(buf, b'*', 2 + args);
                bulk(buf, name.as_bytes());
                bulk(buf, key.as_bytes());
            }
            Pipe::Cluster(p, cmd) => {
                if let Some(done) = cmd.take() {
                    p.add_command(done);
                }
                let mut c = redis::cmd(name);
                c.arg(key);
                *cmd = Some(c);
            }
        }
        self.len += 1;
    }

    /// One argument of the current command.
    pub fn arg(&mut self, arg: &[u8]) {
        match &mut self.pipe {
            Pipe::Single(buf) => bulk(buf, arg),
            Pipe::Cluster(_, cmd) => {
                cmd.as_mut().expect("a command was started").arg(arg);
            }
        }
    }

    /// One integer argument of the current command.
    pub fn arg_u64(&mut self, n: u64) {
        let mut digits = [0u8; 20];
        self.arg(decimal(n, &mut digits));
    }
}

/// `n` in decimal, written into the end of `digits` (no allocation: a lookup batch writes one
/// command header per key).
fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[at..];
        }
    }
}

/// `*N\r\n` or `$N\r\n`.
fn header(buf: &mut Vec<u8>, kind: u8, n: usize) {
    let mut digits = [0u8; 20];
    buf.push(kind);
    buf.extend_from_slice(decimal(n as u64, &mut digits));
    buf.extend_from_slice(b"\r\n");
}

/// One RESP bulk string.
fn bulk(buf: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() < 10 {
        buf.extend_from_slice(&[b'$', b'0' + bytes.len() as u8, b'\r', b'\n']);
    } else {
        header(buf, b'$', bytes.len());
    }
    buf.extend_from_slice(bytes);
    buf.extend_from_slice(b"\r\n");
}

/// A batch sent and not yet answered.
pub(crate) enum Sent {
    /// This many replies wait on the single server's connection.
    Single(usize),
    /// A cluster batch's replies, read already.
    Cluster(Vec<Value>),
}

impl Conn {
    /// Connects to `urls`: one URL (`redis://host:port`, `rediss://`, `unix://`), or several,
    /// comma-separated, seed nodes of one cluster. A single URL that turns out to be a cluster
    /// node (its `INFO cluster` says `cluster_enabled:1`) is used as a cluster seed; a user
    /// not allowed `INFO` is taken to be on a single server.
    pub fn open(urls: &str, options: &ConnectOptions) -> Result<Self> {
        let says = Speaker {
            shown: redact_urls(urls),
            secrets: passwords(urls),
            timeout: options.timeout,
        };
        let bad_url = |why: String| Error::InvalidParameter {
            name: "Redis URL",
            value: format!("{:?}: {why}", says.shown),
            allowed: "redis://HOST:PORT, rediss:// or unix:// (or several, comma-separated, \
                      for a cluster)",
        };
        options.check()?;
        let list: Vec<&str> = urls
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        if list.is_empty() {
            return Err(bad_url("empty".into()));
        }
        if list.iter().any(|u| is_tls(u)) {
            #[cfg(not(feature = "redis-tls"))]
            return Err(bad_url(
                "TLS is not compiled in (build linebloom with the feature `redis-tls`)".into(),
            ));
            #[cfg(feature = "redis-tls")]
            choose_crypto_provider();
        }
        let timeout = options.timeout;
        if let [url] = list[..] {
            let client =
                single_client(url, options).map_err(|e| bad_url(says.describe(&e, true)))?;
            let mut con = single_connection(&client, timeout).map_err(|e| says.error(&e, true))?;
            let info: redis::RedisResult<String> =
                redis::cmd("INFO").arg("cluster").query(&mut con);
            let cluster = match info {
                Ok(info) => info.contains("cluster_enabled:1"),
                // Detecting a cluster is worth no permission of its own: a cluster node seen
                // as a single server answers MOVED, and that error says what to do.
                Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoPerm) => false,
                Err(e) => return Err(says.error(&e, true)),
            };
            if !cluster {
                return Ok(Self {
                    link: Link::Single(client, Some(con)),
                    says,
                });
            }
        }
        #[allow(unused_mut)]
        let mut builder = ClusterClient::builder(list.clone())
            .connection_timeout(timeout)
            .response_timeout(timeout)
            .retries(CLUSTER_RETRIES);
        #[cfg(feature = "redis-tls")]
        if let Some(pem) = &options.tls_ca
            && is_tls(list[0])
        {
            // `certs` makes every connection verify unless the mode is set first.
            if is_insecure(list[0]) {
                builder = builder.tls(redis::TlsMode::Insecure);
            }
            builder = builder.certs(ca_certificates(pem));
        }
        let client = builder
            .build()
            .map_err(|e| bad_url(says.describe(&e, false)))?;
        let con = client.get_connection().map_err(|e| says.error(&e, false))?;
        Ok(Self {
            link: Link::Cluster(client, Box::new(Some(con))),
            says,
        })
    }

    /// Drops the connection, so the next request connects again: after a failed request whose
    /// pipelined replies may not all have been read.
    pub fn reset(&mut self) {
        match &mut self.link {
            Link::Single(_, con) => *con = None,
            Link::Cluster(_, con) => **con = None,
        }
    }

    /// The URLs as messages show them: passwords hidden.
    pub fn urls(&self) -> &str {
        &self.says.shown
    }

    /// Whether the servers form a cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.link, Link::Cluster(..))
    }

    /// An empty batch of the right kind.
    pub fn batch(&self) -> Batch {
        let pipe = match self.link {
            Link::Single(..) => Pipe::Single(Vec::new()),
            Link::Cluster(..) => Pipe::Cluster(ClusterPipeline::new(), None),
        };
        Batch { pipe, len: 0 }
    }

    /// Sends one command and reads its reply (one round trip).
    pub fn query(&mut self, cmd: &Cmd) -> Result<Value> {
        let result = match &mut self.link {
            Link::Single(client, con) => {
                let timeout = self.says.timeout;
                connected(con, || single_connection(client, timeout))
                    .and_then(|c| cmd.query::<Value>(c))
            }
            Link::Cluster(client, con) => connected(con.as_mut(), || client.get_connection())
                .and_then(|c| cmd.query::<Value>(c)),
        };
        self.settle(result)
    }

    /// Sends a batch and reads every reply, in order (one round trip per node it touches). A
    /// command the server refuses makes the whole batch an error.
    pub fn run(&mut self, batch: Batch) -> Result<Vec<Value>> {
        let sent = self.send(batch)?;
        self.receive(sent)
    }

    /// Sends a batch without waiting for its replies (a single server; a cluster batch is run
    /// whole), so the next batch can be prepared and sent while the server works on this one.
    /// Every `send` is followed by one [`Self::receive`] of what it returned, in order.
    pub fn send(&mut self, batch: Batch) -> Result<Sent> {
        let count = batch.len;
        let result = match (&mut self.link, batch.pipe) {
            (_, _) if count == 0 => Ok(Sent::Cluster(Vec::new())),
            (Link::Single(client, con), Pipe::Single(bytes)) => {
                let timeout = self.says.timeout;
                connected(con, || single_connection(client, timeout))
                    .and_then(|c| c.send_packed_command(&bytes))
                    .map(|()| Sent::Single(count))
            }
            (Link::Cluster(client, con), Pipe::Cluster(mut p, last)) => {
                if let Some(last) = last {
                    p.add_command(last);
                }
                connected(con.as_mut(), || client.get_connection())
                    .and_then(|c| p.query::<Vec<Value>>(c))
                    .map(Sent::Cluster)
            }
            _ => unreachable!("a batch is made by its connection's `batch`"),
        };
        self.settle(result)
    }

    /// The replies of a batch [`Self::send`] sent.
    pub fn receive(&mut self, sent: Sent) -> Result<Vec<Value>> {
        let count = match sent {
            Sent::Cluster(values) => return Ok(values),
            Sent::Single(count) => count,
        };
        let result = match &mut self.link {
            Link::Single(_, Some(con)) => (0..count).map(|_| con.recv_response()).collect(),
            _ => Err(RedisError::from(std::io::Error::other(
                "the connection closed before the replies were read",
            ))),
        };
        let values: Vec<Value> = self.settle(result)?;
        if let Some(Value::ServerError(e)) =
            values.iter().find(|v| matches!(v, Value::ServerError(_)))
        {
            return Err(self.says.reply_error(e, true));
        }
        Ok(values)
    }

    /// Maps a client error to the crate's, dropping a connection that broke so the next
    /// request makes a new one.
    fn settle<T>(&mut self, result: redis::RedisResult<T>) -> Result<T> {
        result.map_err(|e| {
            let single = matches!(self.link, Link::Single(..));
            if e.is_io_error()
                || e.is_timeout()
                || e.is_connection_dropped()
                || e.is_connection_refusal()
                || e.is_unrecoverable_error()
            {
                match &mut self.link {
                    Link::Single(_, con) => *con = None,
                    Link::Cluster(_, con) => **con = None,
                }
            }
            self.says.error(&e, single)
        })
    }
}

/// A connection to one server with the request timeouts set.
fn single_connection(client: &Client, timeout: Duration) -> redis::RedisResult<Connection> {
    let con = client.get_connection_with_timeout(timeout)?;
    con.set_read_timeout(Some(timeout))?;
    con.set_write_timeout(Some(timeout))?;
    Ok(con)
}

/// The open connection in `slot`, made with `connect` first if there is none.
fn connected<C>(
    slot: &mut Option<C>,
    connect: impl FnOnce() -> redis::RedisResult<C>,
) -> redis::RedisResult<&mut C> {
    if slot.is_none() {
        *slot = Some(connect()?);
    }
    Ok(slot.as_mut().expect("just filled"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speaker() -> Speaker {
        let urls = "redis://alice:alicePW9@127.0.0.1:6379/2";
        Speaker {
            shown: redact_urls(urls),
            secrets: passwords(urls),
            timeout: Duration::from_millis(1_500),
        }
    }

    /// A server error reply as redis-rs parses it from the wire.
    fn reply(resp: &str) -> ServerError {
        match redis::parse_redis_value(resp.as_bytes()).unwrap() {
            Value::ServerError(e) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_refused_command_reads_as_the_server_wrote_it() {
        let says = speaker();
        let e = RedisError::from(reply(
            "-NOPERM User alice has no permissions to run the 'getrange' command\r\n",
        ));
        let err = says.error(&e, true);
        assert!(matches!(err, Error::Server(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "server error: redis://alice:***@127.0.0.1:6379/2: NOPERM User alice has no \
             permissions to run the 'getrange' command"
        );
        let err = says.reply_error(&reply("-WRONGTYPE Operation against a key\r\n"), true);
        assert!(
            err.to_string()
                .ends_with(": WRONGTYPE Operation against a key"),
            "{err}"
        );
    }

    #[test]
    fn a_redirection_on_a_single_node_link_says_it_is_a_cluster_node() {
        let says = speaker();
        let moved = reply("-MOVED 3999 127.0.0.1:6381\r\n");
        let text = says.reply_error(&moved, true).to_string();
        assert!(
            text.contains("Redis Cluster node") && text.contains("+info"),
            "{text}"
        );
        assert!(text.contains("MOVED 3999 127.0.0.1:6381"), "{text}");
        assert!(
            !says
                .reply_error(&moved, false)
                .to_string()
                .contains("+info")
        );
    }

    #[test]
    fn client_errors_lose_their_rust_kind_names_and_timeouts_name_the_limit() {
        let says = speaker();
        let e = RedisError::from((
            ErrorKind::Server(ServerErrorKind::ResponseError),
            "Redis server refused to switch database",
            "DB index is out of range".to_owned(),
        ));
        assert_eq!(
            says.describe(&e, true),
            "Redis server refused to switch database: DB index is out of range"
        );
        let e = RedisError::from((ErrorKind::AuthenticationFailed, "Password auth failed"));
        assert!(says.describe(&e, true).starts_with("authentication failed"));
        let e = RedisError::from(std::io::Error::from(std::io::ErrorKind::WouldBlock));
        let err = says.error(&e, true);
        assert!(matches!(err, Error::Unavailable(_)), "{err:?}");
        assert!(
            err.to_string().ends_with(": timed out after 1.5 s"),
            "{err}"
        );
        let e = RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(matches!(says.error(&e, true), Error::Unavailable(_)));
        for text in [says.describe(&e, true), says.error(&e, false).to_string()] {
            assert!(!text.contains("Kind") && !text.contains('{'), "{text}");
        }
    }

    #[test]
    fn a_password_quoted_by_the_client_is_scrubbed() {
        let says = speaker();
        let e = RedisError::from((
            ErrorKind::InvalidClientConfig,
            "bad",
            "redis://alice:alicePW9@h".to_owned(),
        ));
        let text = says.error(&e, true).to_string();
        assert!(
            !text.contains("alicePW9") && text.contains("alice:***@h"),
            "{text}"
        );
    }

    #[test]
    fn options_are_checked_when_connecting() {
        let zero = ConnectOptions::default().timeout(Duration::ZERO);
        let err = Conn::open("redis://127.0.0.1:1", &zero).err().unwrap();
        assert!(err.to_string().contains("timeout"), "{err}");
        let not_pem = ConnectOptions::default().tls_ca_pem(b"hello".to_vec());
        let err = Conn::open("rediss://127.0.0.1:1", &not_pem).err().unwrap();
        assert!(err.to_string().contains("CERTIFICATE"), "{err}");
        let debug = format!(
            "{:?}",
            ConnectOptions::default().tls_ca_pem(b"secretish".to_vec())
        );
        assert!(!debug.contains("secretish"), "{debug}");
    }

    #[test]
    fn bad_urls_are_shown_redacted() {
        let o = ConnectOptions::default();
        for url in [
            "redis://alice:alicePW9@127.0.0.1:notaport",
            "bogus://alice:alicePW9@h",
            "",
        ] {
            let err = Conn::open(url, &o).err().unwrap();
            assert!(matches!(err, Error::InvalidParameter { .. }), "{err:?}");
            assert!(!err.to_string().contains("alicePW9"), "{err}");
        }
    }

    #[cfg(not(feature = "redis-tls"))]
    #[test]
    fn tls_urls_say_that_tls_is_not_compiled_in() {
        let err = Conn::open("rediss://:pw@127.0.0.1:1", &ConnectOptions::default())
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("redis-tls") && !text.contains(":pw@"),
            "{text}"
        );
    }

    #[test]
    fn replies_are_described_without_debug_text() {
        assert_eq!(reply_text(&Value::Int(3)), "the integer 3");
        assert_eq!(
            reply_text(&Value::BulkString(vec![1; 5])),
            "a string of 5 bytes"
        );
        assert_eq!(reply_text(&Value::Nil), "nil");
    }
}
