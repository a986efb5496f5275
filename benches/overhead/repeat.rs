//! The loop that times every contender of the side-by-side groups.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::calls::{LessonDay, Reply, succeed};
use crate::contenders::Guard;

/// What a loop's calls return, one call after another.
pub trait Day {
    fn next(&mut self) -> Reply;
}

/// The healthy day: every call succeeds.
pub struct Healthy;

impl Day for Healthy {
    #[inline(always)]
    fn next(&mut self) -> Reply {
        succeed()
    }
}

impl Day for LessonDay {
    #[inline(always)]
    fn next(&mut self) -> Reply {
        LessonDay::next(self)
    }
}

/// Makes `times` calls through `guard`, each returning what `day` gives next and each reply
/// through `black_box`.
///
/// Every group that sets the contenders side by side times this one loop: criterion's on one
/// thread and on two, and the paired step's. Out of line, with the guard and the day its
/// arguments, it is compiled the same way wherever it is used, and the same way as the loops
/// whose instructions `.ci/instructions` counts (`benches/instructions.rs`). The same calls
/// written into each place's own loop were not: inside criterion's `iter`, or with the day
/// behind a closure, the compiler passed hotbreaker's reply through a register it then tested,
/// and two more jumps per call (`benches/PERFORMANCE.md`, "One loop for every contender").
#[inline(never)]
pub fn repeat<G: Guard, D: Day>(guard: &G, day: &mut D, times: u64) {
    for _ in 0..times {
        black_box(guard.run(|| day.next()));
    }
}

/// [`repeat`], timed: for criterion's `iter_custom`.
pub fn time_repeated<G: Guard, D: Day>(guard: &G, day: &mut D, times: u64) -> Duration {
    let start = Instant::now();
    repeat(guard, day, times);
    start.elapsed()
}
