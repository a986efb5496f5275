//! One run as one line of JSON, keys in a fixed order.

use crate::model::{RunCounts, Scenario};

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
