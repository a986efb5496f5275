//! The lesson example reproduces the lesson's published figures: both tables, the summary lines
//! and the sensitivity line, parsed at test time from the lesson's own output.

// The example's modules, shared with it; this test does not use every item they hold.
#[allow(dead_code)]
#[path = "../examples/lesson/json.rs"]
mod json;
#[allow(dead_code)]
#[path = "../examples/lesson/lesson.rs"]
mod lesson;
#[allow(dead_code)]
#[path = "../examples/lesson/model/mod.rs"]
mod model;
#[allow(dead_code)]
#[path = "../examples/lesson/report.rs"]
mod report;

use std::path::Path;

use lesson::Lesson;
use model::{Mode, Rule, RunCounts, Scenario};

#[allow(dead_code)]
#[path = "support/published_lesson.rs"]
mod published_lesson;

use published_lesson::PUBLISHED;

fn run(scenario: &Scenario) -> RunCounts {
    model::run(scenario).expect("the breaker takes the lesson's rules")
}

#[test]
fn first_table_matches_the_lesson() {
    let published: Vec<(Scenario, [u64; 7])> = published_lesson::first_table()
        .into_iter()
        .map(|row| {
            let rule = if row.with_breaker {
                lesson::CHOSEN_RULE
            } else {
                Rule::None
            };
            (Scenario::lesson(row.mode, rule), row.figures)
        })
        .collect();
    let ours: Vec<Scenario> = lesson::breaker_comparison().collect();
    let published_order: Vec<Scenario> = published.iter().map(|(scenario, _)| *scenario).collect();
    assert_eq!(ours, published_order, "the runs come in the lesson's order");
    for (scenario, figures) in published {
        let counts = run(&scenario);
        let got = [
            counts.tracking_ok,
            counts.tracking_no_slot,
            counts.event_ok,
            counts.event_rejected,
            counts.event_failed,
            counts.calls,
            counts.event_slot_rounds,
        ];
        assert_eq!(
            got,
            figures,
            "{} with rule {}",
            scenario.mode.name(),
            scenario.rule
        );
    }
}

#[test]
fn second_table_matches_the_lesson() {
    let rows = published_lesson::second_table();
    let ours: Vec<Scenario> = lesson::rule_comparison().collect();
    let published_order: Vec<Scenario> = rows
        .iter()
        .map(|row| Scenario::lesson(row.mode, row.rule))
        .collect();
    assert_eq!(ours, published_order, "the runs come in the lesson's order");
    let partial_without = run(&Scenario::lesson(Mode::Partial, Rule::None));
    for row in rows {
        let counts = run(&Scenario::lesson(row.mode, row.rule));
        let what = format!("{} with rule {}", row.mode.name(), row.rule);
        assert_eq!(
            counts.detection.map(|detection| detection.round),
            row.detection_round,
            "detection round, {what}"
        );
        assert_eq!(
            counts.detection.map(|detection| detection.slot_rounds),
            row.detection_slot_rounds,
            "slot-rounds to detection, {what}"
        );
        assert_eq!(counts.openings, row.openings, "openings, {what}");
        let valid_rejected = match row.mode {
            Mode::Healthy => Some(counts.event_rejected as i64),
            Mode::Partial => Some(partial_without.event_ok as i64 - counts.event_ok as i64),
            Mode::Slowdown | Mode::Halt => None,
        };
        assert_eq!(
            valid_rejected, row.valid_rejected,
            "valid events rejected, {what}"
        );
    }
}

/// The figures of a line, in order: numbers (a decimal comma read as a point) and lone dashes
/// standing for "none". Digits glued to a letter are part of a name (`AY3`), not figures.
fn figures(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let digit_at = |i: usize| chars.get(i).is_some_and(char::is_ascii_digit);
    let blank_at = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_none_or(|c| c.is_whitespace())
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if digit_at(i) {
            let start = i;
            while digit_at(i) {
                i += 1;
            }
            if matches!(chars.get(i), Some('.' | ',')) && digit_at(i + 1) {
                i += 1;
                while digit_at(i) {
                    i += 1;
                }
            }
            let glued_to_name = start > 0 && chars[start - 1].is_alphabetic();
            if !glued_to_name {
                found.push(chars[start..i].iter().collect::<String>().replace(',', "."));
            }
            continue;
        }
        if chars[i] == '-' && blank_at(i.checked_sub(1)) && blank_at(Some(i + 1)) {
            found.push("-".to_string());
        }
        i += 1;
    }
    found
}

#[test]
fn report_carries_the_lessons_figures_line_by_line() {
    let lesson = Lesson::run().expect("the breaker takes the lesson's rules");
    let ours = report::lesson(&lesson);
    let ours: Vec<&str> = ours.lines().collect();
    let published: Vec<&str> = PUBLISHED.trim_end().lines().collect();
    assert_eq!(ours.len(), published.len(), "same number of lines");
    for (number, (our_line, published_line)) in ours.iter().zip(&published).enumerate() {
        assert_eq!(
            figures(our_line),
            figures(published_line),
            "line {}:\n  ours:      {our_line}\n  published: {published_line}",
            number + 1
        );
    }
}

#[test]
fn sensitivity_runs_match_the_lesson() {
    let line = PUBLISHED
        .lines()
        .find(|line| line.starts_with("duyarlilik"))
        .expect("a sensitivity line");
    let published: Vec<u64> = figures(line)
        .iter()
        .filter_map(|figure| figure.parse().ok())
        .collect();
    // Open rounds before and after, slowdown calls before and after, strict-rule rejections
    // before and after (the rule's 0,10 is not a count and drops out).
    let [
        open_before,
        open_after,
        calls_before,
        calls_after,
        rejected_before,
        rejected_after,
    ] = published[..]
    else {
        panic!("unexpected sensitivity line `{line}`");
    };
    let open_longer = |scenario: Scenario| Scenario {
        open_rounds: open_after,
        ..scenario
    };
    let slowdown = Scenario::lesson(Mode::Slowdown, lesson::CHOSEN_RULE);
    let strict = Scenario::lesson(Mode::Healthy, lesson::STRICT_RULE);
    assert_eq!(slowdown.open_rounds, open_before);
    assert_eq!(run(&slowdown).calls, calls_before);
    assert_eq!(run(&open_longer(slowdown)).calls, calls_after);
    assert_eq!(run(&strict).event_rejected, rejected_before);
    assert_eq!(run(&open_longer(strict)).event_rejected, rejected_after);
}

#[test]
fn figure_reader_sees_numbers_dashes_and_skips_names() {
    assert_eq!(
        figures("AY3'un 10 dakika: 48180, oran 0,10 -> %91.48 - x-y 5"),
        ["10", "48180", "0.10", "91.48", "-", "5"]
    );
}

#[test]
fn committed_output_is_the_lessons_own() {
    let shared =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds/000_lesson_model_output.txt");
    // Missing is a failure, not a pass: the copy would then be checked against nothing.
    let original = std::fs::read_to_string(&shared).unwrap_or_else(|error| {
        panic!(
            "{}: {error}; the tests need ../shared beside the repository",
            shared.display()
        )
    });
    assert_eq!(
        PUBLISHED,
        original,
        "tests/data/lesson_model_output.txt differs from {}",
        shared.display()
    );
}

#[test]
fn json_lines_list_the_twenty_runs_with_keys_in_order() {
    let runs: Vec<Scenario> = lesson::table_runs().collect();
    assert_eq!(runs.len(), 20);
    let keys = [
        "mode",
        "rule",
        "tracking_ok",
        "tracking_no_slot",
        "event_ok",
        "event_rejected",
        "event_failed",
        "event_no_slot",
        "calls",
        "event_slot_rounds",
        "openings",
        "detection_round",
        "detection_slot_rounds",
    ];
    // The halt with the chosen rule: its figures from the lesson's two tables, read at test
    // time, not copied here. The lesson does not print events with no slot: none in the halt.
    let halt = Scenario::lesson(Mode::Halt, lesson::CHOSEN_RULE);
    let line = json::run_line(&halt, &run(&halt));
    let [
        tracking_ok,
        tracking_no_slot,
        event_ok,
        event_rejected,
        event_failed,
        calls,
        slot_rounds,
    ] = published_lesson::first_table_row(Mode::Halt, true).figures;
    let rule_row = published_lesson::second_table()
        .into_iter()
        .find(|row| row.mode == Mode::Halt && row.rule == lesson::CHOSEN_RULE)
        .expect("the chosen rule's halt row");
    let (detection_round, detection_slot_rounds) = rule_row.detection().expect("detected");
    assert_eq!(
        line,
        format!(
            r#"{{"mode":"halt","rule":"rate:0.5/20","tracking_ok":{tracking_ok},"tracking_no_slot":{tracking_no_slot},"event_ok":{event_ok},"event_rejected":{event_rejected},"event_failed":{event_failed},"event_no_slot":0,"calls":{calls},"event_slot_rounds":{slot_rounds},"openings":{},"detection_round":{detection_round},"detection_slot_rounds":{detection_slot_rounds}}}"#,
            rule_row.openings
        )
    );
    let healthy = Scenario::lesson(Mode::Healthy, Rule::Consecutive { failures: 5 });
    let line = json::run_line(&healthy, &run(&healthy));
    let found: Vec<&str> = line
        .trim_matches(['{', '}'])
        .split(',')
        .map(|pair| pair.split(':').next().unwrap_or_default().trim_matches('"'))
        .collect();
    assert_eq!(found, keys);
    assert!(line.starts_with(r#"{"mode":"healthy","rule":"consecutive:5","#));
    assert!(line.ends_with(r#""detection_round":null,"detection_slot_rounds":null}"#));
}
