//! Runs one hot path a given number of times, for `.ci/instructions` to count its
//! instructions under callgrind.
//!
//! ```sh
//! instructions PATH CALLS
//! ```
//!
//! PATH is one of `bare`, `healthy`, `lesson20`, `lesson100`, `rejection`, `failure_run`,
//! `failure_rate20` (the paths (a), (b), (c) and (d) of `benches/overhead`, single-threaded,
//! with the same settings), `healthy_per_thread`, `lesson20_per_thread` (the same with a
//! window per thread), or `sparse200` (one call in 200 fails, rate rule over 20: the window
//! forgets each failure before the next, which then finds it clean and loses the quiet bit,
//! `src/quiet.rs`). Each path is set up
//! and warmed up first, then run by a function whose name starts with `measured_`: callgrind
//! collects only inside it (`--toggle-collect`), so set-up, the clock's calibration and the
//! thread's first call do not count. Nothing here is timed.

#[path = "overhead/calls.rs"]
mod calls;

use std::hint::black_box;
use std::time::Duration;

use calls::{FAIL_EVERY, FailingEvery, LessonDay, MostlyFailing, Reply, succeed};
use hotbreaker::{Breaker, CallError};

fn breaker(window: usize) -> Breaker {
    breaker_with(window, false)
}

/// With `per_thread`, a window per thread (`Builder::per_thread_windows`).
fn breaker_with(window: usize, per_thread: bool) -> Breaker {
    Breaker::builder()
        .failure_rate(0.5, window)
        .open_duration(Duration::from_secs(3600))
        .per_thread_windows(per_thread)
        .build()
        .expect("valid settings")
}

/// What `benches/overhead` does with a call's result (`Hot::run`): the reply, or `None` when
/// rejected.
#[inline(always)]
fn run(breaker: &Breaker, op: impl FnOnce() -> Reply) -> Option<Reply> {
    match breaker.call(op) {
        Ok(value) => Some(Ok(value)),
        Err(CallError::Failed(error)) => Some(Err(error)),
        Err(CallError::Rejected(_)) => None,
    }
}

#[inline(never)]
fn measured_bare(calls: u64) {
    for _ in 0..calls {
        black_box(Some(succeed()));
    }
}

#[inline(never)]
fn measured_healthy(breaker: &Breaker, calls: u64) {
    for _ in 0..calls {
        black_box(run(breaker, succeed));
    }
}

#[inline(never)]
fn measured_lesson(breaker: &Breaker, day: &mut LessonDay, calls: u64) {
    for _ in 0..calls {
        black_box(run(breaker, || day.next()));
    }
}

#[inline(never)]
fn measured_rejection(breaker: &Breaker, calls: u64) {
    for _ in 0..calls {
        // A closure of its own: see `measured_healthy`.
        #[allow(clippy::redundant_closure)]
        black_box(run(breaker, || succeed()));
    }
}

/// A failing call every time except every `success_every`-th: the (d) paths of
/// `benches/overhead` (`failure_breakers` there), with the same countdown.
#[inline(never)]
fn measured_failure(breaker: &Breaker, day: &mut MostlyFailing, calls: u64) {
    for _ in 0..calls {
        black_box(run(breaker, || day.next()));
    }
}

fn failure(breaker: Breaker, success_every: u32, calls: u64) {
    // The thread's first failure claims its stripe and publishes the first record: not timed.
    for _ in 0..u64::from(success_every) * 10 {
        let _ = breaker.call(|| -> Reply { Err(2) });
        let _ = breaker.call(|| -> Reply { Ok(1) });
    }
    measured_failure(&breaker, &mut MostlyFailing::new(success_every), calls);
    assert!(
        breaker.try_acquire().is_ok(),
        "these failures must not trip it"
    );
}

fn lesson(window: usize, per_thread: bool, calls: u64) {
    let breaker = breaker_with(window, per_thread);
    let mut day = LessonDay::new(0);
    // Past the filling window and into the repeating pattern, at a failure's boundary.
    for _ in 0..100 * u64::from(FAIL_EVERY) {
        let _ = breaker.call(|| day.next());
    }
    measured_lesson(&breaker, &mut day, calls);
    assert!(breaker.try_acquire().is_ok(), "2.5 % must not trip it");
}

/// The `sparse200` day: one call in `SPARSE_EVERY` fails.
const SPARSE_EVERY: u32 = 200;
type SparseDay = FailingEvery<SPARSE_EVERY>;

#[inline(never)]
fn measured_sparse(breaker: &Breaker, day: &mut SparseDay, calls: u64) {
    for _ in 0..calls {
        black_box(run(breaker, || day.next()));
    }
}

fn sparse(calls: u64) {
    let breaker = breaker(20);
    let mut day = SparseDay::new(0);
    // Past the filling window and into the repeating pattern, at a failure's boundary.
    for _ in 0..10 * u64::from(SPARSE_EVERY) {
        let _ = breaker.call(|| day.next());
    }
    measured_sparse(&breaker, &mut day, calls);
    assert!(breaker.try_acquire().is_ok(), "0.5 % must not trip it");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; ignore flags.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (path, calls) = match args.as_slice() {
        [path, calls] => (*path, calls.parse::<u64>().expect("CALLS is a number")),
        [] => return, // `cargo bench` with no arguments: nothing to count
        _ => {
            eprintln!(
                "usage: instructions bare|healthy|healthy_per_thread|lesson20|lesson20_per_thread|lesson100|sparse200|rejection|failure_run|failure_rate20 CALLS"
            );
            std::process::exit(2);
        }
    };
    match path {
        "bare" => measured_bare(calls),
        "healthy" | "healthy_per_thread" => {
            let breaker = breaker_with(100, path == "healthy_per_thread");
            // Past the filling window (with calls of their own: `measured_healthy` must be the
            // one call site of its `call`, so that it is inlined there as in an application).
            for _ in 0..1000 {
                breaker.try_acquire().expect("closed").success();
            }
            measured_healthy(&breaker, calls);
        }
        "lesson20" => lesson(20, false, calls),
        "lesson20_per_thread" => lesson(20, true, calls),
        "failure_run" => {
            let breaker = Breaker::builder()
                .consecutive_failures(1001)
                .build()
                .expect("valid settings");
            failure(breaker, 1000, calls);
        }
        "failure_rate20" => {
            let breaker = Breaker::builder()
                .failure_rate(1.0, 20)
                .build()
                .expect("valid settings");
            failure(breaker, 10, calls);
        }
        "lesson100" => lesson(100, false, calls),
        "sparse200" => sparse(calls),
        "rejection" => {
            let breaker = breaker(20);
            while !matches!(breaker.call(|| Reply::Err(0)), Err(CallError::Rejected(_))) {}
            measured_rejection(&breaker, calls);
        }
        _ => {
            eprintln!("unknown path {path}");
            std::process::exit(2);
        }
    }
}
