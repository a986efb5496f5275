//! Doing what the flags asked: the text to print, or a one-line complaint naming a flag.

use crate::cli::{self, Command, Output};
use crate::{json, lesson, model, plot, report, sweep};

/// # Errors
/// A one-line message naming the flag at fault: a rule the breaker refuses, or a plot that
/// cannot be written.
pub fn execute(command: Command) -> Result<String, String> {
    // The flags admit only rules the breaker takes; should it refuse one anyway, say so.
    let refused =
        |error: hotbreaker::ConfigError| format!("--rule: the breaker refuses it: {error}");
    match command {
        Command::Help => Ok(cli::usage()),
        Command::Lesson(Output::Tables) => {
            Ok(report::lesson(&lesson::Lesson::run().map_err(refused)?))
        }
        Command::Lesson(Output::Json) => lesson::table_runs()
            .map(|scenario| {
                let counts = model::run(&scenario).map_err(refused)?;
                Ok(json::run_line(&scenario, &counts) + "\n")
            })
            .collect(),
        Command::Single(scenario, output) => {
            let counts = model::run(&scenario).map_err(refused)?;
            Ok(match output {
                Output::Tables => report::single_run(&scenario, &counts),
                Output::Json => json::run_line(&scenario, &counts) + "\n",
            })
        }
        Command::Custom(custom) => {
            let cli::CustomRun {
                scenario,
                conditions,
                output,
                plot,
            } = *custom;
            let counts = match plot {
                None => model::simulate(&scenario, &conditions, &mut ()).map_err(refused)?,
                Some(path) => {
                    let traced = plot::trace(&scenario, &conditions).map_err(refused)?;
                    plot::write(&path, &plot::svg(&scenario, &conditions, &traced)?)?;
                    traced.with_breaker.1
                }
            };
            // A plot of a lesson run prints the lesson run's report.
            let lesson = conditions.is_lesson();
            Ok(match output {
                Output::Tables if lesson => report::single_run(&scenario, &counts),
                Output::Tables => report::custom_run(&scenario, &conditions, &counts),
                Output::Json if lesson => json::run_line(&scenario, &counts) + "\n",
                Output::Json => json::custom_run_line(&scenario, &conditions, &counts) + "\n",
            })
        }
        Command::Sweep(setup) => {
            let candidates = sweep::grid();
            // Five runs a rule: four modes, and the four runs without a breaker once.
            let runs = (candidates.len() + 1) * 4;
            let progress = sweep::Progress::new(runs as u64);
            let done = sweep::run(&setup.base, &setup.conditions, &candidates, &progress)
                .map_err(refused)?;
            Ok(match setup.output {
                Output::Tables => sweep::report(&done),
                Output::Json => sweep::json_lines(&done),
            })
        }
    }
}
