//! Which requests arrive in a round, and in what order.

use super::park_miller::ParkMiller;

/// Peak rates of the two flows that share the slot pool, in requests per second.
const TRACKING_PER_SECOND: f64 = 416.67;
const EVENT_PER_SECOND: f64 = 97.22;
pub const ROUNDS_PER_SECOND: f64 = 100.0;

/// The two flows of the gateway: tracking queries (the neighbour) and status events (the flow
/// that calls the guarded dependency).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Tracking,
    Event,
}

/// Fractional arrivals carried from round to round, so that a rate like 4.1667 per round turns
/// into whole requests at the right average.
#[derive(Default)]
pub struct Arrivals {
    tracking_backlog: f64,
    event_backlog: f64,
}

impl Arrivals {
    /// Fills `round` with this round's arrivals: tracking first, then events, then shuffled with
    /// the seeded generator (arrival order decides who gets the last free slots).
    pub fn next_round(&mut self, rng: &mut ParkMiller, round: &mut Vec<Flow>) {
        self.tracking_backlog += TRACKING_PER_SECOND / ROUNDS_PER_SECOND;
        self.event_backlog += EVENT_PER_SECOND / ROUNDS_PER_SECOND;
        round.clear();
        release_whole(&mut self.tracking_backlog, Flow::Tracking, round);
        release_whole(&mut self.event_backlog, Flow::Event, round);
        shuffle(round, rng);
    }
}

/// Moves the whole requests out of a backlog, one subtraction of 1.0 per request: the same
/// floating-point steps as the lesson, so the fractions left over match it bit for bit.
fn release_whole(backlog: &mut f64, flow: Flow, round: &mut Vec<Flow>) {
    let whole = backlog.floor() as usize;
    for _ in 0..whole {
        round.push(flow);
        *backlog -= 1.0;
    }
}

/// Fisher–Yates from the back, drawing `floor(u * (i + 1))` for each position `i`.
fn shuffle(round: &mut [Flow], rng: &mut ParkMiller) {
    for i in (1..round.len()).rev() {
        let j = (rng.next_unit() * (i + 1) as f64).floor() as usize;
        round.swap(i, j);
    }
}
