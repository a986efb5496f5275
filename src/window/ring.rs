//! The records of recent failures that a rule may still look at.
//!
//! The newest failure lives in the window word; when the next failure is recorded, or the
//! window forgets its failures, the committer first copies the newest record here (its value
//! is fixed by the word it read, so racing committers all write the same record), and only
//! then commits. So by the time a reader acquires a word whose failure count is above `n`,
//! and which no longer holds failure `n` as its newest, the record of failure `n` is here, or
//! has been replaced by the record of a failure at least a ring's length newer.
//!
//! ```text
//!  63    61 60             48 47              32 31                                0
//! +--------+-----------------+------------------+-----------------------------------+
//! |   0    | generation (13) | failure number   | successes counted before it       |
//! +--------+-----------------+------------------+-----------------------------------+
//! ```

use crate::sync::{AtomicU64, Ordering};

use super::word::GENERATION_MASK;

pub(super) struct FailureRing {
    slots: Box<[AtomicU64]>,
    mask: usize,
}

fn record(generation_tag: u32, number: u16, successes: u32) -> u64 {
    u64::from(generation_tag & GENERATION_MASK) << 48
        | u64::from(number) << 32
        | u64::from(successes)
}

impl FailureRing {
    /// A ring of `capacity` records; `capacity` is a power of two.
    pub(super) fn new(capacity: usize) -> Self {
        debug_assert!(capacity.is_power_of_two());
        FailureRing {
            slots: (0..capacity).map(|_| AtomicU64::new(u64::MAX)).collect(),
            mask: capacity - 1,
        }
    }

    pub(super) fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub(super) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }

    /// Stores the record of failure `number`, unless it is already there.
    ///
    /// `still_current` re-reads the window word; a writer whose word is outdated must not
    /// write, or it could replace a newer record with an old one. Returns `false` when the
    /// record could not be written because the window moved on.
    pub(super) fn publish(
        &self,
        generation_tag: u32,
        number: u16,
        successes: u32,
        still_current: impl Fn() -> bool,
    ) -> bool {
        let slot = &self.slots[usize::from(number) & self.mask];
        let wanted = record(generation_tag, number, successes);
        let seen = slot.load(Ordering::Acquire);
        if seen == wanted {
            return true;
        }
        // Between this check and the CAS the window may move on and a newer record may take the
        // slot; the CAS then fails, because the slot no longer holds `seen`.
        if !still_current() {
            return false;
        }
        // Release: the record is visible to whoever acquires the window word this commit
        // precedes.
        match slot.compare_exchange(seen, wanted, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(now) => now == wanted,
        }
    }

    /// Successes counted before failure `number` of the generation, if its record is still
    /// here.
    pub(super) fn successes_before(&self, generation_tag: u32, number: u16) -> Option<u32> {
        let value = self.slots[usize::from(number) & self.mask].load(Ordering::Acquire);
        (value >> 32 == record(generation_tag, number, 0) >> 32).then_some(value as u32)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn records_are_found_by_generation_and_number() {
        let ring = FailureRing::new(4);
        assert!(ring.publish(5, 9, 123, || true));
        assert_eq!(ring.successes_before(5, 9), Some(123));
        assert_eq!(ring.successes_before(6, 9), None, "another generation");
        assert_eq!(
            ring.successes_before(5, 13),
            None,
            "same slot, another number"
        );
        assert!(ring.publish(5, 13, 200, || true));
        assert_eq!(
            ring.successes_before(5, 9),
            None,
            "replaced by a newer record"
        );
    }

    #[test]
    fn an_outdated_writer_writes_nothing() {
        let ring = FailureRing::new(4);
        assert!(ring.publish(1, 2, 7, || true));
        assert!(!ring.publish(1, 6, 9, || false));
        assert_eq!(ring.successes_before(1, 2), Some(7));
        assert!(
            ring.publish(1, 2, 7, || false),
            "an identical record needs no write"
        );
    }
}
