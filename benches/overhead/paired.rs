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
//! (c) a rejection against one raw quanta clock read; and for goal (b), whose limits are an
//! absolute time and a ratio to recloser, the lesson-healthy day against the bare call and
//! against recloser, each with a window of 20 and of 100. Each goes through both kinds of
//! hotbreaker: one window, and a window per thread.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::calls::LessonDay;
use crate::contenders::{Bare, Guard, Hot, HotPerThread, Recloser};
use crate::pinning;
use crate::repeat::{Healthy, repeat};

/// Calls per block: long enough that reading the clock around it costs nothing measurable.
const BLOCK: u64 = 10_000;
/// How long each pair is measured.
const DURATION: Duration = Duration::from_secs(2);

/// What one pair measured: medians in ns per call, and medians over the pairs of blocks of
/// what the goals compare, each block with the baseline block of its own pair.
pub struct Pair {
    pub label: &'static str,
    pub threads: usize,
    /// Which hotbreaker: one window, or a window per thread.
    pub subject_name: &'static str,
    pub baseline_name: &'static str,
    pub baseline: f64,
    pub subject: f64,
    pub measured: Measured,
}

/// Medians over the pairs of blocks.
#[derive(Clone, Copy)]
pub struct Measured {
    /// subject − baseline: goals (a), and (c) on one thread (at most 2 ns).
    pub difference: f64,
    /// baseline ÷ subject: how many times slower the baseline is (goal (b)'s ratio).
    pub speedup: f64,
    /// subject ÷ (baseline + 2 ns): goal (c) on two threads (at most 1.5).
    pub over_baseline_plus_2: f64,
}

/// Times `baseline` and `subject` in alternating blocks on `threads` threads. Each is a maker that
/// each thread calls with its index, for a closure that makes one block of [`BLOCK`] calls (and may
/// keep that thread's state, such as where it is in the lesson's pattern). The first block of each
/// pair alternates too, so that neither always runs second. The threads start every block together
/// (a barrier between blocks, outside the timing): two threads on one breaker contend for all of
/// its block, even when the other path's blocks take far longer. The barrier spins: one that puts a
/// thread to sleep wakes it some 30 µs late on this machine, about as long as a block of fast
/// calls, and the two threads' blocks then hardly overlapped (a helper's probe, 2026-12-01: median
/// overlap 0 with `std::sync::Barrier`, 0.92-1.0 with spinning), which measured two threads as one.
/// On two threads, each is pinned to a CPU of its own (`pinning.rs`).
fn measure<B: FnMut(), S: FnMut()>(
    threads: usize,
    baseline: impl Fn(usize) -> B + Sync,
    subject: impl Fn(usize) -> S + Sync,
) -> (f64, f64, Measured) {
    let barrier = SpinBarrier::new(threads);
    let stop = AtomicBool::new(false);
    let per_thread: Vec<Vec<(f64, f64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let (barrier, stop, baseline, subject) = (&barrier, &stop, &baseline, &subject);
                scope.spawn(move || {
                    if threads > 1 {
                        pinning::pin_to_own_cpu(thread);
                    }
                    let (mut baseline, mut subject) = (baseline(thread), subject(thread));
                    let (baseline, subject) = (&mut baseline, &mut subject);
                    // Each thread's first call claims its stripe and warms its caches.
                    block(baseline);
                    block(subject);
                    let end = Instant::now() + DURATION;
                    let mut pairs = Vec::new();
                    let mut subject_first = false;
                    let together = |call: &mut dyn FnMut() -> f64| {
                        barrier.wait();
                        call()
                    };
                    loop {
                        // Thread 0 decides when to stop, before the barrier that all pass
                        // before reading it (the barrier orders the store before the loads, so
                        // relaxed is enough): every thread runs the same number of blocks.
                        barrier.wait();
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let (b, s) = if subject_first {
                            let s = together(&mut || block(subject));
                            (together(&mut || block(baseline)), s)
                        } else {
                            let b = together(&mut || block(baseline));
                            (b, together(&mut || block(subject)))
                        };
                        pairs.push((b, s));
                        subject_first = !subject_first;
                        if thread == 0 && Instant::now() >= end {
                            stop.store(true, Ordering::Relaxed);
                        }
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
        Measured {
            difference: median(pairs.iter().map(|p| p.1 - p.0).collect()),
            speedup: median(pairs.iter().map(|p| p.0 / p.1).collect()),
            over_baseline_plus_2: median(pairs.iter().map(|p| p.1 / (p.0 + 2.0)).collect()),
        },
    )
}

/// A barrier whose waiters spin, so that they leave it within a fraction of a microsecond of
/// each other. Only for as many threads as there are cores: it never sleeps.
struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    round: AtomicUsize,
}

impl SpinBarrier {
    fn new(threads: usize) -> Self {
        SpinBarrier {
            threads,
            arrived: AtomicUsize::new(0),
            round: AtomicUsize::new(0),
        }
    }

    fn wait(&self) {
        // The round first: the last thread to arrive resets the count, then starts the next
        // round (release); a waiter that sees the new round (acquire) sees the count reset
        // before it arrives again.
        let round = self.round.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.round.store(round.wrapping_add(1), Ordering::Release);
        } else {
            while self.round.load(Ordering::Acquire) == round {
                std::hint::spin_loop();
            }
        }
    }
}

/// ns per call over one block, which `calls` makes ([`BLOCK`] calls).
fn block(calls: &mut impl FnMut()) -> f64 {
    let start = Instant::now();
    calls();
    start.elapsed().as_nanos() as f64 / BLOCK as f64
}

/// Runs every pair and returns what each measured.
pub fn run() -> Vec<Pair> {
    let mut pairs = Vec::new();
    for threads in [1, 2] {
        pairs.push(healthy_pair::<Hot>(threads));
        pairs.push(healthy_pair::<HotPerThread>(threads));
        pairs.push(rejection_pair::<Hot>(threads));
        pairs.push(rejection_pair::<HotPerThread>(threads));
        for (window, label) in [
            (20, "(b) 2.5 % failures, rate over 20"),
            (100, "(b) 2.5 % failures, rate over 100"),
        ] {
            pairs.push(lesson_pair::<Bare, Hot>(threads, window, label));
            pairs.push(lesson_pair::<Recloser, Hot>(threads, window, label));
            pairs.push(lesson_pair::<Bare, HotPerThread>(threads, window, label));
            pairs.push(lesson_pair::<Recloser, HotPerThread>(
                threads, window, label,
            ));
        }
    }
    pairs
}

/// Rejections by an open hotbreaker `H`, against one raw clock read.
fn rejection_pair<H: Guard + Sync>(threads: usize) -> Pair {
    let open = H::with_window(20);
    open.trip();
    let clock = quanta::Clock::new();
    let (baseline, subject, measured) = measure(
        threads,
        |_| {
            || {
                for _ in 0..BLOCK {
                    black_box(clock.raw());
                }
            }
        },
        |_| || repeat(&open, &mut Healthy, BLOCK),
    );
    Pair {
        label: "(c) open: rejection",
        threads,
        subject_name: H::NAME,
        baseline_name: "one `quanta raw` clock read",
        baseline,
        subject,
        measured,
    }
}

/// A day with no failures through hotbreaker `H`, against the bare call.
fn healthy_pair<H: Guard + Sync>(threads: usize) -> Pair {
    let healthy = H::with_window(100);
    let (baseline, subject, measured) = measure(
        threads,
        |_| || repeat(&Bare, &mut Healthy, BLOCK),
        |_| || repeat(&healthy, &mut Healthy, BLOCK),
    );
    Pair {
        label: "(a) healthy: no failures",
        threads,
        subject_name: H::NAME,
        baseline_name: Bare::NAME,
        baseline,
        subject,
        measured,
    }
}

/// The lesson's healthy day through `G` and through hotbreaker `H`, each guard fresh and
/// shared by the threads, each thread at its own point of the pattern.
fn lesson_pair<G: Guard + Sync, H: Guard + Sync>(
    threads: usize,
    window: u32,
    label: &'static str,
) -> Pair {
    let (peer, hot) = (G::with_window(window), H::with_window(window));
    let (baseline, subject, measured) = measure(
        threads,
        |thread| {
            let mut day = LessonDay::new(thread);
            let peer = &peer;
            move || repeat(peer, &mut day, BLOCK)
        },
        |thread| {
            let mut day = LessonDay::new(thread);
            let hot = &hot;
            move || repeat(hot, &mut day, BLOCK)
        },
    );
    Pair {
        label,
        threads,
        subject_name: H::NAME,
        baseline_name: G::NAME,
        baseline,
        subject,
        measured,
    }
}
