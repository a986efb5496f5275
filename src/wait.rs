//! Waiting for a permit instead of failing fast.
//!
//! A caller who would rather wait than be rejected (a batch job, a startup probe) blocks until
//! the breaker admits it or its own deadline passes. The breaker keeps a 32-bit *events* word
//! beside its state word, bumped after every transition and every probe that ends; waiters
//! sleep on it (a futex) and re-check when it changes. While open, nothing but time changes the
//! answer, so a waiter also wakes when the open period ends.
//!
//! # Lost wakeups
//!
//! A waiter registers (adds one to `blocked`), loads `events`, then tries to acquire, then
//! sleeps only while `events` still holds what it loaded (the kernel compares atomically). A
//! notifier changes the state, then adds one to `events`, then wakes sleepers if `blocked` is
//! not zero. All four accesses to `blocked` and `events` are `SeqCst`, so in their single total
//! order either the notifier's bump comes after the waiter's load (the futex sees a new value
//! and does not sleep) or the waiter's registration comes after the notifier's read of
//! `blocked`, in which case the waiter's load of `events` comes after the bump too, and its
//! acquire attempt sees the new state (the bump follows the state change, the load is an
//! acquire). Skipping the wake syscall when nobody waits keeps transitions cheap.
//!
//! A task (`acquire_timeout_async`) waits the same way with a waker for the futex. It claims a
//! slot (a bit of `taken`) for as long as it waits, loads `events`, tries to acquire, then in
//! every poll leaves its waker in the slot and only then compares `events` with what it loaded.
//! The notifier, after its bump, loads `taken` and wakes the waker of every slot taken. The
//! claim and that load are `SeqCst` too, so the argument is the one above with the claim for
//! the registration: either the notifier's load comes after the claim and finds the slot taken,
//! or the task's load of `events` comes after the bump, and its attempt sees the new state. In
//! the first case the wake finds the waker if the task left it first; if the task leaves it
//! after, `AtomicWaker` orders that after the wake, and the comparison sees the bump. A slot is
//! given back only after its waker is taken out, so that the take cannot throw away the waker
//! of the next task to claim it. A task that finds all eight slots taken cannot be found by a
//! notify, so it looks again every millisecond, and tries for a slot before each look: once
//! it has one, it sleeps until a notify or its timer as the others do. The loom models in
//! `loom-tests/tests/async_wait.rs` run this wait (with a timer that never fires for a task
//! in a slot, so that a lost wakeup is a deadlock) and fail if the waker is left after the
//! comparison, if the claim or the notifier's load is relaxed, if a slot is given back before
//! its take, if a claim is not one read-modify-write, or if a task without a slot does not
//! claim one given back while it polls.
//!
//! The threads' wait has its models in `loom-tests/tests/blocking_wait.rs`: the real
//! `acquire_timeout`, with a timeout real time never reaches, on a futex that under loom is a
//! lock and a condition variable (the comparison and the queueing one step, as in the kernel;
//! the timeout ignored, so that a lost wakeup is a deadlock). A thread waits while the only
//! probe is out and is woken by its closing success, or on an open breaker and is woken by
//! `end_open_period`, or after another waiter admitted as the probe stopped waiting. They fail
//! if the notifier reads `blocked` before it bumps `events`, if the registration is weakened
//! to release or relaxed, the notifier's read of `blocked` to acquire or relaxed, or its bump
//! to release, if the waiter loads `events` after its attempt or relaxed, if `end_open_period`
//! notifies before it moves the deadline, or if `blocked` is a flag rather than a count. The
//! futex reads the word after a full barrier, after the registration, so a notify that misses
//! the registration has its bump seen there and the thread does not sleep: a waiter that loads
//! `events` before it registers, or with acquire ordering, loses no wakeup, and the models
//! rightly pass those (with the stand-in's read relaxed, they fail them).

use std::time::{Duration, Instant};

use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::permit::{Permit, Rejected};
use crate::state::State;
use crate::sync::{AtomicU32, Ordering, wait_while_equal, wake_all};

/// What waiters sleep on.
pub(crate) struct Waiters {
    events: AtomicU32,
    /// Threads blocked in `acquire_timeout`.
    blocked: AtomicU32,
    /// Tasks waiting in `acquire_timeout_async`.
    #[cfg(any(feature = "tokio", loom))]
    tasks: async_wait::TaskSlots,
}

impl Waiters {
    pub(crate) fn new() -> Self {
        let events = AtomicU32::new(0);
        let blocked = AtomicU32::new(0);
        // As `taken` in `TaskSlots::new`: without it, loom would let a waiter's `SeqCst` load
        // read the initial value after another thread's bump, or a notifier's after a
        // thread's registration.
        #[cfg(loom)]
        {
            events.store(0, Ordering::SeqCst);
            blocked.store(0, Ordering::SeqCst);
        }
        Waiters {
            events,
            blocked,
            #[cfg(any(feature = "tokio", loom))]
            tasks: async_wait::TaskSlots::new(),
        }
    }

    /// Called after anything that may let a waiter in: a transition, or a probe that ended.
    pub(crate) fn notify(&self) {
        self.events.fetch_add(1, Ordering::SeqCst);
        if self.blocked.load(Ordering::SeqCst) != 0 {
            wake_all(&self.events);
        }
        #[cfg(any(feature = "tokio", loom))]
        self.tasks.wake_all();
    }

    fn events(&self) -> u32 {
        self.events.load(Ordering::SeqCst)
    }
}

/// Takes one registration in `blocked` for as long as it lives.
struct Blocked<'a>(&'a AtomicU32);

impl<'a> Blocked<'a> {
    fn register(blocked: &'a AtomicU32) -> Self {
        blocked.fetch_add(1, Ordering::SeqCst);
        Blocked(blocked)
    }
}

impl Drop for Blocked<'_> {
    fn drop(&mut self) {
        // Release would do for the memory model: nothing is published by leaving. SeqCst, as
        // a slot given back in `async_wait`, makes every write of `blocked` one of the
        // registrations' total order, which is what loom checks a notifier's `SeqCst` load
        // against: a notifier that read the count a leaving thread left, after another
        // thread's registration, would be a false deadlock in its models.
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<C: Clock> Breaker<C> {
    /// How long a waiter turned away with `rejected` may sleep before a call could be
    /// admitted with no event to wake it: the open period's end, or, half-open, the moment
    /// the probes out pass their timeout (the next call then opens the breaker again, and
    /// the waiter waits for that period). `None`: only an event (a verdict, a reset) can.
    /// Those moments are on the breaker's clock; one that can jump ([`Clock::recheck_within`])
    /// is looked at again sooner.
    fn may_admit_in(&self, rejected: &Rejected) -> Option<Duration> {
        let on_the_clock = match rejected.state() {
            State::HalfOpen => self.probes_time_out_in(),
            _ => rejected.retry_after(),
        }?;
        Some(match self.clock().recheck_within() {
            Some(recheck) => on_the_clock.min(recheck),
            None => on_the_clock,
        })
    }

    /// Waits up to `timeout` for a permit: while the breaker is open, until the open period
    /// ends (then this call may become the probe); while half-open with all probes out, until
    /// a probe's verdict frees a place or closes the breaker, or until the probes pass their
    /// [`probe_timeout`](crate::Builder::probe_timeout) and the open period after that ends;
    /// while forced open, until it is reset. Blocks the thread (a futex wait on Linux, short
    /// sleeps elsewhere); returns as soon as it is admitted, and by its deadline otherwise.
    ///
    /// The deadline is measured on the system's monotonic clock, the open period on the
    /// breaker's clock (a [`ManualClock`](crate::ManualClock) moved meanwhile is seen within
    /// a millisecond: [`Clock::recheck_within`]).
    ///
    /// # Errors
    ///
    /// The last [`Rejected`] when `timeout` passes without admission. Only that final
    /// rejection is counted in the metrics.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::Breaker;
    /// use std::time::Duration;
    ///
    /// let breaker = Breaker::builder()
    ///     .consecutive_failures(1)
    ///     .open_duration(Duration::from_millis(20))
    ///     .build()
    ///     .unwrap();
    /// breaker.try_acquire().unwrap().failure();
    /// // Rather than fail now, wait out the open period and probe.
    /// let probe = breaker.acquire_timeout(Duration::from_secs(5)).unwrap();
    /// assert!(probe.is_probe());
    /// probe.success();
    /// ```
    pub fn acquire_timeout(&self, timeout: Duration) -> Result<Permit<'_, C>, Rejected> {
        let started = Instant::now();
        let waiters = self.waiters();
        let _registered = Blocked::register(&waiters.blocked);
        loop {
            let seen = waiters.events();
            let rejected = match self.acquire_uncounted() {
                Ok(permit) => return Ok(permit),
                Err(rejected) => rejected,
            };
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(self.count_rejection(rejected));
            }
            let mut sleep = timeout - waited;
            if let Some(ready_in) = self.may_admit_in(&rejected) {
                sleep = sleep.min(ready_in);
            }
            wait_while_equal(&waiters.events, seen, sleep);
        }
    }
}

#[cfg(any(feature = "tokio", loom))]
mod async_wait {
    use std::future::{Future, poll_fn};
    use std::pin::pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use super::Waiters;
    use crate::breaker::Breaker;
    use crate::clock::Clock;
    use crate::permit::{Permit, Rejected};
    use crate::sync::{AtomicU8, AtomicWaker, Ordering};

    const SLOTS: usize = 8;
    /// How often a task re-checks when all slots are taken and nothing can wake it.
    const POLL_WITHOUT_SLOT: Duration = Duration::from_millis(1);

    /// Places where waiting tasks leave their wakers: a fixed array, so that neither
    /// waiting nor waking allocates or locks.
    pub(crate) struct TaskSlots {
        taken: AtomicU8,
        wakers: [AtomicWaker; SLOTS],
    }

    impl TaskSlots {
        pub(crate) fn new() -> Self {
            let taken = AtomicU8::new(0);
            // loom records an initial value as a `Release` store, which it lets a `SeqCst`
            // load read even after another thread's `SeqCst` claim (it treats `SeqCst` as
            // `AcqRel`): a wake that misses a claim, which the memory model rules out, since
            // the initial value happens before every claim. Stored again `SeqCst`, it is
            // ordered before the claims for loom too.
            #[cfg(loom)]
            taken.store(0, Ordering::SeqCst);
            TaskSlots {
                taken,
                wakers: std::array::from_fn(|_| AtomicWaker::new()),
            }
        }

        /// Wakes every task that holds a slot. `SeqCst` pairs with the claim, as `blocked` does
        /// for threads (see the module documentation).
        pub(crate) fn wake_all(&self) {
            let mut taken = self.taken.load(Ordering::SeqCst);
            while taken != 0 {
                let slot = taken.trailing_zeros() as usize;
                self.wakers[slot].wake();
                taken &= taken - 1;
            }
        }

        fn claim(&self) -> Option<Slot<'_>> {
            let mut taken = self.taken.load(Ordering::Relaxed);
            while taken != u8::MAX {
                let bit = (!taken).trailing_zeros();
                match self.taken.compare_exchange_weak(
                    taken,
                    taken | 1 << bit,
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        return Some(Slot {
                            slots: self,
                            index: bit as usize,
                        });
                    }
                    Err(seen) => taken = seen,
                }
            }
            None
        }
    }

    /// A claimed slot, given back when the waiting task finishes or is dropped.
    struct Slot<'a> {
        slots: &'a TaskSlots,
        index: usize,
    }

    impl Drop for Slot<'_> {
        fn drop(&mut self) {
            // Take the waker out before giving the slot back: once the bit is clear, the next
            // task to claim the slot registers its own waker there, and a take after that
            // would throw the new task's waker away.
            self.slots.wakers[self.index].take();
            // Release would do for the memory model: it orders the take before the next
            // claimant's registration. SeqCst makes every write of `taken` one of the claims'
            // total order, which is what loom checks a `SeqCst` load against: a wake that read
            // the slot free after the next claim would be a false deadlock in its models.
            self.slots
                .taken
                .fetch_and(!(1 << self.index), Ordering::SeqCst);
        }
    }

    impl Waiters {
        /// One poll of a waiting task that saw `seen` in `events` before its last attempt:
        /// leaves the task's waker in its slot, if it has one, and then tells whether
        /// `events` has moved since. In that order: a notify after the look wakes the waker
        /// (see the module documentation).
        fn registered_and_changed(
            &self,
            slot: Option<&Slot<'_>>,
            seen: u32,
            cx: &Context<'_>,
        ) -> bool {
            if let Some(slot) = slot {
                self.tasks.wakers[slot.index].register(cx.waker());
            }
            self.events() != seen
        }
    }

    /// What the wait needs from a timer: tokio's, or under loom one that never fires for a
    /// task in a slot.
    trait Timer {
        type Sleep: Future<Output = ()>;

        /// A sleep until the wait's deadline or until `ready_in` from now, whichever comes
        /// first; `None` once the deadline has passed.
        fn sleep(&self, ready_in: Option<Duration>) -> Option<Self::Sleep>;

        /// The sleep of a task that found every slot taken: no notify can find it, so it
        /// looks again within [`POLL_WITHOUT_SLOT`], and tries for a slot each time.
        fn sleep_without_slot(&self, ready_in: Option<Duration>) -> Option<Self::Sleep> {
            self.sleep(Some(
                ready_in.map_or(POLL_WITHOUT_SLOT, |r| r.min(POLL_WITHOUT_SLOT)),
            ))
        }
    }

    impl<C: Clock> Breaker<C> {
        /// The wait of [`acquire_timeout_async`](Breaker::acquire_timeout_async), on any
        /// timer: tries, and while rejected sleeps until an event or the timer wakes it.
        async fn acquire_waiting<T: Timer>(&self, timer: &T) -> Result<Permit<'_, C>, Rejected> {
            let waiters = self.waiters();
            let mut slot = None;
            loop {
                // Claimed before `events` is loaded, in every round until one is had: the
                // claim is the task's registration (see the module documentation), and a
                // slot given back while this task polled lets the next notify find it.
                if slot.is_none() {
                    slot = waiters.tasks.claim();
                }
                let seen = waiters.events();
                let rejected = match self.acquire_uncounted() {
                    Ok(permit) => return Ok(permit),
                    Err(rejected) => rejected,
                };
                let ready_in = self.may_admit_in(&rejected);
                let sleep = match slot {
                    Some(_) => timer.sleep(ready_in),
                    None => timer.sleep_without_slot(ready_in),
                };
                let Some(sleep) = sleep else {
                    return Err(self.count_rejection(rejected));
                };
                let mut sleep = pin!(sleep);
                poll_fn(|cx| {
                    if waiters.registered_and_changed(slot.as_ref(), seen, cx)
                        || sleep.as_mut().poll(cx).is_ready()
                    {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    }
                })
                .await;
            }
        }
    }

    /// tokio's timer, up to the caller's deadline.
    #[cfg(all(feature = "tokio", not(loom)))]
    struct TokioTimer {
        deadline: tokio::time::Instant,
    }

    #[cfg(all(feature = "tokio", not(loom)))]
    impl Timer for TokioTimer {
        type Sleep = tokio::time::Sleep;

        fn sleep(&self, ready_in: Option<Duration>) -> Option<tokio::time::Sleep> {
            let now = tokio::time::Instant::now();
            if now >= self.deadline {
                return None;
            }
            let wake_at =
                ready_in.map_or(self.deadline, |ready_in| self.deadline.min(now + ready_in));
            Some(tokio::time::sleep_until(wake_at))
        }
    }

    #[cfg(all(feature = "tokio", not(loom)))]
    impl<C: Clock> Breaker<C> {
        /// The async twin of [`acquire_timeout`](Breaker::acquire_timeout), on tokio's timer:
        /// the task sleeps until the open period ends or a probe's verdict wakes it, and never
        /// past `timeout`. Dropping the future gives up waiting and leaves nothing behind.
        ///
        /// # Errors
        ///
        /// The last [`Rejected`] when `timeout` passes without admission.
        ///
        /// # Panics
        ///
        /// If it has to wait (the breaker rejected the first attempt and `timeout` is not
        /// over) outside a tokio runtime with the time driver enabled, as tokio's timer does. A
        /// call admitted at once, or one whose `timeout` is zero, touches no timer and works
        /// from any executor. And as for [`acquire_timeout`](Breaker::acquire_timeout), if a
        /// transition listener panics.
        ///
        /// # Examples
        ///
        /// ```
        /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
        /// use hotbreaker::{Breaker, State};
        /// use std::time::Duration;
        ///
        /// let breaker = Breaker::builder()
        ///     .consecutive_failures(1)
        ///     .open_duration(Duration::from_millis(20))
        ///     .build()
        ///     .unwrap();
        /// breaker.try_acquire().unwrap().failure(); // open for 20 ms
        /// let rejected = breaker.acquire_timeout_async(Duration::ZERO).await.unwrap_err();
        /// assert_eq!(rejected.state(), State::Open, "no wait: rejected at once");
        /// let probe = breaker
        ///     .acquire_timeout_async(Duration::from_secs(10))
        ///     .await
        ///     .expect("admitted when the period ends");
        /// assert!(probe.is_probe());
        /// probe.success();
        /// assert_eq!(breaker.state(), State::Closed);
        /// # });
        /// ```
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
        pub async fn acquire_timeout_async(
            &self,
            timeout: Duration,
        ) -> Result<Permit<'_, C>, Rejected> {
            // A timeout too long to add (`Duration::MAX`, "wait for good") waits thirty years,
            // as far ahead as tokio's own "far future".
            let now = tokio::time::Instant::now();
            let deadline = now
                .checked_add(timeout)
                .or_else(|| now.checked_add(Duration::from_secs(30 * 365 * 24 * 60 * 60)))
                .unwrap_or(now);
            self.acquire_waiting(&TokioTimer { deadline }).await
        }
    }

    /// Under loom: no deadline, and no sleep of a task in a slot ever ends by itself, so only
    /// a wake (a notify that finds the task's slot) gets it polled again. A task without a
    /// slot looks again after a yield while every slot is taken, and once more after it
    /// first finds one free; after that its sleep never ends either, so a task that does not
    /// claim the slot given back sleeps through the next notify, and loom reports a
    /// deadlock.
    #[cfg(loom)]
    struct LoomTimer<'a> {
        slots: &'a TaskSlots,
        last_look_used: std::cell::Cell<bool>,
    }

    /// A sleep under loom: for good, or until the task has let the others run once.
    #[cfg(loom)]
    enum LoomSleep {
        Never,
        AfterAYield { yielded: bool },
    }

    #[cfg(loom)]
    impl Future for LoomSleep {
        type Output = ();

        fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            match &mut *self {
                LoomSleep::Never => Poll::Pending,
                LoomSleep::AfterAYield { yielded: true } => Poll::Ready(()),
                LoomSleep::AfterAYield { yielded } => {
                    *yielded = true;
                    // A loop that only polls must let loom schedule the others, or it would
                    // spin through every one of its own schedules.
                    loom::thread::yield_now();
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
            }
        }
    }

    #[cfg(loom)]
    impl Timer for LoomTimer<'_> {
        type Sleep = LoomSleep;

        fn sleep(&self, _ready_in: Option<Duration>) -> Option<LoomSleep> {
            Some(LoomSleep::Never)
        }

        fn sleep_without_slot(&self, _ready_in: Option<Duration>) -> Option<LoomSleep> {
            let every_slot_taken = self.slots.taken.load(Ordering::SeqCst) == u8::MAX;
            if every_slot_taken || !self.last_look_used.replace(true) {
                Some(LoomSleep::AfterAYield { yielded: false })
            } else {
                Some(LoomSleep::Never)
            }
        }
    }

    /// `acquire_timeout_async`'s wait with no deadline, for loom models only (run with
    /// `loom::future::block_on`): a task in a slot sleeps until a notify wakes it, so a wake
    /// lost on the way leaves it asleep for good, which loom reports as a deadlock. A task
    /// that finds every slot taken (see [`take_every_task_slot`]) polls until one is free.
    #[doc(hidden)]
    #[cfg(loom)]
    pub async fn acquire_waiting<C: Clock>(
        breaker: &Breaker<C>,
    ) -> Result<Permit<'_, C>, Rejected> {
        let timer = LoomTimer {
            slots: &breaker.waiters().tasks,
            last_look_used: std::cell::Cell::new(false),
        };
        breaker.acquire_waiting(&timer).await
    }

    /// Takes every task slot of `breaker` at once, as eight tasks waiting would: a task
    /// that waits then has none. For loom models only.
    ///
    /// # Panics
    ///
    /// If a slot is already taken.
    #[doc(hidden)]
    #[cfg(loom)]
    pub fn take_every_task_slot<C: Clock>(breaker: &Breaker<C>) {
        let taken = breaker
            .waiters()
            .tasks
            .taken
            .swap(u8::MAX, Ordering::SeqCst);
        assert_eq!(taken, 0, "a slot was taken already");
    }

    /// Gives back every slot [`take_every_task_slot`] took, with one write, as a waiting
    /// task gives back its own (`SeqCst`). For loom models only.
    #[doc(hidden)]
    #[cfg(loom)]
    pub fn give_back_every_task_slot<C: Clock>(breaker: &Breaker<C>) {
        breaker.waiters().tasks.taken.fetch_and(0, Ordering::SeqCst);
    }
}

#[cfg(loom)]
pub use async_wait::{acquire_waiting, give_back_every_task_slot, take_every_task_slot};
