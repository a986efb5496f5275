//! Where the two-thread time of a day with scattered failures goes: who pays, the thread that
//! fails or the one that only succeeds, what one cache-line transfer costs here, what a window
//! per thread changes, and the least any window shared by two threads could cost on the same
//! day (`floor.rs`).
//!
//! ```sh
//! cargo bench --bench contention
//! ```
//!
//! Not criterion: each thread times its own calls, so the failing and the succeeding thread
//! are told apart, and the scenarios run in rounds, one after another, so that each round sees
//! the machine in the same mood; the medians over the rounds are printed. Every call is
//! `Breaker::call` on a rate rule of half of the last 20 or 100 calls; a failing thread fails
//! every 40th of its calls (the lesson's 2.5 %). Each thread is pinned to a CPU of its own
//! (`overhead/pinning.rs`), so that the two run at once.

mod floor;
#[path = "../overhead/pinning.rs"]
mod pinning;

use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use hotbreaker::Breaker;

const ROUNDS: usize = 5;
const CALLS: u64 = 5_000_000;
const FAIL_EVERY: u32 = 40;

/// Who fails, whether the two threads share one breaker, and which kind of window it has.
struct Scenario {
    name: &'static str,
    shared: bool,
    /// Whether each thread fails every `FAIL_EVERY`th call.
    fails: [bool; 2],
    /// `Builder::per_thread_windows`.
    per_thread_windows: bool,
}

impl Scenario {
    const fn new(name: &'static str, shared: bool, fails: [bool; 2]) -> Self {
        Scenario {
            name,
            shared,
            fails,
            per_thread_windows: false,
        }
    }

    const fn per_thread(name: &'static str, fails: [bool; 2]) -> Self {
        Scenario {
            name,
            shared: true,
            fails,
            per_thread_windows: true,
        }
    }
}

const SCENARIOS: [Scenario; 7] = [
    Scenario::new("one breaker, both fail", true, [true, true]),
    Scenario::new("a breaker each, both fail", false, [true, true]),
    Scenario::per_thread(
        "one breaker with a window per thread, both fail",
        [true, true],
    ),
    Scenario::new("one breaker, only thread 0 fails", true, [true, false]),
    Scenario::new("a breaker each, only thread 0 fails", false, [true, false]),
    Scenario::per_thread(
        "one breaker with a window per thread, only thread 0 fails",
        [true, false],
    ),
    Scenario::new("one breaker, no failures", true, [false, false]),
];

fn breaker(window: usize, per_thread_windows: bool) -> Breaker {
    Breaker::builder()
        .failure_rate(0.5, window)
        .per_thread_windows(per_thread_windows)
        .build()
        .expect("valid settings")
}

/// Nanoseconds per call of each thread of the breaker's scenario.
fn run(scenario: &Scenario, window: usize) -> [f64; 2] {
    let breakers = [0, 1].map(|_| breaker(window, scenario.per_thread_windows));
    let times = time_two_threads(
        scenario.fails,
        |thread| {
            let breaker = &breakers[if scenario.shared { 0 } else { thread }];
            // The thread's first call claims its stripe; not timed.
            let _ = breaker.call(|| Ok::<u64, u64>(1));
            breaker
        },
        |breaker, fail| {
            let _ = black_box(breaker.call(|| {
                if fail {
                    Err(black_box(2u64))
                } else {
                    Ok(black_box(1u64))
                }
            }));
        },
    );
    for breaker in &breakers {
        assert!(breaker.try_acquire().is_ok(), "2.5 % must not trip it");
    }
    times
}

/// The one timed loop of this bench, for the breaker's scenarios and the sketches alike:
/// nanoseconds per call of each of two threads, each pinned to a CPU of its own. Thread `i`
/// first takes what it calls with, `bind(i)` (not timed), and then makes [`CALLS`] calls of
/// `call(&bound, fail)`. A thread whose entry in `fails` is set fails every [`FAIL_EVERY`]th
/// call, the two half a period apart, as two threads of one service would be.
pub fn time_two_threads<T>(
    fails: [bool; 2],
    bind: impl Fn(usize) -> T + Sync,
    call: impl Fn(&T, bool) + Sync,
) -> [f64; 2] {
    let barrier = Barrier::new(2);
    std::thread::scope(|scope| {
        let handles = [0, 1].map(|thread| {
            let (barrier, bind, call) = (&barrier, &bind, &call);
            scope.spawn(move || {
                pinning::pin_to_own_cpu(thread);
                let bound = bind(thread);
                barrier.wait();
                let fails = fails[thread];
                let mut until_failure = FAIL_EVERY - thread as u32 * FAIL_EVERY / 2;
                let start = Instant::now();
                for _ in 0..CALLS {
                    until_failure -= 1;
                    let fail = fails && until_failure == 0;
                    if until_failure == 0 {
                        until_failure = FAIL_EVERY;
                    }
                    call(&bound, fail);
                }
                start.elapsed().as_nanos() as f64 / CALLS as f64
            })
        });
        handles.map(|handle| handle.join().expect("bench thread panicked"))
    })
}

/// One-way cache-line transfer between the two threads, in ns: half a ping-pong round trip.
fn transfer() -> f64 {
    const TRIPS: u64 = 1_000_000;
    let ball = CachePadded::new(AtomicU64::new(0));
    let elapsed = std::thread::scope(|scope| {
        scope.spawn(|| {
            for trip in 0..TRIPS {
                while ball.load(Ordering::Acquire) != 2 * trip + 1 {
                    std::hint::spin_loop();
                }
                ball.store(2 * trip + 2, Ordering::Release);
            }
        });
        let start = Instant::now();
        for trip in 0..TRIPS {
            ball.store(2 * trip + 1, Ordering::Release);
            while ball.load(Ordering::Acquire) != 2 * trip + 2 {
                std::hint::spin_loop();
            }
        }
        start.elapsed()
    });
    elapsed.as_nanos() as f64 / TRIPS as f64 / 2.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing we run for.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let windows = [20, 100];
    let mut results = vec![[Vec::new(), Vec::new()]; SCENARIOS.len() * windows.len()];
    let mut transfers = Vec::new();
    // Per sketch: both threads on one sketched window, then one each.
    let mut floors = vec![[Vec::new(), Vec::new()]; floor::Sketch::ALL.len() * 2];
    for _ in 0..ROUNDS {
        transfers.push(transfer());
        for (k, &sketch) in floor::Sketch::ALL.iter().enumerate() {
            for (s, shared) in [true, false].into_iter().enumerate() {
                let [t0, t1] = floor::run(sketch, shared);
                floors[k * 2 + s][0].push(t0);
                floors[k * 2 + s][1].push(t1);
            }
        }
        for (w, &window) in windows.iter().enumerate() {
            for (s, scenario) in SCENARIOS.iter().enumerate() {
                let [t0, t1] = run(scenario, window);
                let slot = &mut results[w * SCENARIOS.len() + s];
                slot[0].push(t0);
                slot[1].push(t1);
            }
        }
    }
    println!("ns per call of each thread, median of {ROUNDS} rounds of {CALLS} calls each");
    if !pinning::all_pinned() {
        println!("(some threads NOT pinned to a CPU of their own: they may have time-sliced one)");
    }
    println!();
    println!("| window | scenario | thread 0 | thread 1 |");
    println!("|---:|---|---:|---:|");
    for (w, &window) in windows.iter().enumerate() {
        for (s, scenario) in SCENARIOS.iter().enumerate() {
            let [t0, t1] = results[w * SCENARIOS.len() + s].clone();
            println!(
                "| {window} | {} | {:.2} | {:.2} |",
                scenario.name,
                median(t0),
                median(t1)
            );
        }
    }
    println!();
    println!("Sketches of the traffic between the threads (contention/floor.rs), same rounds:");
    println!("the least a window shared by the two needs, then the breaker's window cut down to");
    println!("its traffic, with its ring of failure records shared or one for each thread:");
    println!();
    println!("| sketch | windows | thread 0 | thread 1 |");
    println!("|---|---|---:|---:|");
    for (k, sketch) in floor::Sketch::ALL.iter().enumerate() {
        for (s, windows) in ["one for both", "one each"].iter().enumerate() {
            let [t0, t1] = floors[k * 2 + s].clone();
            println!(
                "| {} | {windows} | {:.2} | {:.2} |",
                sketch.name(),
                median(t0),
                median(t1)
            );
        }
    }
    println!();
    println!(
        "one-way cache-line transfer between the threads: {:.1} ns (median of {ROUNDS})",
        median(transfers)
    );
}
