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
    let args = match cli::utf8_arguments(std::env::args_os().skip(1).collect()) {
        Ok(args) => args,
        Err(message) => return fail(message),
    };
    let text = match cli::parse(args).and_then(execute::execute) {
        Ok(text) => text,
        Err(message) => return fail(message),
    };
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error worth a message.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: writing the output: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Bad flags and values: one line naming the flag, exit code 2.
fn fail(message: String) -> ExitCode {
    eprintln!("error: {}", cli::one_line(&message));
    ExitCode::from(2)
}
