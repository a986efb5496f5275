//! `RedisStore` against a real `redis-server`, started here on a free loopback port.
//!
//! Without `redis-server` on the PATH these tests say so and pass, unless
//! `HOTBREAKER_REQUIRE_REDIS=1` is set (`.ci/run` installs the server and sets it), in which
//! case they fail.

#![cfg(feature = "redis")]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use hotbreaker::shared::{Opening, OpeningStore, RedisStore, SharedOpenings, WindowShare};
use hotbreaker::{Breaker, State};

#[path = "support/store_ties.rs"]
mod store_ties;

/// A `redis-server` of this test's own, killed when dropped.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Held while a server is started: the tests run in parallel, and two of them picking the
/// same free port before either server listens would share one server (and one of them would
/// kill it under the other). Once a server listens, its port is no longer free.
static STARTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn start_server(extra: &[&str]) -> Option<Server> {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var_os("HOTBREAKER_REQUIRE_REDIS").is_none(),
            "HOTBREAKER_REQUIRE_REDIS is set and redis-server is not on the PATH"
        );
        eprintln!("redis-server not found: skipping (set HOTBREAKER_REQUIRE_REDIS=1 to fail)");
        return None;
    }
    let _one_at_a_time = STARTING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .args(extra)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let address = format!("127.0.0.1:{port}");
    let mut server = Server { child, address };
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(&server.address).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not listen");
        assert!(
            matches!(server.child.try_wait(), Ok(None)),
            "redis-server exited (port {port} taken?)"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(server)
}

#[test]
fn two_instances_share_an_opening_through_redis() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let here = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .open_duration(Duration::from_secs(30))
            .build()
            .unwrap(),
    );
    let there = Arc::new(Breaker::builder().consecutive_failures(1).build().unwrap());
    let mut follow_here =
        SharedOpenings::new(RedisStore::new(&server.address)).follow("payments", here.clone());
    let mut follow_there =
        SharedOpenings::new(RedisStore::new(&server.address)).follow("payments", there.clone());

    here.try_acquire().unwrap().failure();
    let report = follow_here.poll();
    assert_eq!(report.published, 1, "{report:?}");
    let report = follow_there.poll();
    assert_eq!(report.opened, 1, "{report:?}");
    assert_eq!(there.state(), State::Open);
    let retry_after = there.try_acquire().unwrap_err().retry_after().unwrap();
    assert!(
        retry_after > Duration::from_secs(20) && retry_after <= Duration::from_secs(30),
        "the rest of the 30 s: {retry_after:?}"
    );
}

/// Unix milliseconds: what the store keeps of a time.
fn millis(t: SystemTime) -> u128 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// An opening until `until` from now, published now.
fn opening_for(until: Duration) -> Opening {
    let now = SystemTime::now();
    Opening::new(now + until, now)
}

#[test]
fn the_store_keeps_the_later_deadline_and_forgets_passed_ones() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address).key_prefix("test:");
    store.ping().unwrap();
    let later = opening_for(Duration::from_secs(60));
    let sooner = opening_for(Duration::from_secs(10));
    store.publish("db", later).unwrap();
    store.publish("db", sooner).unwrap();
    let kept = store.opening("db").unwrap().unwrap();
    assert_eq!(
        (millis(kept.until), millis(kept.published_at)),
        (millis(later.until), millis(later.published_at))
    );
    assert_eq!(store.opening("cache").unwrap(), None);
    // A deadline already passed is not published; one that passes expires in Redis.
    let now = SystemTime::now();
    store
        .publish("gone", Opening::new(now - Duration::from_secs(1), now))
        .unwrap();
    assert_eq!(store.opening("gone").unwrap(), None);
    store
        .publish("brief", opening_for(Duration::from_millis(30)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.opening("brief").unwrap().is_some() {
        assert!(Instant::now() < deadline, "never expired");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn an_opening_answered_by_a_recovery_gives_way_to_a_new_one_that_ends_sooner() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    let now = SystemTime::now();
    let long = Opening::new(now + Duration::from_secs(60), now);
    store.publish("db", long).unwrap();
    // Not answered: a shorter one does not replace it.
    let shorter = Opening::new(
        now + Duration::from_secs(10),
        now + Duration::from_millis(10),
    );
    store.publish("db", shorter).unwrap();
    assert_eq!(
        millis(store.opening("db").unwrap().unwrap().until),
        millis(long.until)
    );
    // A recovery stamped before it was published does not answer it either.
    store
        .publish_recovery("db", now - Duration::from_millis(5))
        .unwrap();
    store.publish("db", shorter).unwrap();
    assert_eq!(
        millis(store.opening("db").unwrap().unwrap().until),
        millis(long.until)
    );
    // A recovery after it does: the next opening is kept, however soon it ends.
    store
        .publish_recovery("db", now + Duration::from_millis(20))
        .unwrap();
    let new = Opening::new(
        now + Duration::from_secs(10),
        now + Duration::from_millis(30),
    );
    store.publish("db", new).unwrap();
    let kept = store.opening("db").unwrap().unwrap();
    assert_eq!(
        (millis(kept.until), millis(kept.published_at)),
        (millis(new.until), millis(new.published_at))
    );
    // And a recovery stamped far ahead of the new opening's publisher answers nothing.
    let mut other = RedisStore::new(&server.address).key_prefix("other:");
    other.publish("db", long).unwrap();
    other
        .publish_recovery("db", now + Duration::from_secs(3600))
        .unwrap();
    other.publish("db", new).unwrap();
    assert_eq!(
        millis(other.opening("db").unwrap().unwrap().until),
        millis(long.until)
    );
}

#[test]
fn recoveries_keep_the_later_time_under_keys_of_their_own() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address).key_prefix("test:");
    assert_eq!(store.recovered_at("db").unwrap(), None);
    let now = SystemTime::now();
    store.publish_recovery("db", now).unwrap();
    // Half a second earlier: within RECOVERY_AHEAD, the clocks agree, and the later is kept.
    store
        .publish_recovery("db", now - Duration::from_millis(500))
        .unwrap();
    assert_eq!(
        millis(store.recovered_at("db").unwrap().unwrap()),
        millis(now),
        "the later recovery is kept"
    );
    assert_eq!(store.opening("db").unwrap(), None, "no opening written");
    let opening = Opening::new(now + Duration::from_secs(60), now);
    store.publish("db", opening).unwrap();
    assert_eq!(
        millis(store.recovered_at("db").unwrap().unwrap()),
        millis(now)
    );
    assert_eq!(
        millis(store.opening("db").unwrap().unwrap().until),
        millis(opening.until)
    );

    // Two prefixes that are the same would mix recoveries and openings: refused by name.
    let mut mixed = RedisStore::new(&server.address)
        .key_prefix("same:")
        .recovery_key_prefix("same:");
    let error = mixed.publish_recovery("db", now).unwrap_err();
    assert!(error.to_string().contains("recovery_key_prefix"), "{error}");
    assert!(mixed.recovered_at("db").is_err());
    let error = mixed.publish("db", opening).unwrap_err();
    assert!(error.to_string().contains("recovery_key_prefix"), "{error}");

    // One that begins the other mixes them too: the opening of `rec:db` would be the
    // recovery of `db`. Refused either way round.
    for (openings, recoveries) in [("app:", "app:rec:"), ("app:rec:", "app:")] {
        let mut mixed = RedisStore::new(&server.address)
            .key_prefix(openings)
            .recovery_key_prefix(recoveries);
        let error = mixed.publish_recovery("db", now).unwrap_err();
        assert!(error.to_string().contains("key_prefix \"app:"), "{error}");
        assert!(mixed.publish("rec:db", opening).is_err());
    }
}

#[test]
fn one_instance_probes_for_another_through_redis() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let clock = hotbreaker::ManualClock::new();
    let instance = || {
        Arc::new(
            Breaker::builder()
                .consecutive_failures(1)
                .open_duration(Duration::from_secs(30))
                .clock(clock.clone())
                .build()
                .unwrap(),
        )
    };
    let (prober, waiter) = (instance(), instance());
    let follow = |breaker: &Arc<Breaker<hotbreaker::ManualClock>>| {
        SharedOpenings::new(RedisStore::new(&server.address))
            .wait_for_probe(Duration::from_secs(10))
            .unwrap()
            .follow("payments", breaker.clone())
    };
    let (mut follow_prober, mut follow_waiter) = (follow(&prober), follow(&waiter));
    prober.try_acquire().unwrap().failure();
    assert_eq!(follow_prober.poll().published, 1);
    assert_eq!(follow_waiter.poll().opened, 1);

    clock.advance(Duration::from_secs(31));
    assert!(waiter.try_acquire().is_err(), "the waiter waits");
    prober.try_acquire().unwrap().success();
    std::thread::sleep(Duration::from_millis(2));
    let report = follow_prober.poll();
    assert_eq!(report.recoveries_published, 1, "{report:?}");
    let report = follow_waiter.poll();
    assert_eq!(report.ended, 1, "{report:?}");
    assert!(waiter.try_acquire().unwrap().is_probe());
}

#[test]
fn windows_are_kept_one_per_instance_and_read_back() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    assert_eq!(store.windows("db").unwrap(), []);
    // Now, to the millisecond: a window published more than a day ago is dropped.
    let since_epoch = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(since_epoch.as_millis() as u64);
    store
        .publish_window("db", &WindowShare::new("host-1:42", 3, 10, at))
        .unwrap();
    store
        .publish_window("db", &WindowShare::new("host-2:7", 0, 4, at))
        .unwrap();
    store
        .publish_window("db", &WindowShare::new("host-1:42", 5, 10, at))
        .unwrap();
    store
        .publish_window("cache", &WindowShare::new("host-1:42", 1, 1, at))
        .unwrap();
    let mut windows = store.windows("db").unwrap();
    windows.sort_by(|a, b| a.instance.cmp(&b.instance));
    assert_eq!(
        windows,
        [
            WindowShare::new("host-1:42", 5, 10, at),
            WindowShare::new("host-2:7", 0, 4, at),
        ],
        "the latest window of each instance, to the millisecond"
    );

    // Something else in the hash is an error that names it, not a panic.
    let mut raw = TcpStream::connect(&server.address).unwrap();
    raw.write_all(b"HSET hotbreaker:windows:db host-3 garbage\r\n")
        .unwrap();
    let mut reply = [0u8; 16];
    let _ = raw.read(&mut reply).unwrap();
    let error = store.windows("db").unwrap_err();
    assert!(error.to_string().contains("garbage"), "{error}");
    // The next window published drops it, and one with more failures than calls: otherwise
    // every publish would keep them, and every read fail, for good.
    raw.write_all(b"HSET hotbreaker:windows:db host-4 \"5 3 1\"\r\n")
        .unwrap();
    let _ = raw.read(&mut reply).unwrap();
    assert!(store.windows("db").is_err());
    store
        .publish_window("db", &WindowShare::new("host-2:7", 0, 4, at))
        .unwrap();
    assert_eq!(store.windows("db").unwrap().len(), 2);

    let mut mixed = RedisStore::new(&server.address).windows_key_prefix("hotbreaker:open:");
    let error = mixed
        .publish_window("db", &WindowShare::new("a", 0, 1, at))
        .unwrap_err();
    assert!(error.to_string().contains("windows_key_prefix"), "{error}");
}

/// A refused connect holds off the next for the timeout: the commands in between fail at
/// once with the error that broke it, instead of each trying (and, against a silent address,
/// each waiting out the timeout). After the timeout, the store tries again.
#[test]
fn after_a_failed_connect_the_store_waits_a_timeout_before_the_next() {
    let address = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    }; // closed: connecting is refused, at once, so a long timeout costs nothing here and
    // leaves no doubt that the second command comes within it, however slow this machine is.
    let mut store = RedisStore::new(&address).timeout(Duration::from_secs(600));
    let first = store.ping().unwrap_err().to_string();
    assert!(!first.contains("not connecting again"), "{first}");
    let held = store.opening("db").unwrap_err().to_string();
    assert!(held.contains("not connecting again"), "{held}");
    assert!(held.contains(&first), "it repeats the cause: {held}");

    let mut quick = RedisStore::new(&address).timeout(Duration::from_millis(50));
    let _ = quick.ping().unwrap_err();
    std::thread::sleep(Duration::from_millis(100));
    let again = quick.ping().unwrap_err().to_string();
    assert!(
        !again.contains("not connecting again"),
        "tried again: {again}"
    );
}

#[test]
fn a_zero_timeout_is_an_error_that_names_it() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address).timeout(Duration::ZERO);
    let error = store.ping().unwrap_err();
    assert!(error.to_string().contains("timeout is zero"), "{error}");
}

#[test]
fn a_password_is_sent_and_a_wrong_one_is_an_error() {
    let Some(server) = start_server(&["--requirepass", "s3cret"]) else {
        return;
    };
    let mut without = RedisStore::new(&server.address);
    let err = without.opening("db").unwrap_err();
    assert!(err.to_string().contains("NOAUTH"), "{err}");
    // An error reply holds nothing off: the next command asks the server again.
    let err = without.opening("db").unwrap_err();
    assert!(err.to_string().contains("NOAUTH"), "{err}");
    let mut wrong = RedisStore::new(&server.address).password("nope");
    assert!(wrong.ping().is_err());
    let mut right = RedisStore::new(&server.address).password("s3cret");
    right.ping().unwrap();
    assert!(
        !format!("{right:?}").contains("s3cret"),
        "the password stays out of Debug"
    );
}

#[test]
fn a_server_that_goes_away_is_an_error_and_the_store_reconnects() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let address = server.address.clone();
    let mut store = RedisStore::new(&address).timeout(Duration::from_millis(500));
    store.ping().unwrap();
    drop(server);
    assert!(store.ping().is_err(), "the server is gone");
    assert!(store.ping().is_err(), "and reconnecting fails too");
    // A value in the key that is not a deadline is an error naming the key.
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    let mut raw = TcpStream::connect(&server.address).unwrap();
    std::io::Write::write_all(&mut raw, b"SET hotbreaker:open:db soon\r\n").unwrap();
    let mut reply = [0; 5];
    std::io::Read::read_exact(&mut raw, &mut reply).unwrap();
    assert_eq!(&reply, b"+OK\r\n");
    let err = store.opening("db").unwrap_err();
    assert!(err.to_string().contains("hotbreaker:open:db"), "{err}");
}

#[test]
fn windows_of_instances_long_gone_are_dropped_and_do_not_stop_window_sharing() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    let week_ago = SystemTime::now() - Duration::from_secs(7 * 24 * 3600);
    // Earlier processes, named by host and process id, each published once a week ago: more
    // than the 512 instances a name's hash is read back with.
    for pid in 0..600 {
        let old = WindowShare::new(format!("host:{pid}"), 0, 10, week_ago);
        store.publish_window("db", &old).unwrap();
    }
    let live = WindowShare::new("host:live", 3, 5, SystemTime::now());
    store.publish_window("db", &live).unwrap();
    let kept: Vec<_> = store
        .windows("db")
        .unwrap()
        .into_iter()
        .map(|window| (window.instance, window.failures, window.calls))
        .collect();
    assert_eq!(kept, vec![("host:live".to_string(), 3, 5)]);

    let breaker = Arc::new(Breaker::builder().failure_rate(0.5, 10).build().unwrap());
    for fails in [true, false, true, false, true] {
        let permit = breaker.try_acquire().unwrap();
        if fails {
            permit.failure()
        } else {
            permit.success()
        }
    }
    let mut follower = SharedOpenings::new(RedisStore::new(&server.address))
        .share_windows("host:me", Duration::from_secs(5))
        .unwrap()
        .follow("db", breaker.clone());
    let report = follower.poll();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(breaker.state(), State::Open, "6 failures of 10 in all");
}

#[test]
fn an_opening_key_holding_no_opening_is_replaced_by_the_next_publish() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    // Lua's `tonumber` reads "1e15" as a number; the store reads no opening from it, nor from
    // a deadline alone.
    let mut raw = TcpStream::connect(&server.address).unwrap();
    let mut store = RedisStore::new(&server.address);
    for garbage in ["1e15 1", "99999999999999"] {
        let command = format!("SET hotbreaker:open:db \"{garbage}\"\r\n");
        raw.write_all(command.as_bytes()).unwrap();
        let mut reply = [0u8; 16];
        let _ = raw.read(&mut reply).unwrap();
        let error = store.opening("db").unwrap_err();
        assert!(error.to_string().contains(garbage), "{error}");
        store
            .publish("db", opening_for(Duration::from_secs(30)))
            .unwrap();
        let kept = store.opening("db").unwrap().expect("the opening published");
        assert!(kept.until > SystemTime::now(), "{kept:?}");
    }
}

#[test]
fn a_recovery_replaces_one_stamped_far_ahead() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    let now = SystemTime::now();
    store
        .publish_recovery("db", now + Duration::from_secs(3600))
        .unwrap();
    store.publish_recovery("db", now).unwrap();
    let kept = store.recovered_at("db").unwrap().unwrap();
    assert_eq!(
        millis(kept),
        millis(now),
        "the stamp an hour ahead is replaced"
    );
}

#[test]
fn an_opening_replaces_one_published_far_ahead_even_if_that_one_ends_later() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    let now = SystemTime::now();
    let ahead = now + Duration::from_secs(3600);
    store
        .publish("db", Opening::new(ahead + Duration::from_secs(30), ahead))
        .unwrap();
    let honest = Opening::new(now + Duration::from_secs(30), now);
    store.publish("db", honest).unwrap();
    let kept = store.opening("db").unwrap().expect("an opening");
    assert_eq!(
        (millis(kept.until), millis(kept.published_at)),
        (millis(honest.until), millis(honest.published_at)),
        "the opening stamped an hour ahead is replaced"
    );
    // Within `RECOVERY_AHEAD` of each other, the later deadline is still kept.
    let soon = Opening::new(
        now + Duration::from_secs(10),
        now - Duration::from_millis(500),
    );
    store.publish("db", soon).unwrap();
    let kept = store.opening("db").unwrap().expect("an opening");
    assert_eq!(millis(kept.until), millis(honest.until), "{kept:?}");
}

/// Sends one command to the server as text, and returns the start of its reply.
fn send(server: &Server, command: &str) -> String {
    let mut raw = TcpStream::connect(&server.address).unwrap();
    raw.write_all(command.as_bytes()).unwrap();
    let mut reply = [0u8; 64];
    let read = raw.read(&mut reply).unwrap();
    String::from_utf8_lossy(&reply[..read]).trim().to_string()
}

#[test]
fn a_recovery_is_kept_as_long_as_the_opening_it_answers() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    // The longest opening a breaker makes is kept until its deadline, a year on. The recovery
    // that answers it must be kept as long: once it is gone, an instance that starts late
    // applies the answered opening, and a new opening that ends sooner gives way to it.
    let mut store = RedisStore::new(&server.address);
    let now = SystemTime::now();
    let longest = Opening::new(now + hotbreaker::MAX_OPEN_DURATION, now);
    store.publish("db", longest).unwrap();
    store
        .publish_recovery("db", now + Duration::from_millis(1))
        .unwrap();
    let millis_left = |key: &str| -> i64 {
        let reply = send(&server, &format!("PTTL {key}\r\n"));
        reply.trim_start_matches(':').parse().unwrap()
    };
    let (opening_left, recovery_left) = (
        millis_left("hotbreaker:open:db"),
        millis_left("hotbreaker:recovered:db"),
    );
    assert!(
        recovery_left >= opening_left,
        "the recovery goes in {recovery_left} ms, the opening it answers in {opening_left} ms"
    );
}

#[test]
fn values_too_long_for_a_time_are_replaced_or_dropped_by_the_next_publish() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    // 20 digits: Lua reads a float, and no u64 holds it.
    send(
        &server,
        "SET hotbreaker:open:db \"99999999999999999999 1\"\r\n",
    );
    send(
        &server,
        "HSET hotbreaker:windows:db other \"1 2 99999999999999999999\"\r\n",
    );
    send(
        &server,
        "SET hotbreaker:recovered:db 99999999999999999999\r\n",
    );
    // A window of more failures than calls, published just now: no window either.
    send(
        &server,
        &format!(
            "HSET hotbreaker:windows:db liar \"5 2 {}\"\r\n",
            millis(SystemTime::now())
        ),
    );
    let mut store = RedisStore::new(&server.address);
    assert!(store.opening("db").is_err(), "no opening to read");
    assert!(store.windows("db").is_err(), "no windows to read");
    let opening = opening_for(Duration::from_secs(30));
    store.publish("db", opening).unwrap();
    let kept = store.opening("db").unwrap().expect("the opening published");
    assert_eq!(millis(kept.until), millis(opening.until));
    store
        .publish_window("db", &WindowShare::new("me", 0, 4, SystemTime::now()))
        .unwrap();
    let windows = store.windows("db").unwrap();
    assert_eq!(windows.len(), 1, "{windows:?}");
    let now = SystemTime::now();
    store.publish_recovery("db", now).unwrap();
    assert_eq!(
        millis(store.recovered_at("db").unwrap().unwrap()),
        millis(now)
    );
}

#[test]
fn the_opening_script_reads_a_recovery_as_the_store_does() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    let long = opening_for(Duration::from_secs(60));
    store.publish("db", long).unwrap();
    // 16 characters (zero-padded): no recovery `recovered_at` can read, so none that
    // answers the opening kept.
    let recovery = format!("{:016}", millis(long.published_at) + 1);
    send(
        &server,
        &format!("SET hotbreaker:recovered:db {recovery}\r\n"),
    );
    assert!(store.recovered_at("db").is_err());
    let later = long.published_at + Duration::from_millis(10);
    store
        .publish("db", Opening::new(later + Duration::from_secs(5), later))
        .unwrap();
    let kept = store.opening("db").unwrap().unwrap();
    assert_eq!(
        millis(kept.until),
        millis(long.until),
        "the 60 s opening is kept"
    );
}

/// A server that answers every command with a reply line sent one byte at a time, each byte
/// well within the store's timeout, and never ends it: the store must give up on the reply
/// (an error), not read it for as long as the server cares to send.
#[test]
fn a_server_trickling_a_reply_is_an_error_not_a_hang() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut request = [0; 4096];
                let _ = stream.read(&mut request);
                let mut reply = b"+".iter().chain(std::iter::repeat(&b'O'));
                // Until the store hangs up.
                while stream.write_all(&[*reply.next().unwrap()]).is_ok() {
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
        }
    });
    let (sender, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut store = RedisStore::new(address).timeout(Duration::from_millis(200));
        let _ = sender.send(store.opening("db"));
    });
    // A bounded wait for the answer, not a timing: without a whole-reply deadline the reply
    // line (up to 64 KiB, a byte per 20 ms) would take over twenty minutes.
    let answer = answered
        .recv_timeout(Duration::from_secs(30))
        .expect("the store gave up on the trickling reply");
    assert!(answer.is_err(), "{answer:?}");
}

/// Keys of another type under the store's names (left by another program, or a hand): like
/// a string that is no opening, no time or no window, they are replaced by the next publish,
/// not an error at every publish from then on.
#[test]
fn keys_of_another_type_are_replaced_by_the_next_publish() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    send(&server, "HSET hotbreaker:open:db field value\r\n");
    send(&server, "RPUSH hotbreaker:recovered:db 1\r\n");
    send(&server, "SET hotbreaker:windows:db 1\r\n");
    let mut store = RedisStore::new(&server.address);
    let opening = opening_for(Duration::from_secs(30));
    store.publish("db", opening).unwrap();
    let kept = store.opening("db").unwrap().expect("the opening published");
    assert_eq!(millis(kept.until), millis(opening.until));
    let now = SystemTime::now();
    store.publish_recovery("db", now).unwrap();
    assert_eq!(
        millis(store.recovered_at("db").unwrap().unwrap()),
        millis(now)
    );
    store
        .publish_window("db", &WindowShare::new("a", 1, 2, now))
        .unwrap();
    assert_eq!(store.windows("db").unwrap().len(), 1);
}

/// A window whose instance's name is not UTF-8 (no instance of this crate names itself so,
/// but something else may write one) is still a window: it neither stays unreadable for a
/// day, failing every read of the name's windows, nor is kept as such.
#[test]
fn a_window_whose_instance_name_is_not_utf8_does_not_stop_window_sharing() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let now = SystemTime::now();
    let value = format!("1 2 {}", millis(now));
    let mut command =
        b"*4\r\n$4\r\nHSET\r\n$21\r\nhotbreaker:windows:db\r\n$2\r\n\xff\xfe\r\n".to_vec();
    command.extend_from_slice(format!("${}\r\n{value}\r\n", value.len()).as_bytes());
    let mut raw = TcpStream::connect(&server.address).unwrap();
    raw.write_all(&command).unwrap();
    let mut reply = [0u8; 4];
    raw.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b":1\r\n");
    let mut store = RedisStore::new(&server.address);
    store
        .publish_window("db", &WindowShare::new("a", 0, 3, now))
        .unwrap();
    let windows = store.windows("db").unwrap();
    let calls: u32 = windows.iter().map(|window| window.calls).sum();
    assert_eq!((windows.len(), calls), (2, 5), "{windows:?}");
}

/// Ties at the Redis store's lines (its scripts) keep what the memory store keeps
/// (`store_ties`).
#[test]
fn the_redis_store_keeps_what_is_kept_at_its_ties() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address).key_prefix("ties:");
    store_ties::check_store_ties(&mut store, "");
}

#[test]
fn forgetting_a_name_deletes_its_three_keys_and_no_other_names() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let mut store = RedisStore::new(&server.address);
    let now = SystemTime::now();
    for name in ["db", "cache"] {
        store
            .publish(name, opening_for(Duration::from_secs(60)))
            .unwrap();
        store.publish_recovery(name, now).unwrap();
        store
            .publish_window(name, &WindowShare::new("a", 1, 20, now))
            .unwrap();
    }
    assert_eq!(store.forget("db").unwrap(), 3);
    let exists = |key: &str| send(&server, &format!("EXISTS {key}\r\n"));
    for kind in ["open", "recovered", "windows"] {
        assert_eq!(
            exists(&format!("hotbreaker:{kind}:db")),
            ":0",
            "{kind} of db"
        );
        assert_eq!(
            exists(&format!("hotbreaker:{kind}:cache")),
            ":1",
            "{kind} of cache"
        );
    }
    assert_eq!(store.opening("db").unwrap(), None);
    assert_eq!(store.forget("db").unwrap(), 0, "nothing left to delete");

    // Prefixes that could mix are refused before anything is deleted.
    let mut mixed = RedisStore::new(&server.address).recovery_key_prefix("hotbreaker:");
    let error = mixed.forget("cache").unwrap_err().to_string();
    assert!(error.contains("recovery_key_prefix"), "{error}");
    assert_eq!(exists("hotbreaker:open:cache"), ":1");
}

/// Two applications on one server, each in a namespace of its own, with a breaker of the same
/// name: one's recovery does not end the other's opening, its windows are not added to the
/// other's, and its `forget` leaves the other's keys. Catches a namespace that moves only the
/// openings (as `key_prefix` alone does), whose recoveries and windows stay shared.
#[test]
fn namespaces_keep_two_applications_on_one_server_apart() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let store = |namespace: &str| RedisStore::new(&server.address).namespace(namespace);
    let now = SystemTime::now();
    let mut prod = store("prod:");
    let mut staging = store("staging:");
    prod.publish("payments", opening_for(Duration::from_secs(60)))
        .unwrap();
    prod.publish_window("payments", &WindowShare::new("prod-1", 3, 20, now))
        .unwrap();
    staging
        .publish_recovery("payments", now + Duration::from_secs(1))
        .unwrap();
    staging
        .publish_window("payments", &WindowShare::new("staging-1", 1, 20, now))
        .unwrap();
    assert_eq!(prod.recovered_at("payments").unwrap(), None);
    assert_eq!(
        prod.windows("payments").unwrap().len(),
        1,
        "prod's own only"
    );
    assert!(prod.opening("payments").unwrap().is_some());
    assert_eq!(
        staging.forget("payments").unwrap(),
        2,
        "staging's recovery and windows"
    );
    assert!(prod.opening("payments").unwrap().is_some());
    assert_eq!(prod.windows("payments").unwrap().len(), 1);
}
