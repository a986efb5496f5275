//! How many failed probe rounds in a row led to the current open period, for the open
//! back-off: the open generation (32 bits) and that count (32 bits) in one word.
//!
//! Only an opening from half-open after a failed probe round writes here (a count of at
//! least 1); every other opening leaves the word alone, and a generation with no word of its
//! own reads as 0, which is what a trip or an external opening means. So the trip path, which
//! the window's failures take, does no more work than without a back-off.
//!
//! The word is written as the open deadline is (`open_deadline.rs`), and for the same reason:
//! *before* the compare-and-swap that opens generation `g`, by a thread that saw the state it
//! is about to leave still current, read after it loaded this word, and only with a
//! compare-and-swap from the value it loaded. The prober that fails in the half-open
//! generation `g + 1` reads the count of `g` after acquiring a state word that says
//! `HalfOpen` in `g + 1`; the half-open transition read `g`'s open word with a
//! read-modify-write, so the opener's release CAS happens before that load, and with it the
//! count written before it. Written after the CAS instead, a stalled opener's count could be
//! missing when the next round fails, which would then back off from the start (the loom
//! model `a_failed_round_backs_off_from_the_round_before`). A stalled opener whose
//! transition already happened elsewhere writes nothing: its state check fails, or its
//! compare-and-swap does.
//!
//! Openers of one transition race to write it: the first count written wins. All count the
//! same failed round, except when a failed probe races [`Breaker::open_for`] out of the same
//! half-open word: the opening may then take the probe's count, as it may take its deadline.
//!
//! [`Breaker::open_for`]: crate::Breaker::open_for

use crate::sync::{AtomicU64, Ordering};

pub(crate) struct OpenStreak {
    word: AtomicU64,
}

fn pack(generation: u32, count: u32) -> u64 {
    u64::from(generation) << 32 | u64::from(count)
}

impl OpenStreak {
    pub(crate) fn new() -> Self {
        // Generation 0 is the first closed state, never an open one: no count for anyone.
        OpenStreak {
            word: AtomicU64::new(0),
        }
    }

    /// Records that the open period of `generation` follows `count` failed probe rounds in a
    /// row, unless a count for it is already here, or `still_possible` (which re-reads the
    /// state word) says the transition to it can no longer happen.
    pub(crate) fn publish(&self, generation: u32, count: u32, still_possible: impl Fn() -> bool) {
        let new = pack(generation, count);
        // Acquire on the load pairs with the Release of a competing publish; the state is read
        // after it, every time (see the module documentation).
        let mut current = self.word.load(Ordering::Acquire);
        while (current >> 32) as u32 != generation && still_possible() {
            // Release: a prober that acquires a state word after the CAS this publish
            // precedes sees this count.
            match self
                .word
                .compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
        }
    }

    /// The failed probe rounds in a row that led to the open period of `generation`: 0 when
    /// it began with a trip or from outside.
    pub(crate) fn count(&self, generation: u32) -> u32 {
        let word = self.word.load(Ordering::Acquire);
        if (word >> 32) as u32 == generation {
            word as u32
        } else {
            0
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_generation_without_a_count_of_its_own_reads_zero() {
        let streak = OpenStreak::new();
        assert_eq!(streak.count(0), 0);
        streak.publish(3, 1, || true);
        assert_eq!(streak.count(3), 1);
        assert_eq!(streak.count(5), 0, "a trip wrote nothing for generation 5");
    }

    #[test]
    fn the_first_count_for_a_generation_wins_and_a_stale_opener_writes_nothing() {
        let streak = OpenStreak::new();
        streak.publish(3, 1, || true);
        streak.publish(3, 7, || true);
        assert_eq!(streak.count(3), 1);
        streak.publish(5, 2, || false);
        assert_eq!(streak.count(5), 0);
        assert_eq!(streak.count(3), 1);
    }
}
