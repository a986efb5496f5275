//! Realistic timing, checked against the crate's sequential reference model: the same
//! simulation, written again here with the reference model as the breaker, must count the same
//! as the example driving the real `hotbreaker::Breaker`. Verdicts arriving late, after the
//! breaker has moved on, are where a breaker can go wrong; this is where it would show.

#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/model/mod.rs"]
mod model;

use std::collections::BTreeMap;
use std::time::Duration;

use hotbreaker::Outcome;
use hotbreaker::testing::{ModelConfig, ModelPermit, ReferenceModel};
use model::{Conditions, Detection, Mode, Rule, RunCounts, Scenario, Timing};

/// The lesson's model, once more, with the reference model in place of the breaker and every
/// verdict reported when its call ends, before that round's arrivals. Its constants are the
/// lesson's own, as its JavaScript states them (`KIP`, `TAKIP`, `OLAY`, `TAKIP_TUTUS`), written
/// here independently of the example so that the two can disagree.
fn reference_run(scenario: &Scenario) -> RunCounts {
    const MODULUS: u64 = 2_147_483_647;
    let mut seed = scenario.seed % MODULUS;
    let mut unit = move || {
        seed = seed * 48_271 % MODULUS;
        seed as f64 / MODULUS as f64
    };
    let nanos = |round: u64| round * 10_000_000;
    let mut breaker = match scenario.rule {
        Rule::None => None,
        rule => Some(ReferenceModel::new(ModelConfig {
            failure_rate: match rule {
                Rule::Rate { threshold, window } => Some((threshold, window as u32, window as u32)),
                _ => None,
            },
            consecutive_failures: match rule {
                Rule::Consecutive { failures } => Some(failures as u32),
                _ => None,
            },
            open_duration: Duration::from_millis(10 * scenario.open_rounds),
            half_open_probes: 1,
            success_threshold: 1,
            slow_call: None,
            probe_timeout: None,
            open_backoff: None,
        })),
    };
    let mut free_from = vec![0_u64; scenario.slots];
    let mut take = |round: u64, hold: u64| match free_from.iter().position(|&f| f <= round) {
        Some(slot) => {
            free_from[slot] = round + hold;
            true
        }
        None => false,
    };
    let mut out: BTreeMap<u64, Vec<(ModelPermit, bool)>> = BTreeMap::new();
    let mut c = RunCounts::default();
    let (mut tracking_backlog, mut event_backlog) = (0.0_f64, 0.0_f64);
    let mut before_fault = None;
    let watching = scenario.mode != Mode::Healthy;
    for round in 0..scenario.rounds {
        if round == scenario.fault_at {
            before_fault = Some(c.event_slot_rounds);
        }
        if let Some(breaker) = breaker.as_mut() {
            for (permit, failed) in out.remove(&round).unwrap_or_default() {
                let openings_before = breaker.counts.openings;
                let outcome = if failed {
                    Outcome::Failure
                } else {
                    Outcome::Success
                };
                breaker.record(permit, outcome, nanos(round));
                let opened = breaker.counts.openings > openings_before;
                if let (true, true, None, Some(before)) =
                    (opened, watching, c.detection, before_fault)
                {
                    c.detection = Some(Detection {
                        round: round - scenario.fault_at,
                        slot_rounds: c.event_slot_rounds - before,
                    });
                }
            }
        }
        tracking_backlog += 416.67 / 100.0;
        event_backlog += 97.22 / 100.0;
        let mut arrivals = Vec::new();
        while tracking_backlog >= 1.0 {
            arrivals.push(true);
            tracking_backlog -= 1.0;
        }
        while event_backlog >= 1.0 {
            arrivals.push(false);
            event_backlog -= 1.0;
        }
        for i in (1..arrivals.len()).rev() {
            let j = (unit() * (i + 1) as f64).floor() as usize;
            arrivals.swap(i, j);
        }
        for tracking in arrivals {
            if tracking {
                if take(round, 4) {
                    c.tracking_ok += 1;
                } else {
                    c.tracking_no_slot += 1;
                }
                continue;
            }
            let permit = match breaker.as_mut().map(|b| b.acquire(nanos(round))) {
                Some(Err(_)) => {
                    c.event_rejected += 1;
                    take(round, 1);
                    continue;
                }
                Some(Ok(permit)) => Some(permit),
                None => None,
            };
            let mode = if round < scenario.fault_at {
                Mode::Healthy
            } else {
                scenario.mode
            };
            let (p, ok_hold, fail_hold) = match mode {
                Mode::Healthy => (0.025, 6, 22),
                Mode::Partial => (0.125, 6, 3),
                Mode::Halt => (1.0, 6, 3),
                Mode::Slowdown => (1.0, 6, 22),
            };
            let failed = unit() < p;
            let hold = if failed { fail_hold } else { ok_hold };
            if !take(round, hold) {
                c.event_no_slot += 1;
                if let (Some(breaker), Some(permit)) = (breaker.as_mut(), permit) {
                    breaker.release(permit, nanos(round));
                }
                continue;
            }
            c.calls += 1;
            c.event_slot_rounds += hold;
            if failed {
                c.event_failed += 1;
            } else {
                c.event_ok += 1;
            }
            if let Some(permit) = permit {
                out.entry(round + hold).or_default().push((permit, failed));
            }
        }
    }
    c.openings = breaker.map_or(0, |breaker| breaker.counts.openings);
    c.fault_slot_rounds = before_fault.map_or(0, |before| c.event_slot_rounds - before);
    c
}

#[test]
fn realistic_timing_on_the_breaker_counts_as_the_reference_model_does() {
    let rules = [
        Rule::Consecutive { failures: 2 },
        Rule::Consecutive { failures: 3 },
        Rule::Consecutive { failures: 5 },
        Rule::Rate {
            threshold: 0.1,
            window: 10,
        },
        Rule::Rate {
            threshold: 0.1,
            window: 20,
        },
        Rule::Rate {
            threshold: 0.5,
            window: 20,
        },
        Rule::Rate {
            threshold: 0.3,
            window: 50,
        },
    ];
    let conditions = Conditions {
        timing: Timing::Realistic,
        ..Conditions::LESSON
    };
    let mut differences = Vec::new();
    for seed in [20_260_731, 42] {
        for rule in rules {
            for open_rounds in [50, 200] {
                for mode in Mode::ALL {
                    let scenario = Scenario {
                        seed,
                        open_rounds,
                        ..Scenario::lesson(mode, rule)
                    };
                    let ours = model::simulate(&scenario, &conditions, &mut ()).expect("valid");
                    let reference = reference_run(&scenario);
                    if ours != reference {
                        differences.push(format!(
                            "{scenario:?}\n  breaker:   {ours:?}\n  reference: {reference:?}"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} runs differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
