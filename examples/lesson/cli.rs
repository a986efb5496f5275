//! Flag parsing: a pure function from the arguments to what to do, or a one-line complaint
//! naming the flag.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use hotbreaker::{MAX_CONSECUTIVE, MAX_WINDOW};

use crate::model::fault::FaultOverride;
use crate::model::traffic::Traffic;
use crate::model::{Conditions, Mode, Rule, Scenario, Timing};

/// The `--help` text.
pub fn usage() -> String {
    let lesson = Traffic::LESSON;
    format!(
        "\
usage: lesson [--json]
       lesson [--json] --mode MODE --rule RULE [--open-rounds N] [--seed N] [--slots N]
              [--rounds N] [--fault-at N] [TIMING AND TRAFFIC] [--plot FILE.svg]
       lesson sweep [--json] [--seed N] [--slots N] [--rounds N] [--fault-at N]
              [TIMING AND TRAFFIC]

Without --mode and --rule: the lesson's two tables and summary lines (with --json: its 20 runs,
one JSON object per line). With them: that one run. With sweep: every rule of a grid in all
four modes, what each costs on days it should not open and what it saves on days it should,
the rules on the Pareto frontier of those two costs, and the one recommended.

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
  --fault-at N       the fault's first round, before the last (--rounds; default 200; not
                     with --mode healthy, which has no fault)
  --json             JSON instead of tables, one object per line: each run (for sweep: the
                     setup, each rule, the recommendation)
  --plot FILE.svg    also draw the run, with and without the breaker, round by round: slots
                     held by each flow, tracking queries that found no slot, breaker state
                     (at most {MAX_PLOT_ROUNDS} rounds)
  -h, --help         this text

Timing and traffic (defaults: the lesson's):
  --timing WHEN      lesson: the breaker hears a call's verdict when the call starts, as in
                     the lesson; realistic: when it ends, after holding its slot (default lesson)
  --tracking-rate R  tracking queries (the neighbour flow) per second, 0 to {MAX_RATE}
                     (default {tracking_rate})
  --tracking-hold N  rounds a tracking query holds its slot, 1 to {MAX_ROUNDS} (default {tracking_hold})
  --event-rate R     status events (the flow the breaker guards) per second, above 0 and at
                     most {MAX_RATE} (default {event_rate})
Your own failure, from --fault-at on, in place of the chosen mode's numbers (partial, slowdown
or halt; before the fault the dependency is the lesson's healthy one):
  --fail-p P         the share of calls that fail, 0 to 1 ({fail_p})
  --ok-hold N        rounds a successful call holds its slot, 1 to {MAX_ROUNDS}
                     ({ok_hold})
  --fail-hold N      rounds a failed call holds its slot, 1 to {MAX_ROUNDS}
                     ({fail_hold})
",
        tracking_rate = lesson.tracking_per_second,
        tracking_hold = lesson.tracking_hold,
        event_rate = lesson.event_per_second,
        fail_p = by_fault_mode(|mode| mode.behaviour().failure_probability.to_string()),
        ok_hold = by_fault_mode(|mode| mode.behaviour().success_hold.to_string()),
        fail_hold = by_fault_mode(|mode| mode.behaviour().failure_hold.to_string()),
    )
}

/// `partial X, slowdown Y, halt Z`: a number of each mode a fault flag can change.
fn by_fault_mode(number: impl Fn(Mode) -> String) -> String {
    [Mode::Partial, Mode::Slowdown, Mode::Halt]
        .map(|mode| format!("{} {}", mode.name(), number(mode)))
        .join(", ")
}

/// Round counts stay small enough for the breaker's clock (10 ms a round) to hold their sum.
const MAX_ROUNDS: u64 = 1_000_000_000;
const MAX_SLOTS: u64 = 1_000_000;
/// 2^53 - 1: beyond it the lesson's model, in JavaScript numbers, no longer holds the seed.
const MAX_SEED: u64 = (1 << 53) - 1;
/// A plot draws every round; beyond this many its SVG would be too large to be of use.
const MAX_PLOT_ROUNDS: u64 = 100_000;
/// Requests per second of one flow: 10 000 a round is already far beyond a slot pool's reach.
const MAX_RATE: f64 = 1_000_000.0;

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
    /// One scenario, under the lesson's conditions.
    Single(Scenario, Output),
    /// One scenario under conditions of the user's own, or drawn as well.
    Custom(Box<CustomRun>),
    /// Every rule of the sweep's grid in every mode.
    Sweep(Box<SweepRun>),
}

/// A single run with more to it than the lesson's conditions.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomRun {
    pub scenario: Scenario,
    pub conditions: Conditions,
    pub output: Output,
    /// Where to draw the run with and without the breaker.
    pub plot: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SweepRun {
    /// The lesson's scenario with the user's seed, slots, rounds and fault start; the sweep
    /// sets each run's mode, rule and open duration.
    pub base: Scenario,
    pub conditions: Conditions,
    pub output: Output,
}

/// The flags given so far, each at most once.
#[derive(Default)]
struct Given {
    sweep: bool,
    json: bool,
    mode: Option<Mode>,
    rule: Option<Rule>,
    open_rounds: Option<u64>,
    seed: Option<u64>,
    slots: Option<u64>,
    rounds: Option<u64>,
    fault_at: Option<u64>,
    timing: Option<Timing>,
    tracking_rate: Option<f64>,
    tracking_hold: Option<u64>,
    event_rate: Option<f64>,
    fail_p: Option<f64>,
    ok_hold: Option<u64>,
    fail_hold: Option<u64>,
    plot: Option<PathBuf>,
}

/// Parses the arguments after the program name: `sweep` first if wanted, then flags, which
/// take their value as the next argument or after `=` (`--seed 7`, `--seed=7`).
///
/// # Errors
/// A one-line message naming the offending flag.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Command, String> {
    let mut given = Given::default();
    let mut args = args.into_iter().peekable();
    if args.peek().is_some_and(|first| first == "sweep") {
        args.next();
        given.sweep = true;
    }
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
            "--timing" => set_once(&mut given.timing, &flag, parse_timing(&flag, &value()?)?)?,
            "--tracking-rate" => {
                let rate = parse_rate(&flag, &value()?, RateFloor::Zero)?;
                set_once(&mut given.tracking_rate, &flag, rate)?;
            }
            "--tracking-hold" => {
                let hold = parse_count(&flag, &value()?, 1, MAX_ROUNDS)?;
                set_once(&mut given.tracking_hold, &flag, hold)?;
            }
            "--event-rate" => {
                let rate = parse_rate(&flag, &value()?, RateFloor::AboveZero)?;
                set_once(&mut given.event_rate, &flag, rate)?;
            }
            "--fail-p" => {
                let share = parse_share(&flag, &value()?)?;
                set_once(&mut given.fail_p, &flag, share)?;
            }
            "--ok-hold" => {
                let hold = parse_count(&flag, &value()?, 1, MAX_ROUNDS)?;
                set_once(&mut given.ok_hold, &flag, hold)?;
            }
            "--fail-hold" => {
                let hold = parse_count(&flag, &value()?, 1, MAX_ROUNDS)?;
                set_once(&mut given.fail_hold, &flag, hold)?;
            }
            "--plot" => set_once(&mut given.plot, &flag, parse_svg_path(&flag, &value()?)?)?,
            "sweep" if given.sweep => return Err(twice(&flag)),
            "sweep" => return Err("sweep comes first: lesson sweep [FLAGS]".to_string()),
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
    let conditions = conditions(&given);
    if given.sweep {
        return sweep(given, conditions, output);
    }
    let (mode, rule) = match (given.mode, given.rule) {
        (Some(mode), Some(rule)) => (mode, rule),
        (Some(_), None) => return Err("--mode needs --rule too (none, for no breaker)".into()),
        (None, Some(_)) => return Err("--rule needs --mode too".into()),
        (None, None) => {
            let scenario_flags = [
                ("--open-rounds", given.open_rounds.is_some()),
                ("--seed", given.seed.is_some()),
                ("--slots", given.slots.is_some()),
                ("--rounds", given.rounds.is_some()),
                ("--fault-at", given.fault_at.is_some()),
            ];
            if let Some((flag, _)) = scenario_flags.iter().find(|(_, given)| *given) {
                return Err(format!(
                    "{flag} sets up a single run: give --mode and --rule too"
                ));
            }
            if let Some(flag) = sweepable_flags(&given).first() {
                return Err(format!(
                    "{flag} sets up a run: give --mode and --rule too, or run sweep"
                ));
            }
            if let Some(flag) = single_run_flags(&given).first() {
                return Err(format!(
                    "{flag} sets up a single run: give --mode and --rule too"
                ));
            }
            return Ok(Command::Lesson(output));
        }
    };
    if let (Mode::Healthy, Some(flag)) = (mode, fault_flags(&given).first()) {
        return Err(format!(
            "{flag} changes the fault, and the healthy mode has none: pick partial, slowdown or \
             halt"
        ));
    }
    if mode == Mode::Healthy && given.fault_at.is_some() {
        return Err(
            "--fault-at sets when the fault starts, and the healthy mode has none: pick partial, \
             slowdown or halt"
                .to_string(),
        );
    }
    if given.open_rounds.is_some() && rule == Rule::None {
        return Err(
            "--open-rounds sets how long the breaker stays open, and --rule none has no breaker"
                .to_string(),
        );
    }
    if given.plot.is_some() && rule == Rule::None {
        return Err(
            "--plot draws the run with and without the breaker: give a --rule other than none"
                .to_string(),
        );
    }
    let lesson = Scenario::lesson(mode, rule);
    let scenario = Scenario {
        open_rounds: given.open_rounds.unwrap_or(lesson.open_rounds),
        ..base_scenario(&given, lesson)
    };
    if mode != Mode::Healthy {
        fault_starts_in_the_run(&scenario)?;
    }
    if given.plot.is_some() && scenario.rounds > MAX_PLOT_ROUNDS {
        return Err(format!(
            "--plot draws every round, at most {MAX_PLOT_ROUNDS}: give fewer --rounds"
        ));
    }
    if conditions.is_lesson() && given.plot.is_none() {
        return Ok(Command::Single(scenario, output));
    }
    Ok(Command::Custom(Box::new(CustomRun {
        scenario,
        conditions,
        output,
        plot: given.plot,
    })))
}

/// `lesson sweep`: the grid sets mode, rule and open duration, and draws no single run.
fn sweep(given: Given, conditions: Conditions, output: Output) -> Result<Command, String> {
    let conflicts = [
        (
            given.mode.is_some(),
            "--mode",
            "the sweep runs all four modes",
        ),
        (
            given.rule.is_some(),
            "--rule",
            "the sweep tries its own grid of rules",
        ),
        (
            given.open_rounds.is_some(),
            "--open-rounds",
            "the sweep tries its own open durations",
        ),
        (
            given.plot.is_some(),
            "--plot",
            "it draws one run: give --mode and --rule instead of sweep",
        ),
    ];
    if let Some((_, flag, why)) = conflicts.iter().find(|(given, _, _)| *given) {
        return Err(format!("{flag} does not go with sweep: {why}"));
    }
    if let Some(flag) = fault_flags(&given).first() {
        return Err(format!(
            "{flag} does not go with sweep: it changes one mode, and the sweep needs the \
             lesson's four"
        ));
    }
    let base = base_scenario(&given, Scenario::lesson(Mode::Healthy, Rule::None));
    fault_starts_in_the_run(&base)?;
    Ok(Command::Sweep(Box::new(SweepRun {
        base,
        conditions,
        output,
    })))
}

/// Refuses a fault that would start at or after the run's last round: the run would be
/// reported as a fault day without a fault.
fn fault_starts_in_the_run(scenario: &Scenario) -> Result<(), String> {
    if scenario.fault_at >= scenario.rounds {
        return Err(format!(
            "the fault starts at round {} (--fault-at), not before the run ends (--rounds {}): it \
             would never start",
            scenario.fault_at, scenario.rounds
        ));
    }
    Ok(())
}

/// `lesson` with the seed, pool, length and fault start given.
fn base_scenario(given: &Given, lesson: Scenario) -> Scenario {
    Scenario {
        seed: given.seed.unwrap_or(lesson.seed),
        // At most MAX_SLOTS, so it fits any usize.
        slots: given.slots.map_or(lesson.slots, |slots| slots as usize),
        rounds: given.rounds.unwrap_or(lesson.rounds),
        fault_at: given.fault_at.unwrap_or(lesson.fault_at),
        ..lesson
    }
}

/// The lesson's conditions with whatever the flags change.
fn conditions(given: &Given) -> Conditions {
    let lesson = Conditions::LESSON;
    Conditions {
        traffic: Traffic {
            tracking_per_second: given
                .tracking_rate
                .unwrap_or(lesson.traffic.tracking_per_second),
            tracking_hold: given.tracking_hold.unwrap_or(lesson.traffic.tracking_hold),
            event_per_second: given.event_rate.unwrap_or(lesson.traffic.event_per_second),
        },
        fault: FaultOverride {
            failure_probability: given.fail_p,
            success_hold: given.ok_hold,
            failure_hold: given.fail_hold,
        },
        timing: given.timing.unwrap_or(lesson.timing),
    }
}

/// The flags given that apply to a single run and to a sweep alike.
fn sweepable_flags(given: &Given) -> Vec<&'static str> {
    [
        ("--timing", given.timing.is_some()),
        ("--tracking-rate", given.tracking_rate.is_some()),
        ("--tracking-hold", given.tracking_hold.is_some()),
        ("--event-rate", given.event_rate.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect()
}

/// The flags given that change the chosen mode's fault.
fn fault_flags(given: &Given) -> Vec<&'static str> {
    [
        ("--fail-p", given.fail_p.is_some()),
        ("--ok-hold", given.ok_hold.is_some()),
        ("--fail-hold", given.fail_hold.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect()
}

/// The flags given that only a single run takes, beyond the lesson's own.
fn single_run_flags(given: &Given) -> Vec<&'static str> {
    let mut flags = fault_flags(given);
    if given.plot.is_some() {
        flags.push("--plot");
    }
    flags
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

/// Where a rate's range starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RateFloor {
    Zero,
    AboveZero,
}

/// `text` as a number: `None` if it is not one, or an error naming `flag` if it is too small to
/// tell from 0. `1e-400` reads as 0, and taking it so would turn "fails now and then" into
/// "never fails" without a word.
fn parse_number(flag: &str, text: &str) -> Result<Option<f64>, String> {
    let Ok(number) = text.parse::<f64>() else {
        return Ok(None);
    };
    let digits = text.split(['e', 'E']).next().unwrap_or(text);
    if number == 0.0 && digits.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return Err(format!("{flag} `{text}`: too small to tell from 0"));
    }
    Ok(Some(number))
}

/// Whether the decimal `text` is above the whole number `top`, compared digit by digit: a
/// number just above a range's top can read as the top itself (`1.00000000000000001` reads
/// as 1), and taking it so would pass a value out of range as the top without a word. `false`
/// for text that is not plain digits with an optional point and exponent (a sign, `inf`,
/// `NaN`): the range check decides those.
fn above_whole(text: &str, top: u64) -> bool {
    let text = text.strip_prefix('+').unwrap_or(text);
    let (mantissa, exponent) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let Ok(exponent) = exponent.parse::<i64>() else {
        return false;
    };
    if !whole
        .bytes()
        .chain(fraction.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return false;
    }
    // Both as `0.digits` times ten to the power `point`, the digits without leading zeros.
    let all = format!("{whole}{fraction}");
    let digits = all.trim_start_matches('0');
    if digits.is_empty() {
        return false; // zero
    }
    let leading_zeros = (all.len() - digits.len()) as i64;
    let point = exponent
        .saturating_add(whole.len() as i64)
        .saturating_sub(leading_zeros);
    let top = top.to_string();
    let top_point = top.len() as i64;
    if point != top_point {
        return point > top_point;
    }
    let width = digits.len().max(top.len());
    format!("{digits:0<width$}") > format!("{top:0<width$}")
}

fn parse_rate(flag: &str, text: &str, floor: RateFloor) -> Result<f64, String> {
    let range = match floor {
        RateFloor::Zero => format!("from 0 to {MAX_RATE}"),
        RateFloor::AboveZero => format!("above 0 and at most {MAX_RATE}"),
    };
    match parse_number(flag, text)? {
        // `+ 0.0` reads -0 as the 0 it is, so that it is not echoed back as "-0".
        Some(rate)
            if (0.0..=MAX_RATE).contains(&rate)
                && (floor == RateFloor::Zero || rate != 0.0)
                && !above_whole(text, MAX_RATE as u64) =>
        {
            Ok(rate + 0.0)
        }
        _ => Err(format!(
            "{flag} `{text}`: expected requests per second, a number {range}"
        )),
    }
}

fn parse_share(flag: &str, text: &str) -> Result<f64, String> {
    match parse_number(flag, text)? {
        Some(share) if (0.0..=1.0).contains(&share) && !above_whole(text, 1) => Ok(share + 0.0),
        _ => Err(format!("{flag} `{text}`: expected a number from 0 to 1")),
    }
}

fn parse_timing(flag: &str, text: &str) -> Result<Timing, String> {
    Timing::from_name(text).ok_or_else(|| format!("{flag} `{text}`: expected lesson or realistic"))
}

/// The plot's file: written only after the runs, but its name is checked first.
fn parse_svg_path(flag: &str, text: &str) -> Result<PathBuf, String> {
    let path = Path::new(text);
    let is_svg = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("svg"));
    if !is_svg || path.file_stem().is_none() {
        // `.svg` alone ends in .svg, but is a name without an extension.
        let why = if path
            .file_name()
            .is_some_and(|name| name.eq_ignore_ascii_case(".svg"))
        {
            "expected a name before the .svg"
        } else {
            "expected a file name ending in .svg (the plot is an SVG)"
        };
        return Err(format!("{flag} `{text}`: {why}"));
    }
    Ok(path.to_path_buf())
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
        let threshold = parse_number(flag, threshold)
            .map_err(|_| bad("T in rate:T/W is too small to tell from 0".into()))?
            .filter(|threshold| *threshold > 0.0 && *threshold <= 1.0)
            .filter(|_| !above_whole(threshold, 1))
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

/// The arguments as text; the error says where the one that is not UTF-8 stands.
pub fn utf8_arguments(args: Vec<OsString>) -> Result<Vec<String>, String> {
    let mut text = Vec::with_capacity(args.len());
    for arg in args {
        match arg.into_string() {
            Ok(arg) => text.push(arg),
            Err(arg) => {
                let lossy = arg.to_string_lossy();
                return Err(match text.last() {
                    Some(before) => {
                        format!("the argument after {before}, `{lossy}`, is not valid UTF-8")
                    }
                    None => format!("the first argument, `{lossy}`, is not valid UTF-8"),
                });
            }
        }
    }
    Ok(text)
}

/// `message` with its control characters escaped (a value given with a line break), so that
/// an error stays on one line. Whitespace other than the space is escaped too: U+2028 and
/// U+2029 are not control characters, but log viewers and editors break lines at them.
pub fn one_line(message: &str) -> String {
    let mut line = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() || (c.is_whitespace() && c != ' ') {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    line
}
