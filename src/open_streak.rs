//! How many failed probe rounds in a row led to the current open period, for the open
//! back-off: the open generation (32 bits) and that count (32 bits) in one word.
//!
//! Only an opening that a failed probe round makes writes here; it also sets the state
//! word's failed-round bit (`state.rs`), which the half-open period after it carries. Every
//! other opening writes nothing and leaves the bit clear, so the trip path, which the
//! window's failures take, does no more work than without a back-off.
//!
//! The word is written as the open deadline is (`open_deadline.rs`), and for the same reason:
//! *before* the compare-and-swap that opens generation `g`, by a thread that saw the state it
//! is about to leave still current, read after it loaded this word, and only with a
//! compare-and-swap from the value it loaded; the first count written for a generation
//! stays (unlike the deadline, no winner rewrites it: every writer for a generation leaves
//! the same half-open generation, a failed probe or the probe timeout's reopening, and they
//! all count alike). A prober failing in the half-open generation `h` reads this word after acquiring
//! a state word that says `HalfOpen` in `h`. The half-open transition read `h - 1`'s open
//! word with a read-modify-write, so the opener's release CAS happens before that load, and
//! with it the count written before it. Written after the CAS instead, a stalled opener's
//! count could be missing when the next round fails, which would then back off from the
//! start (the loom model `a_failed_round_backs_off_from_the_round_before`).
//!
//! What the prober in `h` reads (`rounds_ending_in`):
//!
//! - a count for `h + 1`: another probe of this round failed first and counted it; all
//!   probes of `h` count the same, so this is the count (the model
//!   `probes_failing_together_are_one_round`);
//! - with the bit set, a count for `h - 1`: this round is one more;
//! - anything else: this round is the first. With the bit clear, whatever count is here
//!   belongs to an opening that did not happen: a prober from `h - 2` that stalled between its
//!   state check and its write while an opening from outside ([`Breaker::open_for`]) or a
//!   trip won, can still write one for `h - 1`; the bit, which moved with the state, says it
//!   is not this period's (the model `an_opening_from_outside_ends_the_streak`).
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

    /// The failed probe rounds in a row that a failure in the half-open generation
    /// `half_open` completes; `after_failed_round` is that half-open word's bit. See the
    /// module documentation.
    pub(crate) fn rounds_ending_in(&self, half_open: u32, after_failed_round: bool) -> u32 {
        let word = self.word.load(Ordering::Acquire);
        let (generation, count) = ((word >> 32) as u32, word as u32);
        if generation == half_open.wrapping_add(1) {
            count
        } else if after_failed_round && generation == half_open.wrapping_sub(1) {
            count.saturating_add(1)
        } else {
            1
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_round_after_a_counted_one_is_one_more() {
        let streak = OpenStreak::new();
        assert_eq!(streak.rounds_ending_in(2, false), 1, "after a trip");
        streak.publish(3, 1, || true);
        assert_eq!(streak.rounds_ending_in(4, true), 2);
        streak.publish(5, 2, || true);
        assert_eq!(streak.rounds_ending_in(6, true), 3);
    }

    #[test]
    fn a_probe_of_a_round_already_counted_takes_that_count() {
        let streak = OpenStreak::new();
        streak.publish(3, 1, || true);
        // Another probe of half-open 4 failed first and counted the round for 5.
        streak.publish(5, 2, || true);
        assert_eq!(streak.rounds_ending_in(4, true), 2);
    }

    #[test]
    fn a_count_the_state_word_disowns_is_not_read() {
        let streak = OpenStreak::new();
        // A stalled prober's count for 3, but 3 was opened from outside: bit clear.
        streak.publish(3, 4, || true);
        assert_eq!(streak.rounds_ending_in(4, false), 1);
    }

    #[test]
    fn the_first_count_for_a_generation_stays_and_a_stale_opener_writes_nothing() {
        let streak = OpenStreak::new();
        streak.publish(3, 1, || true);
        streak.publish(3, 7, || true);
        assert_eq!(streak.rounds_ending_in(4, true), 2);
        streak.publish(5, 2, || false);
        assert_eq!(streak.rounds_ending_in(4, true), 2, "still 3's count");
    }
}
