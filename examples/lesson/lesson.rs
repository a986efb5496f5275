//! The lesson's own experiment: which runs make up its two tables and its sensitivity line.

use hotbreaker::ConfigError;

use crate::model::{self, Mode, Rule, RunCounts, Scenario};

/// The rule the lesson picks: open when half of the last 20 calls failed.
pub const CHOSEN_THRESHOLD: f64 = 0.5;
pub const CHOSEN_WINDOW: usize = 20;
pub const CHOSEN_RULE: Rule = Rule::Rate {
    threshold: CHOSEN_THRESHOLD,
    window: CHOSEN_WINDOW,
};

/// The three rules the second table compares, in its order; the last one is the strict rule
/// whose false openings the sensitivity line prices.
pub const COMPARED_RULES: [Rule; 3] = [Rule::Consecutive { failures: 5 }, CHOSEN_RULE, STRICT_RULE];

/// The strict rule: open when a tenth of the last 20 calls failed.
pub const STRICT_THRESHOLD: f64 = 0.1;
pub const STRICT_RULE: Rule = Rule::Rate {
    threshold: STRICT_THRESHOLD,
    window: CHOSEN_WINDOW,
};

/// The longer open duration the sensitivity line tries instead of the lesson's 100 rounds.
pub const LONGER_OPEN_ROUNDS: u64 = 200;

/// The parameters every lesson run shares (the mode and rule aside).
pub fn baseline() -> Scenario {
    Scenario::lesson(Mode::Healthy, CHOSEN_RULE)
}

/// Table 1: every mode without a breaker, then with the chosen rule.
pub fn breaker_comparison() -> impl Iterator<Item = Scenario> {
    Mode::ALL
        .into_iter()
        .flat_map(|mode| [Rule::None, CHOSEN_RULE].map(|rule| Scenario::lesson(mode, rule)))
}

/// Table 2: every compared rule in every mode.
pub fn rule_comparison() -> impl Iterator<Item = Scenario> {
    COMPARED_RULES
        .into_iter()
        .flat_map(|rule| Mode::ALL.map(|mode| Scenario::lesson(mode, rule)))
}

/// The lesson's 20 table runs, in its order.
pub fn table_runs() -> impl Iterator<Item = Scenario> {
    breaker_comparison().chain(rule_comparison())
}

pub struct Run {
    pub scenario: Scenario,
    pub counts: RunCounts,
}

fn run_all(scenarios: impl Iterator<Item = Scenario>) -> Result<Vec<Run>, ConfigError> {
    scenarios
        .map(|scenario| {
            let counts = model::run(&scenario)?;
            Ok(Run { scenario, counts })
        })
        .collect()
}

/// Every run the lesson prints, done.
pub struct Lesson {
    pub breaker_comparison: Vec<Run>,
    pub rule_comparison: Vec<Run>,
    /// The chosen rule in the slowdown, open for the longer duration.
    pub slowdown_open_longer: RunCounts,
    /// The strict rule on a fault-free day, open for the lesson's duration, then the longer one.
    pub strict_healthy: RunCounts,
    pub strict_healthy_open_longer: RunCounts,
}

impl Lesson {
    /// # Errors
    /// When the breaker refuses one of the lesson's rules.
    pub fn run() -> Result<Lesson, ConfigError> {
        let open_longer = |scenario: Scenario| Scenario {
            open_rounds: LONGER_OPEN_ROUNDS,
            ..scenario
        };
        let strict_healthy = Scenario::lesson(Mode::Healthy, STRICT_RULE);
        Ok(Lesson {
            breaker_comparison: run_all(breaker_comparison())?,
            rule_comparison: run_all(rule_comparison())?,
            slowdown_open_longer: model::run(&open_longer(Scenario::lesson(
                Mode::Slowdown,
                CHOSEN_RULE,
            )))?,
            strict_healthy: model::run(&strict_healthy)?,
            strict_healthy_open_longer: model::run(&open_longer(strict_healthy))?,
        })
    }

    /// The first table's run of `mode` without a breaker.
    pub fn without_breaker(&self, mode: Mode) -> &RunCounts {
        self.first_table_run(mode, Rule::None)
    }

    /// The first table's run of `mode` with the chosen rule.
    pub fn with_breaker(&self, mode: Mode) -> &RunCounts {
        self.first_table_run(mode, CHOSEN_RULE)
    }

    fn first_table_run(&self, mode: Mode, rule: Rule) -> &RunCounts {
        self.breaker_comparison
            .iter()
            .find(|run| run.scenario.mode == mode && run.scenario.rule == rule)
            .map(|run| &run.counts)
            .expect("the first table runs every mode with and without the breaker")
    }
}
