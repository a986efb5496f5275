//! When the newest probe of the current half-open period was admitted: what the probe timeout
//! is measured from. The half-open generation's tag and the time, in whole microseconds
//! rounded up, in one word (`tagged_time.rs`).
//!
//! A probe's admission records its time *before* the compare-and-swap on the state word that
//! admits it, as the open deadline is published before the state (`open_deadline.rs`), and
//! keeps the later of two times of one generation. So a caller that acquires a state word
//! counting that probe out finds its time here, or a later probe's: if every probe out was
//! admitted before the time it finds, all of them were, and if that time is older than the
//! timeout, every probe out has been out longer. A recorder writes only while the state word
//! is still of the generation of the word it is about to replace, read after loading this
//! one, and only by a compare-and-swap from the value loaded: one whose admission can no
//! longer happen writes nothing, so an outdated recorder cannot replace a newer generation's
//! time. One whose swap then fails (the word changed within the generation: a probe ended, a
//! reconfiguration flipped a bit) may leave a time later than every probe out: the timeout
//! then gives up on them late, never early.
//!
//! # Sealing
//!
//! A call that finds every probe out past the timeout opens the breaker again with a
//! compare-and-swap on the state word, and that word does not tell every admission since
//! the call looked: probes that end and are admitted again leave it as it was but for its
//! admission count, which wraps (`state.rs`). Nor does a look at this word just before that
//! swap: the admissions may come between the look and the swap. So the call first *seals*
//! this word: a compare-and-swap from the very word its decision read (tag and time) to the
//! generation's seal, the tag with the greatest time. Then, for every probe out of that
//! generation when the state's swap succeeds, whenever that is, its recording (before its
//! admission):
//!
//! - read or replaced a value that comes before the seal in this word's modification order,
//!   and so no later than the word the seal replaced: within a generation the times only
//!   grow, and the seal's swap succeeded from the decision's word, so nothing came between.
//!   The probe's time is no later than the one the decision found, past the timeout;
//! - or read the seal, and the probe was not admitted: an admission that finds its generation
//!   sealed is not admitted (it finishes the opening, below, and is rejected as open). A
//!   recorder that writes reads what it replaces, so none writes after the
//!   seal unnoticed;
//! - or found the state word of another generation, and the probe's own swap failed.
//!
//! That holds however often the state word comes back bit for bit, and needs only this word's
//! single modification order, no ordering against the state word (but for the last paragraph).
//! Once sealed, a generation stays sealed: the sealing call opens the breaker from whatever
//! half-open word of that generation the probes' verdicts leave (only another transition, a
//! verdict's or a reset's, can end the generation first). The seal already proves every probe
//! of the generation overdue, so any call that meets it may make that opening itself
//! (`Breaker::finish_sealed_reopening`), and none waits on a sealer descheduled before its
//! swap.
//!
//! A seal outlives its generation, and the tag wraps: the admission that moves the breaker to
//! half-open, whose generation cannot be sealed yet, writes over a seal with its own tag (one
//! 65,536 generations old, with no half-open period in between). A time outlives its
//! generation as well, and one 65,536 generations old could read as later than the new
//! admission's: so an opening from any state but half-open first forgets it
//! ([`NewestProbe::forget`]), and the word holds a time of the next half-open generation's
//! tag only once that generation admitted a probe. It does so only while its
//! own transition is still possible, as every recorder does. The seal's swap is `Release` and
//! recorders read with `Acquire`, so an outdated one (whose swap will fail) that finds the
//! seal of a current generation also finds the half-open state word its sealer read, of that
//! generation, and writes nothing: it cannot reopen the generation to admissions.

use crate::sync::{AtomicU64, Ordering};
use crate::tagged_time::{at_or_after, belongs_to, reserved, since, tagged_unreserved};

pub(crate) struct NewestProbe {
    word: AtomicU64,
}

/// What the word holds for a half-open generation ([`NewestProbe::newest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Newest {
    /// The newest probe admitted, as the word holds it: what [`NewestProbe::seal`] seals.
    Admitted(Admitted),
    /// Sealed: a call is opening the breaker again for timed-out probes, and no probe is
    /// admitted.
    Sealed,
}

/// The word as it held the newest probe's admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Admitted(u64);

impl Admitted {
    /// How long before `now_nanos` (on the breaker's clock, as `Breaker::now` reads it) the
    /// probe was admitted, in nanoseconds; zero for a time rounded up past `now_nanos`.
    pub(crate) fn age_nanos(self, now_nanos: u64) -> u64 {
        since(self.0, now_nanos)
    }
}

/// `generation`'s seal: a value no recorded time takes (`tagged_time::reserved`), so that a
/// recorder that finds it knows it for the seal.
fn sealed(generation: u32) -> u64 {
    reserved(generation)
}

impl NewestProbe {
    pub(crate) fn new() -> Self {
        // Tag 0: generation 0 is the first closed state, never a half-open one.
        NewestProbe {
            word: AtomicU64::new(0),
        }
    }

    /// Records that a probe of half-open `generation` is admitted at `now_nanos`, unless a
    /// later admission of that generation is recorded already, or `still_possible` (which
    /// re-reads the state word) says the admission can no longer happen. `half_opens`: the
    /// admission is the one that moves the breaker to half-open.
    ///
    /// Whether the admission may go ahead: `false` if `generation` is sealed (for an admission
    /// that half-opens, never: a seal of its tag is an old one, and written over).
    #[must_use]
    pub(crate) fn record(
        &self,
        generation: u32,
        now_nanos: u64,
        half_opens: bool,
        still_possible: impl Fn() -> bool,
    ) -> bool {
        // Rounded up: a probe is never taken for older than it is. Never the seal.
        let new = tagged_unreserved(generation, now_nanos);
        // Acquire, and the state read after it: see the module documentation.
        let mut current = self.word.load(Ordering::Acquire);
        loop {
            if current == sealed(generation) {
                if !half_opens {
                    return false;
                }
            } else if belongs_to(current, generation) && at_or_after(current, new) {
                return true;
            }
            if !still_possible() {
                // The admission's swap fails: it is decided again from the word as it is.
                return true;
            }
            // Release: a caller that acquires the state word this admission writes next sees
            // this time; and a stalled admitter of an older generation that loads this time
            // then re-reads a state at least as new as the one this admission acted on, so it
            // writes nothing over it (the loom model
            // `a_stalled_half_opener_leaves_a_later_probe_time_alone`).
            match self
                .word
                .compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(seen) => current = seen,
            }
        }
    }

    /// For the opener of open `generation` from a state other than half-open, before its
    /// swap on the state word: replaces the word with one of `generation`'s tag (no
    /// half-open generation's), unless `still_possible` (which re-reads the state word) says
    /// the opening can no longer happen. Tags are 16 bits: without this, the time of a
    /// half-open generation 65,536 generations back, with no half-open period since, has the
    /// tag of the next one, which would keep it over its first admission when it reads as
    /// later (kept 6.7 to 8.9 years before) and give its probes up years late. An opening
    /// from half-open leaves the word to that generation's time or seal, whose tag is never
    /// the next half-open generation's.
    ///
    /// A forgetter whose opening can no longer happen may still have read `still_possible`
    /// true just before the state moved on: its compare-and-swap is from the value it loaded
    /// before that read, and every admission of a later half-open generation changes the
    /// word before it can count (its time is recorded before its own swap), so such a
    /// forgetter's swap fails, and it re-reads the state and stops (the loom model
    /// `a_stalled_trip_leaves_a_later_probe_time_alone`). `AcqRel` for the same reason as
    /// `record`'s: a stalled recorder that loads this value then re-reads a state at least as
    /// new as the one this opener read.
    pub(crate) fn forget(&self, generation: u32, still_possible: impl Fn() -> bool) {
        let forgotten = tagged_unreserved(generation, 0);
        let mut current = self.word.load(Ordering::Acquire);
        while current != forgotten && still_possible() {
            match self.word.compare_exchange_weak(
                current,
                forgotten,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
        }
    }

    /// What the word holds for half-open `generation`: the newest probe admitted, or the seal;
    /// `None` if it holds neither. Read after acquiring a state word of `generation` with
    /// probes out, so after the generation's first probe recorded its time (over any older
    /// seal with its tag): a seal found is the generation's own.
    pub(crate) fn newest(&self, generation: u32) -> Option<Newest> {
        let word = self.word.load(Ordering::Acquire);
        if word == sealed(generation) {
            Some(Newest::Sealed)
        } else {
            belongs_to(word, generation).then_some(Newest::Admitted(Admitted(word)))
        }
    }

    /// Seals half-open `generation` if the word still holds `newest`, as read for the decision
    /// to open the breaker again; whether this call sealed it. See the module documentation.
    ///
    /// Only a read-modify-write from `newest` itself makes the seal sound; `Release` is for the
    /// admissions that half-open: one that finds this seal then finds the state word this
    /// call read before it, of `generation` (module documentation). A failed seal reads
    /// nothing it needs.
    pub(crate) fn seal(&self, generation: u32, newest: Admitted) -> bool {
        self.word
            .compare_exchange(
                newest.0,
                sealed(generation),
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_ok()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// When the newest probe of `generation` was admitted, as its age at a time after every
    /// admission of these tests tells it.
    fn admitted_nanos(newest: &NewestProbe, generation: u32) -> Option<u64> {
        const NOW: u64 = 1_000_000;
        match newest.newest(generation)? {
            Newest::Admitted(admitted) => Some(NOW - admitted.age_nanos(NOW)),
            Newest::Sealed => panic!("generation {generation} is sealed"),
        }
    }

    #[test]
    fn the_later_admission_of_a_generation_is_kept() {
        let newest = NewestProbe::new();
        assert_eq!(admitted_nanos(&newest, 3), None);
        assert!(newest.record(3, 5_000, true, || true));
        assert!(newest.record(3, 2_000, false, || true));
        assert_eq!(admitted_nanos(&newest, 3), Some(5_000));
        assert!(newest.record(3, 9_500, false, || true));
        assert_eq!(admitted_nanos(&newest, 3), Some(10_000), "rounded up");
        assert_eq!(admitted_nanos(&newest, 4), None, "another generation");
    }

    #[test]
    fn a_new_generation_replaces_the_old_one_and_an_outdated_recorder_writes_nothing() {
        let newest = NewestProbe::new();
        assert!(newest.record(3, 5_000, true, || true));
        assert!(newest.record(5, 1_000, true, || true));
        assert_eq!(admitted_nanos(&newest, 5), Some(1_000));
        assert!(newest.record(3, 9_000, false, || false));
        assert_eq!(admitted_nanos(&newest, 5), Some(1_000));
        assert_eq!(admitted_nanos(&newest, 3), None);
    }

    #[test]
    fn a_seal_is_only_from_the_word_decided_on_and_turns_admissions_away() {
        let newest = NewestProbe::new();
        assert!(newest.record(3, 5_000, true, || true));
        let Some(Newest::Admitted(decided)) = newest.newest(3) else {
            panic!("a probe is recorded");
        };
        assert!(newest.record(3, 7_000, false, || true), "a younger probe");
        assert!(
            !newest.seal(3, decided),
            "the word changed since the decision"
        );
        let Some(Newest::Admitted(again)) = newest.newest(3) else {
            panic!("not sealed");
        };
        assert!(newest.seal(3, again));
        assert!(!newest.seal(3, again), "sealed once");
        assert_eq!(newest.newest(3), Some(Newest::Sealed));
        assert!(!newest.record(3, 8_000, false, || true), "turned away");
        assert!(!newest.record(3, 1_000, false, || true), "however old");
        assert_eq!(newest.newest(3), Some(Newest::Sealed));
        assert_eq!(newest.newest(4), None, "another generation");
    }

    #[test]
    fn a_seal_of_the_same_tag_is_written_over_by_the_admission_that_half_opens() {
        let newest = NewestProbe::new();
        assert!(newest.record(3, 5_000, true, || true));
        let Some(Newest::Admitted(decided)) = newest.newest(3) else {
            panic!("a probe is recorded");
        };
        assert!(newest.seal(3, decided));
        let later = 3 + 65_536;
        assert_eq!(newest.newest(later), Some(Newest::Sealed), "the tag wraps");
        // An outdated admission that half-opens writes nothing, as any outdated recorder.
        assert!(newest.record(later, 9_000, true, || false));
        assert_eq!(newest.newest(later), Some(Newest::Sealed));
        assert!(newest.record(later, 9_000, true, || true));
        assert_eq!(admitted_nanos(&newest, later), Some(9_000));
    }

    #[test]
    fn no_time_is_taken_for_the_seal() {
        let newest = NewestProbe::new();
        assert!(newest.record(3, u64::MAX, true, || true));
        assert!(matches!(newest.newest(3), Some(Newest::Admitted(_))));
        assert!(newest.record(3, u64::MAX, false, || true));
    }

    #[test]
    fn admissions_either_side_of_the_48_bit_wrap_keep_their_order_and_ages() {
        const WRAP: u64 = (1 << 48) * 1_000; // nanoseconds
        let newest = NewestProbe::new();
        assert!(newest.record(3, WRAP - 3_000, true, || true));
        assert!(newest.record(3, WRAP + 4_000, false, || true), "later");
        assert!(newest.record(3, WRAP - 2_000, false, || true), "earlier");
        let Some(Newest::Admitted(kept)) = newest.newest(3) else {
            panic!("a probe is recorded");
        };
        assert_eq!(kept.age_nanos(WRAP + 10_000), 6_000, "the later one kept");
        // A time falling on the seal's value is kept a microsecond later, not as the seal.
        assert!(newest.record(5, WRAP - 1_000, true, || true));
        let Some(Newest::Admitted(last)) = newest.newest(5) else {
            panic!("taken for the seal");
        };
        assert_eq!(last.age_nanos(WRAP + 1_000), 1_000);
        assert_eq!(last.age_nanos(WRAP - 1_000), 0, "rounded up, never older");
    }
}
