//! Rejections decided from the clock's bound on its time (`Clock::upper_bound_nanos`) racing
//! the transitions that open the breaker and end its period: the bound turns a call away
//! only while the period that the state word names runs, and never holds it open past an end.

#![cfg(loom)]

mod common;

use std::time::Duration;

use common::{OPEN, Role, check_each_order, spawn_in};
use hotbreaker::{Breaker, Clock, ManualClock, State};
use loom::sync::Arc;

/// How late the bound is: well inside `OPEN`, so that at time 0 it decides every rejection.
const LATE_BY: Duration = Duration::from_millis(1);

/// A manual clock whose bound is [`LATE_BY`] after its time.
#[derive(Clone, Default)]
struct BoundedClock(ManualClock);

impl Clock for BoundedClock {
    fn now_nanos(&self) -> u64 {
        self.0.now_nanos()
    }

    fn recheck_within(&self) -> Option<Duration> {
        self.0.recheck_within()
    }

    fn upper_bound_nanos(&self) -> Option<u64> {
        Some(self.0.now_nanos() + LATE_BY.as_nanos() as u64)
    }
}

fn bounded(failures_to_trip: usize) -> Arc<Breaker<BoundedClock>> {
    let breaker = Breaker::builder()
        .consecutive_failures(failures_to_trip)
        .open_duration(OPEN)
        .stripes(2)
        .clock(BoundedClock::default())
        .build()
        .expect("valid configuration");
    Arc::new(breaker)
}

/// One thread trips the breaker while another calls through it; the clock does not move.
///
/// Checks that the call either went through closed (not as a probe), or was turned away by
/// the bound, which falls `LATE_BY` into the new period: the time left it reports is the
/// period less that.
///
/// Catches: the open deadline published after the compare-and-swap that makes the breaker
/// open: the bound finds the previous generation's deadline, and the call falls through to
/// the transitions and becomes a probe with no open period at all.
#[test]
fn a_call_racing_a_trip_is_turned_away_by_the_new_period() {
    check_each_order(2, 2, |order| {
        let breaker = bounded(1);
        let tripper: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let _ = breaker.call(|| Err::<(), _>("refused"));
            })
        };
        let caller: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(permit) => {
                    assert!(!permit.is_probe(), "a probe before the open period ended");
                    drop(permit);
                }
                Err(rejected) => {
                    assert_eq!(rejected.state(), State::Open);
                    assert_eq!(rejected.retry_after(), Some(OPEN - LATE_BY));
                }
            })
        };
        spawn_in(order, vec![tripper, caller]);
        assert_eq!(breaker.state(), State::Open);
        let after = breaker.try_acquire().expect_err("the period runs");
        assert_eq!(after.retry_after(), Some(OPEN - LATE_BY), "from the bound");
    });
}

/// The period is ended from outside while another thread calls; then one more call.
///
/// Checks that the racing call is turned away by the running period (from the bound) or is
/// the probe, and that the further call, made after the end returned, is never turned away by
/// the open period: the bound, `LATE_BY` after a time that the ended period lies behind,
/// cannot keep it open.
///
/// Catches: a bound path that turns a call away whenever the breaker is open, taking a bound
/// at or past the deadline as "open, retry now" instead of leaving the decision to the clock:
/// the period, ended early, still holds the further call off.
#[test]
fn a_period_ended_early_is_over_for_a_call_deciding_from_the_bound() {
    check_each_order(2, 2, |order| {
        let breaker = bounded(1);
        let _ = breaker.call(|| Err::<(), _>("refused"));
        assert_eq!(breaker.state(), State::Open);

        let ender: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.end_open_period())
        };
        let caller: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(probe) => {
                    assert!(probe.is_probe(), "{probe:?}");
                    std::mem::forget(probe);
                    true
                }
                Err(rejected) => {
                    assert_eq!(rejected.state(), State::Open);
                    assert_eq!(rejected.retry_after(), Some(OPEN - LATE_BY));
                    false
                }
            })
        };
        let [ended, probing] = spawn_in(order, vec![ender, caller])[..] else {
            unreachable!("two roles")
        };
        assert!(ended, "open, its period running: only this call can end it");
        match breaker.try_acquire() {
            Ok(permit) => {
                assert!(!probing, "a second probe beside the racing call's");
                assert!(permit.is_probe(), "{permit:?}");
                std::mem::forget(permit);
            }
            Err(rejected) => {
                assert!(
                    probing,
                    "period ended, no probe out, yet rejected: {rejected:?}"
                );
                assert_eq!(rejected.state(), State::HalfOpen);
            }
        }
    });
}
