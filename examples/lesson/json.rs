//! One run as one line of JSON, keys in a fixed order.

use crate::model::{Conditions, RunCounts, Scenario};

/// The counts of a run by JSON key, in output order; `None` is JSON `null`.
pub fn count_fields(counts: &RunCounts) -> [(&'static str, Option<u64>); 11] {
    let detection = counts.detection;
    [
        ("tracking_ok", Some(counts.tracking_ok)),
        ("tracking_no_slot", Some(counts.tracking_no_slot)),
        ("event_ok", Some(counts.event_ok)),
        ("event_rejected", Some(counts.event_rejected)),
        ("event_failed", Some(counts.event_failed)),
        ("event_no_slot", Some(counts.event_no_slot)),
        ("calls", Some(counts.calls)),
        ("event_slot_rounds", Some(counts.event_slot_rounds)),
        ("openings", Some(counts.openings)),
        (
            "detection_round",
            detection.map(|detection| detection.round),
        ),
        (
            "detection_slot_rounds",
            detection.map(|detection| detection.slot_rounds),
        ),
    ]
}

/// `{"mode":…,"rule":…,<counts>}`: mode and rule as the flags take them. Neither can hold a
/// character JSON would need escaped.
pub fn run_line(scenario: &Scenario, counts: &RunCounts) -> String {
    let mut line = format!(
        r#"{{"mode":"{}","rule":"{}""#,
        scenario.mode.name(),
        scenario.rule
    );
    for (key, value) in count_fields(counts) {
        match value {
            Some(value) => line.push_str(&format!(r#","{key}":{value}"#)),
            None => line.push_str(&format!(r#","{key}":null"#)),
        }
    }
    line.push('}');
    line
}

/// A run under conditions of the user's own: `run_line` with the conditions after the rule
/// (the fault as it behaved, the mode's numbers with the flags' in place).
pub fn custom_run_line(scenario: &Scenario, conditions: &Conditions, counts: &RunCounts) -> String {
    let line = run_line(scenario, counts);
    let traffic = &conditions.traffic;
    let fault = conditions.fault.apply(scenario.mode.behaviour());
    let extra = format!(
        r#","timing":"{}","tracking_rate":{},"tracking_hold":{},"event_rate":{},"fail_p":{},"ok_hold":{},"fail_hold":{}"#,
        conditions.timing.name(),
        traffic.tracking_per_second,
        traffic.tracking_hold,
        traffic.event_per_second,
        fault.failure_probability,
        fault.success_hold,
        fault.failure_hold,
    );
    let rule_end = format!(r#","rule":"{}""#, scenario.rule);
    let at = line.find(&rule_end).expect("run_line has the rule") + rule_end.len();
    format!("{}{extra}{}", &line[..at], &line[at..])
}
