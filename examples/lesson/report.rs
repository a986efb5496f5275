//! The lesson's tables and summary lines, in English, and the one-row table of a single run.

use std::fmt::Write;

use crate::lesson::{self, Lesson};
use crate::model::{
    Conditions, Detection, Mode, ROUNDS_PER_SECOND, Rule, RunCounts, Scenario, Timing,
};

const LABEL_WIDTH: usize = 24;
const COLUMN_WIDTH: usize = 18;
const COMPARISON_COLUMNS: [&str; 7] = [
    "tracking ok",
    "tracking no slot",
    "event ok",
    "event rejected",
    "event failed",
    "calls made",
    "event slot-rounds",
];

/// The fault the lesson scales its gains to: 10 minutes.
const SCALED_FAULT_SECONDS: f64 = 600.0;

/// The whole lesson report: header, first table, its four summary lines, second table and the
/// sensitivity line.
pub fn lesson(lesson: &Lesson) -> String {
    let mut out = String::new();
    header(&mut out);
    out.push('\n');
    breaker_comparison(&mut out, lesson);
    out.push('\n');
    summary(&mut out, lesson);
    out.push('\n');
    rule_comparison(&mut out, lesson);
    sensitivity(&mut out, lesson);
    out
}

fn header(out: &mut String) {
    let base = lesson::baseline();
    let _ = writeln!(
        out,
        "model: {} rounds ({} s), fault at round {}, {} slots; chosen rule: open if, of the last \
         {} calls, a share of {} failed; stay open {} rounds",
        base.rounds,
        base.rounds as f64 / ROUNDS_PER_SECOND,
        base.fault_at,
        base.slots,
        lesson::CHOSEN_WINDOW,
        lesson::CHOSEN_THRESHOLD,
        base.open_rounds,
    );
}

fn breaker_comparison(out: &mut String, lesson: &Lesson) {
    let _ = write!(out, "{:<LABEL_WIDTH$}", "run");
    for column in COMPARISON_COLUMNS {
        let _ = write!(out, "{column:>COLUMN_WIDTH$}");
    }
    out.push('\n');
    for run in &lesson.breaker_comparison {
        let breaker = if run.scenario.rule == Rule::None {
            "no breaker"
        } else {
            "with breaker"
        };
        let label = format!("{}, {breaker}", run.scenario.mode.name());
        let _ = write!(out, "{label:<LABEL_WIDTH$}");
        for figure in comparison_figures(&run.counts) {
            let _ = write!(out, "{figure:>COLUMN_WIDTH$}");
        }
        out.push('\n');
    }
}

/// The figures under `COMPARISON_COLUMNS`.
fn comparison_figures(counts: &RunCounts) -> [u64; 7] {
    [
        counts.tracking_ok,
        counts.tracking_no_slot,
        counts.event_ok,
        counts.event_rejected,
        counts.event_failed,
        counts.calls,
        counts.event_slot_rounds,
    ]
}

/// `before - after`, signed: a count that went up shows as a negative drop.
fn drop_between(before: u64, after: u64) -> i64 {
    before as i64 - after as i64
}

fn summary(out: &mut String, lesson: &Lesson) {
    let healthy = lesson.with_breaker(Mode::Healthy);
    let (partial_without, partial_with) = (
        lesson.without_breaker(Mode::Partial),
        lesson.with_breaker(Mode::Partial),
    );
    let (slowdown_without, slowdown_with) = (
        lesson.without_breaker(Mode::Slowdown),
        lesson.with_breaker(Mode::Slowdown),
    );
    let (halt_without, halt_with) = (
        lesson.without_breaker(Mode::Halt),
        lesson.with_breaker(Mode::Halt),
    );

    let _ = writeln!(
        out,
        "cost on a fault-free day: the breaker is consulted on all {} calls and keeps a {}-entry \
         window; {} false openings, {} valid events rejected; in the partial fault {} openings and \
         event ok {} -> {} ({} events that could have succeeded were rejected)",
        healthy.calls,
        lesson::CHOSEN_WINDOW,
        healthy.openings,
        healthy.event_rejected,
        partial_with.openings,
        partial_without.event_ok,
        partial_with.event_ok,
        drop_between(partial_without.event_ok, partial_with.event_ok),
    );

    // Same arithmetic, in the same order, as the lesson: percent of the slot-rounds saved.
    let slot_rounds_saved = 100.0
        * drop_between(
            slowdown_without.event_slot_rounds,
            slowdown_with.event_slot_rounds,
        ) as f64
        / slowdown_without.event_slot_rounds as f64;
    let _ = writeln!(
        out,
        "gain on a faulty day (slowdown): tracking no slot {} -> {}, event slot-rounds {} -> {} \
         ({slot_rounds_saved:.2}% less), calls to the broken dependency {} -> {}",
        slowdown_without.tracking_no_slot,
        slowdown_with.tracking_no_slot,
        slowdown_without.event_slot_rounds,
        slowdown_with.event_slot_rounds,
        slowdown_without.calls,
        slowdown_with.calls,
    );

    let _ = writeln!(
        out,
        "the same gain in the halt: tracking no slot {} -> {}, event slot-rounds {} -> {}, calls \
         {} -> {}",
        halt_without.tracking_no_slot,
        halt_with.tracking_no_slot,
        halt_without.event_slot_rounds,
        halt_with.event_slot_rounds,
        halt_without.calls,
        halt_with.calls,
    );

    // Whole numbers here; were one to end in .5, Rust would round it to even where the lesson's
    // `toFixed` rounds up.
    let base = lesson::baseline();
    let scale = SCALED_FAULT_SECONDS * ROUNDS_PER_SECOND / (base.rounds - base.fault_at) as f64;
    let calls_saved = drop_between(slowdown_without.calls, slowdown_with.calls) as f64 * scale;
    let tracking_rescued = drop_between(
        slowdown_without.tracking_no_slot,
        slowdown_with.tracking_no_slot,
    ) as f64
        * scale;
    let _ = writeln!(
        out,
        "scaled to a {}-minute fault: calls saved in the slowdown {calls_saved:.0}, tracking \
         requests rescued {tracking_rescued:.0}",
        SCALED_FAULT_SECONDS / 60.0,
    );
}

fn rule_comparison(out: &mut String, lesson: &Lesson) {
    let _ = writeln!(
        out,
        "{:<18}{:<11}{:>16}{:>26}{:>10}{:>23}",
        "rule",
        "mode",
        "detection round",
        "slot-rounds to detection",
        "openings",
        "valid events rejected",
    );
    let partial_without = lesson.without_breaker(Mode::Partial);
    for run in &lesson.rule_comparison {
        let counts = &run.counts;
        let detection = |field: fn(&Detection) -> u64| {
            counts
                .detection
                .as_ref()
                .map_or_else(|| "-".to_string(), |detection| field(detection).to_string())
        };
        // Valid events lost to false openings: rejections on a healthy day, and successes the
        // partial fault would have had without the breaker.
        let lost = match run.scenario.mode {
            Mode::Healthy => counts.event_rejected.to_string(),
            Mode::Partial => drop_between(partial_without.event_ok, counts.event_ok).to_string(),
            Mode::Slowdown | Mode::Halt => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<18}{:<11}{:>16}{:>26}{:>10}{:>23}",
            rule_label(run.scenario.rule),
            run.scenario.mode.name(),
            detection(|detection| detection.round),
            detection(|detection| detection.slot_rounds),
            counts.openings,
            lost,
        );
    }
}

/// The rule as the second table names it.
fn rule_label(rule: Rule) -> String {
    match rule {
        Rule::None => "none".to_string(),
        Rule::Consecutive { failures } => format!("consecutive {failures}"),
        Rule::Rate { threshold, window } => format!("rate {threshold:.2} / {window}"),
    }
}

fn sensitivity(out: &mut String, lesson: &Lesson) {
    let _ = writeln!(
        out,
        "sensitivity: open duration {} -> {} rounds: calls made in the slowdown {} -> {}; under \
         the {:.2} rate rule, valid events rejected on a fault-free day {} -> {}",
        lesson::baseline().open_rounds,
        lesson::LONGER_OPEN_ROUNDS,
        lesson.with_breaker(Mode::Slowdown).calls,
        lesson.slowdown_open_longer.calls,
        lesson::STRICT_THRESHOLD,
        lesson.strict_healthy.event_rejected,
        lesson.strict_healthy_open_longer.event_rejected,
    );
}

/// One run as a header and a single row holding every count.
pub fn single_run(scenario: &Scenario, counts: &RunCounts) -> String {
    let label = format!("{}, {}", scenario.mode.name(), scenario.rule);
    let label_width = label.len().max(LABEL_WIDTH) + 1;
    let detection = counts
        .detection
        .map_or(["-".to_string(), "-".to_string()], |detection| {
            [
                detection.round.to_string(),
                detection.slot_rounds.to_string(),
            ]
        });
    let columns = COMPARISON_COLUMNS
        .into_iter()
        .zip(comparison_figures(counts).map(|figure| figure.to_string()))
        .chain([
            ("event no slot", counts.event_no_slot.to_string()),
            ("openings", counts.openings.to_string()),
        ])
        .chain(
            ["detection round", "slot-rounds to detection"]
                .into_iter()
                .zip(detection),
        );

    let (mut header, mut row) = (
        format!("{:<label_width$}", "run"),
        format!("{label:<label_width$}"),
    );
    for (name, cell) in columns {
        let width = COLUMN_WIDTH.max(name.len() + 2);
        let _ = write!(header, "{name:>width$}");
        let _ = write!(row, "{cell:>width$}");
    }
    format!("{header}\n{row}\n")
}

/// A run under conditions of the user's own: a line saying what they are, then the one-row
/// table.
pub fn custom_run(scenario: &Scenario, conditions: &Conditions, counts: &RunCounts) -> String {
    let traffic = &conditions.traffic;
    let fault = conditions.fault.apply(scenario.mode.behaviour());
    let timing = match conditions.timing {
        Timing::Lesson => "lesson timing (the breaker hears a verdict as the call starts)",
        Timing::Realistic => "realistic timing (the breaker hears a verdict as the call ends)",
    };
    // The healthy mode behaves the same from the first round; the others from the fault on.
    let from = match scenario.mode {
        Mode::Healthy => "throughout".to_string(),
        _ => format!("from round {}", scenario.fault_at),
    };
    format!(
        "conditions: {timing}; tracking queries {}/s holding {} rounds, status events {}/s; \
         {from}: a call fails with probability {}, holding {} rounds if it succeeds and {} if \
         it fails\n{}",
        traffic.tracking_per_second,
        traffic.tracking_hold,
        traffic.event_per_second,
        fault.failure_probability,
        fault.success_hold,
        fault.failure_hold,
        single_run(scenario, counts),
    )
}
