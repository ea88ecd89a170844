//! One connection to a single Redis/Valkey server or a Redis Cluster, with the two things the
//! filter needs from it: one command, and a pipeline of commands (one round trip per node).
//! A connection that failed is dropped and made again on the next request, so a server that
//! comes back is used again without reopening the filter.

use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterConnection, ClusterPipeline};
use redis::{Client, Cmd, Connection, RedisError, Value};

use crate::error::{Error, Result};

/// How long connecting, and waiting for one reply, may take before the request is an error.
const TIMEOUT: Duration = Duration::from_secs(10);

/// How often a cluster request is retried (redirections, a node failing over) before it is an
/// error.
const CLUSTER_RETRIES: u32 = 4;

/// The cluster connection is boxed: it is several times the size of a single one.
enum Link {
    Single(Client, Option<Connection>),
    Cluster(ClusterClient, Box<Option<ClusterConnection>>),
}

/// A connection to the server(s) named by a URL list.
pub(crate) struct Conn {
    link: Link,
    /// The URLs as given, for error messages.
    urls: String,
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
    /// node (its `INFO cluster` says `cluster_enabled:1`) is used as a cluster seed.
    pub fn open(urls: &str) -> Result<Self> {
        let list: Vec<&str> = urls
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        let bad_url = |e: RedisError| Error::InvalidParameter {
            name: "Redis URL",
            value: format!("{urls:?} ({e})"),
            allowed: "redis://HOST:PORT (or several, comma-separated, for a cluster)",
        };
        if list.is_empty() {
            return Err(bad_url(RedisError::from(std::io::Error::other("empty"))));
        }
        let unreachable = |e: RedisError| Error::Unavailable(format!("{urls}: {e}"));
        if let [url] = list[..] {
            let client = Client::open(url).map_err(bad_url)?;
            let mut con = single_connection(&client).map_err(unreachable)?;
            let info: String = redis::cmd("INFO")
                .arg("cluster")
                .query(&mut con)
                .map_err(unreachable)?;
            if !info.contains("cluster_enabled:1") {
                return Ok(Self {
                    link: Link::Single(client, Some(con)),
                    urls: urls.to_owned(),
                });
            }
        }
        let client = ClusterClient::builder(list.clone())
            .connection_timeout(TIMEOUT)
            .response_timeout(TIMEOUT)
            .retries(CLUSTER_RETRIES)
            .build()
            .map_err(bad_url)?;
        let con = client.get_connection().map_err(unreachable)?;
        Ok(Self {
            link: Link::Cluster(client, Box::new(Some(con))),
            urls: urls.to_owned(),
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
                connected(con, || single_connection(client)).and_then(|c| cmd.query::<Value>(c))
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
                connected(con, || single_connection(client))
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
            return Err(Error::Server(format!("{}: {e:?}", self.urls)));
        }
        Ok(values)
    }

    /// Maps a client error to the crate's, dropping a connection that broke so the next
    /// request makes a new one.
    fn settle<T>(&mut self, result: redis::RedisResult<T>) -> Result<T> {
        result.map_err(|e| {
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
                Error::Unavailable(format!("{}: {e}", self.urls))
            } else {
                Error::Server(format!("{}: {e}", self.urls))
            }
        })
    }
}

/// A connection to one server with the request timeouts set.
fn single_connection(client: &Client) -> redis::RedisResult<Connection> {
    let con = client.get_connection_with_timeout(TIMEOUT)?;
    con.set_read_timeout(Some(TIMEOUT))?;
    con.set_write_timeout(Some(TIMEOUT))?;
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
