//! When the current open period ends.
//!
//! ```text
//!  63              48 47                                              0
//! +------------------+-------------------------------------------------+
//! | generation (16)  |  end of the open period, µs since clock epoch   |
//! +------------------+-------------------------------------------------+
//! ```
//!
//! A thread that trips the breaker writes the deadline *before* the compare-and-swap that makes
//! the breaker open, tagged with the generation the open state will have. So a caller who sees
//! `Open` in generation `g` always finds `g`'s deadline here, and never waits for the tripping
//! thread to finish. Trippers race only with each other over one transition (the first deadline
//! written wins; all are "now + open duration" within the same race) and with stale trippers
//! from older generations, which the tag comparison turns away.

use crate::sync::{AtomicU64, Ordering};

const MICROS_BITS: u32 = 48;
const MICROS_MASK: u64 = (1 << MICROS_BITS) - 1;
const TAG_MASK: u64 = 0xFFFF;

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
    /// for that generation (or a later one) is already there.
    pub(crate) fn publish(&self, generation: u32, deadline_nanos: u64) {
        let tag = u64::from(generation) & TAG_MASK;
        // Round up: the period may end up to a microsecond late, never early.
        let micros = deadline_nanos.div_ceil(1000).min(MICROS_MASK);
        let new = tag << MICROS_BITS | micros;
        // Acquire on the load pairs with the Release of a competing publish, so the tag we
        // compare against is the newest one.
        let mut current = self.word.load(Ordering::Acquire);
        while tag_is_older(current >> MICROS_BITS, tag) {
            // Release: a reader that acquires the state word published after this (by the CAS
            // this publish precedes) sees this deadline.
            match self
                .word
                .compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
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
        if word >> MICROS_BITS != u64::from(generation) & TAG_MASK {
            return None;
        }
        let end_nanos = (word & MICROS_MASK).saturating_mul(1000);
        (now_nanos < end_nanos).then(|| end_nanos - now_nanos)
    }
}

/// Whether 16-bit tag `old` names a generation before `new`'s, in serial-number arithmetic.
fn tag_is_older(old: u64, new: u64) -> bool {
    let distance = new.wrapping_sub(old) & TAG_MASK;
    distance != 0 && distance < 0x8000
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn first_deadline_for_a_generation_wins() {
        let deadline = OpenDeadline::new();
        deadline.publish(1, 5_000);
        deadline.publish(1, 9_000);
        assert_eq!(deadline.remaining_nanos(1, 1_000), Some(4_000));
        assert_eq!(deadline.remaining_nanos(1, 5_000), None);
    }

    #[test]
    fn a_stale_generation_cannot_overwrite_a_newer_one() {
        let deadline = OpenDeadline::new();
        deadline.publish(7, 10_000);
        deadline.publish(5, 1);
        assert_eq!(deadline.remaining_nanos(7, 0), Some(10_000));
    }

    #[test]
    fn rounds_up_to_whole_microseconds() {
        let deadline = OpenDeadline::new();
        deadline.publish(3, 1_001);
        assert_eq!(deadline.remaining_nanos(3, 1_001), Some(999));
        assert_eq!(deadline.remaining_nanos(3, 2_000), None);
    }

    #[test]
    fn another_generation_reads_as_over() {
        let deadline = OpenDeadline::new();
        deadline.publish(3, u64::MAX);
        assert_eq!(deadline.remaining_nanos(4, 0), None);
    }

    #[test]
    fn serial_order_wraps() {
        assert!(tag_is_older(0xFFFF, 0x0001));
        assert!(!tag_is_older(0x0001, 0xFFFF));
        assert!(!tag_is_older(5, 5));
    }
}
