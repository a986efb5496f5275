//! Differences measured in pairs: a path and its baseline in alternating blocks.
//!
//! Criterion times each benchmark for a few seconds, one after another; on a shared virtual
//! machine whose speed changes in phases of seconds, the bare call and hotbreaker can land in
//! different phases, and their difference then measures the machine (the bare call alone has
//! measured 0.7 ns in one group and 1.6 ns in the next). Here the two alternate in blocks of
//! [`BLOCK`] calls (tens of microseconds), which share whatever phase they fall in, for
//! [`DURATION`]; the figure is the median over the pairs of blocks. On two threads both run the
//! same alternation at once, and the pairs of both threads are pooled.
//!
//! Pairs, for the goals that are differences: (a) a healthy call against the bare call, and
//! (c) a rejection against one raw quanta clock read.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::calls::succeed;
use crate::contenders::{Bare, Guard, Hot};

/// Calls per block: long enough that reading the clock around it costs nothing measurable.
const BLOCK: u64 = 10_000;
/// How long each pair is measured.
const DURATION: Duration = Duration::from_secs(2);

/// What one pair measured: medians in ns per call.
pub struct Pair {
    pub label: &'static str,
    pub threads: usize,
    pub baseline_name: &'static str,
    pub baseline: f64,
    pub subject: f64,
    /// Median over the pairs of blocks of (subject − baseline).
    pub difference: f64,
}

/// Times `baseline` and `subject` in alternating blocks on `threads` threads; each closure
/// runs one call. The first block of each pair alternates too, so that neither always runs
/// second.
fn measure(
    threads: usize,
    baseline: impl Fn() + Sync,
    subject: impl Fn() + Sync,
) -> (f64, f64, f64) {
    let barrier = Barrier::new(threads);
    let per_thread: Vec<Vec<(f64, f64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (barrier, baseline, subject) = (&barrier, &baseline, &subject);
                scope.spawn(move || {
                    // Each thread's first call claims its stripe and warms its caches.
                    block(baseline);
                    block(subject);
                    barrier.wait();
                    let end = Instant::now() + DURATION;
                    let mut pairs = Vec::new();
                    let mut subject_first = false;
                    while Instant::now() < end {
                        let (b, s) = if subject_first {
                            let s = block(subject);
                            (block(baseline), s)
                        } else {
                            let b = block(baseline);
                            (b, block(subject))
                        };
                        pairs.push((b, s));
                        subject_first = !subject_first;
                    }
                    pairs
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("bench thread panicked"))
            .collect()
    });
    let pairs: Vec<(f64, f64)> = per_thread.into_iter().flatten().collect();
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    (
        median(pairs.iter().map(|p| p.0).collect()),
        median(pairs.iter().map(|p| p.1).collect()),
        median(pairs.iter().map(|p| p.1 - p.0).collect()),
    )
}

/// ns per call over one block.
#[inline(never)]
fn block(call: &impl Fn()) -> f64 {
    let start = Instant::now();
    for _ in 0..BLOCK {
        call();
    }
    start.elapsed().as_nanos() as f64 / BLOCK as f64
}

/// Runs every pair and returns what each measured.
pub fn run() -> Vec<Pair> {
    let mut pairs = Vec::new();
    for threads in [1, 2] {
        let healthy = Hot::with_window(100);
        let (baseline, subject, difference) = measure(
            threads,
            || {
                black_box(Bare.run(succeed));
            },
            || {
                black_box(healthy.run(succeed));
            },
        );
        pairs.push(Pair {
            label: "(a) healthy: no failures",
            threads,
            baseline_name: Bare::NAME,
            baseline,
            subject,
            difference,
        });
        let open = Hot::with_window(20);
        open.trip();
        let clock = quanta::Clock::new();
        let (baseline, subject, difference) = measure(
            threads,
            || {
                black_box(clock.raw());
            },
            || {
                black_box(open.run(succeed));
            },
        );
        pairs.push(Pair {
            label: "(c) open: rejection",
            threads,
            baseline_name: "one `quanta raw` clock read",
            baseline,
            subject,
            difference,
        });
    }
    pairs
}
