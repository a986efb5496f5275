//! Quiet instances that judge a failing dependency together, by sharing their rate windows.
//!
//! Four instances of a service start (a deploy, say) while their dependency fails 60 % of the
//! calls. Each calls it once every 25 ms, and each breaker trips when half of its last 20
//! calls failed, judged once it has 20: on its own, an instance sends 20 calls (half a
//! second) before it judges anything. The scenario runs twice: with each breaker on its own,
//! and with the followers sharing their windows through a store
//! (`SharedOpenings::share_windows`, polled every 20 ms), so that the rule judges the
//! instances' windows added up, 20 calls of all four. It prints, per instance, how many calls
//! failed and how long after the start its breaker opened.
//!
//! ```sh
//! cargo run --example shared_windows
//! ```

#[path = "support/output.rs"]
mod output;

use output::say;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hotbreaker::shared::{MemoryStore, SharedOpenings};
use hotbreaker::{Breaker, CallError, State, Transition, Trigger};

const INSTANCES: usize = 4;
const PACE: Duration = Duration::from_millis(25);
const RUN_FOR: Duration = Duration::from_millis(1500);
/// Which calls fail, in turn: 3 in 5, 60 %.
const FAILING: [bool; 5] = [true, false, true, true, false];
const POLL_EVERY: Duration = Duration::from_millis(20);

/// What one instance saw.
#[derive(Debug, Default)]
struct Tally {
    failed: u64,
    first_opening: Option<(Duration, Trigger)>,
}

fn main() -> std::process::ExitCode {
    if let Some(refused) = output::refuse_arguments("shared_windows") {
        return refused;
    }
    say!(
        "{INSTANCES} instances, a call every {PACE:?} each, 60 % of them failing; \
         each trips at half of its last 20 calls\n"
    );
    say!("each breaker on its own:");
    report(&scenario(false));
    say!("\nsharing windows (MemoryStore, polled every {POLL_EVERY:?}):");
    report(&scenario(true));
    std::process::ExitCode::SUCCESS
}

/// Runs the instances once, sharing their windows or not.
fn scenario(share: bool) -> Vec<Tally> {
    let store = MemoryStore::new();
    let start = Instant::now();
    let mut instances = Vec::new();
    for n in 0..INSTANCES {
        let openings = Arc::new(Mutex::new(Vec::new()));
        let seen = openings.clone();
        let breaker = Arc::new(
            Breaker::builder()
                .failure_rate(0.5, 20)
                .open_duration(Duration::from_secs(5))
                .on_transition(move |t: &Transition| {
                    if t.to == State::Open {
                        seen.lock().unwrap().push((start.elapsed(), t.trigger));
                    }
                })
                .build()
                .expect("valid settings"),
        );
        let polling = share.then(|| {
            SharedOpenings::new(store.clone())
                .share_windows(format!("instance-{n}"), Duration::from_millis(200))
                .expect("a name and a freshness in range")
                .follow("inventory", breaker.clone())
                .spawn_polling(POLL_EVERY, |name, error| {
                    eprintln!("store error for {name}: {error}")
                })
                .expect("a valid interval, and a thread")
        });
        let failed = Arc::new(AtomicU64::new(0));
        let counted = failed.clone();
        let calls = thread::spawn(move || {
            // Each instance starts at its own point of the failure pattern.
            let mut call = n;
            while start.elapsed() < RUN_FOR {
                let fails = FAILING[call % FAILING.len()];
                call += 1;
                if let Err(CallError::Failed(_)) =
                    breaker.call(|| if fails { Err("503") } else { Ok(()) })
                {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
                thread::sleep(PACE);
            }
        });
        instances.push((calls, openings, failed, polling));
    }
    instances
        .into_iter()
        .map(|(calls, openings, failed, polling)| {
            calls.join().expect("instance thread");
            drop(polling);
            let first_opening = openings.lock().unwrap().first().copied();
            Tally {
                failed: failed.load(Ordering::Relaxed),
                first_opening,
            }
        })
        .collect()
}

fn report(results: &[Tally]) {
    for (n, tally) in results.iter().enumerate() {
        let opened = match tally.first_opening {
            Some((at, trigger)) => format!(
                "opened {:.0} ms after the start ({})",
                at.as_secs_f64() * 1e3,
                match trigger {
                    Trigger::External => "on the windows added up, or another's opening",
                    _ => "on its own window",
                }
            ),
            None => "never opened".to_owned(),
        };
        say!("  instance {n}: {:3} calls failed; {opened}", tally.failed);
    }
}
