//! The lesson's published output, read into its two tables for the tests that compare the
//! example against it. Included with `#[path]` by test crates that also include the example's
//! `model` module at their root.

use crate::model::{Mode, Rule};

/// The lesson's printed output, verbatim (figures and the model's own labels only).
pub const PUBLISHED: &str = include_str!("../data/lesson_model_output.txt");

/// A row of the first table: one failure mode without or with the lesson's breaker.
pub struct RunRow {
    pub mode: Mode,
    pub with_breaker: bool,
    /// Tracking ok, tracking with no slot, events ok, events rejected, events failed, calls
    /// to the dependency, slot-rounds held by events.
    pub figures: [u64; 7],
}

/// A row of the second table: one rule in one failure mode.
pub struct RuleRow {
    pub rule: Rule,
    pub mode: Mode,
    pub detection_round: Option<u64>,
    pub detection_slot_rounds: Option<u64>,
    pub openings: u64,
    /// Valid events lost against no breaker (healthy and partial days only).
    pub valid_rejected: Option<i64>,
}

impl RuleRow {
    /// The detection round and slot-rounds, if the rule detected the fault.
    pub fn detection(&self) -> Option<(u64, u64)> {
        self.detection_round.zip(self.detection_slot_rounds)
    }
}

/// The lesson's names for the failure modes.
pub fn mode_named(name: &str) -> Mode {
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

/// The first table, `<mode>, kesicisiz|kesicili` and seven figures, in the lesson's order.
pub fn first_table() -> Vec<RunRow> {
    let rows = rows_after("kosum", str::is_empty);
    assert_eq!(rows.len(), 8, "the first table has 8 rows");
    rows.into_iter()
        .map(|row| {
            let (mode, rest) = row.split_once(", ").expect("a row starts `mode, breaker`");
            let mut cells = rest.split_whitespace();
            let with_breaker = match cells.next() {
                Some("kesicisiz") => false,
                Some("kesicili") => true,
                other => panic!("unexpected breaker label {other:?}"),
            };
            let figures: Vec<u64> = cells.map(count).collect();
            RunRow {
                mode: mode_named(mode),
                with_breaker,
                figures: figures.try_into().expect("seven figures per row"),
            }
        })
        .collect()
}

/// The first table's row for `mode` without or with the breaker.
pub fn first_table_row(mode: Mode, with_breaker: bool) -> RunRow {
    first_table()
        .into_iter()
        .find(|row| row.mode == mode && row.with_breaker == with_breaker)
        .unwrap_or_else(|| panic!("no first-table row for {} ({with_breaker})", mode.name()))
}

/// The second table, `ardisik K` or `oran T / W`, then the mode, the detection round and
/// slot-rounds, openings and valid events lost (a dash for "none"), in the lesson's order.
pub fn second_table() -> Vec<RuleRow> {
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
                rule,
                mode: mode_named(mode),
                detection_round: optional(round),
                detection_slot_rounds: optional(slot_rounds),
                openings: count(openings),
                valid_rejected: (*lost != "-").then(|| lost.parse().expect("a signed count")),
            }
        })
        .collect()
}
