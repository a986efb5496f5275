//! When the current open period ends: the open generation's tag and the end, in whole
//! microseconds, in one word (`tagged_time.rs`).
//!
//! A thread that trips the breaker writes the deadline *before* the compare-and-swap that makes
//! the breaker open, tagged with the generation the open state will have. So a caller who sees
//! `Open` in generation `g` always finds `g`'s deadline here, and never waits for the tripping
//! thread to finish. Openers of one transition race to write it, and the first deadline
//! written stays; their periods may differ (an opening from outside racing a failed probe),
//! so the opener that wins the state's compare-and-swap then puts its own deadline there
//! ([`take_over`](OpenDeadline::take_over)), unless the period was ended or extended in
//! between. A call in between may act on the other's.
//!
//! A tripper writes only while the state word is still in the generation it is about to
//! leave, read after it loaded this word, and only with a compare-and-swap from the value it
//! loaded. (Not merely a word its transition would accept: an opening from outside accepts
//! several, and one that computed its generation from an older word could otherwise write
//! over the deadline of the opening that took that generation's successor. Not the exact
//! word either: reconfiguration flips bits of it without a transition, and flipped back they
//! would let the swap succeed after a skipped write.) A skipped write thus always means a
//! swap that fails. Every
//! deadline here was written by a tripper that saw its own "from" state current; so if this
//! word held a deadline for a later generation, the state word read after it would show that
//! generation too, and the stale tripper writes nothing. Which generation is newer is never
//! decided from the 16-bit tags, which wrap: a tripper stalled for 2^15 transitions cannot end
//! a newer open period early.

use crate::sync::{AtomicU64, Ordering};
use crate::tagged_time::{belongs_to, tagged, until};

pub(crate) struct OpenDeadline {
    word: AtomicU64,
}

impl OpenDeadline {
    pub(crate) fn new() -> Self {
        // Tag 0 with deadline 0: generation 0 is the first closed state, never an open one.
        OpenDeadline {
            word: AtomicU64::new(0),
        }
    }

    /// Records that the open period of `generation` ends at `deadline_nanos`, unless a deadline
    /// for it is already there, or `still_possible` (which re-reads the state word) says the
    /// transition to it can no longer happen.
    pub(crate) fn publish(
        &self,
        generation: u32,
        deadline_nanos: u64,
        still_possible: impl Fn() -> bool,
    ) {
        // Rounded up: the period may end up to a microsecond late, never early.
        let new = tagged(generation, deadline_nanos);
        // Acquire: pairs with the Release of the publish that wrote the value loaded, so
        // `still_possible`, read after it, sees at least the state that writer saw; a writer
        // stalled in an older generation then writes nothing (the loom model
        // `a_stalled_tripper_leaves_a_later_deadline_alone`).
        let mut current = self.word.load(Ordering::Acquire);
        while !belongs_to(current, generation) && still_possible() {
            // Release: for a later publish's Acquire (load or failed swap), as above. A reader
            // of the deadline is ordered after it by the state word instead: it acquires the
            // state that the swap this publish precedes wrote.
            match self
                .word
                .compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
        }
    }

    /// Moves the end of `generation`'s open period to `end_nanos` (earlier or later), if its
    /// deadline is here and `still_open` (which re-reads the state word) says the breaker is
    /// still open in `generation`. Returns whether it moved it.
    ///
    /// The state is read after the deadline, as in [`publish`](OpenDeadline::publish), and the
    /// new end replaces exactly the value loaded: a deadline that another generation wrote
    /// meanwhile makes the compare-and-swap fail. A caller that loaded the old deadline
    /// before the swap still acts on it: a period moved later may end at the old time all the
    /// same, when a call found it over first; a period ended early is over for every call that
    /// loads the deadline after the swap.
    pub(crate) fn reschedule(
        &self,
        generation: u32,
        end_nanos: u64,
        still_open: impl Fn() -> bool,
    ) -> bool {
        let new = tagged(generation, end_nanos);
        // Acquire: as in `publish`; the state is read after it.
        let current = self.word.load(Ordering::Acquire);
        if !belongs_to(current, generation) || !still_open() {
            return false;
        }
        // Release: a caller that acquires this word sees the period's new end, and the
        // generation's tag with it. A failed swap means another generation's deadline (or
        // another reschedule) came first: this one is outdated then.
        current == new
            || self
                .word
                .compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// The word as it is now: for an opener to read between its publish and its
    /// compare-and-swap on the state, and to hand to [`take_over`](OpenDeadline::take_over).
    pub(crate) fn load(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    /// For the opener that won the transition to `generation`: puts its own deadline in place
    /// of `published`, what this word held just before its winning compare-and-swap, when that
    /// was another opener's (the first deadline written stays, and a racing opener may have a
    /// different period). Only that exact value is replaced: between the opener's publish and
    /// its swap no one else writes here (a publisher writes only while this word holds no
    /// deadline of `generation`, a reschedule only once the breaker is open in it), and
    /// anything written after the swap is an end or an extension of the new period, which
    /// stands.
    pub(crate) fn take_over(&self, published: u64, generation: u32, deadline_nanos: u64) {
        let own = tagged(generation, deadline_nanos);
        if published != own && belongs_to(published, generation) {
            // Release: a caller that acquires this word sees the period's end with its tag.
            let _ = self
                .word
                .compare_exchange(published, own, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Whether the open period of `generation` is over at `now_nanos`.
    ///
    /// A caller reads this after acquiring a state word that says `Open` in `generation`,
    /// which the deadline's publish happened before; a different tag can then only mean a
    /// deadline from 65,536 generations ago, and the breaker then treats the period as over
    /// rather than stay open for good.
    #[inline]
    pub(crate) fn remaining_nanos(&self, generation: u32, now_nanos: u64) -> Option<u64> {
        let word = self.word.load(Ordering::Acquire);
        if !belongs_to(word, generation) {
            return None;
        }
        until(word, now_nanos)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_winning_opener_takes_over_a_racing_openers_deadline() {
        let deadline = OpenDeadline::new();
        deadline.publish(3, 30_000, || true); // the racer's, first
        deadline.publish(3, 10_000, || true); // the winner's: the racer's stays
        let published = deadline.load();
        deadline.take_over(published, 3, 10_000);
        assert_eq!(deadline.remaining_nanos(3, 0), Some(10_000));
    }

    #[test]
    fn a_period_ended_after_the_swap_is_not_taken_back() {
        let deadline = OpenDeadline::new();
        deadline.publish(3, 30_000, || true);
        let published = deadline.load();
        // The breaker is open in 3 now; a caller ends the period before the winner looks.
        assert!(deadline.reschedule(3, 0, || true));
        deadline.take_over(published, 3, 10_000);
        assert_eq!(deadline.remaining_nanos(3, 0), None, "still ended");
        // Nor does a winner touch another generation's deadline.
        let later = OpenDeadline::new();
        later.publish(5, 7_000, || true);
        later.take_over(later.load(), 4, 1_000);
        assert_eq!(later.remaining_nanos(5, 0), Some(7_000));
    }

    #[test]
    fn first_deadline_for_a_generation_wins() {
        let deadline = OpenDeadline::new();
        deadline.publish(1, 5_000, || true);
        deadline.publish(1, 9_000, || true);
        assert_eq!(deadline.remaining_nanos(1, 1_000), Some(4_000));
        assert_eq!(deadline.remaining_nanos(1, 5_000), None);
    }

    #[test]
    fn a_stale_tripper_cannot_overwrite_a_newer_deadline() {
        let deadline = OpenDeadline::new();
        deadline.publish(7, 10_000, || true);
        deadline.publish(5, 1, || false); // its transition can no longer happen
        assert_eq!(deadline.remaining_nanos(7, 0), Some(10_000));
        // Tags 40_005 and 7 are more than 2^15 apart: by tag order alone, 40_005 would look
        // older than 7 and its stale tripper would have been let through.
        deadline.publish(40_005, 1, || false);
        assert_eq!(deadline.remaining_nanos(7, 0), Some(10_000));
    }

    #[test]
    fn rounds_up_to_whole_microseconds() {
        let deadline = OpenDeadline::new();
        deadline.publish(3, 1_001, || true);
        assert_eq!(deadline.remaining_nanos(3, 1_001), Some(999));
        assert_eq!(deadline.remaining_nanos(3, 2_000), None);
    }

    #[test]
    fn a_period_is_moved_only_while_its_generation_is_open() {
        let deadline = OpenDeadline::new();
        deadline.publish(4, 50_000, || true);
        assert!(deadline.reschedule(4, 10_000, || true), "ended early");
        assert_eq!(deadline.remaining_nanos(4, 9_000), Some(1_000));
        assert!(deadline.reschedule(4, 80_000, || true), "moved later");
        assert_eq!(deadline.remaining_nanos(4, 70_000), Some(10_000));
        assert!(
            !deadline.reschedule(5, 1_000, || true),
            "generation 5 has no deadline here"
        );
        assert!(
            !deadline.reschedule(4, 1_000, || false),
            "generation 4 is no longer open"
        );
        assert_eq!(deadline.remaining_nanos(4, 70_000), Some(10_000));
    }

    #[test]
    fn another_generation_reads_as_over() {
        let deadline = OpenDeadline::new();
        deadline.publish(3, u64::MAX, || true);
        assert_eq!(deadline.remaining_nanos(4, 0), None);
    }
}
