//! An opening store on a Redis server, through a small client of its own: a few commands
//! (`EVAL`, `GET`, `HGETALL`, and `PING` and `AUTH`) in RESP2 over one TCP connection, so the
//! feature adds no dependency.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use super::{
    Opening, OpeningStore, RECOVERY_AHEAD, StoreError, WindowShare, from_unix_millis, unix_millis,
};

/// Keeps the later recovery under a key, unless the one kept is more than `ARGV[3]`
/// milliseconds later, and lets Redis forget it after `ARGV[2]` milliseconds. One script, so
/// that two instances publishing at once cannot leave the earlier time. A kept value that is
/// not digits alone is no time (`millis_at` refuses it too: Lua's `tonumber` would read
/// `1e15`) and is replaced, and so is one of more than 15 digits ([`MILLIS_DIGITS`]), and a
/// key of another type (`GET` fails on it; `SET` replaces it).
const RECOVERY_SCRIPT: &str = "\
local raw = redis.pcall('GET', KEYS[1])
if type(raw) ~= 'string' then raw = nil end
local kept = 0
if raw and #raw <= 15 and string.match(raw, '^%d+$') then kept = tonumber(raw) end
local new = tonumber(ARGV[1])
if kept < new or kept - new > tonumber(ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0";

/// Keeps an opening, `until published_at` (`ARGV[1]`, `ARGV[2]`), under `KEYS[1]` for `ARGV[3]`
/// milliseconds, unless the one kept ends later, was published no later than `ARGV[4]` (the
/// new one's publish time and `RECOVERY_AHEAD`), and is not answered: the recovery under
/// `KEYS[2]` is later than the kept one's publish time, and no later than `ARGV[4]`. One
/// script, so that two instances publishing at once cannot leave the wrong one. A kept value
/// that is no opening `opening` can read is replaced (times of more than 15 digits included:
/// [`MILLIS_DIGITS`], and a key of another type: `GET` fails on it, `SET` replaces it); a
/// recovery key of another type holds no recovery.
const OPENING_SCRIPT: &str = "\
local raw = redis.pcall('GET', KEYS[1])
if type(raw) ~= 'string' then raw = nil end
local until_kept, published_kept
if raw then
  local u, p = string.match(raw, '^(%d+) (%d+)$')
  if u and #u <= 15 and #p <= 15 then
    until_kept, published_kept = tonumber(u), tonumber(p)
  end
end
if until_kept and until_kept >= tonumber(ARGV[1]) and published_kept <= tonumber(ARGV[4]) then
  local recovered = redis.pcall('GET', KEYS[2])
  local at = nil
  if type(recovered) == 'string' and #recovered <= 15 and string.match(recovered, '^%d+$') then
    at = tonumber(recovered)
  end
  if not (at and at > published_kept and at <= tonumber(ARGV[4])) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'PX', ARGV[3])
return 1";

/// Sets one instance's window in a name's hash, drops the windows published before Unix
/// millisecond `ARGV[4]` (instances long gone: each restart of a process named by host and
/// process id adds one) and the fields that are no window `windows` can read (written by
/// something else: they would be there for good, as every publish keeps the hash, and each
/// read would fail on them), and keeps the hash for `ARGV[3]` milliseconds after the latest
/// window: one round trip. A key of another type holds no windows and is dropped first
/// (`HSET` would fail on it at every publish).
const WINDOW_SCRIPT: &str = "\
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local cutoff = tonumber(ARGV[4])
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local f, c, at = string.match(fields[i + 1], '^(%d+) (%d+) (%d+)$')
  if at and #at > 15 then at = nil end
  f, c, at = tonumber(f), tonumber(c), tonumber(at)
  if at == nil or at < cutoff or f > c or c > 4294967295 then
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1";

/// The most digits a time in Unix milliseconds may have in Redis, for the scripts and the
/// reads alike: Lua reads numbers as doubles, exact up to 2^53 (16 digits), and a longer one
/// would compare wrongly there and not parse here (above `u64::MAX`). Fifteen digits reach
/// the year 33658.
const MILLIS_DIGITS: usize = 15;

/// How long Redis keeps a name's windows after the latest one published, and each window
/// after it was published.
const WINDOWS_KEPT: Duration = Duration::from_secs(24 * 3600);

/// How long Redis keeps a recovery: as long as any opening it answers, which is kept until its
/// deadline, up to the longest open period after it was published, and a day for clocks that
/// disagree. The opening script and late followers read it for that long: once it is gone,
/// the opening it answered reads as not answered again, so a follower that starts then
/// applies it, and a new opening that ends sooner gives way to it. One small key per name.
const RECOVERY_KEPT: Duration = Duration::from_secs(crate::MAX_OPEN_DURATION.as_secs() + 24 * 3600);

/// The longest reply line or bulk string read: a deadline is a few digits, and a garbled
/// length must not make the client allocate gigabytes.
const LONGEST_REPLY: usize = 64 * 1024;

/// Openings kept on one Redis server, one key per name (`hotbreaker:open:NAME` unless
/// [`key_prefix`](RedisStore::key_prefix) says otherwise, holding `until published_at` in
/// Unix milliseconds; a deadline alone, as builds before 2026-12-01 wrote it, is refused on
/// reading and replaced by the next opening published), each expiring when its deadline
/// passes; and
/// the latest recovery per name (`hotbreaker:recovered:NAME` unless
/// [`recovery_key_prefix`](RedisStore::recovery_key_prefix) says otherwise), kept a day longer
/// than the longest opening (a year and two days);
/// and each instance's latest window per name, in one hash per name
/// (`hotbreaker:windows:NAME` unless [`windows_key_prefix`](RedisStore::windows_key_prefix)
/// says otherwise, one field per instance: `failures calls unix_millis`), each kept for a day
/// after it was published (on the wall clock of the instance publishing the latest). Up to 512
/// instances per name publishing within a day.
///
/// Connects on first use, again after any error, and again when the connection kept from the
/// last command is out of step: the server closed it meanwhile, or sent bytes nobody asked
/// for, which would otherwise be read as the next command's reply. After an error of the
/// socket's own (a refused or timed-out connect or host name lookup, a reply that did not
/// come within the timeout, a reset), it connects again no sooner than the
/// [`timeout`](RedisStore::timeout) later, and commands in between fail at once: a server
/// that is down or silent costs a poll one timeout, not one for each command of each name.
/// Plain TCP with an optional password: no TLS, no cluster, no sentinel.
///
/// # Examples
///
/// Not run here: it would poll a Redis server at that address.
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
/// use hotbreaker::Breaker;
/// use hotbreaker::shared::{RedisStore, SharedOpenings};
///
/// let payments = Arc::new(Breaker::builder().build()?);
/// let store = RedisStore::new("127.0.0.1:6379").namespace("checkout:breaker:");
/// let _polling = SharedOpenings::new(store)
///     .follow("payments", payments.clone())
///     .spawn_polling(Duration::from_millis(250), |name, error| eprintln!("{name}: {error}"))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisStore {
    address: String,
    password: Option<String>,
    prefix: String,
    recovery_prefix: String,
    windows_prefix: String,
    timeout: Duration,
    connection: Option<Connection>,
    /// After an error of the socket's: when connecting may be tried again, and that error,
    /// to repeat until then.
    broken: Option<(Instant, String)>,
}

struct Connection {
    reader: BufReader<ReplyReader>,
    writer: TcpStream,
    timeout: Duration,
}

impl Connection {
    /// Whether this connection, kept from an earlier command, can carry the next one: nothing
    /// is left unread of what the server sent (a server that answered more than it was asked
    /// would have that read as the next reply, and every reply after it one command late),
    /// and the server has not closed it (as Redis does with idle clients under its `timeout`
    /// setting). A look without waiting: the socket is nonblocking for one `peek`.
    fn in_step(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        if self.writer.set_nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0; 1];
        // `WouldBlock`: nothing to read and still open. `Ok(0)` is a close, `Ok(_)` bytes
        // unasked for, any other error a broken socket: connect again in every case.
        let quiet = matches!(
            self.writer.peek(&mut byte),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock
        );
        self.writer.set_nonblocking(false).is_ok() && quiet
    }
}

/// The reading end of a connection, which gives up once the reply being read is due: a
/// socket's read timeout bounds each read only, and a server that sends a byte now and then
/// would hold a poll (and the drop of its `Polling`) for as long as it cared to.
struct ReplyReader {
    stream: TcpStream,
    /// When the reply being read is due; `None` (a timeout too long for an `Instant`) leaves
    /// the socket's own read timeout alone.
    due: Option<Instant>,
}

impl Read for ReplyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(due) = self.due {
            let left = due.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no whole reply within the timeout",
                ));
            }
            self.stream.set_read_timeout(Some(left))?;
        }
        self.stream.read(buf)
    }
}

/// One RESP2 reply.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Simple(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

impl RedisStore {
    /// A store on the server at `address` (`host:port`). Nothing is connected until the first
    /// call.
    pub fn new(address: impl Into<String>) -> Self {
        RedisStore {
            address: address.into(),
            password: None,
            prefix: "hotbreaker:open:".to_owned(),
            recovery_prefix: "hotbreaker:recovered:".to_owned(),
            windows_prefix: "hotbreaker:windows:".to_owned(),
            timeout: Duration::from_secs(1),
            connection: None,
            broken: None,
        }
    }

    /// Authenticates with `password` (Redis `AUTH`) on every new connection.
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// Keeps every key of this store under `namespace`: openings under `{namespace}open:`,
    /// recoveries under `{namespace}recovered:` and windows under `{namespace}windows:`,
    /// each followed by the name (the defaults are these with `hotbreaker:`). Applications
    /// that share a server and a breaker name, each in a namespace of its own, neither follow
    /// nor [`forget`](RedisStore::forget) each other's breakers. Replaces all three prefixes
    /// set before it.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::shared::RedisStore;
    ///
    /// let staging = RedisStore::new("127.0.0.1:6379").namespace("staging:");
    /// # let _ = staging;
    /// ```
    pub fn namespace(self, namespace: &str) -> Self {
        self.key_prefix(format!("{namespace}open:"))
            .recovery_key_prefix(format!("{namespace}recovered:"))
            .windows_key_prefix(format!("{namespace}windows:"))
    }

    /// Puts each name's opening under `prefix` followed by the name. Only the openings: the
    /// recoveries and windows stay under their own prefixes
    /// ([`recovery_key_prefix`](RedisStore::recovery_key_prefix),
    /// [`windows_key_prefix`](RedisStore::windows_key_prefix)), so to keep two applications
    /// on one server apart, set all three, or use [`namespace`](RedisStore::namespace).
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Puts each name's latest recovery under `prefix` followed by the name. Neither it nor
    /// the openings' [`key_prefix`](RedisStore::key_prefix) may begin with the other, or a
    /// name of one kind could share a key with a name of the other (`app:` and `app:rec:`:
    /// the opening of `rec:db` and the recovery of `db`); recoveries, and openings (whose
    /// publish reads the recovery), are refused with an error then.
    pub fn recovery_key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.recovery_prefix = prefix.into();
        self
    }

    /// Puts each name's windows in a hash under `prefix` followed by the name. Neither it nor
    /// either of the other two prefixes may begin with the other; windows are refused with an
    /// error otherwise.
    pub fn windows_key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.windows_prefix = prefix.into();
        self
    }

    /// How long connecting may take, each write, and each command's whole reply, from sending
    /// the command to the reply's last byte (1 s unless set). A zero timeout is no timeout
    /// the operating system takes: every command then fails with an error that names it.
    /// Looking up a host name is bounded by it too, separately (on a thread of its own,
    /// which a lookup that never ends keeps; an IP address needs none).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Checks that the server answers (`PING`).
    ///
    /// # Errors
    ///
    /// A [`StoreError`] if the server cannot be reached, refuses the password (`AUTH`), or
    /// does not answer `PONG`; if the timeout is zero; and, for a while after a connection
    /// failed, without trying to connect again (the store holds off for its timeout).
    pub fn ping(&mut self) -> Result<(), StoreError> {
        match self.command(&[b"PING"])? {
            Reply::Simple(pong) if pong == "PONG" => Ok(()),
            other => Err(unexpected("PING", &other)),
        }
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The key under `prefix` (named `setting`) for `name`, unless `prefix` begins one of the
    /// other kinds' prefixes or one of them begins it: then some name of one kind and some
    /// name of the other have the same key.
    fn key_under(&self, setting: &str, prefix: &str, name: &str) -> Result<String, StoreError> {
        let prefixes = [
            ("key_prefix", &self.prefix),
            ("recovery_key_prefix", &self.recovery_prefix),
            ("windows_key_prefix", &self.windows_prefix),
        ];
        if let Some((other, kept)) = prefixes.iter().find(|(other, kept)| {
            *other != setting && (kept.starts_with(prefix) || prefix.starts_with(kept.as_str()))
        }) {
            return Err(StoreError::new(format!(
                "redis: {setting} {prefix:?} and {other} {kept:?}: one begins the other, so \
                 their keys could mix"
            )));
        }
        Ok(format!("{prefix}{name}"))
    }

    fn recovery_key(&self, name: &str) -> Result<String, StoreError> {
        self.key_under("recovery_key_prefix", &self.recovery_prefix, name)
    }

    fn windows_key(&self, name: &str) -> Result<String, StoreError> {
        self.key_under("windows_key_prefix", &self.windows_prefix, name)
    }

    /// Keeps `millis` under `key` for `ttl_millis`, unless a later time is kept there, no
    /// more than `ahead_millis` later.
    fn keep_later(
        &mut self,
        key: &str,
        millis: u64,
        ttl_millis: u64,
        ahead_millis: u64,
    ) -> Result<(), StoreError> {
        let (millis, ttl, ahead) = (
            millis.to_string(),
            ttl_millis.to_string(),
            ahead_millis.to_string(),
        );
        match self.command(&[
            b"EVAL",
            RECOVERY_SCRIPT.as_bytes(),
            b"1",
            key.as_bytes(),
            millis.as_bytes(),
            ttl.as_bytes(),
            ahead.as_bytes(),
        ])? {
            Reply::Integer(_) => Ok(()),
            other => Err(unexpected("EVAL", &other)),
        }
    }

    /// Deletes everything kept for `name`: its opening, its latest recovery and its windows,
    /// under this store's prefixes. For a name no instance uses any more (a dependency
    /// retired, a test's or a demo's own names): what a store keeps is otherwise kept until
    /// it expires, an opening's and its recovery's for as long as the opening lasts (up to a
    /// year). Returns how many of the three keys there were.
    ///
    /// Instances still following `name` are not told: one that saw an opening keeps it, and
    /// their next publish writes the keys again.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] if the server cannot be reached or refuses the command, or if one of
    /// the prefixes begins another (see
    /// [`recovery_key_prefix`](RedisStore::recovery_key_prefix)); nothing is deleted then.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use hotbreaker::shared::RedisStore;
    ///
    /// let mut store = RedisStore::new("127.0.0.1:6379");
    /// let deleted = store.forget("payments-v1")?;
    /// println!("{deleted} keys deleted");
    /// # Ok::<(), hotbreaker::shared::StoreError>(())
    /// ```
    pub fn forget(&mut self, name: &str) -> Result<u64, StoreError> {
        let keys = [
            self.key(name),
            self.recovery_key(name)?,
            self.windows_key(name)?,
        ];
        match self.command(&[
            b"DEL",
            keys[0].as_bytes(),
            keys[1].as_bytes(),
            keys[2].as_bytes(),
        ])? {
            Reply::Integer(deleted) => u64::try_from(deleted)
                .map_err(|_| StoreError::new(format!("redis answered DEL with {deleted}"))),
            other => Err(unexpected("DEL", &other)),
        }
    }

    /// The Unix milliseconds kept under `key`, if any.
    fn millis_at(&mut self, key: &str) -> Result<Option<u64>, StoreError> {
        match self.command(&[b"GET", key.as_bytes()])? {
            Reply::Bulk(None) => Ok(None),
            Reply::Bulk(Some(bytes)) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(millis)
                .map(Some)
                .ok_or_else(|| {
                    StoreError::new(format!(
                        "redis key {key} holds {:?}, not a time in Unix milliseconds",
                        String::from_utf8_lossy(&bytes)
                    ))
                }),
            other => Err(unexpected("GET", &other)),
        }
    }

    /// Sends one command and reads its reply, connecting first if needed; any error drops
    /// the connection, so that the next command starts from a clean one, and an error of the
    /// socket's holds off the next connect for the timeout.
    fn command(&mut self, args: &[&[u8]]) -> Result<Reply, StoreError> {
        if self.connection.as_ref().is_some_and(|kept| !kept.in_step()) {
            self.connection = None;
        }
        if self.connection.is_none() {
            if let Some((retry_at, error)) = &self.broken {
                if Instant::now() < *retry_at {
                    return Err(StoreError::new(format!(
                        "redis {}: not connecting again within the timeout ({:?}) of the last \
                         error: {error}",
                        self.address, self.timeout
                    )));
                }
            }
            match self.connect() {
                Ok(connection) => self.connection = Some(connection),
                Err(error) => return Err(self.hold_off(error)),
            }
        }
        let connection = self.connection.as_mut().expect("connected above");
        let result = round_trip(connection, args);
        match result {
            Err(error) => {
                self.connection = None;
                Err(self.hold_off(error))
            }
            Ok(reply) => {
                self.broken = None;
                Ok(reply)
            }
        }
    }

    /// Notes `error` if the socket raised it, so that no connect is tried for a timeout. An
    /// error reply, or a reply that is no RESP, came quickly: connecting again at once costs
    /// little, and may find the server well.
    fn hold_off(&mut self, error: StoreError) -> StoreError {
        let of_the_socket = error.is_io();
        self.broken = of_the_socket
            .then(|| Instant::now().checked_add(self.timeout))
            .flatten()
            .map(|retry_at| (retry_at, error.to_string()));
        error
    }

    fn connect(&self) -> Result<Connection, StoreError> {
        if self.timeout.is_zero() {
            // std refuses a zero socket timeout with an error that does not say which setting.
            return Err(StoreError::new(
                "redis: timeout is zero; it must be above zero",
            ));
        }
        let failed = |error| StoreError::with_source(format!("redis {}", self.address), error);
        let mut last_error = io::Error::new(io::ErrorKind::NotFound, "no address");
        for address in resolve(&self.address, self.timeout, |host| {
            host.to_socket_addrs().map(Iterator::collect)
        })
        .map_err(failed)?
        {
            match TcpStream::connect_timeout(&address, self.timeout) {
                Ok(stream) => {
                    stream
                        .set_read_timeout(Some(self.timeout))
                        .map_err(failed)?;
                    stream
                        .set_write_timeout(Some(self.timeout))
                        .map_err(failed)?;
                    stream.set_nodelay(true).map_err(failed)?;
                    let mut connection = Connection {
                        reader: BufReader::new(ReplyReader {
                            stream: stream.try_clone().map_err(failed)?,
                            due: None,
                        }),
                        writer: stream,
                        timeout: self.timeout,
                    };
                    if let Some(password) = &self.password {
                        match round_trip(&mut connection, &[b"AUTH", password.as_bytes()])? {
                            Reply::Simple(ok) if ok == "OK" => {}
                            other => return Err(unexpected("AUTH", &other)),
                        }
                    }
                    return Ok(connection);
                }
                Err(error) => last_error = error,
            }
        }
        Err(failed(last_error))
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("address", &self.address)
            .field("prefix", &self.prefix)
            .field("recovery_prefix", &self.recovery_prefix)
            .field("windows_prefix", &self.windows_prefix)
            .field("timeout", &self.timeout)
            .field("connected", &self.connection.is_some())
            .finish_non_exhaustive() // the password stays out of logs
    }
}

impl OpeningStore for RedisStore {
    fn publish(&mut self, name: &str, opening: Opening) -> Result<(), StoreError> {
        let until = unix_millis(opening.until);
        let now = unix_millis(SystemTime::now());
        if until <= now {
            return Ok(()); // nothing left to share
        }
        let key = self.key(name);
        let recovery_key = self.recovery_key(name)?;
        let published_at = unix_millis(opening.published_at);
        let believable = published_at.saturating_add(RECOVERY_AHEAD.as_millis() as u64);
        let (ttl, until, published_at, believable) = (
            (until - now).to_string(),
            until.to_string(),
            published_at.to_string(),
            believable.to_string(),
        );
        match self.command(&[
            b"EVAL",
            OPENING_SCRIPT.as_bytes(),
            b"2",
            key.as_bytes(),
            recovery_key.as_bytes(),
            until.as_bytes(),
            published_at.as_bytes(),
            ttl.as_bytes(),
            believable.as_bytes(),
        ])? {
            Reply::Integer(_) => Ok(()),
            other => Err(unexpected("EVAL", &other)),
        }
    }

    fn opening(&mut self, name: &str) -> Result<Option<Opening>, StoreError> {
        let key = self.key(name);
        let now = unix_millis(SystemTime::now());
        let raw = match self.command(&[b"GET", key.as_bytes()])? {
            Reply::Bulk(None) => return Ok(None),
            Reply::Bulk(Some(bytes)) => bytes,
            other => return Err(unexpected("GET", &other)),
        };
        let (until, published_at) = parse_opening(&raw).ok_or_else(|| {
            StoreError::new(format!(
                "redis key {key} holds {:?}, not `until published_at` in Unix milliseconds",
                String::from_utf8_lossy(&raw)
            ))
        })?;
        Ok((until > now)
            .then(|| Opening::new(from_unix_millis(until), from_unix_millis(published_at))))
    }

    fn publish_recovery(&mut self, name: &str, at: SystemTime) -> Result<(), StoreError> {
        let key = self.recovery_key(name)?;
        let kept = u64::try_from(RECOVERY_KEPT.as_millis()).unwrap_or(u64::MAX);
        self.keep_later(
            &key,
            unix_millis(at),
            kept,
            RECOVERY_AHEAD.as_millis() as u64,
        )
    }

    fn recovered_at(&mut self, name: &str) -> Result<Option<SystemTime>, StoreError> {
        let key = self.recovery_key(name)?;
        Ok(self.millis_at(&key)?.map(from_unix_millis))
    }

    fn publish_window(&mut self, name: &str, window: &WindowShare) -> Result<(), StoreError> {
        let key = self.windows_key(name)?;
        let value = format!(
            "{} {} {}",
            window.failures,
            window.calls,
            unix_millis(window.at)
        );
        let kept = WINDOWS_KEPT.as_millis().to_string();
        let cutoff = unix_millis(SystemTime::now())
            .saturating_sub(WINDOWS_KEPT.as_millis() as u64)
            .to_string();
        match self.command(&[
            b"EVAL",
            WINDOW_SCRIPT.as_bytes(),
            b"1",
            key.as_bytes(),
            window.instance.as_bytes(),
            value.as_bytes(),
            kept.as_bytes(),
            cutoff.as_bytes(),
        ])? {
            Reply::Integer(_) => Ok(()),
            other => Err(unexpected("EVAL", &other)),
        }
    }

    fn windows(&mut self, name: &str) -> Result<Vec<WindowShare>, StoreError> {
        let key = self.windows_key(name)?;
        let items = match self.command(&[b"HGETALL", key.as_bytes()])? {
            Reply::Array(items) => items,
            other => return Err(unexpected("HGETALL", &other)),
        };
        items
            .chunks(2)
            .map(|pair| match pair {
                [Reply::Bulk(Some(instance)), Reply::Bulk(Some(value))] => {
                    parse_window(instance, value).ok_or_else(|| {
                        StoreError::new(format!(
                            "redis hash {key} holds {:?} for {:?}, not `failures calls \
                             unix_millis`",
                            String::from_utf8_lossy(value),
                            String::from_utf8_lossy(instance)
                        ))
                    })
                }
                other => Err(StoreError::new(format!(
                    "redis answered HGETALL {key} with {other:?}"
                ))),
            })
            .collect()
    }
}

/// An opening's value: `until published_at`, in Unix milliseconds.
fn parse_opening(value: &[u8]) -> Option<(u64, u64)> {
    let (until, published_at) = std::str::from_utf8(value).ok()?.split_once(' ')?;
    Some((millis(until)?, millis(published_at)?))
}

/// A time in Unix milliseconds as the scripts keep it: digits only, at most
/// [`MILLIS_DIGITS`] of them.
fn millis(text: &str) -> Option<u64> {
    (text.len() <= MILLIS_DIGITS)
        .then(|| digits(text))
        .flatten()
}

/// Digits only (no sign, unlike `u64::from_str`, and as Lua's `%d+`), as a number.
fn digits(text: &str) -> Option<u64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse::<u64>().ok())
        .flatten()
}

/// One field of a windows hash: the instance, and `failures calls unix_millis`. An instance
/// name that is not UTF-8 is read lossily: the window counts all the same, and the script
/// (which cannot tell) would keep it, unreadable, for a day.
fn parse_window(instance: &[u8], value: &[u8]) -> Option<WindowShare> {
    let instance = String::from_utf8_lossy(instance);
    let mut numbers = std::str::from_utf8(value).ok()?.split(' ');
    let (failures, calls) = (digits(numbers.next()?)?, digits(numbers.next()?)?);
    let at = millis(numbers.next()?)?;
    if numbers.next().is_some() || failures > calls {
        return None;
    }
    Some(WindowShare::new(
        instance,
        u32::try_from(failures).ok()?,
        u32::try_from(calls).ok()?,
        from_unix_millis(at),
    ))
}

/// The socket addresses of `address`, looked up by `lookup` within `timeout`: an IP address
/// at once, a host name on a thread of its own, since the system resolver takes no timeout
/// and a slow one would hold the poll (and the drop of its `Polling`) for as long as it
/// took. A lookup still running at the timeout is left to end on its own thread; at most
/// one starts per timeout, as a failed connect holds off the next for that long.
fn resolve(
    address: &str,
    timeout: Duration,
    lookup: impl FnOnce(String) -> io::Result<Vec<SocketAddr>> + Send + 'static,
) -> io::Result<Vec<SocketAddr>> {
    if let Ok(address) = address.parse::<SocketAddr>() {
        return Ok(vec![address]);
    }
    let (answer, answered) = mpsc::sync_channel(1);
    let host = address.to_owned();
    std::thread::Builder::new()
        .name("hotbreaker-redis-resolve".into())
        .spawn(move || {
            // The receiver may have given up: then nobody needs the answer.
            let _ = answer.send(lookup(host));
        })?;
    match answered.recv_timeout(timeout) {
        Ok(addresses) => addresses,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "resolving the host name took longer than the timeout",
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(io::Error::other(
            "the host name lookup ended without an answer",
        )),
    }
}

fn unexpected(command: &str, reply: &Reply) -> StoreError {
    StoreError::new(format!("redis answered {command} with {reply:?}"))
}

fn round_trip(connection: &mut Connection, args: &[&[u8]]) -> Result<Reply, StoreError> {
    let io_failed = |error| StoreError::with_source("redis connection", error);
    connection.reader.get_mut().due = Instant::now().checked_add(connection.timeout);
    connection
        .writer
        .write_all(&encode(args))
        .map_err(io_failed)?;
    read_reply(&mut connection.reader, 0)
}

/// A command as a RESP2 array of bulk strings.
fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads one reply; an error reply (`-ERR ...`) is a [`StoreError`], as is anything that is
/// not RESP2.
fn read_reply(reader: &mut impl BufRead, depth: usize) -> Result<Reply, StoreError> {
    let line = read_line(reader)?;
    let (kind, rest) = line
        .split_first()
        .ok_or_else(|| StoreError::new("redis sent an empty line"))?;
    let text = std::str::from_utf8(rest)
        .map_err(|_| StoreError::new("redis sent a reply line that is not UTF-8"))?;
    let number = || {
        text.parse::<i64>()
            .map_err(|_| StoreError::new(format!("redis sent {text:?} for a number")))
    };
    match kind {
        b'+' => Ok(Reply::Simple(text.to_owned())),
        b'-' => Err(StoreError::new(format!("redis: {text}"))),
        b':' => Ok(Reply::Integer(number()?)),
        b'$' => match number()? {
            -1 => Ok(Reply::Bulk(None)),
            length if (0..=LONGEST_REPLY as i64).contains(&length) => {
                let mut bytes = vec![0; length as usize + 2];
                reader
                    .read_exact(&mut bytes)
                    .map_err(|error| StoreError::with_source("redis connection", error))?;
                if !bytes.ends_with(b"\r\n") {
                    return Err(StoreError::new("redis sent a bulk string without its CRLF"));
                }
                bytes.truncate(length as usize);
                Ok(Reply::Bulk(Some(bytes)))
            }
            length => Err(StoreError::new(format!(
                "redis sent a bulk string of {length} bytes"
            ))),
        },
        b'*' if depth < 4 => match number()? {
            -1 => Ok(Reply::Array(Vec::new())),
            count if (0..=1024).contains(&count) => (0..count)
                .map(|_| read_reply(reader, depth + 1))
                .collect::<Result<_, _>>()
                .map(Reply::Array),
            count => Err(StoreError::new(format!(
                "redis sent an array of {count} items"
            ))),
        },
        _ => Err(StoreError::new(format!(
            "redis sent a reply starting with {:?}",
            char::from(*kind)
        ))),
    }
}

/// One CRLF-terminated line, without the CRLF.
fn read_line(reader: &mut impl BufRead) -> Result<Vec<u8>, StoreError> {
    let mut line = Vec::new();
    reader
        .take(LONGEST_REPLY as u64)
        .read_until(b'\n', &mut line)
        .map_err(|error| StoreError::with_source("redis connection", error))?;
    if !line.ends_with(b"\n") && line.len() < LONGEST_REPLY {
        // The stream ended before the line did: the server closed the connection, which is
        // the socket's doing, as a reset is, and holds the next connect off for a timeout
        // (`hold_off`). A server that takes each command and closes without a reply (a proxy
        // whose Redis is down) would otherwise cost a poll a connection and a wait for every
        // command of every name.
        let what = if line.is_empty() {
            "redis closed the connection"
        } else {
            "redis closed the connection inside a reply"
        };
        return Err(StoreError::with_source(
            "redis connection",
            io::Error::new(io::ErrorKind::UnexpectedEof, what),
        ));
    }
    if !line.ends_with(b"\r\n") {
        return Err(StoreError::new(
            "redis sent a line without CRLF, or one too long",
        ));
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Reply, StoreError> {
        read_reply(&mut BufReader::new(bytes), 0)
    }

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        assert_eq!(
            encode(&[b"GET", b"hotbreaker:open:a"]),
            b"*2\r\n$3\r\nGET\r\n$17\r\nhotbreaker:open:a\r\n"
        );
    }

    #[test]
    fn every_reply_kind_is_read() {
        assert_eq!(parse(b"+PONG\r\n").unwrap(), Reply::Simple("PONG".into()));
        assert_eq!(parse(b":1\r\n").unwrap(), Reply::Integer(1));
        assert_eq!(parse(b"$-1\r\n").unwrap(), Reply::Bulk(None));
        assert_eq!(
            parse(b"$13\r\n1798000000000\r\n").unwrap(),
            Reply::Bulk(Some(b"1798000000000".to_vec()))
        );
        assert_eq!(
            parse(b"*2\r\n:1\r\n$0\r\n\r\n").unwrap(),
            Reply::Array(vec![Reply::Integer(1), Reply::Bulk(Some(Vec::new()))])
        );
        let error = parse(b"-NOSCRIPT No matching script\r\n").unwrap_err();
        assert_eq!(error.to_string(), "redis: NOSCRIPT No matching script");
    }

    /// A server on a local port that serves each connection it accepts with the next of
    /// `scripts`: for each command it reads, it sends the next answer, then closes the
    /// connection once its answers run out. The number of connections it accepted comes back
    /// when it has served them all.
    fn scripted_server(
        scripts: Vec<Vec<&'static [u8]>>,
    ) -> (String, std::thread::JoinHandle<usize>) {
        use std::net::TcpListener;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let server = std::thread::spawn(move || {
            let mut accepted = 0;
            for answers in scripts {
                let (mut stream, _) = listener.accept().unwrap();
                accepted += 1;
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                for answer in answers {
                    // One command: an array of bulk strings, read whole.
                    let Ok(Reply::Array(_)) = read_reply(&mut reader, 0) else {
                        break;
                    };
                    stream.write_all(answer).unwrap();
                }
            }
            accepted
        });
        (address, server)
    }

    #[test]
    fn bytes_the_server_sent_unasked_are_not_read_as_the_next_reply() {
        // The first connection answers PING, then sends a second answer nobody asked for.
        let (address, server) = scripted_server(vec![
            vec![b"+PONG\r\n+PONG\r\n", b"$-1\r\n"],
            vec![b"$-1\r\n"],
        ]);
        let mut store = RedisStore::new(address);
        store.ping().unwrap();
        // Read on that connection, the stray `+PONG` would be taken for GET's answer.
        assert_eq!(store.opening("a").unwrap(), None);
        drop(store);
        assert_eq!(server.join().unwrap(), 2, "connected again");
    }

    #[test]
    fn a_connection_the_server_closed_meanwhile_is_replaced_before_the_next_command() {
        // The first connection answers one PING and is closed, as Redis closes idle clients.
        let (address, server) = scripted_server(vec![vec![b"+PONG\r\n"], vec![b"+PONG\r\n"]]);
        let mut store = RedisStore::new(address);
        store.ping().unwrap();
        // Let the close arrive.
        let closed_by = Instant::now() + Duration::from_secs(5);
        while store.connection.as_ref().is_some_and(Connection::in_step)
            && Instant::now() < closed_by
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        store.ping().unwrap();
        drop(store);
        assert_eq!(server.join().unwrap(), 2);
    }

    #[test]
    fn a_server_that_closes_without_a_reply_holds_the_next_connect_off() {
        // Takes each command and closes without answering, as a proxy whose Redis is down.
        use std::net::TcpListener;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let (done, test_done) = mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let _ = read_reply(&mut BufReader::new(stream), 0);
            // Dropped: closed. Once the test is done, was there a second connection?
            let _ = test_done.recv();
            listener.set_nonblocking(true).unwrap();
            listener.accept().is_ok()
        });
        // Held off, the second command comes at once; not held off, it connects again and
        // waits the timeout out for an answer, and the test fails after it, not hangs.
        let mut store = RedisStore::new(address).timeout(Duration::from_secs(10));
        let first = store.ping().unwrap_err().to_string();
        assert!(first.contains("redis closed the connection"), "{first}");
        let held = store.opening("a").unwrap_err().to_string();
        assert!(held.contains("not connecting again"), "{held}");
        drop(store);
        drop(done);
        assert!(!server.join().unwrap(), "no second connection");
    }

    #[test]
    fn a_host_name_is_looked_up_and_connected_to() {
        let (address, server) = scripted_server(vec![vec![b"+PONG\r\n"]]);
        let port = address.rsplit(':').next().unwrap();
        let mut store = RedisStore::new(format!("localhost:{port}"));
        store.ping().unwrap();
        drop(store);
        assert_eq!(server.join().unwrap(), 1);
    }

    #[test]
    fn a_host_name_lookup_longer_than_the_timeout_is_an_error() {
        // A lookup that does not answer before the test lets it (by dropping `release`), so
        // the timeout comes first however slow the machine is. Made inline, as without the
        // bound, it answers after a minute instead of hanging the test, which then fails.
        let (release, released) = mpsc::channel::<()>();
        let stuck = move |_host: String| {
            let _ = released.recv_timeout(Duration::from_secs(60));
            Ok(vec![SocketAddr::from(([127, 0, 0, 1], 6379))])
        };
        let error = resolve("redis.internal:6379", Duration::from_millis(20), stuck).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{error}");
        drop(release);
        // An IP address is not looked up.
        let never = |_host: String| -> io::Result<Vec<SocketAddr>> { unreachable!("looked up") };
        assert_eq!(
            resolve("127.0.0.1:6379", Duration::from_millis(20), never).unwrap(),
            vec![SocketAddr::from(([127, 0, 0, 1], 6379))]
        );
        // A lookup within the timeout gives its answer, errors included.
        let quick = |host: String| -> io::Result<Vec<SocketAddr>> {
            assert_eq!(host, "redis.internal:6379");
            Err(io::Error::new(io::ErrorKind::NotFound, "no such host"))
        };
        let error = resolve("redis.internal:6379", Duration::from_secs(60), quick).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic_or_a_huge_allocation() {
        for bytes in [
            &b""[..],
            b"\r\n",
            b"PONG\r\n",
            b"+PONG",
            b":x\r\n",
            b"$99999999999\r\n",
            b"$5\r\nab\r\n",
            b"$2\r\nabcd",
            b"*99999\r\n",
            b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
            b"+\xff\r\n",
        ] {
            assert!(parse(bytes).is_err(), "{bytes:?}");
        }
    }
}
