//! The least a window shared by two threads can cost: sketches of the traffic between the
//! threads that any shared window needs, timed on the same day as the breaker.
//!
//! A window over the calls of both threads places each failure among all the calls before it,
//! so a failure has to learn how many calls the other thread has made: it reads a line the
//! other thread keeps writing. Or the other way round: each thread learns of the other's
//! failures when they happen, by loading a word that every failure writes. A sketch does one
//! of the two and nothing else a window needs (no ring of failures, no rules, no forgetting,
//! no generations, no state changes), so what it costs is a floor under any shared window, not
//! a design:
//!
//! - [`Sketch::FailureReadsOtherCount`]: every success stores its thread's count in the
//!   thread's own line (a plain store: no other thread writes it); a failure stores its own
//!   position there too and then reads both lines once. It is not even correct: two failures
//!   at the same time may each miss the other, which a real window has to order.
//! - [`Sketch::FailureFencesThenReads`]: the same with a sequentially consistent fence
//!   between the failure's store and its reads, so that of two failures at the same time at
//!   least one sees the other (a store, a fence, a load: Dekker's pattern). This much an
//!   exact window needs at the least.
//! - [`Sketch::SuccessesWatchFailures`]: every success loads one word before it stores its
//!   count, and every failure adds one to that word with a compare-and-swap; a failure reads
//!   no other line.
//!
//! Each call also loads a word that stands for the breaker's state (never written here), and
//! calls a closure like the one the breaker's scenarios call, in the same timed loop.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

use crate::time_two_threads;

/// What a sketch makes its threads exchange.
#[derive(Debug, Clone, Copy)]
pub enum Sketch {
    /// A failure reads the other thread's count.
    FailureReadsOtherCount,
    /// A failure publishes its position, fences, and reads the other thread's count.
    FailureFencesThenReads,
    /// Every success loads a word that every failure changes.
    SuccessesWatchFailures,
}

impl Sketch {
    pub const ALL: [Sketch; 3] = [
        Sketch::FailureReadsOtherCount,
        Sketch::FailureFencesThenReads,
        Sketch::SuccessesWatchFailures,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Sketch::FailureReadsOtherCount => "a failure reads the other thread's count",
            Sketch::FailureFencesThenReads => "the same, with a fence before the reads",
            Sketch::SuccessesWatchFailures => "every success loads a word each failure changes",
        }
    }
}

/// A thread's own line: written by that thread alone.
#[derive(Default)]
struct OwnLine {
    calls: AtomicU64,
    newest_failure: AtomicU64,
}

/// The shared part of a sketched window, for two threads.
#[derive(Default)]
struct SketchedWindow {
    /// Stands for the breaker's state word: every call loads it; nothing writes it.
    state: CachePadded<AtomicU64>,
    /// Failures so far ([`Sketch::SuccessesWatchFailures`] only).
    failures: CachePadded<AtomicU64>,
    lines: [CachePadded<OwnLine>; 2],
}

impl SketchedWindow {
    /// One call of thread `me` (0 or 1) through the sketch.
    #[inline(always)]
    fn call(&self, sketch: Sketch, me: usize, fail: bool) {
        if self.state.load(Ordering::Acquire) != 0 {
            return;
        }
        let outcome = black_box(|| {
            if fail {
                Err(black_box(2u64))
            } else {
                Ok(black_box(1u64))
            }
        })();
        let own = &self.lines[me];
        // Only this thread writes its line, so a plain load and store count without a lost
        // update, as the breaker's stripes do.
        let calls = own.calls.load(Ordering::Relaxed) + 1;
        match (outcome, sketch) {
            (Ok(_), Sketch::FailureReadsOtherCount | Sketch::FailureFencesThenReads) => {
                own.calls.store(calls, Ordering::Relaxed);
            }
            (Ok(_), Sketch::SuccessesWatchFailures) => {
                // What a window would branch on: whether there is a failure to age.
                if self.failures.load(Ordering::Acquire) != 0 {
                    own.calls.store(calls, Ordering::Relaxed);
                }
            }
            (Err(_), Sketch::FailureReadsOtherCount | Sketch::FailureFencesThenReads) => {
                own.calls.store(calls, Ordering::Relaxed);
                own.newest_failure.store(calls, Ordering::Relaxed);
                if let Sketch::FailureFencesThenReads = sketch {
                    // Orders this failure's stores before its loads, against the other
                    // thread's failure doing the same.
                    std::sync::atomic::fence(Ordering::SeqCst);
                }
                // Each line read once: both counts and both newest failures.
                let (mut position, mut newest) = (0, 0);
                for line in &self.lines {
                    position += line.calls.load(Ordering::Relaxed);
                    newest = newest.max(line.newest_failure.load(Ordering::Relaxed));
                }
                black_box((position, newest));
            }
            (Err(_), Sketch::SuccessesWatchFailures) => {
                own.calls.store(calls, Ordering::Relaxed);
                let mut failures = self.failures.load(Ordering::Relaxed);
                while let Err(seen) = self.failures.compare_exchange_weak(
                    failures,
                    failures + 1,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    failures = seen;
                }
            }
        }
    }
}

/// Nanoseconds per call of each thread: both threads on one sketched window (`shared`) or on
/// one each, both failing, timed by the bench's one loop ([`time_two_threads`]).
pub fn run(sketch: Sketch, shared: bool) -> [f64; 2] {
    let windows = [SketchedWindow::default(), SketchedWindow::default()];
    time_two_threads(
        [true, true],
        |thread| (&windows[if shared { 0 } else { thread }], thread),
        |&(window, thread), fail| window.call(sketch, thread, fail),
    )
}
