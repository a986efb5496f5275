//! When a call that hangs is judged, as the README documents it ("Hung calls"), checked after
//! every step of a differential run apart from the reference model: the model enters calls in
//! buckets as the breaker does, so a bound that both drew wrong would pass the comparison.
//! The model only says which calls are in a bucket (a call finds no free place rarely, and is
//! then judged at its end alone); the bounds come from the issue times and the limits.
//!
//! - Never early: a call is judged hung only once it has been out longer than the limit in
//!   force.
//! - Never late: a timed call admitted while closed judges every call in a bucket that has been
//!   out for the limit in force plus half the limit it was issued under (its bucket's width
//!   at most), 1.5 limits when the limit has not changed.

use std::time::Duration;

use super::model::{ModelPermit, ReferenceModel};
use crate::clock::saturating_nanos;

/// A call out in a bucket before a step: its issue time and the limit it was issued under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallInBucket {
    issued_nanos: u64,
    limit_at_issue: u64,
}

/// Out this many times the limit it was issued under, a call's bucket can no longer be told
/// from a later one (README: "about 100,000 times the old limit"); the bound that it is
/// judged in time is not checked for it.
const TRUSTED_LIMITS: u64 = 50_000;

/// The calls of `held` that the model holds in a bucket, before a step.
pub(crate) fn calls_in_buckets<'p>(
    model: &ReferenceModel,
    held: impl IntoIterator<Item = &'p ModelPermit>,
) -> Vec<CallInBucket> {
    held.into_iter()
        .filter(|permit| model.is_in_a_bucket(permit))
        .filter_map(|permit| {
            Some(CallInBucket {
                issued_nanos: permit.issued_nanos(),
                limit_at_issue: saturating_nanos(permit.issued_under()?),
            })
        })
        .collect()
}

/// Whether `judged_hung` calls judged in one step at `now`, under `limit` (in force then),
/// keep the bounds for the `before` calls in buckets; `sweeps` if the step admitted a timed
/// call while closed, so that every overdue bucket was swept.
pub(crate) fn check(
    before: &[CallInBucket],
    judged_hung: u64,
    now: u64,
    limit: Option<Duration>,
    sweeps: bool,
) -> Result<(), String> {
    let limit = limit.map_or(u64::MAX, saturating_nanos);
    let age = |call: &CallInBucket| now.saturating_sub(call.issued_nanos);
    let untrusted_after = |call: &CallInBucket| call.limit_at_issue.saturating_mul(TRUSTED_LIMITS);
    // Out longer than the limit, or so long that its own end takes its bucket whatever the
    // limit (the known gap).
    let may_be_judged = before
        .iter()
        .filter(|call| age(call) > limit.min(untrusted_after(call)))
        .count() as u64;
    if judged_hung > may_be_judged {
        return Err(format!(
            "{judged_hung} calls judged hung at {now} ns, only {may_be_judged} out longer than \
             the limit of {limit} ns: {before:?}"
        ));
    }
    if sweeps {
        let overdue = before
            .iter()
            .filter(|call| {
                let width_at_most = (call.limit_at_issue / 2).max(1);
                age(call) >= limit.saturating_add(width_at_most)
                    && age(call) < untrusted_after(call)
            })
            .count() as u64;
        if judged_hung < overdue {
            return Err(format!(
                "a timed call admitted at {now} ns judged {judged_hung} calls hung, but \
                 {overdue} were out the limit of {limit} ns and half the limit they were \
                 issued under: {before:?}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_nanos(1_000);

    fn issued_at(nanos: u64) -> CallInBucket {
        CallInBucket {
            issued_nanos: nanos,
            limit_at_issue: 1_000,
        }
    }

    #[test]
    fn a_call_judged_at_or_before_its_limit_is_early() {
        let calls = [issued_at(0)];
        assert!(check(&calls, 1, 1_000, Some(LIMIT), false).is_err());
        assert!(check(&calls, 1, 1_001, Some(LIMIT), false).is_ok());
        assert!(check(&calls, 1, 5_000, None, false).is_err(), "no limit");
        assert!(
            check(&calls, 2, 5_000, Some(LIMIT), false).is_err(),
            "one call"
        );
    }

    #[test]
    fn a_call_out_one_and_a_half_limits_must_be_judged_by_a_sweep() {
        let calls = [issued_at(0)];
        assert!(check(&calls, 0, 1_499, Some(LIMIT), true).is_ok());
        assert!(check(&calls, 0, 1_500, Some(LIMIT), true).is_err());
        assert!(
            check(&calls, 0, 1_500, Some(LIMIT), false).is_ok(),
            "no sweep"
        );
        assert!(check(&calls, 1, 1_500, Some(LIMIT), true).is_ok());
        // Under a limit lowered since: the new limit and half the old one.
        let long = CallInBucket {
            issued_nanos: 0,
            limit_at_issue: 4_000,
        };
        assert!(check(&[long], 0, 2_999, Some(LIMIT), true).is_ok());
        assert!(check(&[long], 0, 3_000, Some(LIMIT), true).is_err());
    }

    #[test]
    fn a_call_out_past_trust_is_not_required_nor_refused() {
        let calls = [issued_at(0)];
        let past = 1_000 * TRUSTED_LIMITS;
        assert!(check(&calls, 0, past, Some(LIMIT), true).is_ok());
        // Its own end may take its bucket whatever the limit, even with none.
        assert!(check(&calls, 1, past + 1, None, false).is_ok());
    }
}
