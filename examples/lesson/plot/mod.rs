//! `--plot`: one scenario drawn round by round, without and with its breaker, so the effect is
//! seen rather than read.

pub mod chart;
pub mod trace;

use std::path::Path;

use hotbreaker::ConfigError;

use crate::model::{self, Conditions, Mode, Rule, RunCounts, Scenario, Timing};

use chart::Panel;
use trace::Trace;

/// A scenario run twice, round by round.
pub struct Traced {
    pub without_breaker: (Trace, RunCounts),
    pub with_breaker: (Trace, RunCounts),
}

/// Runs `scenario` without a breaker and as given.
///
/// # Errors
/// When the breaker refuses the rule.
pub fn trace(scenario: &Scenario, conditions: &Conditions) -> Result<Traced, ConfigError> {
    let traced = |scenario: &Scenario| {
        let mut trace = Trace::new(scenario.rounds as usize);
        model::simulate(scenario, conditions, &mut trace).map(|counts| (trace, counts))
    };
    Ok(Traced {
        without_breaker: traced(&Scenario {
            rule: Rule::None,
            ..*scenario
        })?,
        with_breaker: traced(scenario)?,
    })
}

/// The SVG of both runs, the one without a breaker on top.
///
/// # Errors
/// When plotters fails to draw.
pub fn svg(
    scenario: &Scenario,
    conditions: &Conditions,
    traced: &Traced,
) -> Result<String, String> {
    let mode = scenario.mode.name();
    // Only the run with a breaker depends on when it hears verdicts.
    let timing = match conditions.timing {
        Timing::Lesson => "",
        Timing::Realistic => " in realistic timing",
    };
    let (trace_without, without) = &traced.without_breaker;
    let (trace_with, with) = &traced.with_breaker;
    let panels = [
        Panel {
            title: format!("{mode}, without a breaker"),
            counts: format!(
                "{} calls to the dependency, {} tracking queries found no slot",
                without.calls, without.tracking_no_slot
            ),
            trace: trace_without,
        },
        Panel {
            title: format!(
                "{mode}, with --rule {} --open-rounds {}{timing}",
                scenario.rule, scenario.open_rounds
            ),
            counts: format!(
                "{} calls to the dependency, {} tracking queries found no slot, {} openings, {} \
                 events rejected",
                with.calls, with.tracking_no_slot, with.openings, with.event_rejected
            ),
            trace: trace_with,
        },
    ];
    // The healthy mode has no fault to mark.
    let fault_at = (scenario.mode != Mode::Healthy).then_some(scenario.fault_at);
    chart::draw(&panels, scenario.slots, fault_at)
}

/// Writes the drawing; the error names the flag.
pub fn write(path: &Path, svg: &str) -> Result<(), String> {
    std::fs::write(path, svg)
        .map_err(|error| format!("--plot `{}`: cannot write it: {error}", path.display()))
}
