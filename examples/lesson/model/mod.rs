//! The lesson's seeded simulation: a gateway whose slot pool is shared by tracking queries and by
//! status events, the events calling a dependency that fails in one of four modes from round
//! `fault_at` on, optionally guarded by a real `hotbreaker::Breaker`.
//!
//! `run` is a plain function of a `Scenario`, so one report, one flag set or a whole sweep can
//! call it as often as they like; `simulate` adds the conditions a user may change (traffic,
//! the fault's behaviour, when verdicts arrive) and an observer that sees every round.

mod arrivals;
mod conditions;
mod detection;
pub mod fault;
mod guard;
mod in_flight;
mod mode;
mod observer;
mod park_miller;
mod rule;
mod slot_pool;
mod timing;
pub mod traffic;

pub use conditions::Conditions;
pub use detection::Detection;
pub use mode::Mode;
pub use observer::{Observer, SlotUse};
pub use rule::Rule;
pub use timing::Timing;

use hotbreaker::{Breaker, ConfigError, ManualClock, Permit};

use arrivals::{Arrivals, Flow};
use detection::Detector;
use in_flight::InFlight;
use park_miller::ParkMiller;
use slot_pool::SlotPool;

pub use arrivals::ROUNDS_PER_SECOND;

/// Rounds a rejected event holds a slot (if one is free) to send its immediate answer.
const REJECTED_HOLD: u64 = 1;

/// Everything one run depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scenario {
    pub mode: Mode,
    pub rule: Rule,
    /// Rounds the breaker stays open after each opening.
    pub open_rounds: u64,
    pub seed: u64,
    pub slots: usize,
    pub rounds: u64,
    /// The first round in which the dependency is in `mode` (healthy before).
    pub fault_at: u64,
}

impl Scenario {
    /// The lesson's run for a mode and rule: seed 20260731, 32 slots, 1200 rounds (12 s), the
    /// fault from round 200 on, open for 100 rounds (1 s).
    pub fn lesson(mode: Mode, rule: Rule) -> Self {
        Self {
            mode,
            rule,
            open_rounds: 100,
            seed: 20_260_731,
            slots: 32,
            rounds: 1200,
            fault_at: 200,
        }
    }
}

/// What one run counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCounts {
    pub tracking_ok: u64,
    pub tracking_no_slot: u64,
    pub event_ok: u64,
    /// Events the open breaker turned away without calling the dependency.
    pub event_rejected: u64,
    pub event_failed: u64,
    pub event_no_slot: u64,
    /// Calls actually made to the dependency.
    pub calls: u64,
    /// Slot-rounds held by the calls to the dependency.
    pub event_slot_rounds: u64,
    /// Of those, the slot-rounds of calls started from the fault's start on: what a fault costs
    /// when it is never detected.
    pub fault_slot_rounds: u64,
    pub openings: u64,
    /// The first opening after the fault began; never set in the healthy mode.
    pub detection: Option<Detection>,
}

/// Runs one scenario of the lesson to the end.
///
/// # Errors
/// When the breaker refuses the rule's configuration.
pub fn run(scenario: &Scenario) -> Result<RunCounts, ConfigError> {
    simulate(scenario, &Conditions::LESSON, &mut ())
}

/// Runs one scenario to the end under `conditions`, telling `observer` what happens.
///
/// Counts are taken when a call starts, whatever the timing: a call is made, and holds its
/// slot, from then on. Only the breaker hears of it later in realistic timing.
///
/// # Errors
/// When the breaker refuses the rule's configuration.
pub fn simulate<O: Observer>(
    scenario: &Scenario,
    conditions: &Conditions,
    observer: &mut O,
) -> Result<RunCounts, ConfigError> {
    let clock = ManualClock::new();
    let breaker = guard::breaker_for(scenario.rule, scenario.open_rounds, &clock)?;
    let mut rng = ParkMiller::new(scenario.seed);
    let mut pool = SlotPool::new(scenario.slots);
    let mut arrivals = Arrivals::new(&conditions.traffic);
    let mut round_arrivals = Vec::new();
    let mut counts = RunCounts::default();
    let mut detector = Detector::new(scenario.fault_at, scenario.mode != Mode::Healthy);
    // Realistic timing: permits of calls still out, with their verdicts, by the round they end.
    let mut in_flight = InFlight::new();
    let healthy = Mode::Healthy.behaviour();
    let faulty = conditions.fault.apply(scenario.mode.behaviour());
    let tracking_hold = conditions.traffic.tracking_hold;

    for round in 0..scenario.rounds {
        detector.round_starts(round, counts.event_slot_rounds);
        clock.set(guard::rounds_to_time(round));

        // The calls whose slots free this round have returned: the breaker hears their verdicts
        // before this round's arrivals, which may already take those slots and must see the
        // state the verdicts leave. Oldest call first.
        if let Some(breaker) = &breaker {
            for (permit, failed) in in_flight.ending(round) {
                if record(breaker, permit, failed) {
                    detector.opened(round, counts.event_slot_rounds);
                }
            }
        }

        arrivals.next_round(&mut rng, &mut round_arrivals);
        for &flow in &round_arrivals {
            if flow == Flow::Tracking {
                if pool.take(round, tracking_hold) {
                    counts.tracking_ok += 1;
                    observer.slot_taken(SlotUse::Tracking, round, tracking_hold);
                } else {
                    counts.tracking_no_slot += 1;
                    observer.tracking_without_slot(round);
                }
                continue;
            }

            let permit = match breaker.as_ref().map(|breaker| breaker.try_acquire()) {
                Some(Err(_rejected)) => {
                    counts.event_rejected += 1;
                    // The rejection is answered at once, but answering still needs a slot.
                    if pool.take(round, REJECTED_HOLD) {
                        observer.slot_taken(SlotUse::EventRejected, round, REJECTED_HOLD);
                    }
                    continue;
                }
                Some(Ok(permit)) => Some(permit),
                None => None,
            };

            // The model knows each call's verdict and duration when the call starts; the draw
            // happens before the slot is looked for, whether or not one is found.
            let behaviour = if round < scenario.fault_at {
                healthy
            } else {
                faulty
            };
            let failed = rng.next_unit() < behaviour.failure_probability;
            let hold = if failed {
                behaviour.failure_hold
            } else {
                behaviour.success_hold
            };
            if !pool.take(round, hold) {
                counts.event_no_slot += 1;
                // No call was made: give the admission back (in half-open, the next event probes).
                drop(permit);
                continue;
            }
            observer.slot_taken(SlotUse::EventCall, round, hold);

            counts.calls += 1;
            counts.event_slot_rounds += hold;
            if failed {
                counts.event_failed += 1;
            } else {
                counts.event_ok += 1;
            }

            let (Some(breaker), Some(permit)) = (&breaker, permit) else {
                continue;
            };
            match conditions.timing {
                Timing::Lesson => {
                    if record(breaker, permit, failed) {
                        detector.opened(round, counts.event_slot_rounds);
                    }
                }
                Timing::Realistic => in_flight.push(round + hold, (permit, failed)),
            }
        }
        observer.round_end(round, breaker.as_ref().map(|breaker| breaker.state()));
    }

    // Calls still out when the run ends never report: their permits are dropped unheard.
    drop(in_flight);
    counts.openings = breaker.map_or(0, |breaker| breaker.metrics().openings);
    counts.detection = detector.detection();
    counts.fault_slot_rounds = detector.since_fault(counts.event_slot_rounds);
    Ok(counts)
}

/// Tells the breaker a call's verdict; true if that opened it.
fn record(breaker: &Breaker<ManualClock>, permit: Permit<'_, ManualClock>, failed: bool) -> bool {
    let openings_before = breaker.metrics().openings;
    if failed {
        permit.failure();
    } else {
        permit.success();
    }
    breaker.metrics().openings > openings_before
}
