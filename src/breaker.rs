//! The breaker: admission, verdicts and transitions around one state word.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::builder::Builder;
use crate::calls_out::{Left, OutTicket, Swept, bucket_due};
use crate::clock::{Clock, QuantaClock};
use crate::config::{Config, ConfigError, Settings};
use crate::listener::{Listener, Transition, Trigger};
use crate::metrics::Metrics;
use crate::newest_probe::{Admitted, Newest, NewestProbe};
use crate::open_deadline::OpenDeadline;
use crate::open_streak::OpenStreak;
use crate::permit::{Outcome, OwnedPermit, Permit, PermitKind, Rejected, Timing};
use crate::state::{State, StateWord};
use crate::stripes::{Counter, LocalStripe, Stripes};
use crate::sync::{AtomicU32, AtomicU64, Backoff, CachePadded, Ordering, Swappable, fence};
use crate::wait::Waiters;
use crate::window::{Judgement, TripCause, Windows};

/// A lock-free circuit breaker.
///
/// Share it by reference (or in an `Arc`) among the threads that call one dependency. See the
/// [crate documentation](crate) for the semantics.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// use hotbreaker::{Breaker, CallError, ManualClock, State};
///
/// let clock = ManualClock::new();
/// let breaker = Breaker::builder()
///     .consecutive_failures(3)
///     .open_duration(Duration::from_secs(10))
///     .clock(clock.clone())
///     .build()?;
///
/// // Three failures in a row trip it; the next call is turned away without being made.
/// for _ in 0..3 {
///     let _ = breaker.call(|| Err::<(), _>("connection refused"));
/// }
/// assert_eq!(breaker.state(), State::Open);
/// match breaker.call(|| Ok::<_, &str>("not called")) {
///     Err(CallError::Rejected(rejected)) => {
///         assert_eq!(rejected.retry_after(), Some(Duration::from_secs(10)));
///     }
///     other => panic!("expected a rejection, got {other:?}"),
/// }
///
/// // Once the open period is over, one probe goes through; its success closes the breaker.
/// clock.advance(Duration::from_secs(10));
/// let probe = breaker.try_acquire().expect("a probe is let through");
/// assert!(probe.is_probe());
/// probe.success();
/// assert_eq!(breaker.state(), State::Closed);
/// assert_eq!(breaker.metrics().rejected, 1);
/// # Ok::<(), hotbreaker::ConfigError>(())
/// ```
///
/// # Performance
///
/// - [`try_acquire`](Breaker::try_acquire) while closed: one atomic load. Wait-free.
/// - A success while the window holds no failure, once a rate window has filled: one atomic
///   load, no write (with `count_successes`, one store to a cache line this thread owns).
///   Wait-free. The first `W` calls after the breaker is built or closes take places in the
///   window, with a few compare-and-swaps each.
/// - A success while a failure is in the window: one store to this thread's line (two with
///   `count_successes`); now and then, a read of every stripe. No shared write, but for the
///   success that makes the window clean again, which sets the state word's quiet bit.
/// - A failure: a compare-and-swap on the window word and a read of every stripe; lock-free.
/// - A rejection while open: one clock reading; no shared write.
/// - With a `slow_call` limit, every call: two clock readings and two compare-and-swaps on
///   this thread's line (the call entering and leaving the calls out); now and then, a
///   sweep of every stripe's calls out.
///
/// No call path takes a lock. None allocates, but for a thread's first call off the healthy
/// path (its first failure, or its first success while a rate window fills or holds a
/// failure): it claims the thread's counter stripe, which may allocate once per thread.
pub struct Breaker<C: Clock = QuantaClock> {
    /// The state word and the end of the open period: read by every call, written only by
    /// transitions and when the quiet bit changes (`quiet.rs`), so they share a line that
    /// stays in every reader's cache.
    control: CachePadded<Control>,
    windows: Windows,
    stripes: Stripes,
    transitions: CachePadded<TransitionCounts>,
    /// Sweeps of timed calls still out (`calls_out.rs`). On a line of its own: timed calls
    /// read it, and openings of buckets lower its due time.
    calls_out: CachePadded<CallsOutSweeps>,
    /// Read only off the healthy path: on trips, probes, and while the window holds failures.
    settings: Swappable<Settings>,
    clock: C,
    /// The clock's reading when the breaker was built. The breaker keeps its times from here
    /// (`now`): the words that hold a time next to a tag keep it modulo about nine years
    /// (`tagged_time.rs`), and a clock's epoch may be much older (the Unix epoch).
    clock_base: u64,
    listeners: Box<[Listener]>,
}

struct Control {
    state: AtomicU64,
    deadline: OpenDeadline,
    /// Failed probe rounds in a row behind the current open period: for the open back-off.
    open_streak: OpenStreak,
    /// When the newest probe of the half-open period was admitted: for the probe timeout.
    newest_probe: NewestProbe,
    waiters: Waiters,
    /// The `slow_call` limit in nanoseconds (`u64::MAX` without one), for timed permits'
    /// verdicts. Stored before the state word's timing bit is set: see `apply_copies`.
    slow_call_nanos: AtomicU64,
    /// The generation of the last opening applied from a store of shared openings, with
    /// [`FROM_STORE`] set; 0 before the first. Read by every follower of the breaker, so that
    /// none publishes such an opening as the breaker's own (`open_from_store`).
    from_store: AtomicU64,
}

/// Marks [`Control::from_store`] as naming a generation: generation 0 is one too.
const FROM_STORE: u64 = 1 << 32;

/// What a timed permit's end makes of its outcome (`timed_verdict`).
#[derive(Debug, Clone, Copy)]
enum TimedVerdict {
    /// A sweep judged the call while it was out: its end records nothing.
    Judged,
    /// The outcome stands.
    InTime(Outcome),
    /// A success that took longer than the `slow_call` limit: a failure, and a slow call.
    Slow,
}

/// How long an opening lasts.
#[derive(Debug, Clone, Copy)]
enum OpenPeriod {
    /// The configured open duration, backed off after failed probe rounds.
    Configured,
    /// Exactly this long: an opening decided elsewhere.
    Exactly(Duration),
    /// Exactly this long, applied from a store of shared openings: marked as such
    /// (`from_store`) before the listeners are told.
    FromStore(Duration),
}

struct CallsOutSweeps {
    /// The earliest time at which a bucket of timed calls still out may hold a hung call,
    /// `u64::MAX` if none, 0 to ask for a sweep at the next timed call.
    due: AtomicU64,
    /// Calls that sweeps judged slow while they were still out.
    hung: AtomicU64,
}

/// Counts written off the healthy path: by transitions, (`exported`) by metrics exports, and
/// (`quiet_losses`) by failures over a clean window.
#[derive(Default)]
struct TransitionCounts {
    openings: AtomicU64,
    half_openings: AtomicU64,
    closings: AtomicU64,
    /// When the breaker last closed (a probe round that succeeded, or a reset), on its own
    /// clock (`now`; 0, its building, until then): for `shared`, which stamps a recovery with
    /// it. Relaxed, and stored before the closing's swap of the state word (each attempt
    /// stores it again): a reader that acquires the state word and finds it closed reads this
    /// closing's time, or that of an attempt after it (moments later), never an earlier
    /// closing's, which would stamp the recovery before the opening it answers.
    closed_at: AtomicU64,
    /// What `metrics_export::export` has added to the exported counters for this breaker, by
    /// name: in the room the padding of this line leaves, so the feature adds no memory to
    /// the breaker (a name and seven numbers on the heap for each name it is exported under).
    #[cfg(feature = "metrics")]
    exported: crate::metrics_export::ExportedTotals,
    /// Failures between [`quiet_losing`](Breaker::quiet_losing) and
    /// [`quiet_lost`](Breaker::quiet_lost): while it is not 0, the quiet bit is not set
    /// (`quiet.rs`). Here, not beside the state word, whose line every call reads and which
    /// had no room left (it took the breaker 128 bytes more): a loss writes it twice, a setter
    /// reads it only when its first look finds every window clean (with a window per thread,
    /// or filling without a failure).
    quiet_losses: AtomicU32,
}

impl Breaker<QuantaClock> {
    /// Starts configuring a breaker; see [`Builder`] for the settings and their defaults.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::Breaker;
    /// use std::time::Duration;
    ///
    /// let breaker = Breaker::builder()
    ///     .failure_rate(0.5, 20)
    ///     .consecutive_failures(5)
    ///     .open_duration(Duration::from_secs(1))
    ///     .build()?;
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn builder() -> Builder<QuantaClock> {
        Builder::new()
    }
}

impl<C: Clock> Breaker<C> {
    pub(crate) fn new(settings: Settings, clock: C, listeners: Box<[Listener]>) -> Self {
        let initial = StateWord::new(State::Closed, 0)
            .with_counting(settings.config.count_successes)
            .with_timing(settings.slow_call.is_some());
        let breaker = Breaker {
            control: CachePadded::new(Control {
                state: AtomicU64::new(initial.0),
                deadline: OpenDeadline::new(),
                open_streak: OpenStreak::new(),
                newest_probe: NewestProbe::new(),
                waiters: Waiters::new(),
                slow_call_nanos: AtomicU64::new(slow_call_nanos(&settings)),
                from_store: AtomicU64::new(0),
            }),
            windows: Windows::new(&settings, initial.generation()),
            stripes: Stripes::new(settings.stripes),
            transitions: CachePadded::new(TransitionCounts::default()),
            calls_out: CachePadded::new(CallsOutSweeps {
                due: AtomicU64::new(u64::MAX),
                hung: AtomicU64::new(0),
            }),
            settings: Swappable::new(settings),
            clock_base: clock.now_nanos(),
            clock,
            listeners,
        };
        // A window with no rate rule to fill starts clean.
        breaker.publish_quiet(initial.generation());
        breaker
    }

    /// What `metrics_export::export` has added to the exported counters for this breaker.
    #[cfg(feature = "metrics")]
    pub(crate) fn exported_totals(&self) -> &crate::metrics_export::ExportedTotals {
        &self.transitions.exported
    }

    /// Asks to make one call.
    ///
    /// # Errors
    ///
    /// [`Rejected`] while open (until the open period ends), while half-open with all probes
    /// out, and while forced open.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, State};
    ///
    /// let breaker = Breaker::builder().consecutive_failures(1).build()?;
    /// let permit = breaker.try_acquire().expect("closed: every call is admitted");
    /// permit.failure(); // the call failed: one failure in a row trips
    /// let rejected = breaker.try_acquire().expect_err("open");
    /// assert_eq!(rejected.state(), State::Open);
    /// assert!(rejected.retry_after().is_some());
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    #[inline(always)]
    pub fn try_acquire(&self) -> Result<Permit<'_, C>, Rejected> {
        match self.try_acquire_healthy() {
            Ok(permit) => Ok(permit),
            Err(word) => self.acquire_other(word),
        }
    }

    /// A permit if the breaker is closed and does not count successes: the healthy case, as a
    /// separate entry so that callers can keep it apart from every other. Otherwise the state
    /// word it read, for [`acquire_other`](Breaker::acquire_other).
    #[inline(always)]
    pub(crate) fn try_acquire_healthy(&self) -> Result<Permit<'_, C>, StateWord> {
        self.try_acquire_healthy_word().map(|(permit, _)| permit)
    }

    /// [`try_acquire_healthy`](Breaker::try_acquire_healthy), with the state word it admitted
    /// under: for [`call`](Breaker::call), which asks after the call whether it still holds,
    /// quiet ([`is_quiet_since`](Breaker::is_quiet_since)).
    #[inline(always)]
    pub(crate) fn try_acquire_healthy_word(&self) -> Result<(Permit<'_, C>, StateWord), StateWord> {
        // Acquire: pairs with the transition that published this state, so whatever it did
        // before (the open deadline, the cleared window) is visible to this permit's verdict.
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        if word.is_closed_and_plain() {
            let permit = Permit::new(self, word.generation(), PermitKind::Closed, None);
            Ok((permit, word))
        } else {
            Err(word)
        }
    }

    /// [`try_acquire`](Breaker::try_acquire) for a state word that is not the healthy case,
    /// out of line so that the healthy case stays small enough to inline; `#[cold]` lays the
    /// caller's healthy case out as the straight path.
    #[cold]
    #[inline(never)]
    fn acquire_other(&self, word: StateWord) -> Result<Permit<'_, C>, Rejected> {
        self.acquire_counting_rejection(word)
    }

    /// [`try_acquire`](Breaker::try_acquire), with the state word the permit was admitted
    /// under if that word was quiet: for callers that end the permit with
    /// [`Permit::record_unless_quiet`] (`call_async`, the tower service).
    #[inline]
    pub(crate) fn try_acquire_noting_quiet(
        &self,
    ) -> Result<(Permit<'_, C>, Option<StateWord>), Rejected> {
        match self.try_acquire_healthy_word() {
            Ok((permit, word)) => Ok((permit, word.is_quiet().then_some(word))),
            Err(word) => Ok((self.acquire_other(word)?, None)),
        }
    }

    /// [`acquire_other`](Breaker::acquire_other) inlined, for callers that are out of line
    /// already.
    #[inline(always)]
    pub(crate) fn acquire_counting_rejection(
        &self,
        word: StateWord,
    ) -> Result<Permit<'_, C>, Rejected> {
        self.acquire_unless_closed(word)
            .map_err(|rejected| self.count_rejection(rejected))
    }

    /// [`try_acquire`](Breaker::try_acquire) without counting a rejection: for callers that
    /// wait and try again, and count only the rejection they give up on.
    pub(crate) fn acquire_uncounted(&self) -> Result<Permit<'_, C>, Rejected> {
        match self.try_acquire_healthy() {
            Ok(permit) => Ok(permit),
            Err(word) => self.acquire_unless_closed(word),
        }
    }

    /// The rejection of a breaker that is open with its period running, counted; `None` for
    /// any other state word. Out of line and small, for `call`: the rejection that repeats
    /// while a dependency is down pays no more than it needs.
    #[cold]
    #[inline(never)]
    pub(crate) fn rejection_while_open(&self, word: StateWord) -> Option<Rejected> {
        let left = self.open_period_left_to_reject(word)?;
        Some(self.count_rejection(self.reject(State::Open, Some(left))))
    }

    /// [`open_period_left`](Breaker::open_period_left) for a call that is about to be turned
    /// away, from the clock's bound on the time when that bound falls before the period's end
    /// ([`Clock::upper_bound_nanos`]): no clock read then, and the time left is short of the
    /// exact one by as much as the bound is late. Otherwise, or with no bound, the clock is
    /// read as for `open_period_left`, so the period still ends when the clock says.
    #[inline(always)]
    fn open_period_left_to_reject(&self, word: StateWord) -> Option<Duration> {
        if word.state() != State::Open {
            return None;
        }
        if let Some(upper) = self.clock.upper_bound_nanos() {
            let upper = upper.saturating_sub(self.clock_base);
            if let Some(left) = self
                .control
                .deadline
                .remaining_nanos(word.generation(), upper)
            {
                return Some(Duration::from_nanos(left));
            }
        }
        self.open_period_left(word)
    }

    /// What is left of the open period, if `word` is an open state word whose period runs.
    #[inline(always)]
    fn open_period_left(&self, word: StateWord) -> Option<Duration> {
        if word.state() != State::Open {
            return None;
        }
        let remaining = self
            .control
            .deadline
            .remaining_nanos(word.generation(), self.now())?;
        Some(Duration::from_nanos(remaining))
    }

    /// Turns a call away without asking for a permit, counted as a rejection: for the tower
    /// layer, whose `poll_ready` found the breaker open and left the inner service unready.
    /// Asking for a permit instead would start a half-open period (and count a released
    /// permit) for a call that cannot be made. While open, the rejection says what is left of
    /// the open period; forced open, that no period ends; half-open, or once the open period
    /// has ended or something closed the breaker meanwhile, "open, retry now" (a rejection
    /// only ever names the states that reject).
    ///
    /// Half-open with every probe place taken, the rejection says so, and if the probes out
    /// have run past the probe timeout, this call opens the breaker again as a call that asked
    /// for a permit would: a service whose callers all go through the layer would otherwise
    /// never reopen after a probe that hangs.
    #[cfg(feature = "tower")]
    pub(crate) fn shed(&self) -> Rejected {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        if let Some(rejected) = self.rejection_while_open(word) {
            return rejected;
        }
        let rejected = match word.state() {
            State::ForcedOpen => self.reject(State::ForcedOpen, None),
            State::HalfOpen => {
                let settings = self.settings();
                // A place came free since `poll_ready` looked, or the word changed while this
                // call gave overdue probes up: retry now.
                let retry_now = || self.reject(State::Open, Some(Duration::ZERO));
                if word.probes_out() < settings.half_open_probes {
                    retry_now()
                } else {
                    self.reject_or_look_again(word, &settings)
                        .unwrap_or_else(retry_now)
                }
            }
            // Closed meanwhile, or the open period ended: only ever name a state that rejects.
            _ => self.reject(State::Open, Some(Duration::ZERO)),
        };
        self.count_rejection(rejected)
    }

    /// Whether a call now would be turned away without a transition to make: open with its
    /// period running, forced open, or half-open with every probe place taken. For the tower
    /// layer's `poll_ready`, which then answers at once instead of waiting on an inner service
    /// that may be stuck on the dependency the breaker is protecting.
    #[cfg(feature = "tower")]
    #[inline]
    pub(crate) fn sheds(&self) -> bool {
        // Acquire, as every reader of the state word: a peek, and `shed` decides again.
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        match word.state() {
            State::Closed | State::ForcedClosed => false,
            State::ForcedOpen => true,
            State::Open => self.open_period_left_to_reject(word).is_some(),
            State::HalfOpen => word.probes_out() >= self.settings().half_open_probes,
        }
    }

    /// Nanoseconds on the breaker's clock since the breaker was built: the time every
    /// decision uses.
    #[inline(always)]
    fn now(&self) -> u64 {
        self.clock.now_nanos().saturating_sub(self.clock_base)
    }

    #[inline]
    pub(crate) fn count_rejection(&self, rejected: Rejected) -> Rejected {
        self.stripes.bump(Counter::Rejected);
        rejected
    }

    pub(crate) fn waiters(&self) -> &Waiters {
        &self.control.waiters
    }

    /// Like [`try_acquire`](Breaker::try_acquire), for a breaker in an [`Arc`]: the permit
    /// keeps the breaker alive and can move into a `'static` future.
    ///
    /// # Errors
    ///
    /// [`Rejected`], as for [`try_acquire`](Breaker::try_acquire).
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    pub fn try_acquire_owned(self: &Arc<Self>) -> Result<OwnedPermit<C>, Rejected> {
        let (generation, kind, timing) = self.try_acquire()?.into_parts();
        Ok(OwnedPermit::new(Arc::clone(self), generation, kind, timing))
    }

    /// [`try_acquire_owned`](Breaker::try_acquire_owned), with the quiet state word the permit
    /// was admitted under, as [`try_acquire_noting_quiet`](Breaker::try_acquire_noting_quiet).
    #[cfg(feature = "tower")]
    pub(crate) fn try_acquire_owned_noting_quiet(
        self: &Arc<Self>,
    ) -> Result<(OwnedPermit<C>, Option<StateWord>), Rejected> {
        let (permit, quiet) = self.try_acquire_noting_quiet()?;
        let (generation, kind, timing) = permit.into_parts();
        let owned = OwnedPermit::new(Arc::clone(self), generation, kind, timing);
        Ok((owned, quiet))
    }

    #[inline(always)]
    fn acquire_unless_closed(&self, word: StateWord) -> Result<Permit<'_, C>, Rejected> {
        // Closed while successes are counted (`count_successes`) or calls timed
        // (`slow_call`): every call of such a breaker comes here, so it is admitted at once,
        // as the loop below would.
        if word.state() == State::Closed {
            return match self.closed_permit(word) {
                Ok(permit) => Ok(permit),
                Err(changed) => self.acquire_by_transition(changed),
            };
        }
        // Open, and the period not over: the rejection that repeats while a dependency is
        // down, decided before the transition loop below is set up. The same decision as the
        // loop's first round for `State::Open`.
        if let Some(left) = self.open_period_left_to_reject(word) {
            return Err(self.reject(State::Open, Some(left)));
        }
        self.acquire_by_transition(word)
    }

    /// The permit of a closed breaker whose word is not the healthy case's; `Err` with the
    /// state word as it now stands if the sweep of hung calls that this call ran changed it
    /// (tripped the breaker), for the caller to decide again.
    #[inline(always)]
    fn closed_permit(&self, word: StateWord) -> Result<Permit<'_, C>, StateWord> {
        let kind = if word.counts_successes() {
            PermitKind::ClosedCounted
        } else {
            PermitKind::Closed
        };
        let timing = if word.times_calls() {
            Some(self.time_closed_call(word)?)
        } else {
            None
        };
        Ok(Permit::new(self, word.generation(), kind, timing))
    }

    /// The timing of a probe or forced permit admitted under `word`, if the breaker times
    /// calls: only the issue time (the probe timeout watches probes that hang).
    #[inline(always)]
    fn issue_time(&self, word: StateWord) -> Option<Timing> {
        word.times_calls().then(|| Timing {
            issued_at: self.now(),
            ticket: OutTicket::NONE,
        })
    }

    /// Times a closed call admitted under `word`: reads the clock, sweeps the calls out if a
    /// bucket of them is due, and enters this call among them (`calls_out.rs`). `Err` with
    /// the state word as it now stands if the sweep judged hung calls and the word changed.
    #[inline(never)]
    fn time_closed_call(&self, word: StateWord) -> Result<Timing, StateWord> {
        let generation = word.generation();
        let now = self.now();
        // Relaxed: a hint; the sweep's claim below is what orders.
        if self.calls_out.due.load(Ordering::Relaxed) <= now {
            self.sweep_before_admitting(word, now)?;
        }
        // Relaxed: stored before the timing bit that sent this call here; see `timed_verdict`.
        let limit = self.control.slow_call_nanos.load(Ordering::Relaxed);
        if limit == u64::MAX {
            // The limit is being removed (the timing bit is about to go): a bucket entered now
            // would never be due.
            return Ok(Timing {
                issued_at: now,
                ticket: OutTicket::NONE,
            });
        }
        let (stripe_index, stripe) = self.stripes.local_indexed();
        let mut entered = stripe.calls_out.enter(generation, now, limit);
        if entered.is_none() {
            // Every place holds a bucket: a sweep frees those of ended generations and those
            // left empty, so sweep now (whatever the due time says) and try once more.
            self.calls_out.due.fetch_min(0, Ordering::AcqRel);
            self.sweep_before_admitting(word, now)?;
            entered = stripe.calls_out.enter(generation, now, limit);
        }
        let ticket = match entered {
            Some(entered) => {
                if entered.opened {
                    // Release, after the entry: a sweep that claims the due time this lowers
                    // (acquire) sees the entry, so it cannot read the bucket as empty.
                    self.calls_out
                        .due
                        .fetch_min(bucket_due(now, limit), Ordering::AcqRel);
                }
                OutTicket::new(stripe_index, entered)
            }
            None => OutTicket::NONE,
        };
        Ok(Timing {
            issued_at: now,
            ticket,
        })
    }

    /// Sweeps the calls out before admitting a call under `word`: `Err` with the state word as
    /// it now stands if the sweep judged hung calls and the word changed (they tripped it).
    fn sweep_before_admitting(&self, word: StateWord, now: u64) -> Result<(), StateWord> {
        if self.sweep_calls_out(now) {
            let current = StateWord(self.control.state.load(Ordering::Acquire));
            if current != word {
                return Err(current);
            }
        }
        Ok(())
    }

    /// Judges the timed calls still out at `now`: those of the current closed generation out
    /// longer than the limit are slow calls (failures for every rule), those of an ended
    /// generation are released. Whether it judged any call slow.
    ///
    /// One sweep at a time: the sweeper claims the due time by swapping it for `u64::MAX`,
    /// reads every bucket, and lowers the due time to the earliest due time of the buckets
    /// it left. Why no bucket is forgotten: every bucket is opened by an entry that then
    /// lowers the due time (release). If that lowering comes before the claim in the due
    /// time's order of changes, the claim (acquire; every change of the due time is a
    /// read-modify-write, so the claim reads the end of a release sequence that includes it)
    /// makes the entry visible to this sweep, which either takes the bucket or counts its due
    /// time. If it comes after, it lowers the `u64::MAX` of the claim or what this sweep left,
    /// and the sweeper's own lowering is a minimum too, so neither undoes the other.
    #[cold]
    #[inline(never)]
    fn sweep_calls_out(&self, now: u64) -> bool {
        let due = self.calls_out.due.load(Ordering::Relaxed);
        // AcqRel: the claim reads the due time that entries lowered after entering (release),
        // so this sweep sees every bucket whose opening is behind the value it claims.
        if due > now
            || self
                .calls_out
                .due
                .compare_exchange(due, u64::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        let generation = word.generation();
        let limit = self.control.slow_call_nanos.load(Ordering::Relaxed);
        let mut swept = Swept::empty();
        // Each stripe's hung calls go to the window of the threads that issued them (with a
        // window per thread, that stripe's), not the sweeper's. The first trip is made once
        // every stripe is swept and the due time lowered: its listeners run after the sweep.
        let mut trip = None;
        for (index, stripe) in self.stripes.all_indexed() {
            let hung_before = swept.hung;
            stripe.calls_out.sweep(
                generation,
                word.is_closed(),
                || self.now(),
                || StateWord(self.control.state.load(Ordering::Acquire)).generation(),
                limit,
                &mut swept,
            );
            let hung = swept.hung - hung_before;
            let judged = self.count_hung_calls(generation, hung, index, trip.is_none());
            trip = trip.or(judged);
        }
        self.calls_out
            .due
            .fetch_min(swept.next_due, Ordering::AcqRel);
        self.stripes
            .local()
            .add(Counter::Released, swept.ended_generation);
        if let Some(cause) = trip {
            self.trip(generation, cause);
        }
        swept.hung > 0
    }

    /// Counts `hung` calls of closed `generation`, issued by threads of stripe `index` and
    /// taken from the calls out, as slow failures; if `judge`, records them one by one in
    /// that stripe's window until one meets a rule, and returns the cause for the caller to
    /// trip the breaker with.
    fn count_hung_calls(
        &self,
        generation: u32,
        hung: u64,
        index: u32,
        judge: bool,
    ) -> Option<TripCause> {
        if hung == 0 {
            return None;
        }
        self.stripes.local().add(Counter::Failures, hung);
        // Release, after the failures: `metrics` reads the slow calls before the failures.
        self.stripes.add_after(Counter::SlowCalls, hung);
        // Release, after the stripes' counts: `metrics` loads this first (acquire), so a
        // snapshot never shows more hung calls than slow calls.
        self.calls_out.hung.fetch_add(hung, Ordering::Release);
        if !judge {
            return None;
        }
        for _ in 0..hung {
            match self.windows.record_failure_of_stripe(
                index,
                &self.settings,
                generation,
                &self.stripes,
                || self.is_closed_in(generation),
                &self.losing_quiet(generation),
            ) {
                Judgement::Trip(cause) => return Some(cause),
                Judgement::Stale => return None,
                Judgement::Keep => {}
            }
        }
        None
    }

    /// Ends a permit of `generation` with `outcome`: takes a timed call out of the calls still
    /// out, judges its time, and records the verdict, unless a sweep already counted the call
    /// as slow (or as released, its generation over).
    #[inline(always)]
    pub(crate) fn end_with(
        &self,
        generation: u32,
        kind: PermitKind,
        timing: Option<Timing>,
        outcome: Outcome,
    ) {
        let Some(timing) = timing else {
            self.record(generation, kind, outcome);
            return;
        };
        match self.timed_verdict(generation, timing, outcome) {
            TimedVerdict::Judged => {}
            TimedVerdict::InTime(outcome) => self.record(generation, kind, outcome),
            TimedVerdict::Slow => {
                // Both counts before the judgement, which may trip the breaker and run the
                // listeners (which may read the metrics, or panic). The slow call after the
                // failure, with release: a snapshot reads the slow calls first (acquire), so it
                // never shows more of them than of failures.
                self.stripes.bump(Counter::Failures);
                self.stripes.add_after(Counter::SlowCalls, 1);
                self.judge_failure(generation, kind);
            }
        }
    }

    /// Whether the call of a timed permit, ending at `now`, still counts: `false` if a sweep
    /// took it first, or if it has been out too long for its end to trust its bucket's name
    /// (`Left::OutTooLong`), when this end takes the bucket's place and counts its calls.
    fn leave_calls_out(&self, generation: u32, timing: Timing, now: u64) -> bool {
        let Some((stripe_index, entered)) = timing.ticket.entry() else {
            return true;
        };
        let stripe = self.stripes.by_index(stripe_index);
        match stripe
            .calls_out
            .leave(entered, generation, timing.issued_at, now)
        {
            Left::Counted => true,
            Left::Taken => false,
            Left::OutTooLong => {
                // Out for over 100,000 limits: the call takes its place, and every call in it
                // is hung (or released, if their generation is over). If the place holds a
                // newer bucket with the same name, the call itself was taken long ago, and
                // the calls it takes now are still counted once, only early.
                let taken = stripe
                    .calls_out
                    .take_place(entered, generation, timing.issued_at);
                if self.is_closed_in(generation) {
                    if let Some(cause) =
                        self.count_hung_calls(generation, taken, stripe_index, true)
                    {
                        self.trip(generation, cause);
                    }
                } else {
                    self.stripes.local().add(Counter::Released, taken);
                }
                false
            }
        }
    }

    /// The verdict on a timed permit of `generation`, now that `outcome` is recorded: judged
    /// already by a sweep, a success that took longer than the `slow_call` limit (a failure,
    /// counted as a slow call), or `outcome` as it is. Relaxed: the limit is stored before the
    /// timing bit that sent the permit here is set (`apply_copies`), and the permit's
    /// admission read that bit with `Acquire`.
    #[inline(never)]
    fn timed_verdict(&self, generation: u32, timing: Timing, outcome: Outcome) -> TimedVerdict {
        let now = self.now();
        if !self.leave_calls_out(generation, timing, now) {
            return TimedVerdict::Judged;
        }
        if outcome != Outcome::Success {
            return TimedVerdict::InTime(outcome);
        }
        let limit = self.control.slow_call_nanos.load(Ordering::Relaxed);
        if now.saturating_sub(timing.issued_at) > limit {
            TimedVerdict::Slow
        } else {
            TimedVerdict::InTime(Outcome::Success)
        }
    }

    #[inline(never)]
    fn acquire_by_transition(&self, mut word: StateWord) -> Result<Permit<'_, C>, Rejected> {
        let backoff = Backoff::new();
        loop {
            let next = match word.state() {
                State::Closed => match self.closed_permit(word) {
                    Ok(permit) => return Ok(permit),
                    Err(changed) => {
                        word = changed;
                        continue;
                    }
                },
                State::ForcedClosed => {
                    return Ok(Permit::new(
                        self,
                        word.generation(),
                        PermitKind::Forced {
                            counted: word.counts_successes(),
                        },
                        self.issue_time(word),
                    ));
                }
                State::ForcedOpen => return Err(self.reject(State::ForcedOpen, None)),
                State::Open => {
                    let now = self.now();
                    if let Some(remaining) = self
                        .control
                        .deadline
                        .remaining_nanos(word.generation(), now)
                    {
                        return Err(self.reject(State::Open, Some(Duration::from_nanos(remaining))));
                    }
                    // The open period is over: this call becomes the first probe.
                    // Half-open after an opening that a failed round made is still after one.
                    let next = word
                        .next(State::HalfOpen)
                        .with_failed_round(word.after_failed_round())
                        .with_probes(1, 0)
                        .with_admission();
                    // Never turned away: its generation cannot be sealed yet.
                    let admitted = self.record_probe_admission(word, next, now);
                    debug_assert!(admitted);
                    next
                }
                State::HalfOpen => {
                    let settings = self.settings();
                    if word.probes_out() >= settings.half_open_probes {
                        match self.reject_or_look_again(word, &settings) {
                            Some(rejected) => return Err(rejected),
                            None => {
                                // The probes were overdue, but the word changed before this
                                // call could reopen: a verdict, a freed place, a flipped bit.
                                // Decide again from the word as it now stands.
                                word = StateWord(self.control.state.load(Ordering::Acquire));
                                continue;
                            }
                        }
                    }
                    let next = word
                        .with_probes(word.probes_out() + 1, word.probe_successes())
                        .with_admission();
                    if !self.record_probe_admission(word, next, self.now()) {
                        // Sealed: a call that found every probe out past the timeout is
                        // opening the breaker again, and no probe of this period is admitted.
                        // Finish that opening rather than wait on the sealer.
                        if let Some(rejected) = self.finish_sealed_reopening(word.generation()) {
                            return Err(rejected);
                        }
                        word = StateWord(self.control.state.load(Ordering::Acquire));
                        continue;
                    }
                    next
                }
            };
            // AcqRel: a probe admitted here sees the transition it follows, and the next
            // admission sees this one.
            match self.control.state.compare_exchange(
                word.0,
                next.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // The permit first: if a listener panics, unwinding drops it, and the
                    // probe's place is given back instead of held for good.
                    let permit = Permit::new(
                        self,
                        next.generation(),
                        PermitKind::Probe {
                            counted: next.counts_successes(),
                        },
                        self.issue_time(next),
                    );
                    if word.state() == State::Open {
                        self.transitions
                            .half_openings
                            .fetch_add(1, Ordering::Relaxed);
                        self.announce(word, next, Trigger::OpenPeriodEnded, None);
                    }
                    return Ok(permit);
                }
                Err(seen) => word = StateWord(seen),
            }
            backoff.spin();
        }
    }

    /// The rejection of a call that finds half-open `word` with every probe place taken: as
    /// half-open, unless the probes out have run past the probe timeout, when this call opens
    /// the breaker again ([`reopen_if_probes_timed_out`](Breaker::reopen_if_probes_timed_out)).
    /// `None` when the probes out were overdue and the state word changed before this call
    /// could open the breaker again (a verdict, a freed place, a reconfiguration's bit): the
    /// caller then reads the word again, rather than turn the call away as half-open from a
    /// breaker that may have closed or freed a place meanwhile, which no order of the two
    /// gives. For a call that asked for a permit and for one the tower layer shed alike.
    fn reject_or_look_again(&self, word: StateWord, settings: &Settings) -> Option<Rejected> {
        match settings.probe_timeout {
            None => Some(self.reject(State::HalfOpen, None)),
            Some(timeout) => match self.reopen_if_probes_timed_out(word, timeout) {
                Reopening::NotDue => Some(self.reject(State::HalfOpen, None)),
                Reopening::Opened(rejected) => Some(rejected),
                Reopening::Changed => None,
            },
        }
    }

    /// Records that the probe `next` admits (from `word`) is admitted at `now`, before the
    /// compare-and-swap that admits it: see `newest_probe.rs`. The check is of `word`'s
    /// generation, not of the word exactly: a reconfiguration may flip a bit of the word and
    /// flip it back between this check and the swap, which then succeeds, and the probe would
    /// be out with no time recorded (never timed out). Whether the probe may be admitted:
    /// not if its half-open period is sealed, to be opened again.
    fn record_probe_admission(&self, word: StateWord, next: StateWord, now: u64) -> bool {
        self.control.newest_probe.record(
            next.generation(),
            now,
            word.state() == State::Open,
            || {
                StateWord(self.control.state.load(Ordering::Acquire)).generation()
                    == word.generation()
            },
        )
    }

    /// Opens the breaker again if every probe out in half-open `word` has been out longer
    /// than `timeout`, and returns the rejection of the call that found it so; `None` if they
    /// have not, or if the word changed meanwhile (then the call is rejected as half-open, as
    /// it found the breaker). If another call has sealed the generation, this call finishes
    /// that opening ([`finish_sealed_reopening`](Breaker::finish_sealed_reopening)). Every
    /// probe out was admitted
    /// no later than the newest one recorded for the word's generation, which was recorded
    /// before its admission, so that one's age is the youngest age of them all.
    ///
    /// The state word cannot tell that no probe was admitted since: probes that end and are
    /// admitted again bring it back bit for bit once its admission count wraps. So just
    /// before the swap, with the word as it was, this call seals the newest probe's word from
    /// the very time it decided on (`newest_probe.rs`): a probe admitted since has changed
    /// that time, and the seal fails; none is admitted after it. Sealed, the generation is
    /// any call's to open, from whatever half-open word of it a verdict leaves.
    fn reopen_if_probes_timed_out(&self, word: StateWord, timeout: Duration) -> Reopening {
        let generation = word.generation();
        let Some(newest) = self.control.newest_probe.newest(generation) else {
            return Reopening::NotDue;
        };
        let Newest::Admitted(newest) = newest else {
            // Sealed: another call decided to open the breaker again; finish it.
            return self.finish_sealed_reopening(generation).into();
        };
        if probes_time_out_after(newest, timeout, self.now()) > 0 {
            return Reopening::NotDue;
        }
        // Checked with the state word `open_from_for` loaded, just before its swap. The seal is
        // a read-modify-write from the newest probe's word exactly as the decision read it:
        // what makes it sound is that word's single modification order (a probe recorded
        // before the seal is no younger than `newest`, one that comes after it is turned
        // away), not an ordering against the state word, whose swap is `AcqRel` as every
        // transition's. A mere load of that word here would not do: admissions may come
        // between the load and the swap (the loom model `a_word_back_bit_for_bit_...`).
        let sealed = Cell::new(false);
        let open_for = self.open_from_for(
            |current| {
                if sealed.get() {
                    // The swap failed: a verdict, a reconfiguration, or a probe recorded before
                    // the seal (no younger than `newest`) changed the word. No young one can.
                    current.state() == State::HalfOpen && current.generation() == generation
                } else {
                    let sealing =
                        current == word && self.control.newest_probe.seal(generation, newest);
                    sealed.set(sealing);
                    sealing
                }
            },
            Trigger::ProbesTimedOut,
            OpenPeriod::Configured,
        );
        match open_for {
            Some(opened) => Reopening::Opened(self.reject_as_opened(opened)),
            // Sealed, and another call finished the opening (or a verdict, a reset... ended
            // the generation): as a call that meets the seal.
            None if sealed.get() => self.finish_sealed_reopening(generation).into(),
            // Due, but the word changed before the seal: not this call's to decide from it.
            None => Reopening::Changed,
        }
    }

    /// Opens half-open `generation` again for timed-out probes, once its newest-probe word is
    /// sealed: the seal already proves every probe out of it, now or later, overdue, so any
    /// call may complete the opening (helping), and none waits on the sealer. The rejection
    /// of the calling call: as open, for the period this call opened or the one another call
    /// did; `None` if the generation ended otherwise (a verdict, a reset) and the breaker is
    /// not open, so that the call looks at the state again.
    fn finish_sealed_reopening(&self, generation: u32) -> Option<Rejected> {
        if let Some(opened) = self.open_from_for(
            |current| current.state() == State::HalfOpen && current.generation() == generation,
            Trigger::ProbesTimedOut,
            OpenPeriod::Configured,
        ) {
            return Some(self.reject_as_opened(opened));
        }
        let now = StateWord(self.control.state.load(Ordering::Acquire));
        let left = self.open_period_left(now)?;
        Some(self.reject(State::Open, Some(left)))
    }

    /// While half-open with a probe timeout: how long until every probe out has been out
    /// longer than the timeout, so that the next call opens the breaker again. Nothing
    /// announces that moment, so a waiter turned away as half-open sleeps no longer than
    /// this. `None` in any other state or with no probe timeout; zero once a call has decided
    /// to open the breaker again (sealed): the waiter's next try finishes that opening, so
    /// that no waiter sleeps on a sealer that was descheduled before its swap.
    pub(crate) fn probes_time_out_in(&self) -> Option<Duration> {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        if word.state() != State::HalfOpen {
            return None;
        }
        let timeout = self.settings().probe_timeout?;
        match self.control.newest_probe.newest(word.generation())? {
            // A call decided to open the breaker again; any call may finish it.
            Newest::Sealed => Some(Duration::ZERO),
            Newest::Admitted(newest) => {
                let left = probes_time_out_after(newest, timeout, self.now());
                Some(Duration::from_nanos(left))
            }
        }
    }

    /// The rejection of a call that has just opened `generation` (or finished its opening):
    /// as open, for what is left of the period as its deadline keeps it, in whole
    /// microseconds rounded up from the opening's time (more than the configured period, by
    /// up to a microsecond), less any time the listeners took; none if it is over already, or
    /// was ended, so that the caller tries again at once.
    fn reject_as_opened(&self, generation: u32) -> Rejected {
        let left = self
            .control
            .deadline
            .remaining_nanos(generation, self.now())
            .unwrap_or(0);
        self.reject(State::Open, Some(Duration::from_nanos(left)))
    }

    #[inline]
    fn reject(&self, state: State, retry_after: Option<Duration>) -> Rejected {
        Rejected::new(state, retry_after)
    }

    /// Records the verdict of a permit of `generation`.
    ///
    /// Only a success of a closed permit, the call that happens all day, is inlined into the
    /// caller; a counted one (`count_successes`) is one short call, and every other verdict
    /// goes to [`record_other`](Breaker::record_other).
    #[inline(always)]
    pub(crate) fn record(&self, generation: u32, kind: PermitKind, outcome: Outcome) {
        match (outcome, kind) {
            (Outcome::Success, PermitKind::Closed) => self.closed_success(generation),
            (Outcome::Success, PermitKind::ClosedCounted) => {
                self.counted_closed_success(generation)
            }
            _ => self.record_other(generation, kind, outcome, self.stripes.local()),
        }
    }

    /// [`end_with`](Breaker::end_with) for a permit whose caller asked the state word's quiet
    /// bit and found it off, or lost since admission (`call`, `call_async`, the tower
    /// service): a success of a plain closed permit then nearly always finds a failure in
    /// view, and goes to its thread's stripe before the window word
    /// ([`Windows::record_success_quickly_stripe_first`](crate::window::Windows::record_success_quickly_stripe_first)).
    #[inline(always)]
    pub(crate) fn end_after_quiet_check(
        &self,
        generation: u32,
        kind: PermitKind,
        timing: Option<Timing>,
        outcome: Outcome,
    ) {
        match (outcome, kind, timing) {
            (Outcome::Success, PermitKind::Closed, None) => {
                if !self
                    .windows
                    .record_success_quickly_stripe_first(generation, &self.stripes)
                {
                    self.closed_success_slow(generation);
                }
            }
            _ => self.end_with(generation, kind, timing, outcome),
        }
    }

    /// A success of a closed permit while successes are counted: the healthy path plus one
    /// store to this thread's stripe, kept apart from [`record_other`](Breaker::record_other)
    /// because on such a breaker it is every call.
    #[inline(never)]
    fn counted_closed_success(&self, generation: u32) {
        self.stripes.bump(Counter::Successes);
        self.closed_success(generation);
    }

    /// The healthy path of a success whose caller did not ask the quiet bit (a permit's own
    /// `success`, a breaker that counts successes): with the window clean, one load and no
    /// write (the state word the permit came from already said that successes are not
    /// counted); the thread's stripe is looked up only when something is to be written to it.
    #[inline(always)]
    fn closed_success(&self, generation: u32) {
        if !self
            .windows
            .record_success_quickly(generation, &self.stripes)
        {
            self.closed_success_slow(generation);
        }
    }

    /// A closed success the window could not record on its quick path. Out of line and
    /// returning nothing, so that the inlined path above neither spills the generation for
    /// `is_closed_in` nor keeps a slot for a judgement.
    #[cold]
    #[inline(never)]
    fn closed_success_slow(&self, generation: u32) {
        let judged =
            self.windows
                .record_success_slow(generation, &self.stripes, &self.settings, || {
                    self.is_closed_in(generation)
                });
        match judged {
            Judgement::Trip(cause) => self.trip(generation, cause),
            // The window may have filled clean, or forgotten its failures.
            Judgement::Keep => self.publish_quiet(generation),
            Judgement::Stale => {}
        }
    }

    /// Records any verdict but a success of a closed permit.
    #[inline(never)]
    fn record_other(
        &self,
        generation: u32,
        kind: PermitKind,
        outcome: Outcome,
        local: LocalStripe<'_>,
    ) {
        match outcome {
            Outcome::Success => {
                if kind.counts_success() {
                    local.bump(Counter::Successes);
                }
                match kind {
                    PermitKind::Closed | PermitKind::ClosedCounted => {
                        self.closed_success(generation)
                    }
                    PermitKind::Probe { .. } => self.probe_succeeded(generation),
                    PermitKind::Forced { .. } => {}
                }
            }
            Outcome::Failure => {
                local.bump(Counter::Failures);
                self.judge_failure(generation, kind);
            }
            Outcome::Ignore => {
                local.bump(Counter::Ignored);
                if kind.is_probe() {
                    self.probe_ended(generation);
                }
            }
        }
    }

    /// Feeds a failure of a permit of `generation`, counted already, to what `kind` answers
    /// to: the window's rules, or the half-open probes. It may trip the breaker, and the
    /// listeners then run: every count of the failure comes before. Inlined: out of line, a
    /// failure paid a call and its register saves (+19 instructions, `.ci/instructions`).
    #[inline(always)]
    fn judge_failure(&self, generation: u32, kind: PermitKind) {
        match kind {
            PermitKind::Closed | PermitKind::ClosedCounted => {
                let judged = self.windows.record_failure(
                    &self.settings,
                    generation,
                    &self.stripes,
                    || self.is_closed_in(generation),
                    &self.losing_quiet(generation),
                );
                if let Judgement::Trip(cause) = judged {
                    self.trip(generation, cause);
                }
            }
            PermitKind::Probe { .. } => self.probe_failed(generation),
            PermitKind::Forced { .. } => {}
        }
    }

    /// A permit of `generation` ended without a verdict.
    pub(crate) fn release(&self, generation: u32, kind: PermitKind, timing: Option<Timing>) {
        if let Some(timing) = timing {
            if !self.leave_calls_out(generation, timing, self.now()) {
                return; // a sweep counted it already
            }
        }
        self.stripes.bump(Counter::Released);
        if kind.is_probe() {
            self.probe_ended(generation);
        }
    }

    /// Copies into the breaker what it keeps of `settings` outside them, for paths that must
    /// not load them: the window's rules, the slow-call limit, and the state word's bits for
    /// success counting and timing. A reconfiguration repeats this until the settings it
    /// copied are still the ones stored (`window/mod.rs`, point 6, which holds for each of
    /// these places alone: each ends up with the copy of the settings stored last).
    fn apply_copies(&self, settings: &Settings) {
        self.windows.apply(settings);
        // The limit first, then the bit (release, in the compare-and-swap below): a permit
        // admitted under the bit (acquire) judges by this limit or a later one. A permit timed
        // under an earlier limit may be judged by this one; it raced the reconfiguration.
        self.control
            .slow_call_nanos
            .store(slow_call_nanos(settings), Ordering::Relaxed);
        // The buckets of calls out are due by the limit: ask the next timed call to sweep, so
        // that due times follow the new limit. A read-modify-write, not a store, so that it
        // continues the release sequence that sweeps claim from (`time_closed_call`).
        self.calls_out.due.swap(0, Ordering::AcqRel);
        let (count, time) = (
            settings.config.count_successes,
            settings.slow_call.is_some(),
        );
        // Not a transition: the generation stays, so no permit becomes stale.
        let mut word = StateWord(self.control.state.load(Ordering::Acquire));
        while word.counts_successes() != count || word.times_calls() != time {
            match self.control.state.compare_exchange_weak(
                word.0,
                word.with_counting(count).with_timing(time).0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(seen) => word = StateWord(seen),
            }
        }
    }

    fn is_closed_in(&self, generation: u32) -> bool {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        word.is_closed() && word.generation() == generation
    }

    /// Opens a breaker that is closed in `generation`, unless it has moved on.
    #[cold]
    fn trip(&self, generation: u32, cause: TripCause) {
        let from = |word: StateWord| word.is_closed() && word.generation() == generation;
        let trigger = Trigger::Tripped {
            rule: cause.rule,
            failures: cause.failures,
            calls: cause.calls,
        };
        self.open_from(from, trigger);
    }

    /// A probe of `generation` failed: reopen.
    fn probe_failed(&self, generation: u32) {
        self.open_from(
            |word| word.state() == State::HalfOpen && word.generation() == generation,
            Trigger::ProbeFailed,
        );
    }

    /// Opens the breaker from a state word that `expected` accepts, for the configured period.
    fn open_from(&self, expected: impl Fn(StateWord) -> bool, trigger: Trigger) {
        self.open_from_for(expected, trigger, OpenPeriod::Configured);
    }

    /// [`open_from`](Breaker::open_from) for `period`; the generation it opened, if it did.
    fn open_from_for(
        &self,
        expected: impl Fn(StateWord) -> bool,
        trigger: Trigger,
        period: OpenPeriod,
    ) -> Option<u32> {
        let mut settings = None;
        let now = self.now();
        let backoff = Backoff::new();
        let mut word = StateWord(self.control.state.load(Ordering::Acquire));
        while expected(word) {
            let (open_for, reopenings) = match period {
                OpenPeriod::Exactly(duration) | OpenPeriod::FromStore(duration) => (duration, 0),
                OpenPeriod::Configured => {
                    let settings = settings.get_or_insert_with(|| self.settings());
                    let reopenings = self.reopenings_before(word, settings);
                    (settings.open_period(reopenings), reopenings)
                }
            };
            let next = word.next(State::Open).with_failed_round(reopenings > 0);
            // The generation this opening leaves, not any word that `expected` accepts: an
            // opener that read an older word (an opening from outside accepts several) must not
            // write for the generation after it once the state has moved on. Not the exact
            // word either: a bit flipped and flipped back by reconfigurations would skip the
            // write and still let the swap from that word succeed, leaving no deadline.
            let still_possible = || {
                StateWord(self.control.state.load(Ordering::Acquire)).generation()
                    == word.generation()
            };
            // The count and the deadline first, then the state: see `open_streak.rs` and
            // `open_deadline.rs`. A count of 0 is what no count means.
            if reopenings > 0 {
                self.control
                    .open_streak
                    .publish(next.generation(), reopenings, still_possible);
            }
            if word.state() != State::HalfOpen {
                // No half-open period since the probe time kept there: see `forget`.
                self.control
                    .newest_probe
                    .forget(next.generation(), still_possible);
            }
            let deadline = now.saturating_add(crate::clock::saturating_nanos(open_for));
            self.control
                .deadline
                .publish(next.generation(), deadline, still_possible);
            // Ours, or a racing opener's that came first: see `take_over`.
            let published = self.control.deadline.load();
            match self.control.state.compare_exchange(
                word.0,
                next.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // Another opener of this transition may have written its deadline first
                    // (the first one written stays), with a period of its own: an opening
                    // from outside racing a failed probe. The period of the opening that won
                    // is this one, unless it was ended or extended since the swap; a call in
                    // between may have found the other's.
                    self.control
                        .deadline
                        .take_over(published, next.generation(), deadline);
                    self.transitions.openings.fetch_add(1, Ordering::Relaxed);
                    if let OpenPeriod::FromStore(_) = period {
                        // After the swap, and only with the generation the swap made, so the
                        // mark never names an opening of the breaker's own (a trip, which must
                        // be published); before the listeners, which may take long or panic.
                        // Relaxed: the mark carries nothing but its own value, and a follower
                        // that reads the state word between the swap and this store takes the
                        // opening for the breaker's own and publishes it (as before the mark
                        // existed): only one polling on another thread can.
                        self.control
                            .from_store
                            .store(FROM_STORE | u64::from(next.generation()), Ordering::Relaxed);
                    }
                    self.announce(word, next, trigger, Some(open_for));
                    return Some(next.generation());
                }
                Err(seen) => word = StateWord(seen),
            }
            backoff.spin();
        }
        None
    }

    /// Failed probe rounds in a row that an opening from `word` completes: from half-open,
    /// with a back-off to use them, at least this one (see `open_streak.rs`); none from any
    /// other state.
    fn reopenings_before(&self, word: StateWord, settings: &Settings) -> u32 {
        if word.state() != State::HalfOpen || settings.open_backoff.is_none() {
            return 0;
        }
        self.control
            .open_streak
            .rounds_ending_in(word.generation(), word.after_failed_round())
    }

    /// A probe of `generation` succeeded: close once enough have.
    fn probe_succeeded(&self, generation: u32) {
        let backoff = Backoff::new();
        let settings = self.settings();
        let mut word = StateWord(self.control.state.load(Ordering::Acquire));
        while word.state() == State::HalfOpen && word.generation() == generation {
            let successes = word.probe_successes() + 1;
            let closes = successes >= settings.success_threshold;
            let next = if closes {
                word.next(State::Closed)
            } else {
                word.with_probes(word.probes_out().saturating_sub(1), successes)
            };
            if closes && !self.prepare_closing(&settings, word, next) {
                word = StateWord(self.control.state.load(Ordering::Acquire));
                continue;
            }
            match self.control.state.compare_exchange(
                word.0,
                next.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if closes {
                        // The window was emptied for `next` before the swap (point 7 in
                        // `window/mod.rs`).
                        self.publish_quiet(next.generation());
                        self.transitions.closings.fetch_add(1, Ordering::Relaxed);
                        self.announce(word, next, Trigger::ProbesSucceeded { successes }, None);
                    } else {
                        self.waiters().notify(); // a probe place is free
                    }
                    return;
                }
                Err(seen) => word = StateWord(seen),
            }
            backoff.spin();
        }
    }

    /// A probe of `generation` ended without telling anything: free its place.
    fn probe_ended(&self, generation: u32) {
        let backoff = Backoff::new();
        let mut word = StateWord(self.control.state.load(Ordering::Acquire));
        while word.state() == State::HalfOpen && word.generation() == generation {
            let next =
                word.with_probes(word.probes_out().saturating_sub(1), word.probe_successes());
            match self.control.state.compare_exchange(
                word.0,
                next.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.waiters().notify(); // a probe place is free
                    return;
                }
                Err(seen) => word = StateWord(seen),
            }
            backoff.spin();
        }
    }

    /// Opens a closed or half-open breaker for `duration`, as if it had tripped but with this
    /// open period: for a decision made elsewhere, such as another instance that saw the
    /// dependency fail (see [`shared`](crate::shared)). When the period ends the breaker
    /// probes as after any opening. A breaker whose open period has ended but that no call
    /// has moved to half-open yet opens anew; one still in its open period, or forced, is left
    /// as it is. Returns whether this call opened it; listeners see [`Trigger::External`].
    /// The period ends on the microsecond, as [`open_duration`](crate::Builder::open_duration)'s
    /// does.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming `open_for` if `duration` is under a microsecond or above
    /// [`MAX_OPEN_DURATION`](crate::MAX_OPEN_DURATION); nothing changes then.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, State};
    /// use std::time::Duration;
    ///
    /// let breaker = Breaker::builder().build()?;
    /// assert!(breaker.open_for(Duration::from_secs(5))?);
    /// assert_eq!(breaker.state(), State::Open);
    /// assert!(!breaker.open_for(Duration::from_secs(5))?, "already open");
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn open_for(&self, duration: Duration) -> Result<bool, ConfigError> {
        crate::config::check_open_period("open_for", duration)?;
        Ok(self.open_externally(duration).is_some())
    }

    /// [`open_for`](Breaker::open_for) with a checked `duration`: the generation it opened.
    pub(crate) fn open_externally(&self, duration: Duration) -> Option<u32> {
        self.open_externally_for(OpenPeriod::Exactly(duration))
    }

    fn open_externally_for(&self, period: OpenPeriod) -> Option<u32> {
        self.open_from_for(
            |word| match word.state() {
                State::Closed | State::HalfOpen => true,
                State::Open => self.open_period_over(word),
                State::ForcedOpen | State::ForcedClosed => false,
            },
            Trigger::External,
            period,
        )
    }

    /// Ends the open period now, if the breaker is open (not forced) and its period still
    /// runs: the next call finds it half-open and probes, as when the period ends by itself,
    /// and callers waiting for a permit wake. For when the dependency was seen to recover
    /// elsewhere: another instance's probe (see [`shared`](crate::shared)), a health check.
    /// Returns whether this call ended a period. Nothing is announced to listeners: the
    /// transition to half-open that follows is.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, State};
    /// use std::time::Duration;
    ///
    /// let breaker = Breaker::builder().build()?;
    /// breaker.open_for(Duration::from_secs(60))?;
    /// assert!(breaker.try_acquire().is_err(), "rejected while the period runs");
    /// assert!(breaker.end_open_period());
    /// let probe = breaker.try_acquire().expect("the period is over: a probe");
    /// assert!(probe.is_probe());
    /// probe.success();
    /// assert_eq!(breaker.state(), State::Closed);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn end_open_period(&self) -> bool {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        word.state() == State::Open && self.end_opening(word.generation())
    }

    /// Ends the open period of `generation` now, if the breaker is still open in it and the
    /// period still runs. Only that generation's: an opening that came after it is left alone.
    pub(crate) fn end_opening(&self, generation: u32) -> bool {
        // Whole microseconds, rounded down: the deadline's unit, and a period that ends at
        // the latest now.
        let now = self.now() / 1000 * 1000;
        let running = self
            .control
            .deadline
            .remaining_nanos(generation, now)
            .is_some();
        let ended = running
            && self
                .control
                .deadline
                .reschedule(generation, now, || self.is_open_in(generation));
        if ended {
            // A waiter sleeping until the old end re-checks now.
            self.waiters().notify();
        }
        ended
    }

    /// Makes the open period of `generation` last until `open_for` from now, if the breaker is
    /// still open in it and that is later than its current end. A call that found the period
    /// over before the change still moves the breaker to half-open.
    #[cfg(not(loom))]
    pub(crate) fn extend_opening(&self, generation: u32, open_for: Duration) -> bool {
        let now = self.now();
        let end = now.saturating_add(crate::clock::saturating_nanos(open_for));
        let later = self
            .control
            .deadline
            .remaining_nanos(generation, now)
            .is_some_and(|left| now.saturating_add(left) < end);
        later
            && self
                .control
                .deadline
                .reschedule(generation, end, || self.is_open_in(generation))
    }

    fn is_open_in(&self, generation: u32) -> bool {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        word.state() == State::Open && word.generation() == generation
    }

    /// The rate rule and the open period in force, if there is a rate rule. (For `shared`,
    /// which loom builds leave out.)
    #[cfg(not(loom))]
    pub(crate) fn rate_rule(&self) -> Option<(crate::config::FailureRate, Duration)> {
        let settings = self.settings.load();
        settings
            .failure_rate
            .map(|rate| (rate, settings.open_duration))
    }

    /// The generation of the breaker's closed state, while it is closed (not forced). (For
    /// `shared`, which loom builds leave out.)
    #[cfg(not(loom))]
    pub(crate) fn closed_generation(&self) -> Option<u32> {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        (word.state() == State::Closed).then(|| word.generation())
    }

    /// [`open_externally`](Breaker::open_externally) for an opening that another instance
    /// published and a follower applies from the store: the generation it opened, marked as
    /// such for [`opened_from_store`](Breaker::opened_from_store), so that no follower of this
    /// breaker (under another name, or one built again after a registry change) publishes it
    /// as the breaker's own.
    pub(crate) fn open_from_store(&self, duration: Duration) -> Option<u32> {
        // Marked in `open_from_for`, right after its swap.
        self.open_externally_for(OpenPeriod::FromStore(duration))
    }

    /// Whether the opening of `generation` was applied from a store of shared openings
    /// ([`open_from_store`](Breaker::open_from_store)). The mark is of the last such opening
    /// only, and generations are 32 bits: one 2^32 transitions later reads as marked.
    pub(crate) fn opened_from_store(&self, generation: u32) -> bool {
        self.control.from_store.load(Ordering::Relaxed) == FROM_STORE | u64::from(generation)
    }

    /// How long ago the breaker last closed, on its own clock: see `closed_at`. (For
    /// `shared`.)
    #[cfg(not(loom))]
    pub(crate) fn closed_ago(&self) -> Duration {
        let closed_at = self.transitions.closed_at.load(Ordering::Relaxed);
        Duration::from_nanos(self.now().saturating_sub(closed_at))
    }

    /// The generation of the breaker's opening and what is left of its open period, while it
    /// is open (not forced) and the period runs. (For `shared`, which loom builds leave out.)
    #[cfg(not(loom))]
    pub(crate) fn current_opening(&self) -> Option<(u32, Duration)> {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        self.open_period_left(word)
            .map(|left| (word.generation(), left))
    }

    /// Opens the breaker until [`reset`](Breaker::reset) or
    /// [`force_closed`](Breaker::force_closed), whatever the calls do.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    pub fn force_open(&self) {
        self.move_to(State::ForcedOpen);
    }

    /// Lets every call through and never trips, until [`reset`](Breaker::reset) or
    /// [`force_open`](Breaker::force_open). Outcomes are still counted in the metrics.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    pub fn force_closed(&self) {
        self.move_to(State::ForcedClosed);
    }

    /// Closes the breaker with an empty window, from any state. Verdicts of permits issued
    /// before the reset do not count in the new window.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    ///
    /// # Examples
    ///
    /// An operator's switches: forced open, forced closed, then back to the rules.
    ///
    /// ```
    /// use hotbreaker::{Breaker, State};
    ///
    /// let breaker = Breaker::builder().consecutive_failures(1).build()?;
    /// breaker.force_open();
    /// assert_eq!(breaker.try_acquire().unwrap_err().state(), State::ForcedOpen);
    /// breaker.force_closed();
    /// breaker.try_acquire().unwrap().failure(); // counted, but never trips
    /// assert_eq!(breaker.state(), State::ForcedClosed);
    /// let early = breaker.try_acquire().unwrap(); // issued before the reset
    /// breaker.reset();
    /// early.failure(); // not counted in the new window
    /// assert_eq!(breaker.state(), State::Closed);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn reset(&self) {
        self.move_to(State::Closed);
    }

    fn move_to(&self, state: State) {
        let backoff = Backoff::new();
        let mut word = StateWord(self.control.state.load(Ordering::Acquire));
        loop {
            let next = word.next(state);
            if state == State::Closed && !self.prepare_closing(&self.settings(), word, next) {
                word = StateWord(self.control.state.load(Ordering::Acquire));
                continue;
            }
            match self.control.state.compare_exchange(
                word.0,
                next.0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if state == State::Closed {
                        if word.is_closed() {
                            // A reset from closed kept that generation's window until now
                            // (point 7 in `window/mod.rs`); from any other state it was
                            // emptied before the swap.
                            self.windows.begin(&self.settings(), next.generation(), || {
                                self.is_closed_in(next.generation())
                            });
                        }
                        // Its window may start clean (`quiet.rs`).
                        self.publish_quiet(next.generation());
                    }
                    self.announce(word, next, Trigger::Manual, None);
                    return;
                }
                Err(seen) => word = StateWord(seen),
            }
            backoff.spin();
        }
    }

    /// Before the compare-and-swap from `word` to closed `next`: times the closing
    /// (`closed_at`, before the swap, so that whoever finds the breaker closed finds its
    /// time), and empties the window for `next`'s generation (`window/mod.rs`, point 7).
    /// Returns `false` if the state word is no longer `word`, so that the caller reads it
    /// again.
    #[cold]
    #[inline(never)]
    fn prepare_closing(&self, settings: &Settings, word: StateWord, next: StateWord) -> bool {
        self.transitions
            .closed_at
            .store(self.now(), Ordering::Relaxed);
        self.windows
            .clear_before_closing(settings, next.generation(), word.is_closed(), || {
                self.control.state.load(Ordering::Acquire) == word.0
            })
    }

    /// Wakes waiters and tells the listeners; runs after the transition's CAS, outside every
    /// loop.
    fn announce(
        &self,
        from: StateWord,
        to: StateWord,
        trigger: Trigger,
        open_for: Option<Duration>,
    ) {
        self.waiters().notify();
        if self.listeners.is_empty() {
            return;
        }
        let transition = Transition {
            from: from.state(),
            to: to.state(),
            generation: to.generation(),
            trigger,
            at: Duration::from_nanos(self.clock.now_nanos()),
            open_for,
        };
        crate::listener::tell(
            &self.listeners,
            std::ptr::from_ref(self).addr(),
            &transition,
        );
    }

    /// The current state.
    ///
    /// An open breaker whose open period has ended reads as [`State::HalfOpen`]: the next call
    /// will be a probe.
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
    ///     .open_duration(Duration::from_secs(30))
    ///     .clock(clock.clone())
    ///     .build()?;
    /// breaker.try_acquire().unwrap().failure();
    /// assert_eq!(breaker.state(), State::Open);
    /// clock.advance(Duration::from_secs(30));
    /// assert_eq!(breaker.state(), State::HalfOpen, "the period is over: the next call probes");
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn state(&self) -> State {
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        match word.state() {
            State::Open if self.open_period_over(word) => State::HalfOpen,
            state => state,
        }
    }

    fn open_period_over(&self, word: StateWord) -> bool {
        self.control
            .deadline
            .remaining_nanos(word.generation(), self.now())
            .is_none()
    }

    /// A snapshot of the counters and the window.
    ///
    /// Counters are summed over the per-thread stripes with relaxed loads: each is exact once
    /// the threads that updated it are done (joined, or synchronized with the reader), and
    /// may lag by the calls in progress otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, State};
    ///
    /// let breaker = Breaker::builder().failure_rate(0.5, 4).build()?;
    /// for fails in [false, true, false] {
    ///     let _ = breaker.call(|| if fails { Err("refused") } else { Ok(()) });
    /// }
    /// let metrics = breaker.metrics();
    /// assert_eq!(metrics.state, State::Closed);
    /// assert_eq!(metrics.failures, 1);
    /// assert_eq!((metrics.window_failures, metrics.window_calls), (1, 3));
    /// assert_eq!(metrics.successes, None, "counted only with count_successes");
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn metrics(&self) -> Metrics {
        // Each part before its whole, with acquire, as each was counted after its whole with
        // release: hung calls, then slow calls, then the failures (`count_hung_calls`,
        // `end_with`). A snapshot never shows more of a part than of its whole.
        let hung_calls = self.calls_out.hung.load(Ordering::Acquire);
        let slow_calls = self.stripes.total_acquired(Counter::SlowCalls);
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        let window = if word.is_closed() {
            self.windows
                .snapshot(&self.settings(), word.generation(), &self.stripes)
        } else {
            Default::default()
        };
        Metrics {
            state: match word.state() {
                State::Open if self.open_period_over(word) => State::HalfOpen,
                state => state,
            },
            successes: word
                .counts_successes()
                .then(|| self.stripes.total(Counter::Successes)),
            failures: self.stripes.total(Counter::Failures),
            ignored: self.stripes.total(Counter::Ignored),
            released: self.stripes.total(Counter::Released),
            rejected: self.stripes.total(Counter::Rejected),
            slow_calls,
            hung_calls,
            openings: self.transitions.openings.load(Ordering::Relaxed),
            half_openings: self.transitions.half_openings.load(Ordering::Relaxed),
            closings: self.transitions.closings.load(Ordering::Relaxed),
            window_failures: window.failures,
            window_calls: window.calls,
            consecutive_failures: window.consecutive_failures,
            probes_out: if word.state() == State::HalfOpen {
                word.probes_out()
            } else {
                0
            },
        }
    }

    /// Bytes this breaker takes, its own struct included (listeners' captures excluded): a
    /// stripe per thread slot ([`Builder::stripes`](crate::Builder::stripes)), 8 bytes per
    /// failure record (the rate window or [`Builder::failure_records`], rounded up to a power
    /// of two) and, with [`Builder::per_thread_windows`], a window and its records per stripe.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::Breaker;
    ///
    /// let over = |window| {
    ///     let breaker = Breaker::builder().failure_rate(0.5, window).build().unwrap();
    ///     breaker.memory_footprint()
    /// };
    /// // A window of 1000 calls keeps 1024 records, one of 20 keeps 32.
    /// assert_eq!(over(1000) - over(20), 8 * (1024 - 32));
    /// ```
    ///
    /// [`Builder::failure_records`]: crate::Builder::failure_records
    /// [`Builder::per_thread_windows`]: crate::Builder::per_thread_windows
    pub fn memory_footprint(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.windows.heap_bytes()
            + self.stripes.heap_bytes()
            + std::mem::size_of_val(&*self.listeners)
    }

    /// The settings in force. Every read goes through here, off the healthy path: the thread is
    /// registered first, so that arc-swap's per-thread node is claimed with the rest of the
    /// thread's one-time setup (see `sync::prepare_thread`).
    fn settings(&self) -> crate::sync::SwappableGuard<Settings> {
        self.stripes.register_thread();
        self.settings.load()
    }

    /// The configuration in force.
    pub fn config(&self) -> Config {
        self.settings().config
    }

    /// Replaces the configuration of a live breaker, keeping its state, its window and its
    /// counters. The new open duration applies from the next opening, the new probe limits
    /// from the next probe decision.
    ///
    /// New rules judge what the window and the run hold at the next call that is judged: any
    /// failure, or a success that brings a filling window to its minimum or fills it. The
    /// reconfiguration itself trips nothing, even when what the breaker holds already meets a
    /// new rule, and neither does a success in a full window.
    ///
    /// What the window holds is what the old rules kept, so a changed rule sees the calls its
    /// new form would have kept only where the two agree:
    ///
    /// - The window keeps whether it is still filling, which its generation decided: a rate
    ///   rule added, or a window made longer, judges as a full window at once (its
    ///   `minimum_calls` waits only in a window filling since it was cleared).
    /// - A window made longer holds the failures the old one had not forgotten, which are all
    ///   those in the new window's view: a window forgets its failures only once at least its
    ///   length of successes, at least 64, and at least as many as the failure records it keeps
    ///   ([`Builder::failure_records`](crate::Builder::failure_records), the longest window a
    ///   reconfiguration may give it), have followed the newest. So it judges the last calls
    ///   of the new length.
    /// - While a window fills, the call that reaches the minimum and the call that fills the
    ///   window judge the generation's first `minimum_calls` calls by the rule in force then:
    ///   a threshold or a minimum lowered while it fills may trip on those first calls though
    ///   the window's rate as a whole is below the new threshold. A window made shorter while
    ///   it fills is judged once, when it reaches the new minimum.
    /// - Whether a success counts in [`Metrics::successes`](crate::Metrics::successes)
    ///   follows the `count_successes` in force when its permit was admitted.
    /// - A slow-call limit switched on times the calls admitted after it; calls already out
    ///   are judged by their verdict alone, except calls admitted under a limit that was
    ///   switched off and on again while they were out: the new limit judges them.
    ///
    /// For judgements exactly by the new rules, reconfigure while the breaker is open, or
    /// [`reset`](Breaker::reset) it after reconfiguring: the window then fills again from
    /// empty.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`Builder::build`] for a setting out of range, and also, since
    /// these are fixed when a breaker is built: a failure-rate window or a consecutive-failure
    /// run longer than the failure records the breaker keeps (what
    /// [`failure_records`](Builder::failure_records) reserved at build time, or else the
    /// longer of the two then, rounded up to a power of two), `failure_records` above that, a
    /// different number of stripes, or a different `per_thread_windows` (field
    /// `per_thread_windows`). A refused configuration changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hotbreaker::{Breaker, FailureRateConfig};
    ///
    /// let breaker = Breaker::builder().failure_rate(0.5, 20).build()?;
    /// let mut config = breaker.config();
    /// config.open_duration = Duration::from_secs(5);
    /// let quarter_of = |window| FailureRateConfig { threshold: 0.25, window, minimum_calls: None };
    /// config.failure_rate = Some(quarter_of(16));
    /// breaker.reconfigure(config)?;
    /// assert_eq!(breaker.config().open_duration, Duration::from_secs(5));
    ///
    /// // The failure records were sized for 20 calls (32, a power of two): 100 do not fit.
    /// config.failure_rate = Some(quarter_of(100));
    /// let err = breaker.reconfigure(config).unwrap_err();
    /// assert_eq!(err.field(), "failure_rate.window");
    /// assert_eq!(breaker.config().failure_rate.unwrap().window, 16, "nothing changed");
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn reconfigure(&self, config: Config) -> Result<(), ConfigError> {
        let settings = self.settings_for_reconfiguration(&config)?;
        self.settings.store(settings);
        // The window keeps its own copy of the rules. Two reconfigurations may race: each
        // copies what it finds stored, until it finds the same stored after its copy, so that
        // the copy agrees with the settings once both are done (`window/mod.rs`, point 6).
        loop {
            fence(Ordering::SeqCst);
            let stored = Settings::clone(&self.settings.load());
            self.apply_copies(&stored);
            fence(Ordering::SeqCst);
            if Settings::clone(&self.settings.load()) == stored {
                break;
            }
        }
        // A waiter on a half-open breaker whose probe places were all taken may fit now.
        self.waiters().notify();
        Ok(())
    }

    /// The settings [`reconfigure`](Breaker::reconfigure) would store for `config`, or its
    /// error; changes nothing.
    pub(crate) fn settings_for_reconfiguration(
        &self,
        config: &Config,
    ) -> Result<Settings, ConfigError> {
        let current = self.settings();
        let mut settings = Settings::validate(config)?;
        if config.stripes.is_none() {
            settings.stripes = current.stripes;
        }
        if settings.stripes != current.stripes {
            return Err(ConfigError::new(
                "stripes",
                format!(
                    "cannot change on a live breaker (it has {}), got {}",
                    current.stripes, settings.stripes
                ),
            ));
        }
        if settings.config.per_thread_windows != current.config.per_thread_windows {
            return Err(ConfigError::new(
                "per_thread_windows",
                format!(
                    "cannot change on a live breaker (it is {}), got {}",
                    current.config.per_thread_windows, settings.config.per_thread_windows
                ),
            ));
        }
        if let Some(records) = config.failure_records {
            if records > self.windows.capacity() {
                return Err(ConfigError::new(
                    "failure_records",
                    format!(
                        "cannot grow on a live breaker (it keeps {}), got {records}",
                        self.windows.capacity()
                    ),
                ));
            }
        }
        if !self.windows.fits(&settings) {
            // The longer of the two looks back too far; name it with the length asked for.
            let (field, asked) = match (settings.failure_rate, settings.consecutive_failures) {
                (Some(rate), Some(run)) if run > rate.window => ("consecutive_failures", run),
                (Some(rate), _) => ("failure_rate.window", rate.window),
                (None, run) => ("consecutive_failures", run.unwrap_or(0)),
            };
            return Err(ConfigError::new(
                field,
                format!(
                    "this breaker keeps {} failure records (sized when it was built; failure_records reserves more); build a new breaker for a longer window or run, got {asked}",
                    self.windows.capacity()
                ),
            ));
        }
        Ok(settings)
    }

    /// The clock the breaker reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

/// What [`reopen_if_probes_timed_out`](Breaker::reopen_if_probes_timed_out) found.
enum Reopening {
    /// The probes out are not all overdue (or none is recorded): reject as half-open.
    NotDue,
    /// The breaker is open again (this call's opening or another's): this rejection.
    Opened(Rejected),
    /// Overdue, but the state word changed first (or the sealed generation ended otherwise):
    /// the caller decides again from the current word.
    Changed,
}

impl From<Option<Rejected>> for Reopening {
    fn from(finished: Option<Rejected>) -> Self {
        finished.map_or(Reopening::Changed, Reopening::Opened)
    }
}

/// How long until every probe admitted no earlier than `newest` has been out longer than
/// `timeout` (past it, not at it), at breaker time `now_nanos`: zero once they have.
fn probes_time_out_after(newest: Admitted, timeout: Duration, now_nanos: u64) -> u64 {
    crate::clock::saturating_nanos(timeout)
        .saturating_add(1)
        .saturating_sub(newest.age_nanos(now_nanos))
}

/// The `slow_call` limit of `settings` in nanoseconds, `u64::MAX` without one.
fn slow_call_nanos(settings: &Settings) -> u64 {
    settings
        .slow_call
        .map_or(u64::MAX, crate::clock::saturating_nanos)
}

impl<C: Clock> fmt::Debug for Breaker<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breaker")
            .field("state", &self.state())
            .field("config", &self.config())
            .finish_non_exhaustive()
    }
}

#[path = "quiet.rs"]
mod quiet;

#[cfg(all(test, not(loom)))]
#[path = "breaker_tag_boundary_tests.rs"]
mod tag_boundary_tests;

#[cfg(all(test, not(loom)))]
#[path = "breaker_seal_tests.rs"]
mod seal_tests;

#[cfg(all(test, not(loom)))]
#[path = "breaker_shared_hooks_tests.rs"]
mod shared_hooks_tests;
