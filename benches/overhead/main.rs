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
//!   breaker, a failure trips it again.
//!
//! Timings are printed, never asserted: CI only compiles this file.

mod calls;
mod contended;
mod contenders;
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
    criterion.final_summary();
    report::print(started);
}
