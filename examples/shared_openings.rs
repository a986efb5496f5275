//! Three instances of a service agree about a failing dependency through shared openings.
//!
//! Each instance is a thread with its own breaker (5 failures in a row trip it, 2 s open) in
//! front of the same dependency. Instance 0 takes most of the traffic (a call every 2 ms),
//! instances 1 and 2 a trickle (one every 40 ms). The dependency is healthy for 0.5 s, then
//! down for 2.5 s. The scenario runs twice: with each breaker on its own, and with the
//! breakers following each other through a store (`shared::SharedOpenings`, polled every
//! 20 ms). It prints, per instance, how many calls reached the failing dependency and how many
//! the breaker rejected, and what opened each breaker first.
//!
//! ```sh
//! cargo run --example shared_openings                                    # MemoryStore
//! cargo run --example shared_openings --features redis -- --redis 127.0.0.1:6379
//! ```

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hotbreaker::shared::{MemoryStore, OpeningStore, SharedOpenings};
use hotbreaker::{Breaker, CallError, Transition, Trigger};

const HEALTHY_FOR: Duration = Duration::from_millis(500);
const DOWN_FOR: Duration = Duration::from_millis(2500);
const PACES: [Duration; 3] = [
    Duration::from_millis(2),
    Duration::from_millis(40),
    Duration::from_millis(40),
];
const POLL_EVERY: Duration = Duration::from_millis(20);

/// What one instance saw while the dependency was down.
#[derive(Debug, Default)]
struct Tally {
    failed: u64,
    rejected: u64,
    first_opening: Option<(Duration, Trigger)>,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let redis = match args.as_slice() {
        [] => None,
        [flag, address] if flag == "--redis" => Some(address.clone()),
        _ => {
            eprintln!(
                "error: unknown arguments {args:?}; usage: shared_openings [--redis HOST:PORT]"
            );
            return ExitCode::from(2);
        }
    };
    if let Some(address) = &redis {
        if let Err(message) = check_redis(address) {
            eprintln!("error: --redis {address}: {message}");
            return ExitCode::from(2);
        }
    }
    println!("dependency down after {HEALTHY_FOR:?}, for {DOWN_FOR:?}; calls every {PACES:?}\n");
    println!("each breaker on its own:");
    report(&scenario(|_| None));
    println!(
        "\nbreakers sharing openings ({}):",
        redis.as_deref().unwrap_or("MemoryStore")
    );
    let results = match redis {
        None => {
            let store = MemoryStore::new();
            scenario(|breaker| Some(follow(store.clone(), breaker)))
        }
        Some(address) => match redis_scenario(&address) {
            Ok(results) => results,
            Err(message) => {
                eprintln!("error: --redis {address}: {message}");
                return ExitCode::from(2);
            }
        },
    };
    report(&results);
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
fn redis_scenario(address: &str) -> Result<Vec<Tally>, String> {
    use hotbreaker::shared::RedisStore;
    // A prefix of this run's own, so that a deadline left by an earlier run is not read.
    let prefix = format!("hotbreaker-example:{}:", std::process::id());
    let store = || RedisStore::new(address).key_prefix(prefix.clone());
    Ok(scenario(|breaker| Some(follow(store(), breaker))))
}

#[cfg(not(feature = "redis"))]
fn redis_scenario(address: &str) -> Result<Vec<Tally>, String> {
    check_redis(address).map(|()| Vec::new())
}

/// A follower polling on its own thread; errors are printed, the run goes on.
fn follow<S: OpeningStore + 'static>(
    store: S,
    breaker: Arc<Breaker>,
) -> hotbreaker::shared::Polling {
    SharedOpenings::new(store)
        .follow("inventory", breaker)
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
        let openings = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = openings.clone();
        let breaker = Arc::new(
            Breaker::builder()
                .consecutive_failures(5)
                .open_duration(Duration::from_secs(2))
                .on_transition(move |t: &Transition| {
                    if t.to == hotbreaker::State::Open {
                        seen.lock().unwrap().push((start.elapsed(), t.trigger));
                    }
                })
                .build()
                .expect("valid settings"),
        );
        let polling = share(breaker.clone());
        let down = down.clone();
        let calls = thread::spawn(move || {
            let mut tally = Tally::default();
            while start.elapsed() < HEALTHY_FOR + DOWN_FOR {
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
        instances.push((calls, openings, polling));
    }
    thread::sleep(HEALTHY_FOR);
    down.store(true, Ordering::Relaxed);
    instances
        .into_iter()
        .map(|(calls, openings, polling)| {
            let mut tally = calls.join().expect("instance thread");
            drop(polling);
            tally.first_opening = openings.lock().unwrap().first().copied();
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
        println!(
            "  instance {n}: {:4} calls reached the failing dependency, {:5} rejected; {opened}",
            tally.failed, tally.rejected
        );
    }
}
