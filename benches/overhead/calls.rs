//! The calls every contender guards: always `Ok`, or the lesson's healthy day.
//!
//! Shared by the criterion bench and the instruction-count bench.

use std::hint::black_box;

/// What the call returns: `Ok` on success, `Err` on failure.
pub type Reply = Result<u64, u64>;

/// One call in 40 fails in the lesson's healthy mode (2.5 %).
pub const FAIL_EVERY: u32 = 40;

/// The healthy call: always `Ok`.
#[inline(always)]
pub fn succeed() -> Reply {
    Ok(black_box(1))
}

/// A day on which every `N`-th call fails, one thread's share of it.
pub struct FailingEvery<const N: u32> {
    until_failure: u32,
}

/// The lesson's healthy day: every [`FAIL_EVERY`]th call fails.
pub type LessonDay = FailingEvery<FAIL_EVERY>;

impl<const N: u32> FailingEvery<N> {
    /// Threads start at different points of the pattern, as they would.
    pub fn new(thread: usize) -> Self {
        FailingEvery {
            until_failure: N - (thread as u32 * N / 2) % N,
        }
    }

    #[inline(always)]
    pub fn next(&mut self) -> Reply {
        self.until_failure -= 1;
        if self.until_failure == 0 {
            self.until_failure = N;
            Err(black_box(2))
        } else {
            Ok(black_box(1))
        }
    }
}

/// The failure paths' day: every call fails but every `success_every`-th, which succeeds (so
/// that a run rule's run, or a rate window, never fills with failures alone).
///
/// A countdown rather than `n % success_every`: a division per call would be timed too.
pub struct MostlyFailing {
    success_every: u32,
    until_success: u32,
}

impl MostlyFailing {
    pub fn new(success_every: u32) -> Self {
        MostlyFailing {
            success_every,
            until_success: success_every,
        }
    }

    #[inline(always)]
    pub fn next(&mut self) -> Reply {
        self.until_success -= 1;
        if self.until_success == 0 {
            self.until_success = self.success_every;
            Ok(1)
        } else {
            Err(black_box(2))
        }
    }
}
