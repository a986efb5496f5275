//! The gateway's slot pool, shared by both flows.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Each slot is the round from which it is free again, kept in a min-heap: a request needs
/// only to know whether the slot that frees first is free by its round. The lesson takes the
/// free slot with the lowest index, but slots are alike, so which free one is taken changes no
/// outcome; a scan for it took time in proportion to the slots at every request (a run with a
/// million slots took minutes), the heap a logarithm of them.
pub struct SlotPool {
    free_from: BinaryHeap<Reverse<u64>>,
}

impl SlotPool {
    pub fn new(slots: usize) -> Self {
        Self {
            free_from: std::iter::repeat_n(Reverse(0), slots).collect(),
        }
    }

    /// Takes a free slot for `hold` rounds from `round`; `false` when every slot is busy.
    pub fn take(&mut self, round: u64, hold: u64) -> bool {
        match self.free_from.peek_mut() {
            Some(mut first) if first.0 <= round => {
                *first = Reverse(round + hold);
                true
            }
            _ => false,
        }
    }
}
