//! Where the breaker's notion of time comes from.
//!
//! The breaker reads the clock only where a decision needs it: when a failure trips it (to set
//! the end of the open period), while it is open (to see whether that period has ended, from
//! a cheaper bound on the time first where the clock has one: [`Clock::upper_bound_nanos`]), when
//! a probe is admitted or given up on, and, under a `slow_call` limit, when a call is admitted
//! and when it ends (to time it). Without a slow-call limit, a healthy call never reads the
//! clock.

use std::fmt;
use std::time::Duration;

use crate::coarse_clock::CoarseBound;
use crate::sync::{Arc, AtomicU64, Ordering};

/// A monotonic source of time for a [`Breaker`](crate::Breaker).
///
/// Implementations return nanoseconds since an epoch of their choosing; only differences
/// matter. Two readings from the same clock must never go backwards. A breaker counts its
/// times from its clock's reading when it was built, and keeps the end of an open period and
/// a probe's admission modulo 2^48 microseconds (about 8.9 years), read by their distance
/// from now: it keeps time however long it runs. The one thing it cannot tell is an open
/// period that ended more than 6.7 years before the next call looks at the breaker, which
/// that call takes for one still running (for up to 2.2 years).
///
/// # Examples
///
/// ```
/// use hotbreaker::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// clock.advance(Duration::from_millis(10));
/// assert_eq!(clock.now_nanos(), 10_000_000);
/// ```
pub trait Clock: Send + Sync + 'static {
    /// Nanoseconds elapsed since this clock's epoch.
    fn now_nanos(&self) -> u64;

    /// How often, in real time, a caller waiting for admission
    /// ([`acquire_timeout`](crate::Breaker::acquire_timeout) and its async twin) reads this
    /// clock again while only time on it can admit the caller (an open period running out, a
    /// probe passing its timeout). `None`, the default, is for a clock that moves with real
    /// time: the waiter sleeps until that moment comes by this clock, or an event wakes it. A
    /// clock whose time can jump when something moves it (as [`ManualClock`]'s does) returns
    /// how soon a waiter should look again, or it would sleep its durations out in real time.
    fn recheck_within(&self) -> Option<Duration> {
        None
    }

    /// A time no earlier than [`now_nanos`](Clock::now_nanos) would read at this moment, for a
    /// clock that can bound its time more cheaply than it can read it; `None`, the default,
    /// for one that cannot.
    ///
    /// While a breaker is open, every call it turns away asks whether the open period is over.
    /// With a bound before the period's end, the call is turned away without reading the
    /// clock; otherwise the breaker reads [`now_nanos`](Clock::now_nanos), so the period ends
    /// when that reading says. A bound later than the time by less than six years only costs
    /// that read; a bound earlier than the time would keep the breaker open past the period's
    /// end, and so may one later by more (such as `u64::MAX`): the breaker keeps the period's
    /// end modulo 2^48 µs (about 8.9 years), so a bound that far ahead can read as before it,
    /// for good. A clock that cannot bound its time returns `None`. The time
    /// left that such a rejection reports ([`Rejected::retry_after`](crate::Rejected::retry_after))
    /// is short of the exact one by as much as the bound is late.
    fn upper_bound_nanos(&self) -> Option<u64> {
        None
    }
}

/// The default clock: the CPU's time-stamp counter through [`quanta`], scaled to nanoseconds.
///
/// One reading costs a `rdtsc` and a multiply (about 12.5 ns on the machine
/// `benches/PERFORMANCE.md` describes, against about 32 ns for [`std::time::Instant::now`]).
/// On Linux its [`upper_bound_nanos`](Clock::upper_bound_nanos) comes from the kernel's coarse
/// monotonic clock (about 4.3 ns there): it is later than the time by at most about eight
/// scheduler ticks and a millisecond (33 ms at 250 Hz), so an open breaker turns calls away
/// without the `rdtsc` until that close to the period's end.
#[derive(Clone)]
pub struct QuantaClock {
    clock: quanta::Clock,
    epoch: u64,
    coarse: Option<CoarseBound>,
}

impl QuantaClock {
    /// A clock whose epoch is the moment of this call.
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        let epoch = clock.raw();
        QuantaClock {
            clock,
            epoch,
            coarse: CoarseBound::new(),
        }
    }
}

impl Default for QuantaClock {
    fn default() -> Self {
        QuantaClock::new()
    }
}

impl fmt::Debug for QuantaClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuantaClock")
            .field("now_nanos", &self.now_nanos())
            .finish()
    }
}

impl Clock for QuantaClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.clock.delta_as_nanos(self.epoch, self.clock.raw())
    }

    /// From the coarse clock and the thread's last pair of readings (`coarse_clock.rs`, which
    /// argues the bound); `None` where the kernel has no coarse clock to read.
    #[inline]
    fn upper_bound_nanos(&self) -> Option<u64> {
        self.coarse?.upper_bound(&self.clock, self.epoch)
    }
}

/// A clock that moves only when told to: for tests, simulations and loom models.
///
/// Clones share one time, so a test can keep a clone and move the time of a breaker built
/// with another.
///
/// # Examples
///
/// ```
/// use hotbreaker::{Breaker, ManualClock, State};
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// let breaker = Breaker::builder()
///     .consecutive_failures(1)
///     .open_duration(Duration::from_secs(5))
///     .clock(clock.clone())
///     .build()
///     .unwrap();
/// breaker.try_acquire().unwrap().failure();
/// assert!(breaker.try_acquire().is_err());
/// clock.advance(Duration::from_secs(5));
/// assert!(breaker.try_acquire().is_ok()); // the half-open probe
/// assert_eq!(breaker.state(), State::HalfOpen);
/// ```
#[derive(Clone)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock standing at zero.
    pub fn new() -> Self {
        ManualClock {
            nanos: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Sets the time, measured from the clock's epoch, in nanoseconds up to `u64::MAX` (about
    /// 584 years): a later time sets that.
    ///
    /// Moving it backwards is allowed (it is a test tool): a breaker reading it then sees its
    /// own time go back too, never to before its reading when the breaker was built. With a
    /// [`slow_call`](crate::Builder::slow_call) limit, a call out while the clock moves back
    /// by more than about a millisecond (or two buckets, if more) may be judged hung at the
    /// next sweep: its bucket then reads as from long ago.
    pub fn set(&self, since_epoch: Duration) {
        self.set_nanos(saturating_nanos(since_epoch));
    }

    /// Sets the time in nanoseconds since the clock's epoch.
    pub fn set_nanos(&self, nanos: u64) {
        // Release: a thread that reads the new time also sees what the setter did before.
        self.nanos.store(nanos, Ordering::Release);
    }

    /// Moves the time forward by `by`, saturating at `u64::MAX` nanoseconds.
    pub fn advance(&self, by: Duration) {
        let by = saturating_nanos(by);
        let mut current = self.nanos.load(Ordering::Acquire);
        loop {
            let next = current.saturating_add(by);
            match self.nanos.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
        }
    }

    /// The current time as a [`Duration`] since the clock's epoch.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.now_nanos())
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now_nanos", &self.now_nanos())
            .finish()
    }
}

/// How often a waiter looks at a [`ManualClock`] again ([`Clock::recheck_within`]).
const MANUAL_RECHECK: Duration = Duration::from_millis(1);

impl Clock for ManualClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.nanos.load(Ordering::Acquire)
    }

    /// A millisecond: its time moves only when it is told to, and wakes no waiter then.
    fn recheck_within(&self) -> Option<Duration> {
        Some(MANUAL_RECHECK)
    }
}

pub(crate) fn saturating_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}
