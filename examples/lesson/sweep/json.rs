//! The sweep as JSON lines: one object for the setup, one per rule in the grid's order, one for
//! the recommendation. Every object says what it is in its first key, `record`.

use std::fmt::Write;

use crate::model::Conditions;

use super::Sweep;
use super::figures::{FaultFigures, RuleFigures};
use super::recommend::CRITERION;

pub fn json_lines(sweep: &Sweep) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", setup(sweep));
    for (i, rule) in sweep.rules.iter().enumerate() {
        let _ = writeln!(out, "{}", rule_line(rule, sweep.frontier[i]));
    }
    if let Some(i) = sweep.recommended {
        let chosen = sweep.rules[i].candidate;
        let _ = writeln!(
            out,
            r#"{{"record":"recommendation","rule":"{}","open_rounds":{},"criterion":"{}"}}"#,
            chosen.rule,
            chosen.open_rounds,
            escaped(CRITERION)
        );
    }
    out
}

fn setup(sweep: &Sweep) -> String {
    let base = &sweep.base;
    let Conditions {
        traffic, timing, ..
    } = &sweep.conditions;
    format!(
        r#"{{"record":"sweep","rules":{},"timing":"{}","seed":{},"slots":{},"rounds":{},"fault_at":{},"tracking_rate":{},"tracking_hold":{},"event_rate":{}}}"#,
        sweep.rules.len(),
        timing.name(),
        base.seed,
        base.slots,
        base.rounds,
        base.fault_at,
        traffic.tracking_per_second,
        traffic.tracking_hold,
        traffic.event_per_second,
    )
}

/// One rule's object: the table's columns, `null` for a fault never detected.
fn rule_line(rule: &RuleFigures, on_frontier: bool) -> String {
    let mut line = format!(
        r#"{{"record":"rule","rule":"{}","open_rounds":{},"healthy_openings":{},"healthy_rejected":{},"partial_openings":{},"partial_lost":{}"#,
        rule.candidate.rule,
        rule.candidate.open_rounds,
        rule.healthy_openings,
        rule.healthy_rejected,
        rule.partial_openings,
        rule.partial_lost,
    );
    for (mode, fault) in [("slowdown", &rule.slowdown), ("halt", &rule.halt)] {
        fault_fields(&mut line, mode, fault);
    }
    let _ = write!(
        line,
        r#","false_opening_cost":{},"detection_cost":{},"frontier":{}}}"#,
        rule.false_opening_cost(),
        rule.detection_cost(),
        on_frontier
    );
    line
}

fn fault_fields(line: &mut String, mode: &str, fault: &FaultFigures) {
    let (round, slot_rounds) = match fault.detection {
        Some(detection) => (
            detection.round.to_string(),
            detection.slot_rounds.to_string(),
        ),
        None => ("null".to_string(), "null".to_string()),
    };
    let _ = write!(
        line,
        r#","{mode}_openings":{},"{mode}_detection_round":{round},"{mode}_detection_slot_rounds":{slot_rounds},"{mode}_detection_cost":{},"{mode}_calls_saved":{},"{mode}_tracking_rescued":{}"#,
        fault.openings, fault.detection_cost, fault.calls_saved, fault.tracking_rescued,
    );
}

/// A JSON string's content: the criterion quotes the lesson.
fn escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}
