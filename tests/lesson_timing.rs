//! Realistic timing: the breaker hears a verdict when the call ends, not when it starts. Slow
//! failures then reach it later, and a slowdown costs more before it is caught.

#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/model/mod.rs"]
mod model;

use hotbreaker::State;
use model::{Conditions, Mode, Observer, Rule, RunCounts, Scenario, Timing};

fn simulate(scenario: &Scenario, timing: Timing) -> RunCounts {
    simulate_watching(scenario, timing, &mut ())
}

fn simulate_watching(
    scenario: &Scenario,
    timing: Timing,
    observer: &mut impl Observer,
) -> RunCounts {
    let conditions = Conditions {
        timing,
        ..Conditions::LESSON
    };
    model::simulate(scenario, &conditions, observer).expect("the breaker takes every rule here")
}

fn rate(threshold: f64, window: usize) -> Rule {
    Rule::Rate { threshold, window }
}

/// Rules whose breaker is closed when the fault starts (no false opening carries over), so that
/// their detection times only the fault.
const CLOSED_AT_THE_FAULT: [Rule; 5] = [
    Rule::Consecutive { failures: 3 },
    Rule::Consecutive { failures: 5 },
    Rule::Rate {
        threshold: 0.3,
        window: 10,
    },
    Rule::Rate {
        threshold: 0.5,
        window: 20,
    },
    Rule::Rate {
        threshold: 0.5,
        window: 50,
    },
];

#[test]
fn realistic_timing_detects_the_slowdown_later_and_at_a_higher_cost() {
    for rule in CLOSED_AT_THE_FAULT {
        let scenario = Scenario::lesson(Mode::Slowdown, rule);
        let lesson = simulate(&scenario, Timing::Lesson)
            .detection
            .expect("caught");
        let realistic = simulate(&scenario, Timing::Realistic)
            .detection
            .expect("caught");
        assert!(
            realistic.round > lesson.round,
            "{rule}: detected in round {} realistically, {} in the lesson's timing",
            realistic.round,
            lesson.round
        );
        assert!(
            realistic.slot_rounds > lesson.slot_rounds,
            "{rule}: {} slot-rounds to detection realistically, {} in the lesson's timing",
            realistic.slot_rounds,
            lesson.slot_rounds
        );
        // A failure takes as long as its hold to report: the first can reach the breaker no
        // sooner than that after the fault.
        let hold = 22;
        assert!(realistic.round >= hold, "{rule}: round {}", realistic.round);
    }
}

#[test]
fn the_strict_rule_is_caught_later_too_though_it_was_open_at_the_fault() {
    // rate 0.1/20 opened falsely before the fault: its detection is the first opening after
    // the fault, which waits for a probe's verdict.
    let scenario = Scenario::lesson(Mode::Slowdown, rate(0.1, 20));
    let lesson = simulate(&scenario, Timing::Lesson)
        .detection
        .expect("caught");
    let realistic = simulate(&scenario, Timing::Realistic)
        .detection
        .expect("caught");
    assert!(realistic.round > lesson.round);
    assert!(realistic.slot_rounds >= lesson.slot_rounds);
}

#[test]
fn without_a_breaker_timing_changes_nothing() {
    for mode in Mode::ALL {
        let scenario = Scenario::lesson(mode, Rule::None);
        assert_eq!(
            simulate(&scenario, Timing::Realistic),
            simulate(&scenario, Timing::Lesson),
            "{}",
            mode.name()
        );
    }
}

#[test]
fn a_breaker_that_never_opens_sees_the_same_day_in_either_timing() {
    for mode in [Mode::Healthy, Mode::Partial] {
        let scenario = Scenario::lesson(mode, rate(0.5, 20));
        let lesson = simulate(&scenario, Timing::Lesson);
        assert_eq!(lesson.openings, 0);
        assert_eq!(simulate(&scenario, Timing::Realistic), lesson);
    }
}

/// The breaker's state at the end of every round.
#[derive(Default)]
struct States(Vec<Option<State>>);

impl Observer for States {
    fn round_end(&mut self, _round: u64, state: Option<State>) {
        self.0.push(state);
    }
}

/// Lengths of the maximal stretches of half-open round ends, except one cut off by the run's
/// end.
fn half_open_stretches(states: &[Option<State>]) -> Vec<usize> {
    let mut stretches = Vec::new();
    let mut current = 0;
    for state in states {
        if *state == Some(State::HalfOpen) {
            current += 1;
        } else if current > 0 {
            stretches.push(current);
            current = 0;
        }
    }
    stretches
}

#[test]
fn realistic_half_open_lasts_as_long_as_the_probe_is_out() {
    let scenario = Scenario::lesson(Mode::Slowdown, rate(0.5, 20));
    let mut realistic = States::default();
    let counts = simulate_watching(&scenario, Timing::Realistic, &mut realistic);
    let stretches = half_open_stretches(&realistic.0);
    // Every reopening but the first came from a failed probe, each after its stretch.
    assert_eq!(stretches.len() as u64, counts.openings - 1);
    for stretch in &stretches {
        // The probe holds its slot 22 rounds; meanwhile other events are turned away.
        assert!(*stretch >= 22, "a half-open stretch of {stretch} rounds");
    }

    let mut lesson = States::default();
    simulate_watching(&scenario, Timing::Lesson, &mut lesson);
    let lesson_half_open = lesson
        .0
        .iter()
        .filter(|s| **s == Some(State::HalfOpen))
        .count();
    let stretch_total: usize = stretches.iter().sum();
    assert!(
        lesson_half_open < stretch_total,
        "the lesson's probes report at once: {lesson_half_open} half-open round ends, \
         {stretch_total} realistically"
    );
}
