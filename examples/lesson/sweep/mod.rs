//! The lesson as a rule advisor: every rule of a grid in the four failure modes, what each
//! costs on the days it should stay closed and on the days it should open, the rules no other
//! beats on both costs, and the one to pick.

pub mod figures;
pub mod frontier;
pub mod grid;
mod json;
mod progress;
pub mod recommend;
mod table;

pub use figures::{ModeRuns, RuleFigures};
pub use grid::{Candidate, grid};
pub use json::json_lines;
pub use progress::Progress;
pub use table::report;

use frontier::pareto_frontier;
use recommend::recommend;

use hotbreaker::ConfigError;
use rayon::prelude::*;

use crate::model::{self, Conditions, Mode, Rule, RunCounts, Scenario};

/// A finished sweep.
pub struct Sweep {
    /// The scenario every run shares but for mode, rule and open duration.
    pub base: Scenario,
    pub conditions: Conditions,
    /// The runs without a breaker the rules are measured against.
    pub without_breaker: ModeRuns,
    /// One row per candidate, in the grid's order.
    pub rules: Vec<RuleFigures>,
    /// Whether each row is on the Pareto frontier of (false-opening cost, detection cost).
    pub frontier: Vec<bool>,
    /// The index of the recommended row.
    pub recommended: Option<usize>,
}

/// The modes of a `ModeRuns`, in its order.
const MODES: [Mode; 4] = [Mode::Healthy, Mode::Partial, Mode::Slowdown, Mode::Halt];

/// Runs every candidate in every mode, and the four modes without a breaker, under
/// `conditions`; `base` gives the seed, pool, length and fault start.
///
/// The runs are independent and spread over the cores.
///
/// # Errors
/// When the breaker refuses a candidate.
pub fn run(
    base: &Scenario,
    conditions: &Conditions,
    candidates: &[Candidate],
    progress: &Progress,
) -> Result<Sweep, ConfigError> {
    let settings = std::iter::once((Rule::None, base.open_rounds))
        .chain(candidates.iter().map(|c| (c.rule, c.open_rounds)));
    let scenarios: Vec<Scenario> = settings
        .flat_map(|(rule, open_rounds)| {
            MODES.map(|mode| Scenario {
                mode,
                rule,
                open_rounds,
                ..*base
            })
        })
        .collect();
    let counts = scenarios
        .par_iter()
        .map(|scenario| {
            let counts = model::simulate(scenario, conditions, &mut ());
            progress.run_done();
            counts
        })
        .collect::<Result<Vec<RunCounts>, ConfigError>>();
    progress.finish();
    let counts = counts?;

    let mut by_setting = counts.chunks_exact(MODES.len()).map(|runs| ModeRuns {
        healthy: runs[0],
        partial: runs[1],
        slowdown: runs[2],
        halt: runs[3],
    });
    let without_breaker = by_setting
        .next()
        .expect("the runs without a breaker come first");
    let rules: Vec<RuleFigures> = candidates
        .iter()
        .zip(by_setting)
        .map(|(&candidate, with)| RuleFigures::new(candidate, &with, &without_breaker))
        .collect();
    let costs: Vec<[i64; 2]> = rules.iter().map(RuleFigures::costs).collect();
    let frontier = pareto_frontier(&costs);
    let recommended = recommend(&rules, &frontier);
    Ok(Sweep {
        base: *base,
        conditions: *conditions,
        without_breaker,
        rules,
        frontier,
        recommended,
    })
}
