//! What a run shows round by round, for whoever wants to draw it; a sweep watches nothing.

use hotbreaker::State;

/// What a slot is held for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotUse {
    /// A tracking query (the neighbour flow).
    Tracking,
    /// A status event calling the dependency.
    EventCall,
    /// A status event the open breaker turned away, answered at once.
    EventRejected,
}

/// Told of every slot taken and every request that found none, and of the breaker's state at
/// the end of each round (`None`: the run has no breaker). Every method does nothing unless
/// overridden.
pub trait Observer {
    fn slot_taken(&mut self, _use: SlotUse, _round: u64, _hold: u64) {}
    fn tracking_without_slot(&mut self, _round: u64) {}
    fn round_end(&mut self, _round: u64, _state: Option<State>) {}
}

/// Watching nothing.
impl Observer for () {}
