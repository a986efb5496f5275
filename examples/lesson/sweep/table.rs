//! The sweep as text: what was run, what the costs mean, every rule, the frontier and the
//! recommendation.

use std::fmt::Write;

use crate::model::{Detection, ROUNDS_PER_SECOND, Timing};

use super::Sweep;
use super::figures::{FaultFigures, RuleFigures};
use super::recommend::CRITERION;

/// Lines of prose are wrapped at this width.
const TEXT_WIDTH: usize = 100;

/// A column: its group (the header's first line), its name and its width.
struct Column {
    group: &'static str,
    name: &'static str,
    width: usize,
}

const fn column(group: &'static str, name: &'static str, width: usize) -> Column {
    Column { group, name, width }
}

const COLUMNS: [Column; 17] = [
    column("", "rule", 14),
    column("", "open", 6),
    column("healthy day", "openings", 10),
    column("healthy day", "rejected", 10),
    column("partial day", "openings", 10),
    column("partial day", "lost", 7),
    column("slowdown", "round", 8),
    column("slowdown", "slot-rounds", 13),
    column("slowdown", "saved", 7),
    column("slowdown", "rescued", 9),
    column("halt", "round", 8),
    column("halt", "slot-rounds", 13),
    column("halt", "saved", 7),
    column("halt", "rescued", 9),
    column("cost", "false-opening", 15),
    column("cost", "detection", 11),
    column("", "frontier", 10),
];

/// The whole report.
pub fn report(sweep: &Sweep) -> String {
    let mut out = String::new();
    setup(&mut out, sweep);
    without_breaker(&mut out, sweep);
    out.push('\n');
    definitions(&mut out);
    out.push('\n');
    header(&mut out);
    for (i, rule) in sweep.rules.iter().enumerate() {
        row(&mut out, rule, sweep.frontier[i]);
    }
    out.push('\n');
    frontier(&mut out, sweep);
    out.push('\n');
    recommendation(&mut out, sweep);
    out
}

fn setup(out: &mut String, sweep: &Sweep) {
    let base = &sweep.base;
    let traffic = &sweep.conditions.traffic;
    let timing = match sweep.conditions.timing {
        Timing::Lesson => "lesson timing (the breaker hears a verdict as the call starts)",
        Timing::Realistic => "realistic timing (the breaker hears a verdict as the call ends)",
    };
    wrapped(
        out,
        "",
        &format!(
            "sweep: {} rules, each in the healthy, partial, slowdown and halt modes, measured \
             against the same four runs without a breaker; {timing}; seed {}, {} slots, {} \
             rounds, fault at round {}; tracking queries {}/s holding {} rounds, status events \
             {}/s",
            sweep.rules.len(),
            base.seed,
            base.slots,
            base.rounds,
            base.fault_at,
            traffic.tracking_per_second,
            traffic.tracking_hold,
            traffic.event_per_second,
        ),
    );
}

/// What the rules are measured against.
fn without_breaker(out: &mut String, sweep: &Sweep) {
    let runs = &sweep.without_breaker;
    wrapped(
        out,
        "",
        &format!(
            "without a breaker: {} successful events on the partial day; calls to the \
             dependency {} in the slowdown and {} in the halt; tracking queries that found no \
             slot {} in the slowdown and {} in the halt",
            runs.partial.event_ok,
            runs.slowdown.calls,
            runs.halt.calls,
            runs.slowdown.tracking_no_slot,
            runs.halt.tracking_no_slot,
        ),
    );
}

fn definitions(out: &mut String) {
    for (term, meaning) in [
        (
            "false-opening cost",
            "valid status events lost on the two days the breaker should stay closed: events \
             rejected on the healthy day, plus successful events of the partial day without a \
             breaker minus with it (the lesson's \"valid events rejected\").",
        ),
        (
            "detection cost",
            "slot-rounds the status events held in the broken dependency from the fault's start \
             until the first opening, slowdown plus halt. A fault never detected costs every \
             slot-round its calls held to the end of the run (shown in parentheses).",
        ),
        (
            "round",
            &format!(
                "rounds from the fault's start to the first opening ({ROUNDS_PER_SECOND} rounds = \
                 1 s)."
            ),
        ),
        (
            "saved, rescued",
            "calls to the dependency, and tracking queries that found no slot: without the \
             breaker minus with it.",
        ),
        (
            "frontier",
            "no other rule has both costs at most this rule's, one of them lower.",
        ),
    ] {
        wrapped(out, "  ", &format!("{term}: {meaning}"));
    }
}

fn header(out: &mut String) {
    let mut groups = String::new();
    let mut names = String::new();
    let mut i = 0;
    while i < COLUMNS.len() {
        let group = COLUMNS[i].group;
        let span: Vec<&Column> = COLUMNS[i..]
            .iter()
            .take_while(|column| column.group == group)
            .collect();
        let width: usize = span.iter().map(|column| column.width).sum();
        // A group's name sits over its columns, flush right like their figures.
        let _ = write!(groups, "{group:>width$}");
        for column in &span {
            let name = column.name;
            let width = column.width;
            if i == 0 {
                let _ = write!(names, "{name:<width$}");
            } else {
                let _ = write!(names, "{name:>width$}");
            }
            i += 1;
        }
    }
    let _ = writeln!(out, "{}", groups.trim_end());
    let _ = writeln!(out, "{}", names.trim_end());
}

fn row(out: &mut String, rule: &RuleFigures, on_frontier: bool) {
    let [slowdown_round, slowdown_cost] = detection_cells(&rule.slowdown);
    let [halt_round, halt_cost] = detection_cells(&rule.halt);
    let cells = [
        rule.candidate.rule.to_string(),
        rule.candidate.open_rounds.to_string(),
        rule.healthy_openings.to_string(),
        rule.healthy_rejected.to_string(),
        rule.partial_openings.to_string(),
        rule.partial_lost.to_string(),
        slowdown_round,
        slowdown_cost,
        rule.slowdown.calls_saved.to_string(),
        rule.slowdown.tracking_rescued.to_string(),
        halt_round,
        halt_cost,
        rule.halt.calls_saved.to_string(),
        rule.halt.tracking_rescued.to_string(),
        rule.false_opening_cost().to_string(),
        rule.detection_cost().to_string(),
        if on_frontier { "*" } else { "" }.to_string(),
    ];
    let mut line = String::new();
    for (i, (column, cell)) in COLUMNS.iter().zip(cells).enumerate() {
        let width = column.width;
        if i == 0 {
            let _ = write!(line, "{cell:<width$}");
        } else {
            let _ = write!(line, "{cell:>width$}");
        }
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

/// The detection round and its slot-rounds, or "-" and the whole fault's slot-rounds in
/// parentheses.
fn detection_cells(fault: &FaultFigures) -> [String; 2] {
    match fault.detection {
        Some(Detection { round, slot_rounds }) => [round.to_string(), slot_rounds.to_string()],
        None => ["-".to_string(), format!("({})", fault.detection_cost)],
    }
}

fn frontier(out: &mut String, sweep: &Sweep) {
    let mut members: Vec<usize> = (0..sweep.rules.len())
        .filter(|&i| sweep.frontier[i])
        .collect();
    members.sort_by_key(|&i| {
        let rule = &sweep.rules[i];
        (rule.false_opening_cost(), rule.detection_cost(), i)
    });
    wrapped(
        out,
        "",
        &format!(
            "Pareto frontier: the {} rules no other rule beats on both costs, cheapest \
             false openings first (along it, lower detection cost is bought with more valid \
             events lost)",
            members.len()
        ),
    );
    header(out);
    for i in members {
        row(out, &sweep.rules[i], true);
    }
}

fn recommendation(out: &mut String, sweep: &Sweep) {
    let Some(chosen) = sweep.recommended.map(|i| &sweep.rules[i]) else {
        let _ = writeln!(out, "recommended: nothing (the sweep tried no rule)");
        return;
    };
    let candidate = chosen.candidate;
    let _ = writeln!(
        out,
        "recommended: --rule {} --open-rounds {}",
        candidate.rule, candidate.open_rounds
    );
    wrapped(out, "  ", &format!("criterion: {CRITERION}"));
    let detected = |fault: &FaultFigures| match fault.detection {
        Some(detection) => format!(
            "detected in round {} after {} slot-rounds",
            detection.round, detection.slot_rounds
        ),
        None => format!(
            "never detected, {} slot-rounds held by its calls",
            fault.detection_cost
        ),
    };
    wrapped(
        out,
        "  ",
        &format!(
            "why: false-opening cost {} ({} openings and {} valid events rejected on the \
             healthy day, {} openings and {} successes lost on the partial day); detection cost \
             {} slot-rounds (slowdown: {}; halt: {}); in the slowdown it saves {} calls and \
             rescues {} tracking queries, in the halt it saves {} calls.",
            chosen.false_opening_cost(),
            chosen.healthy_openings,
            chosen.healthy_rejected,
            chosen.partial_openings,
            chosen.partial_lost,
            chosen.detection_cost(),
            detected(&chosen.slowdown),
            detected(&chosen.halt),
            chosen.slowdown.calls_saved,
            chosen.slowdown.tracking_rescued,
            chosen.halt.calls_saved,
        ),
    );
}

/// `text` in lines of at most `TEXT_WIDTH` characters where words allow, the first after
/// `indent`, the rest after `indent` and two more spaces.
fn wrapped(out: &mut String, indent: &str, text: &str) {
    let mut line = indent.to_string();
    let mut line_has_words = false;
    for word in text.split_whitespace() {
        if line_has_words && line.len() + 1 + word.len() > TEXT_WIDTH {
            let _ = writeln!(out, "{line}");
            line = format!("{indent}  ");
            line_has_words = false;
        }
        if line_has_words {
            line.push(' ');
        }
        line.push_str(word);
        line_has_words = true;
    }
    let _ = writeln!(out, "{line}");
}
