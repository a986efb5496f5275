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

/// The lesson's printed output, verbatim (figures and the model's own labels only).
const PUBLISHED: &str = include_str!("data/lesson_model_output.txt");

/// The lesson's names for the failure modes.
fn mode_named(name: &str) -> Mode {
    match name {
        "saglikli" => Mode::Healthy,
        "kismi" => Mode::Partial,
        "yavaslama" => Mode::Slowdown,
        "durma" => Mode::Halt,
        _ => panic!("unknown mode `{name}` in the published output"),
    }
}

fn count(text: &str) -> u64 {
    text.parse()
        .unwrap_or_else(|_| panic!("`{text}` in the published output is not a count"))
}

/// The lines after the one starting with `header`, up to (not including) the first line for
/// which `ends` holds.
fn rows_after(header: &str, ends: impl Fn(&str) -> bool) -> Vec<&'static str> {
    let mut lines = PUBLISHED
        .lines()
        .skip_while(|line| !line.starts_with(header));
    assert!(lines.next().is_some(), "no line starts with `{header}`");
    lines.take_while(|line| !ends(line)).collect()
}

/// A published row of the first table: the scenario and its seven figures.
fn first_table() -> Vec<(Scenario, [u64; 7])> {
    let rows = rows_after("kosum", str::is_empty);
    assert_eq!(rows.len(), 8, "the first table has 8 rows");
    rows.into_iter()
        .map(|row| {
            let (mode, rest) = row.split_once(", ").expect("a row starts `mode, breaker`");
            let mut cells = rest.split_whitespace();
            let rule = match cells.next() {
                Some("kesicisiz") => Rule::None,
                Some("kesicili") => lesson::CHOSEN_RULE,
                other => panic!("unexpected breaker label {other:?}"),
            };
            let figures: Vec<u64> = cells.map(count).collect();
            let figures = figures.try_into().expect("seven figures per row");
            (Scenario::lesson(mode_named(mode), rule), figures)
        })
        .collect()
}

/// A published row of the second table.
struct RuleRow {
    scenario: Scenario,
    detection_round: Option<u64>,
    detection_slot_rounds: Option<u64>,
    openings: u64,
    valid_rejected: Option<i64>,
}

fn second_table() -> Vec<RuleRow> {
    let rows = rows_after("kural", |line| line.starts_with("duyarlilik"));
    assert_eq!(rows.len(), 12, "the second table has 12 rows");
    let optional = |cell: &str| (cell != "-").then(|| count(cell));
    rows.into_iter()
        .map(|row| {
            let cells: Vec<&str> = row.split_whitespace().collect();
            let (rule, rest) = match cells[0] {
                "ardisik" => (
                    Rule::Consecutive {
                        failures: count(cells[1]) as usize,
                    },
                    &cells[2..],
                ),
                "oran" => {
                    assert_eq!(cells[2], "/", "a rate rule reads `oran T / W`");
                    let threshold = cells[1].replace(',', ".").parse().expect("a decimal");
                    let window = count(cells[3]) as usize;
                    (Rule::Rate { threshold, window }, &cells[4..])
                }
                other => panic!("unexpected rule `{other}`"),
            };
            let [mode, round, slot_rounds, openings, lost] = rest else {
                panic!("unexpected row `{row}`");
            };
            RuleRow {
                scenario: Scenario::lesson(mode_named(mode), rule),
                detection_round: optional(round),
                detection_slot_rounds: optional(slot_rounds),
                openings: count(openings),
                valid_rejected: (*lost != "-").then(|| lost.parse().expect("a signed count")),
            }
        })
        .collect()
}

fn run(scenario: &Scenario) -> RunCounts {
    model::run(scenario).expect("the breaker takes the lesson's rules")
}

#[test]
fn first_table_matches_the_lesson() {
    let published = first_table();
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
    let rows = second_table();
    let ours: Vec<Scenario> = lesson::rule_comparison().collect();
    let published_order: Vec<Scenario> = rows.iter().map(|row| row.scenario).collect();
    assert_eq!(ours, published_order, "the runs come in the lesson's order");
    let partial_without = run(&Scenario::lesson(Mode::Partial, Rule::None));
    for row in rows {
        let counts = run(&row.scenario);
        let what = format!(
            "{} with rule {}",
            row.scenario.mode.name(),
            row.scenario.rule
        );
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
        let valid_rejected = match row.scenario.mode {
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
    match std::fs::read_to_string(&shared) {
        Ok(original) => assert_eq!(
            PUBLISHED,
            original,
            "tests/data/lesson_model_output.txt differs from {}",
            shared.display()
        ),
        Err(_) => eprintln!(
            "{} not found: nothing to compare the copy with",
            shared.display()
        ),
    }
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
    let halt = Scenario::lesson(Mode::Halt, lesson::CHOSEN_RULE);
    let line = json::run_line(&halt, &run(&halt));
    assert_eq!(
        line,
        r#"{"mode":"halt","rule":"rate:0.5/20","tracking_ok":5000,"tracking_no_slot":0,"event_ok":190,"event_rejected":953,"event_failed":23,"event_no_slot":0,"calls":213,"event_slot_rounds":1285,"openings":10,"detection_round":9,"detection_slot_rounds":30}"#
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
