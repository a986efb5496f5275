//! The lesson's seeded breaker simulation, run on the real `hotbreaker::Breaker`.
//!
//! `cargo run --release --example lesson` prints the lesson's two tables; `--help` lists the
//! flags for JSON output and for single runs.

mod cli;
mod json;
mod lesson;
mod model;
mod plot;
mod report;
mod sweep;

use std::io::Write;
use std::process::ExitCode;

use cli::{Command, Output};

fn main() -> ExitCode {
    let args: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.into_string())
        .collect();
    let Ok(args) = args else {
        return fail("an argument is not valid UTF-8".to_string());
    };
    let text = match cli::parse(args).and_then(execute) {
        Ok(text) => text,
        Err(message) => return fail(message),
    };
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

/// Bad flags and values: one line naming the flag, exit code 2.
fn fail(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

fn execute(command: Command) -> Result<String, String> {
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
