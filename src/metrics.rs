//! What a breaker has counted.

use crate::state::State;

/// A snapshot of a breaker's counters and window, from [`Breaker::metrics`](crate::Breaker::metrics).
///
/// Every permit ends in exactly one of `successes`, `failures`, `ignored` and `released`
/// (a panic during the call counts as a failure); [`permitted`](Metrics::permitted) is their
/// sum. Verdicts that arrive after a transition (stale ones) are counted here too, although
/// they do not affect the state.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Metrics {
    /// The state; an open breaker whose open period has ended reads as half-open.
    pub state: State,
    /// Permits admitted while the breaker counted successes
    /// ([`count_successes`](crate::Builder::count_successes)) that ended in a success; `None`
    /// while it does not, which is what keeps a healthy call free of writes.
    pub successes: Option<u64>,
    /// Permits that ended in a failure, including panics during the call and slow calls.
    pub failures: u64,
    /// Of the failures, successes recorded longer than the
    /// [`slow_call`](crate::Builder::slow_call) limit after their permit was issued, and calls
    /// judged while still out ([`hung_calls`](Metrics::hung_calls)), whatever their end.
    pub slow_calls: u64,
    /// Of the slow calls, those judged while still out: out longer than the limit (give or
    /// take half of it) when a later call came. Whatever such a call's own end says, it
    /// records nothing more. A call that ends after more than about 100,000 limits out is
    /// counted here too, by its own end, whatever it says (its end cannot tell its own bucket
    /// from a newer one with the same number).
    pub hung_calls: u64,
    /// Permits whose outcome was ignored.
    pub ignored: u64,
    /// Permits dropped without a verdict, which gave their admission back; and timed calls of
    /// an ended generation that a sweep of the calls out found still out (their verdict
    /// would no longer count for anything, and is not counted here when it comes).
    pub released: u64,
    /// Calls rejected without calling the dependency.
    pub rejected: u64,
    /// Openings with an open period: trips from closed, failed probes, probes given up on
    /// after [`probe_timeout`](crate::Config::probe_timeout), and openings from outside
    /// ([`open_for`](crate::Breaker::open_for), which [`shared`](crate::shared) uses).
    ///
    /// This and the next two count the transitions the breaker makes itself. The manual ones
    /// ([`reset`](crate::Breaker::reset), [`force_open`](crate::Breaker::force_open),
    /// [`force_closed`](crate::Breaker::force_closed)) are counted in none of them; listeners
    /// see them, with [`Trigger::Manual`](crate::Trigger::Manual).
    pub openings: u64,
    /// Open periods that ended with a call admitted as a probe: transitions from open to
    /// half-open.
    pub half_openings: u64,
    /// Half-open periods closed by their probes. A [`reset`](crate::Breaker::reset) of a
    /// half-open breaker is not counted here.
    pub closings: u64,
    /// While closed: failures among the calls in the failure-rate window; with
    /// [`per_thread_windows`](crate::Builder::per_thread_windows), summed over the threads'
    /// windows.
    pub window_failures: u32,
    /// While closed: calls in the failure-rate window (at most its size); with
    /// [`per_thread_windows`](crate::Builder::per_thread_windows), the calls each thread's
    /// window recorded (at most its size), summed over the windows, so up to the window size
    /// times the windows in use. A window taken as full of successes when the breaker turned
    /// quiet counts only the calls it recorded, and so does a window made longer, or given a
    /// rate rule, by a [`reconfigure`](crate::Breaker::reconfigure) while closed, which the
    /// window itself judges as full: then, even on one thread, this count (and what
    /// [`SharedOpenings::share_windows`](crate::shared::SharedOpenings::share_windows)
    /// publishes from it) can be lower than one window's, until the window fills again.
    pub window_calls: u32,
    /// While closed: failures since the last success; with
    /// [`per_thread_windows`](crate::Builder::per_thread_windows), the longest run of any
    /// thread's window.
    pub consecutive_failures: u32,
    /// While half-open: probes admitted and not yet ended.
    pub probes_out: u32,
}

impl Metrics {
    /// Permits that have ended, whatever their verdict; `None` unless successes are counted.
    pub fn permitted(&self) -> Option<u64> {
        Some(self.successes? + self.failures + self.ignored + self.released)
    }

    /// While closed: the share of failures in the failure-rate window, or 0 when it is empty.
    pub fn failure_rate(&self) -> f64 {
        if self.window_calls == 0 {
            0.0
        } else {
            f64::from(self.window_failures) / f64::from(self.window_calls)
        }
    }
}
