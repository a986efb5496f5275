//! The lesson's seeded simulation: a gateway whose slot pool is shared by tracking queries and by
//! status events, the events calling a dependency that fails in one of four modes from round
//! `fault_at` on, optionally guarded by a real `hotbreaker::Breaker`.
//!
//! `run` is a plain function of a `Scenario`, so one report, one flag set or a whole sweep can
//! call it as often as they like.

mod arrivals;
mod guard;
mod mode;
mod park_miller;
mod rule;
mod slot_pool;

pub use mode::Mode;
pub use rule::Rule;

use hotbreaker::{ConfigError, ManualClock};

use arrivals::{Arrivals, Flow};
use park_miller::ParkMiller;
use slot_pool::SlotPool;

pub use arrivals::ROUNDS_PER_SECOND;

/// Rounds a tracking query holds its slot.
const TRACKING_HOLD: u64 = 4;
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
    pub openings: u64,
    /// The first opening after the fault began; never set in the healthy mode.
    pub detection: Option<Detection>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detection {
    /// Rounds from the fault's start to the first opening.
    pub round: u64,
    /// Slot-rounds the calls to the dependency held from the fault's start until then.
    pub slot_rounds: u64,
}

/// Runs one scenario to the end.
///
/// # Errors
/// When the breaker refuses the rule's configuration.
pub fn run(scenario: &Scenario) -> Result<RunCounts, ConfigError> {
    let clock = ManualClock::new();
    let breaker = guard::breaker_for(scenario.rule, scenario.open_rounds, &clock)?;
    let mut rng = ParkMiller::new(scenario.seed);
    let mut pool = SlotPool::new(scenario.slots);
    let mut arrivals = Arrivals::default();
    let mut round_arrivals = Vec::new();
    let mut counts = RunCounts::default();
    let mut slot_rounds_before_fault = 0;

    for round in 0..scenario.rounds {
        if round == scenario.fault_at {
            slot_rounds_before_fault = counts.event_slot_rounds;
        }
        clock.set(guard::rounds_to_time(round));
        arrivals.next_round(&mut rng, &mut round_arrivals);

        for &flow in &round_arrivals {
            if flow == Flow::Tracking {
                if pool.take(round, TRACKING_HOLD) {
                    counts.tracking_ok += 1;
                } else {
                    counts.tracking_no_slot += 1;
                }
                continue;
            }

            let permit = match breaker.as_ref().map(|breaker| breaker.try_acquire()) {
                Some(Err(_rejected)) => {
                    counts.event_rejected += 1;
                    // The rejection is answered at once, but answering still needs a slot.
                    pool.take(round, REJECTED_HOLD);
                    continue;
                }
                Some(Ok(permit)) => Some(permit),
                None => None,
            };

            // The model knows each call's verdict and duration when the call starts; the draw
            // happens before the slot is looked for, whether or not one is found.
            let behaviour = if round < scenario.fault_at {
                Mode::Healthy.behaviour()
            } else {
                scenario.mode.behaviour()
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
            let openings_before = breaker.metrics().openings;
            if failed {
                permit.failure();
            } else {
                permit.success();
            }
            let opened = breaker.metrics().openings > openings_before;
            let fault_underway = scenario.mode != Mode::Healthy && round >= scenario.fault_at;
            if opened && fault_underway && counts.detection.is_none() {
                counts.detection = Some(Detection {
                    round: round - scenario.fault_at,
                    slot_rounds: counts.event_slot_rounds - slot_rounds_before_fault,
                });
            }
        }
    }

    counts.openings = breaker.map_or(0, |breaker| breaker.metrics().openings);
    Ok(counts)
}
