//! The one rule the sweep recommends, and why.

use std::cmp::Reverse;

use super::figures::RuleFigures;

/// The criterion, as the report states it.
pub const CRITERION: &str = "of the frontier rules that lose no valid event on the healthy and \
    partial days (false-opening cost 0 or less: the lesson's \"invisible on a fault-free day\"), \
    the one with the lowest detection cost; ties go to the shorter open duration (the lesson: \
    a longer one gains little on a faulty day and multiplies the cost of any false opening), \
    then to more calls saved and more tracking queries rescued in the slowdown, then to the \
    grid's order. If every frontier rule loses valid events: the one that loses fewest.";

/// The index of the recommended rule in `figures`; `None` only for an empty sweep.
pub fn recommend(figures: &[RuleFigures], frontier: &[bool]) -> Option<usize> {
    let on_frontier = || (0..figures.len()).filter(|&i| frontier[i]);
    let invisible: Vec<usize> = on_frontier()
        .filter(|&i| figures[i].false_opening_cost() <= 0)
        .collect();
    if invisible.is_empty() {
        return on_frontier().min_by_key(|&i| (figures[i].false_opening_cost(), i));
    }
    invisible.into_iter().min_by_key(|&i| {
        let rule = &figures[i];
        (
            rule.detection_cost(),
            rule.candidate.open_rounds,
            Reverse(rule.slowdown.calls_saved),
            Reverse(rule.slowdown.tracking_rescued),
            i,
        )
    })
}
