//! The two flows that share the slot pool: how often their requests come and how long a
//! tracking query holds its slot. The lesson's by default; a user's own through the flags.

/// Rates and the neighbour's hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Traffic {
    /// Tracking queries (the neighbour flow) per second.
    pub tracking_per_second: f64,
    /// Rounds a tracking query holds its slot.
    pub tracking_hold: u64,
    /// Status events (the flow that calls the guarded dependency) per second.
    pub event_per_second: f64,
}

impl Traffic {
    /// The lesson's peak rates (416.67 tracking queries and 97.22 status events a second) and
    /// its four-round tracking leg.
    pub const LESSON: Traffic = Traffic {
        tracking_per_second: 416.67,
        tracking_hold: 4,
        event_per_second: 97.22,
    };
}

impl Default for Traffic {
    fn default() -> Self {
        Traffic::LESSON
    }
}
