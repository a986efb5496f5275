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

use crate::sync::{AtomicU64, Ordering};
use crate::tagged_time::{belongs_to, nanos, tagged};

pub(crate) struct NewestProbe {
    word: AtomicU64,
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
    /// re-reads the state word) says the admission can no longer happen.
    pub(crate) fn record(
        &self,
        generation: u32,
        now_nanos: u64,
        still_possible: impl Fn() -> bool,
    ) {
        // Rounded up: a probe is never taken for older than it is.
        let new = tagged(generation, now_nanos);
        // Acquire, and the state read after it: see the module documentation.
        let mut current = self.word.load(Ordering::Acquire);
        loop {
            if belongs_to(current, generation) && nanos(current) >= nanos(new) {
                return;
            }
            if !still_possible() {
                return;
            }
            // Release: a caller that acquires the state word this admission writes next sees
            // this time.
            match self
                .word
                .compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
        }
    }

    /// When the newest probe of half-open `generation` was admitted, in nanoseconds on the
    /// breaker's clock, if a probe of it is recorded. Read after acquiring a state word of
    /// `generation` with probes out.
    pub(crate) fn admitted_nanos(&self, generation: u32) -> Option<u64> {
        let word = self.word.load(Ordering::Acquire);
        belongs_to(word, generation).then(|| nanos(word))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_later_admission_of_a_generation_is_kept() {
        let newest = NewestProbe::new();
        assert_eq!(newest.admitted_nanos(3), None);
        newest.record(3, 5_000, || true);
        newest.record(3, 2_000, || true);
        assert_eq!(newest.admitted_nanos(3), Some(5_000));
        newest.record(3, 9_500, || true);
        assert_eq!(newest.admitted_nanos(3), Some(10_000), "rounded up");
        assert_eq!(newest.admitted_nanos(4), None, "another generation");
    }

    #[test]
    fn a_new_generation_replaces_the_old_one_and_an_outdated_recorder_writes_nothing() {
        let newest = NewestProbe::new();
        newest.record(3, 5_000, || true);
        newest.record(5, 1_000, || true);
        assert_eq!(newest.admitted_nanos(5), Some(1_000));
        newest.record(3, 9_000, || false);
        assert_eq!(newest.admitted_nanos(5), Some(1_000));
        assert_eq!(newest.admitted_nanos(3), None);
    }
}
