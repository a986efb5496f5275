//! How many failed probe rounds in a row led to the current open period, for the open
//! back-off: the open generation (32 bits) and that count (32 bits) in one word.
//!
//! Only an opening that a failed probe round makes writes here; it also sets the state
//! word's failed-round bit (`state.rs`), which the half-open period after it carries. Every
//! other opening writes nothing and leaves the bit clear, so the trip path, which the
//! window's failures take, does no more work than without a back-off.
//!
//! The word is written as the open deadline is (`open_deadline.rs`), and for the same
//! reason: *before* the compare-and-swap that opens generation `g`, by a thread that saw
//! the state it is about to leave still current, read after it loaded this word, and only
//! with a compare-and-swap from the value it loaded. A count for a generation is never
//! rewritten with another (unlike the deadline, no winner rewrites it: every writer for a
//! generation leaves the same half-open generation, a failed probe or the probe timeout's
//! reopening, and they all count alike, see below), so a writer that finds its own count
//! already there writes nothing. A prober failing in the half-open generation `h` reads
//! this word after acquiring a state word that says `HalfOpen` in `h`. The half-open
//! transition read `h - 1`'s open word with a read-modify-write, so the opener's release
//! CAS happens before that load, and with it the count written before it: the state word
//! orders the read, not this one. Written after the CAS instead, a stalled opener's count
//! could be missing when the next round fails, which would then back off from the start
//! (the loom model `a_failed_round_backs_off_from_the_round_before`).
//!
//! What the prober in `h` reads (`rounds_ending_in`):
//!
//! - with the bit clear, nothing: this round is the first. Whatever count is here belongs to
//!   another period: a prober from `h - 2` that stalled between its state check and its write
//!   while an opening from outside ([`Breaker::open_for`]) or a trip won, can still write one
//!   for `h - 1`; the bit, which moved with the state, says it is not this period's (the model
//!   `an_opening_from_outside_ends_the_streak`). A count for `h + 1` may be here too, yet not
//!   this round's: one written `2^32` transitions ago, or the initial word, which reads as
//!   "generation 0" when `h` is `u32::MAX`;
//! - with the bit set, a count for `h + 1`: another probe of this round failed first and
//!   counted it; all probes of `h` count the same, so this is the count (the model
//!   `probes_failing_together_are_one_round`);
//! - with the bit set, a count for `h - 1`: this round is one more.
//!
//! With the bit set, the opener of `h - 1` wrote its count before its compare-and-swap, so
//! the prober sees that count or one written after it. After it, only the transitions out
//! of `h` write (for `h + 1`): a writer checks, after loading the word, that the half-open
//! generation it leaves is current, so one leaving an older one fails its compare-and-swap
//! (the word moved) and then its check, which sees the generation that the count's writer
//! saw, or a later one (its load of this word acquires that writer's swap); one leaving
//! `h - 2` finds its count there and writes nothing. So a count of `2^32` transitions ago is
//! never read with the bit set, and every failure in `h` reaches the same count. A writer
//! that finds a different count for its generation has found such an old one, and writes
//! over it. Only counts of 1 or more are written, so a count of 0, the initial word, is no
//! count for anyone.
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
        // Count 0: no count for anyone, whatever the generation (0, which the breaker opens
        // after its generation wraps).
        OpenStreak {
            word: AtomicU64::new(0),
        }
    }

    /// Records that the open period of `generation` follows `count` failed probe rounds in a
    /// row (at least 1), unless this count for it is already here, or `still_possible` (which
    /// re-reads the state word) says the transition to it can no longer happen.
    ///
    /// A different count for `generation` is overwritten: every writer for a generation
    /// counts alike, so it was written `2^32` transitions ago (or it is the initial word's 0).
    pub(crate) fn publish(&self, generation: u32, count: u32, still_possible: impl Fn() -> bool) {
        debug_assert!(count > 0, "a count of 0 is what no count means");
        let new = pack(generation, count);
        // Acquire: pairs with the Release of the publish that wrote the value loaded, whose
        // writer saw the generation it leaves current before writing; `still_possible`, read
        // after this, sees that generation or a later one. So a writer stalled in an older
        // generation that finds a newer count here writes nothing (the loom model
        // `a_stalled_prober_leaves_a_later_count_alone`).
        let mut current = self.word.load(Ordering::Acquire);
        while current != new && still_possible() {
            // Release: for a later publish's Acquire (load or failed swap), as above. Acquire
            // on failure: as the load's. What makes a prober see this count is not this swap
            // but the state's, after this publish (see the module documentation).
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
        // With the bit clear, the round is the first whatever the word says: a count for
        // `half_open + 1` may be `2^32` transitions old, or the initial word's.
        if !after_failed_round {
            return 1;
        }
        // Relaxed: the state word orders this read. The caller acquired a state word saying
        // `HalfOpen` in `half_open` with the bit set, which comes after the opener of
        // `half_open - 1`'s release swap (the half-open transition's swap read it), and that
        // opener wrote its count before its swap. So that count happens before this load,
        // which sees it or a later one (coherence); nothing but the value is read.
        let word = self.word.load(Ordering::Relaxed);
        let (generation, count) = ((word >> 32) as u32, word as u32);
        if count == 0 {
            // The initial word: no count. Through the breaker this is not reached (with the bit
            // set, the opener of `half_open - 1` published a count first); it is this word's
            // answer for its own initial value.
            1
        } else if generation == half_open.wrapping_add(1) {
            count
        } else if generation == half_open.wrapping_sub(1) {
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
    fn a_count_already_here_stays_and_a_stale_opener_writes_nothing() {
        let streak = OpenStreak::new();
        streak.publish(3, 1, || true);
        // Another failure of the same round: the same count, written already.
        streak.publish(3, 1, || panic!("nothing to write, no state to read"));
        assert_eq!(streak.rounds_ending_in(4, true), 2);
        // A count the stale opener's would not be mistaken for (3's count, plus one, is 2).
        streak.publish(5, 7, || false);
        assert_eq!(streak.rounds_ending_in(4, true), 2, "still 3's count");
    }

    #[test]
    fn the_initial_word_is_no_count_for_generation_0() {
        let streak = OpenStreak::new();
        // Half-open u32::MAX after a trip: the initial word says "generation 0, count 0".
        assert_eq!(streak.rounds_ending_in(u32::MAX, false), 1);
        assert_eq!(streak.rounds_ending_in(u32::MAX, true), 1);
        // Its reopening in 0 writes over the initial word, and the next round reads it.
        streak.publish(0, 1, || true);
        assert_eq!(streak.rounds_ending_in(1, true), 2);
    }

    #[test]
    fn a_count_of_2_pow_32_transitions_ago_is_neither_read_nor_kept() {
        let streak = OpenStreak::new();
        streak.publish(5, 3, || true);
        // 2^32 transitions later, half-open 4 after a trip: its round is the first.
        assert_eq!(streak.rounds_ending_in(4, false), 1);
        streak.publish(5, 1, || true);
        assert_eq!(
            streak.rounds_ending_in(6, true),
            2,
            "5's count is this period's"
        );
    }

    /// A count is read back in all its 32 bits: catches a count truncated when the word is
    /// packed or unpacked (a 16-bit count reads 70_000 as 4_464, and 65_536 as no count).
    #[test]
    fn a_count_keeps_all_its_32_bits() {
        let streak = OpenStreak::new();
        streak.publish(3, 70_000, || true);
        assert_eq!(streak.rounds_ending_in(4, true), 70_001);
        streak.publish(5, 65_536, || true);
        assert_eq!(streak.rounds_ending_in(6, true), 65_537);
    }

    /// A count stays at `u32::MAX` once there: catches a count that wraps to 0 (which would
    /// read as "no count" and a back-off from the start).
    #[test]
    fn a_count_saturates_at_u32_max() {
        let streak = OpenStreak::new();
        streak.publish(3, u32::MAX, || true);
        assert_eq!(streak.rounds_ending_in(4, true), u32::MAX);
    }

    /// Half-open 0, after the generation wraps, follows the opening in `u32::MAX`: catches a
    /// `half_open - 1` that saturates at 0 instead of wrapping (the round read as the first).
    #[test]
    fn the_round_before_half_open_0_is_u32_max() {
        let streak = OpenStreak::new();
        streak.publish(u32::MAX, 2, || true);
        assert_eq!(streak.rounds_ending_in(0, true), 3);
    }
}
