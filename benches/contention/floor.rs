//! The least a window shared by two threads can cost: sketches of the traffic between the
//! threads that any shared window needs, timed on the same day as the breaker.
//!
//! A window over the calls of both threads places each failure among all the calls before it,
//! so a failure has to learn how many calls the other thread has made: it reads a line the
//! other thread keeps writing. Or the other way round: each thread learns of the other's
//! failures when they happen, by loading a word that every failure writes. Each of the first
//! three sketches does one of the two and nothing else a window needs (no ring of failures, no
//! rules, no forgetting, no generations, no state changes), so what it costs is a floor under
//! any shared window, not a design:
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
//! Two more are the breaker's own window cut down to its traffic, to price the ring of failure
//! records that every failing thread writes (`window/ring.rs`):
//!
//! - [`Sketch::WordAndSharedRing`]: a failure loads one shared word, which holds the number
//!   and the position of the newest failure, reads both threads' counts, copies the newest
//!   failure's record into a ring at the slot its number picks (a load, then a
//!   compare-and-swap), and commits its own number and position to the word with a
//!   compare-and-swap, retrying if the word moved: the order of loads and writes of
//!   `Window::record_failure_in_full`. Neighbouring numbers share a cache line, so the slot's
//!   line was nearly always last written by the other thread, and it cannot be asked for
//!   before the word's value arrives.
//! - [`Sketch::WordAndOwnRing`]: the same, with the record stored in a ring the failing thread
//!   alone writes: what keeping records where only their writer writes would save.
//!
//! Each call also loads a word that stands for the breaker's state (never written here), and
//! calls a closure like the one the breaker's scenarios call, in the same timed loop.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::{Backoff, CachePadded};

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
    /// The window's traffic: a shared word, both counts, and a ring both threads write.
    WordAndSharedRing,
    /// The same with a ring for each thread.
    WordAndOwnRing,
}

impl Sketch {
    pub const ALL: [Sketch; 5] = [
        Sketch::FailureReadsOtherCount,
        Sketch::FailureFencesThenReads,
        Sketch::SuccessesWatchFailures,
        Sketch::WordAndSharedRing,
        Sketch::WordAndOwnRing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Sketch::FailureReadsOtherCount => "a failure reads the other thread's count",
            Sketch::FailureFencesThenReads => "the same, with a fence before the reads",
            Sketch::SuccessesWatchFailures => "every success loads a word each failure changes",
            Sketch::WordAndSharedRing => "the window's word, and records in a ring both write",
            Sketch::WordAndOwnRing => "the same, with records in a ring of each thread's own",
        }
    }
}

/// A thread's own line: written by that thread alone.
#[derive(Default)]
struct OwnLine {
    calls: AtomicU64,
    newest_failure: AtomicU64,
}

/// Records in a sketched ring: as many as the window's ring holds for a window of 20 calls.
const RING: usize = 32;

/// A ring of failure records, 8 to a cache line, as in the window.
type Ring = CachePadded<[AtomicU64; RING]>;

/// The shared part of a sketched window, for two threads.
#[derive(Default)]
struct SketchedWindow {
    /// Stands for the breaker's state word: every call loads it; nothing writes it.
    state: CachePadded<AtomicU64>,
    /// Failures so far ([`Sketch::SuccessesWatchFailures`] only).
    failures: CachePadded<AtomicU64>,
    lines: [CachePadded<OwnLine>; 2],
    /// The newest failure's number (high half) and position (low half), for
    /// [`Sketch::WordAndSharedRing`] and [`Sketch::WordAndOwnRing`].
    word: CachePadded<AtomicU64>,
    /// Written by both threads ([`Sketch::WordAndSharedRing`]).
    shared_ring: Ring,
    /// One for each thread, written by it alone ([`Sketch::WordAndOwnRing`]).
    own_rings: [Ring; 2],
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
            (
                Ok(_),
                Sketch::FailureReadsOtherCount
                | Sketch::FailureFencesThenReads
                | Sketch::WordAndSharedRing
                | Sketch::WordAndOwnRing,
            ) => {
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
            (Err(_), Sketch::WordAndSharedRing | Sketch::WordAndOwnRing) => {
                own.calls.store(calls, Ordering::Relaxed);
                self.commit_failure(sketch, me);
            }
        }
    }

    /// A failure of thread `me` in the cut-down window: the word, both counts, the newest
    /// failure's record into a ring, and the commit.
    #[inline(always)]
    fn commit_failure(&self, sketch: Sketch, me: usize) {
        let backoff = Backoff::new();
        loop {
            let word = self.word.load(Ordering::Acquire);
            let position: u64 = self
                .lines
                .iter()
                .map(|line| line.calls.load(Ordering::Relaxed))
                .sum();
            let number = word >> 32;
            if number > 0 {
                // The newest failure becomes the second newest: its record goes to the ring
                // before the commit, as in the window.
                let slot = (number - 1) as usize % RING;
                let record = word;
                match sketch {
                    Sketch::WordAndSharedRing => {
                        let slot = &self.shared_ring[slot];
                        let seen = slot.load(Ordering::Acquire);
                        if seen != record {
                            let _ = slot.compare_exchange(
                                seen,
                                record,
                                Ordering::AcqRel,
                                Ordering::Acquire,
                            );
                        }
                    }
                    _ => self.own_rings[me][slot].store(record, Ordering::Release),
                }
            }
            let next = (number + 1) << 32 | (position & u64::from(u32::MAX));
            if self
                .word
                .compare_exchange(word, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            // As the window's slower path does after a lost race.
            backoff.spin();
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
