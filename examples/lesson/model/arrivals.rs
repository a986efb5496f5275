//! Which requests arrive in a round, and in what order.

use super::park_miller::ParkMiller;
use super::traffic::Traffic;

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
pub struct Arrivals {
    tracking_per_second: f64,
    event_per_second: f64,
    tracking_backlog: f64,
    event_backlog: f64,
}

impl Arrivals {
    pub fn new(traffic: &Traffic) -> Self {
        Arrivals {
            tracking_per_second: traffic.tracking_per_second,
            event_per_second: traffic.event_per_second,
            tracking_backlog: 0.0,
            event_backlog: 0.0,
        }
    }

    /// Fills `round` with this round's arrivals: tracking first, then events, then shuffled with
    /// the seeded generator (arrival order decides who gets the last free slots).
    pub fn next_round(&mut self, rng: &mut ParkMiller, round: &mut Vec<Flow>) {
        // Divided every round, as the lesson does: the same rounding, step for step.
        self.tracking_backlog += self.tracking_per_second / ROUNDS_PER_SECOND;
        self.event_backlog += self.event_per_second / ROUNDS_PER_SECOND;
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
