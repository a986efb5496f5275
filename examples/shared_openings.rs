//! Three instances of a service agree about a failing dependency through shared openings.
//!
//! Each instance is a thread with its own breaker (5 failures in a row trip it, 2 s open) in
//! front of the same dependency. Instance 0 takes most of the traffic (a call every 2 ms),
//! instances 1 and 2 a trickle (one every 40 ms). The dependency is healthy for 0.5 s, down
//! for 2.5 s, then healthy again for 2 s. The scenario runs three times: with each breaker on
//! its own; with the breakers following each other's openings through a store
//! (`shared::SharedOpenings`, polled every 20 ms); and the same with one instance probing for
//! all (`wait_for_probe`: the others wait up to 100 ms past a deadline for the probe of the
//! instance that published it, and follow its verdict). It prints, per instance, how many
//! calls reached the failing dependency (and how many of those were probes), how many the
//! breaker rejected, what opened it first, and when it closed again.
//!
//! ```sh
//! cargo run --example shared_openings                                    # MemoryStore
//! cargo run --example shared_openings --features redis -- --redis 127.0.0.1:6379
//! ```

#[path = "support/output.rs"]
mod output;

use output::say;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hotbreaker::shared::{MemoryStore, OpeningStore, SharedOpenings};
use hotbreaker::{Breaker, CallError, State, Transition, Trigger};

const HEALTHY_FOR: Duration = Duration::from_millis(500);
const DOWN_FOR: Duration = Duration::from_millis(2500);
const PACES: [Duration; 3] = [
    Duration::from_millis(2),
    Duration::from_millis(40),
    Duration::from_millis(40),
];
const UP_AGAIN_FOR: Duration = Duration::from_secs(2);
const POLL_EVERY: Duration = Duration::from_millis(20);
const WAIT_FOR_PROBE: Duration = Duration::from_millis(100);
/// The name the three instances share their openings under.
const NAME: &str = "inventory";

/// What one instance saw.
#[derive(Debug, Default)]
struct Tally {
    failed: u64,
    rejected: u64,
    /// Probes that failed: the half-open breaker opened again.
    failed_probes: u64,
    first_opening: Option<(Duration, Trigger)>,
    /// When the breaker last closed, since the start.
    closed_at: Option<Duration>,
}

/// What the instances' followers share.
#[derive(Clone, Copy)]
enum Sharing {
    Openings,
    OpeningsAndProbes,
}

fn main() -> ExitCode {
    // Read as they are (`args` would panic at one that is not UTF-8), and written back with
    // `{:?}`, so that every message is one line.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // `--redis=HOST:PORT` as `--redis HOST:PORT`.
    if let [joined] = args.as_slice() {
        if let Some(address) = joined.to_str().and_then(|a| a.strip_prefix("--redis=")) {
            args = vec!["--redis".into(), address.into()];
        }
    }
    let redis = match args.as_slice() {
        [] => None,
        [flag, address] if flag == "--redis" => match address.to_str() {
            Some(address) => Some(address.to_owned()),
            None => {
                eprintln!("error: --redis {address:?}: not valid UTF-8");
                return ExitCode::from(2);
            }
        },
        [flag] if flag == "--redis" => {
            eprintln!("error: --redis needs a value; usage: shared_openings [--redis HOST:PORT]");
            return ExitCode::from(2);
        }
        _ => {
            eprintln!(
                "error: unexpected arguments {args:?}; usage: shared_openings [--redis HOST:PORT]"
            );
            return ExitCode::from(2);
        }
    };
    if let Some(address) = &redis {
        if let Err(message) = check_redis(address) {
            eprintln!("error: --redis {address:?}: {}", message.escape_debug());
            return ExitCode::from(2);
        }
    }
    say!(
        "dependency down after {HEALTHY_FOR:?}, for {DOWN_FOR:?}, then up for {UP_AGAIN_FOR:?}; \
         calls every {PACES:?}\n"
    );
    say!("each breaker on its own:");
    report(&scenario(|_| None));
    let store_name = redis.as_deref().unwrap_or("MemoryStore").to_owned();
    for (sharing, title) in [
        (Sharing::Openings, "breakers sharing openings"),
        (
            Sharing::OpeningsAndProbes,
            "sharing openings, one instance probing for all",
        ),
    ] {
        say!("\n{title} ({store_name}):");
        let results = match &redis {
            None => {
                let store = MemoryStore::new();
                scenario(|breaker| Some(follow(store.clone(), breaker, sharing)))
            }
            Some(address) => match redis_scenario(address, sharing) {
                Ok(results) => results,
                Err(message) => {
                    eprintln!("error: --redis {address:?}: {}", message.escape_debug());
                    return ExitCode::from(2);
                }
            },
        };
        report(&results);
    }
    ExitCode::SUCCESS
}

/// Whether a Redis server answers at `address`, before anything runs.
#[cfg(feature = "redis")]
fn check_redis(address: &str) -> Result<(), String> {
    hotbreaker::shared::RedisStore::new(address)
        .ping()
        .map_err(|error| error.to_string())
}

#[cfg(not(feature = "redis"))]
fn check_redis(_address: &str) -> Result<(), String> {
    Err("this build has no Redis store; run with --features redis".into())
}

#[cfg(feature = "redis")]
fn redis_scenario(address: &str, sharing: Sharing) -> Result<Vec<Tally>, String> {
    use hotbreaker::shared::RedisStore;
    // A namespace of this run's and this scenario's own, so that a deadline, a recovery or a
    // window left by an earlier run is not read.
    let run = format!(
        "hotbreaker-example:{}:{}:",
        std::process::id(),
        sharing as u8
    );
    let store = || RedisStore::new(address).namespace(&run);
    let tallies = scenario(|breaker| Some(follow(store(), breaker, sharing)));
    // The keys are this run's alone: left behind, the opening and its recovery would stay
    // in the user's Redis as long as the longest opening could (a year).
    store()
        .forget(NAME)
        .map_err(|error| format!("deleting this run's keys: {error}"))?;
    Ok(tallies)
}

#[cfg(not(feature = "redis"))]
fn redis_scenario(address: &str, _sharing: Sharing) -> Result<Vec<Tally>, String> {
    check_redis(address).map(|()| Vec::new())
}

/// A follower polling on its own thread; errors are printed, the run goes on.
fn follow<S: OpeningStore + 'static>(
    store: S,
    breaker: Arc<Breaker>,
    sharing: Sharing,
) -> hotbreaker::shared::Polling {
    let wait = match sharing {
        Sharing::OpeningsAndProbes => WAIT_FOR_PROBE,
        Sharing::Openings => Duration::ZERO,
    };
    SharedOpenings::new(store)
        .wait_for_probe(wait)
        .expect("a wait shorter than the longest opening")
        .follow(NAME, breaker)
        .spawn_polling(POLL_EVERY, |name, error| {
            eprintln!("store error for {name}: {error}")
        })
        .expect("a valid interval, and a thread")
}

/// Runs the three instances once; `share` may attach a follower to each breaker.
fn scenario(share: impl Fn(Arc<Breaker>) -> Option<hotbreaker::shared::Polling>) -> Vec<Tally> {
    let down = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let mut instances = Vec::new();
    for pace in PACES {
        let transitions = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = transitions.clone();
        let breaker = Arc::new(
            Breaker::builder()
                .consecutive_failures(5)
                .open_duration(Duration::from_secs(2))
                .on_transition(move |t: &Transition| {
                    seen.lock().unwrap().push((start.elapsed(), *t));
                })
                .build()
                .expect("valid settings"),
        );
        let polling = share(breaker.clone());
        let down = down.clone();
        let calls = thread::spawn(move || {
            let mut tally = Tally::default();
            while start.elapsed() < HEALTHY_FOR + DOWN_FOR + UP_AGAIN_FOR {
                let failing = down.load(Ordering::Relaxed);
                match breaker.call(|| if failing { Err("503") } else { Ok(()) }) {
                    Err(CallError::Failed(_)) => tally.failed += 1,
                    Err(CallError::Rejected(_)) => tally.rejected += 1,
                    Ok(()) => {}
                }
                thread::sleep(pace);
            }
            tally
        });
        instances.push((calls, transitions, polling));
    }
    thread::sleep(HEALTHY_FOR);
    down.store(true, Ordering::Relaxed);
    thread::sleep(DOWN_FOR);
    down.store(false, Ordering::Relaxed);
    instances
        .into_iter()
        .map(|(calls, transitions, polling)| {
            let mut tally = calls.join().expect("instance thread");
            drop(polling);
            let transitions = transitions.lock().unwrap();
            let to = |state| transitions.iter().filter(move |(_, t)| t.to == state);
            tally.first_opening = to(State::Open).next().map(|(at, t)| (*at, t.trigger));
            tally.failed_probes = to(State::Open)
                .filter(|(_, t)| t.trigger == Trigger::ProbeFailed)
                .count() as u64;
            tally.closed_at = to(State::Closed).next_back().map(|(at, _)| *at);
            tally
        })
        .collect()
}

fn report(results: &[Tally]) {
    for (n, tally) in results.iter().enumerate() {
        let opened = match tally.first_opening {
            Some((at, trigger)) => format!(
                "first opened {:.0} ms after the fault ({})",
                (at.saturating_sub(HEALTHY_FOR)).as_secs_f64() * 1e3,
                match trigger {
                    Trigger::External => "another instance's opening",
                    _ => "its own failures",
                }
            ),
            None => "never opened".to_owned(),
        };
        let closed = match tally.closed_at {
            Some(at) => format!(
                "closed {:.0} ms after it came back",
                (at.saturating_sub(HEALTHY_FOR + DOWN_FOR)).as_secs_f64() * 1e3
            ),
            None => "not closed again".to_owned(),
        };
        say!(
            "  instance {n}: {:4} calls reached the failing dependency ({} of them probes), \
             {:5} rejected; {opened}; {closed}",
            tally.failed,
            tally.failed_probes,
            tally.rejected
        );
    }
}
