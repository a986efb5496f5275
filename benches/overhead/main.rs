//! Per-call overhead of `hotbreaker`, side by side with the bare call, the other breakers on
//! crates.io and a naive `Mutex` breaker, measured in one run.
//!
//! ```sh
//! cargo bench --bench overhead            # every group, then the side-by-side table
//! cargo bench --bench overhead -- healthy # one group (the table shows what ran)
//! ```
//!
//! Groups, each on one thread and on two threads sharing one breaker:
//! - `healthy`: every call succeeds;
//! - `lesson20`, `lesson100`: the lesson's healthy day, every 40th call fails (2.5 %), rule
//!   "half of the last 20 (100) calls";
//! - `rejection`: the breaker is open; with the default clock (quanta), next to a raw quanta
//!   clock read and `Instant::now`;
//! - `failure` (hotbreaker only): recording failures in a closed breaker;
//! - `probe` (hotbreaker only, manual clock): open period ends, a probe passes and closes the
//!   breaker, a failure trips it again;
//! - `slow_call` (hotbreaker only): the healthy day with a slow-call limit, every call timed;
//! - `paired` (not criterion, see `paired.rs`): the differences of goals (a) and (c), and goal
//!   (b) against the bare call and against recloser, each path and its baseline in
//!   alternating blocks. Runs when no filter is given, or when a filter is part of `paired`.
//!
//! Timings are printed, never asserted: CI only compiles this file.

mod calls;
mod contended;
mod contenders;
mod paired;
mod pinning;
mod repeat;
mod report;
mod scenarios;

use std::time::Duration;

use criterion::Criterion;

fn main() {
    let started = std::time::SystemTime::now();
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
        .output_directory(&report::output_directory())
        .configure_from_args();
    scenarios::healthy(&mut criterion);
    scenarios::lesson(&mut criterion, 20);
    scenarios::lesson(&mut criterion, 100);
    scenarios::rejection(&mut criterion);
    scenarios::failure(&mut criterion);
    scenarios::probe(&mut criterion);
    scenarios::slow_call(&mut criterion);
    criterion.final_summary();
    let pairs = if paired_wanted() {
        paired::run()
    } else {
        Vec::new()
    };
    report::print(started, &pairs);
}

/// Whether the command line asks for the paired measurements: no filter, or one that is part
/// of the word `paired`. Values of criterion's options that take one are not filters.
fn paired_wanted() -> bool {
    const TAKE_A_VALUE: [&str; 13] = [
        "--warm-up-time",
        "--measurement-time",
        "--sample-size",
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--color",
        "--output-format",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--profile-time",
    ];
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, arg)| {
            !arg.starts_with('-') && (*i == 0 || !TAKE_A_VALUE.contains(&args[i - 1].as_str()))
        })
        .map(|(_, arg)| arg)
        .collect();
    filters.is_empty() || filters.iter().any(|f| "paired".contains(f.as_str()))
}
