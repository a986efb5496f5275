//! The lesson's seeded breaker simulation, run on the real `hotbreaker::Breaker`.
//!
//! `cargo run --release --example lesson` prints the lesson's two tables; `--help` lists the
//! flags for JSON output, single runs, your own traffic, plots and the rule sweep.

mod cli;
mod execute;
mod json;
mod lesson;
mod model;
mod plot;
mod report;
mod sweep;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.into_string())
        .collect();
    let Ok(args) = args else {
        return fail("an argument is not valid UTF-8".to_string());
    };
    let text = match cli::parse(args).and_then(execute::execute) {
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
