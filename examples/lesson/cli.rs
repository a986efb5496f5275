//! Flag parsing: a pure function from the arguments to what to do, or a one-line complaint
//! naming the flag.

use hotbreaker::{MAX_CONSECUTIVE, MAX_WINDOW};

use crate::model::{Mode, Rule, Scenario};

/// The `--help` text.
pub fn usage() -> String {
    format!(
        "\
usage: lesson [--json]
       lesson [--json] --mode MODE --rule RULE [--open-rounds N] [--seed N] [--slots N]
              [--rounds N] [--fault-at N]

Without --mode and --rule: the lesson's two tables and summary lines (with --json: its 20 runs,
one JSON object per line). With them: that one run.

  --mode MODE        healthy, partial, slowdown or halt
  --rule RULE        none (no breaker), consecutive:K (open after K failures in a row,
                     K from 1 to {MAX_CONSECUTIVE}) or rate:T/W (open when a share T in (0, 1] of
                     the last W calls failed, W from 1 to {MAX_WINDOW})
  --open-rounds N    rounds the breaker stays open, 1 to {MAX_ROUNDS} (default 100;
                     100 rounds = 1 s)
  --seed N           0 to {MAX_SEED}, the largest integer the lesson's model holds exactly
                     (default 20260731)
  --slots N          1 to {MAX_SLOTS} (default 32)
  --rounds N         1 to {MAX_ROUNDS} (default 1200)
  --fault-at N       the fault's first round, 0 to {MAX_ROUNDS} (default 200)
  --json             one JSON object per run instead of tables
  -h, --help         this text
"
    )
}

/// Round counts stay small enough for the breaker's clock (10 ms a round) to hold their sum.
const MAX_ROUNDS: u64 = 1_000_000_000;
const MAX_SLOTS: u64 = 1_000_000;
/// 2^53 - 1: beyond it the lesson's model, in JavaScript numbers, no longer holds the seed.
const MAX_SEED: u64 = (1 << 53) - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Tables,
    Json,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Help,
    /// The lesson's own runs.
    Lesson(Output),
    /// One scenario.
    Single(Scenario, Output),
}

/// The flags given so far, each at most once.
#[derive(Default)]
struct Given {
    json: bool,
    mode: Option<Mode>,
    rule: Option<Rule>,
    open_rounds: Option<u64>,
    seed: Option<u64>,
    slots: Option<u64>,
    rounds: Option<u64>,
    fault_at: Option<u64>,
}

/// Parses the arguments after the program name. Flags take their value as the next argument or
/// after `=` (`--seed 7`, `--seed=7`).
///
/// # Errors
/// A one-line message naming the offending flag.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Command, String> {
    let mut given = Given::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline_value) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_string(), Some(value)),
            _ => (arg.clone(), None),
        };
        let mut value = || match inline_value {
            Some(value) => Ok(value.to_string()),
            None => match args.next() {
                Some(next) if !next.starts_with("--") => Ok(next),
                _ => Err(format!("{flag} needs a value")),
            },
        };
        match flag.as_str() {
            "-h" | "--help" if inline_value.is_none() => return Ok(Command::Help),
            "--json" if inline_value.is_none() => {
                if given.json {
                    return Err(twice(&flag));
                }
                given.json = true;
            }
            "--help" | "--json" => return Err(format!("{flag} takes no value")),
            "--mode" => set_once(&mut given.mode, &flag, parse_mode(&flag, &value()?)?)?,
            "--rule" => set_once(&mut given.rule, &flag, parse_rule(&flag, &value()?)?)?,
            "--open-rounds" => {
                let rounds = parse_count(&flag, &value()?, 1, MAX_ROUNDS)?;
                set_once(&mut given.open_rounds, &flag, rounds)?;
            }
            "--seed" => {
                let seed = parse_count(&flag, &value()?, 0, MAX_SEED)?;
                set_once(&mut given.seed, &flag, seed)?;
            }
            "--slots" => {
                let slots = parse_count(&flag, &value()?, 1, MAX_SLOTS)?;
                set_once(&mut given.slots, &flag, slots)?;
            }
            "--rounds" => {
                let rounds = parse_count(&flag, &value()?, 1, MAX_ROUNDS)?;
                set_once(&mut given.rounds, &flag, rounds)?;
            }
            "--fault-at" => {
                let round = parse_count(&flag, &value()?, 0, MAX_ROUNDS)?;
                set_once(&mut given.fault_at, &flag, round)?;
            }
            _ if flag.starts_with('-') => return Err(format!("unknown flag {flag} (see --help)")),
            _ => {
                return Err(format!(
                    "unexpected argument `{arg}`: every value follows its flag"
                ));
            }
        }
    }
    command(given)
}

fn command(given: Given) -> Result<Command, String> {
    let output = if given.json {
        Output::Json
    } else {
        Output::Tables
    };
    let (mode, rule) = match (given.mode, given.rule) {
        (Some(mode), Some(rule)) => (mode, rule),
        (Some(_), None) => return Err("--mode needs --rule too (none, for no breaker)".into()),
        (None, Some(_)) => return Err("--rule needs --mode too".into()),
        (None, None) => {
            let scenario_flags = [
                ("--open-rounds", given.open_rounds),
                ("--seed", given.seed),
                ("--slots", given.slots),
                ("--rounds", given.rounds),
                ("--fault-at", given.fault_at),
            ];
            return match scenario_flags.iter().find(|(_, value)| value.is_some()) {
                Some((flag, _)) => Err(format!(
                    "{flag} sets up a single run: give --mode and --rule too"
                )),
                None => Ok(Command::Lesson(output)),
            };
        }
    };
    let lesson = Scenario::lesson(mode, rule);
    let scenario = Scenario {
        open_rounds: given.open_rounds.unwrap_or(lesson.open_rounds),
        seed: given.seed.unwrap_or(lesson.seed),
        // At most MAX_SLOTS, so it fits any usize.
        slots: given.slots.map_or(lesson.slots, |slots| slots as usize),
        rounds: given.rounds.unwrap_or(lesson.rounds),
        fault_at: given.fault_at.unwrap_or(lesson.fault_at),
        ..lesson
    };
    Ok(Command::Single(scenario, output))
}

fn twice(flag: &str) -> String {
    format!("{flag} is given twice")
}

fn set_once<T>(slot: &mut Option<T>, flag: &str, value: T) -> Result<(), String> {
    if slot.is_some() {
        return Err(twice(flag));
    }
    *slot = Some(value);
    Ok(())
}

fn parse_count(flag: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(count) if (min..=max).contains(&count) => Ok(count),
        _ => Err(format!(
            "{flag} `{text}`: expected a whole number from {min} to {max}"
        )),
    }
}

fn parse_mode(flag: &str, text: &str) -> Result<Mode, String> {
    Mode::from_name(text)
        .ok_or_else(|| format!("{flag} `{text}`: expected one of healthy, partial, slowdown, halt"))
}

fn parse_rule(flag: &str, text: &str) -> Result<Rule, String> {
    let bad = |why: String| format!("{flag} `{text}`: {why}");
    // The breaker's own limits, so that every rule the flags take builds.
    let whole = |text: &str, max: u32| {
        text.parse::<usize>()
            .ok()
            .filter(|count| (1..=max as usize).contains(count))
    };
    if text == "none" {
        return Ok(Rule::None);
    }
    if let Some(failures) = text.strip_prefix("consecutive:") {
        let failures = whole(failures, MAX_CONSECUTIVE).ok_or_else(|| {
            bad(format!(
                "K in consecutive:K must be a whole number from 1 to {MAX_CONSECUTIVE}"
            ))
        })?;
        return Ok(Rule::Consecutive { failures });
    }
    if let Some(rate) = text.strip_prefix("rate:") {
        let (threshold, window) = rate
            .split_once('/')
            .ok_or_else(|| bad("expected rate:T/W, e.g. rate:0.5/20".to_string()))?;
        let threshold = threshold
            .parse::<f64>()
            .ok()
            .filter(|threshold| *threshold > 0.0 && *threshold <= 1.0)
            .ok_or_else(|| bad("T in rate:T/W must be a number above 0 and at most 1".into()))?;
        let window = whole(window, MAX_WINDOW).ok_or_else(|| {
            bad(format!(
                "W in rate:T/W must be a whole number from 1 to {MAX_WINDOW}"
            ))
        })?;
        return Ok(Rule::Rate { threshold, window });
    }
    Err(bad("expected none, consecutive:K or rate:T/W".to_string()))
}
