//! Following named breakers: publishing their own openings and recoveries, and applying the
//! others'.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use super::{
    Opening, OpeningStore, RECOVERY_AHEAD, StoreError, WindowShare, later_by, unix_millis,
};
use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::config::{ConfigError, FailureRate, MAX_OPEN_DURATION};
use crate::registry::Registry;
use crate::sync::{AtomicBool, Ordering};

/// A remote deadline closer than this is let pass: opening for less would only make a
/// transition, and the clocks of two machines do not agree that closely anyway.
const SHORTEST_OPENING: Duration = Duration::from_millis(1);

/// A remote deadline that ends no later than this after one this follower published, while
/// the breaker has not closed since, is taken for the same failure seen by two instances (both
/// tripped at about the same time): it does not reopen the breaker for the few milliseconds
/// between their periods' ends. Once the breaker has closed, a later deadline is a new failure.
const SAME_FAILURE: Duration = Duration::from_secs(1);

/// What [`SharedOpenings`] needs of a breaker, whatever its clock.
trait Followed: Send + Sync {
    fn current_opening(&self) -> Option<(u32, Duration)>;
    fn open_externally(&self, duration: Duration) -> Option<u32>;
    fn open_from_store(&self, duration: Duration) -> Option<u32>;
    fn opened_from_store(&self, generation: u32) -> bool;
    fn extend_opening(&self, generation: u32, open_for: Duration) -> bool;
    fn end_opening(&self, generation: u32) -> bool;
    fn closed_generation(&self) -> Option<u32>;
    /// How long ago the breaker last closed.
    fn closed_ago(&self) -> Duration;
    fn rate_rule(&self) -> Option<(FailureRate, Duration)>;
    /// Failures and calls in the rate window now.
    fn window(&self) -> (u32, u32);
}

impl<C: Clock> Followed for Breaker<C> {
    fn current_opening(&self) -> Option<(u32, Duration)> {
        Breaker::current_opening(self)
    }

    fn open_externally(&self, duration: Duration) -> Option<u32> {
        // A listener's panic (printed by the panic hook) must not end the polling of every
        // breaker followed. The listeners run after the swap, so the opening stands, and is
        // the breaker's current one unless a listener changed the state again.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Breaker::open_externally(self, duration)
        }))
        .unwrap_or_else(|_| Breaker::current_opening(self).map(|(generation, _)| generation))
    }

    fn open_from_store(&self, duration: Duration) -> Option<u32> {
        // As `open_externally`; the mark, stored before the listeners run, names the opening.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Breaker::open_from_store(self, duration)
        }))
        .unwrap_or_else(|_| {
            Breaker::current_opening(self)
                .map(|(generation, _)| generation)
                .filter(|&generation| Breaker::opened_from_store(self, generation))
        })
    }

    fn opened_from_store(&self, generation: u32) -> bool {
        Breaker::opened_from_store(self, generation)
    }

    fn extend_opening(&self, generation: u32, open_for: Duration) -> bool {
        Breaker::extend_opening(self, generation, open_for)
    }

    fn end_opening(&self, generation: u32) -> bool {
        Breaker::end_opening(self, generation)
    }

    fn closed_generation(&self) -> Option<u32> {
        Breaker::closed_generation(self)
    }

    fn closed_ago(&self) -> Duration {
        Breaker::closed_ago(self)
    }

    fn rate_rule(&self) -> Option<(FailureRate, Duration)> {
        Breaker::rate_rule(self)
    }

    fn window(&self) -> (u32, u32) {
        let metrics = self.metrics();
        (metrics.window_failures, metrics.window_calls)
    }
}

/// What [`SharedOpenings`] needs of a registry, whatever its breakers' clock.
trait FollowedRegistry: Send + Sync {
    fn followed(&self) -> Vec<(String, Arc<dyn Followed>)>;
}

impl<C: Clock> FollowedRegistry for Registry<C> {
    fn followed(&self) -> Vec<(String, Arc<dyn Followed>)> {
        self.breakers()
            .into_iter()
            .map(|(name, breaker)| (name, breaker as Arc<dyn Followed>))
            .collect()
    }
}

/// What tells a registry's followed breakers apart: the name and the breaker's address (a
/// registry may put a new breaker under an old name). The address alone, without the
/// vtable, as `std::ptr::addr_eq` compares.
fn identity<'a>(name: &'a str, breaker: &Arc<dyn Followed>) -> (&'a str, *const ()) {
    (name, Arc::as_ptr(breaker).cast::<()>())
}

/// Whether generation `later` comes after `earlier`, in serial-number arithmetic.
fn comes_after(later: u32, earlier: u32) -> bool {
    (later.wrapping_sub(earlier) as i32) > 0
}

/// One followed breaker, and what this follower did with it.
struct Entry {
    name: String,
    breaker: Arc<dyn Followed>,
    /// The generation of the last opening published, so that each is published once.
    published_generation: Option<u32>,
    /// The latest deadline this follower published since the breaker last closed, in Unix
    /// milliseconds: one that ends within [`SAME_FAILURE`] of it, while the breaker has not
    /// closed since, is the same failure seen by another instance.
    published_until: u64,
    /// The last opening this follower published, as stores keep it (Unix milliseconds of its
    /// deadline and publish time): reading it back from the store is no news.
    published: Option<(u64, u64)>,
    /// Whether a poll saw the breaker closed after the last opening this follower published
    /// (it may have opened again since, on another instance's opening).
    closed_since_published: bool,
    /// The registry this entry came from (an index into `registries`), if any: it is dropped
    /// when the registry no longer holds this breaker under this name.
    registry: Option<usize>,
    /// The generation this follower's last external opening made, which it may make longer
    /// or end early. (Whether to publish an opening asks the breaker's own mark instead,
    /// `Breaker::opened_from_store`, which every follower of the breaker sees.)
    external_generation: Option<u32>,
    /// The last remote opening applied, or found answered by a recovery: dealt with once.
    settled: Option<Opening>,
    /// When the opening this follower last applied or extended with was published (or, if
    /// that is later, when it applied it), in Unix milliseconds: only a recovery recorded
    /// after it ends the opening early. Not the apply time alone: a recovery published after
    /// the apply but stamped before it (its breaker closed between two polls) answers the
    /// opening all the same.
    applied_at: u64,
    /// The latest opening of the breaker this follower knows of (published or applied) whose
    /// recovery it has not published yet: a closed state after it is one to publish.
    recovery_due: Option<u32>,
    /// When this follower last saw the breaker in an opening of its own, in Unix
    /// milliseconds: a remote opening published before then is older news than the probe
    /// that closed the breaker after it, and is not applied once it is closed. Never ahead of
    /// the wall clock at the last poll (a clock stepped back brings it back too).
    own_opening_seen_at: u64,
}

impl Entry {
    /// Notes whether the breaker is closed after the last opening published.
    fn note_closing(&mut self) {
        if let (Some(closed), Some(published)) =
            (self.breaker.closed_generation(), self.published_generation)
        {
            if comes_after(closed, published) {
                self.closed_since_published = true;
            }
        }
    }

    fn new(name: String, breaker: Arc<dyn Followed>, registry: Option<usize>) -> Self {
        Entry {
            name,
            breaker,
            registry,
            published_generation: None,
            published_until: 0,
            published: None,
            closed_since_published: false,
            external_generation: None,
            settled: None,
            applied_at: 0,
            recovery_due: None,
            own_opening_seen_at: 0,
        }
    }
}

/// Keeps followed breakers in step with an [`OpeningStore`]; see the [module docs](super).
///
/// Built once with the breakers it follows ([`follow`](SharedOpenings::follow)) and the
/// registries whose breakers it follows ([`follow_registry`](SharedOpenings::follow_registry)),
/// then polled.
pub struct SharedOpenings<S> {
    store: S,
    entries: Vec<Entry>,
    registries: Vec<Arc<dyn FollowedRegistry>>,
    /// How long past a remote deadline an applied opening lasts, waiting for the probe of the
    /// instance that published it.
    wait_for_probe: Duration,
    /// This instance's name among those sharing windows, and how old a shared window may be,
    /// if windows are shared.
    window_sharing: Option<(String, Duration)>,
    /// The wall clock every time stamped or compared here is read from
    /// ([`wall_clock`](SharedOpenings::wall_clock)).
    wall_clock: fn() -> SystemTime,
}

/// What one [`poll`](SharedOpenings::poll) did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct PollReport {
    /// Openings of followed breakers published to the store.
    pub published: usize,
    /// Followed breakers opened because the store held a later deadline for their name.
    pub opened: usize,
    /// Followed breakers whose opening from the store was made longer, because the store held
    /// a later deadline (another instance's failed probe, say) before it ended.
    pub extended: usize,
    /// Recoveries published: a followed breaker closed after an opening.
    pub recoveries_published: usize,
    /// Openings from the store ended early because another instance recorded a recovery after
    /// they were applied; each of these breakers probes at its next call.
    pub ended: usize,
    /// Windows published ([`SharedOpenings::share_windows`]).
    pub windows_published: usize,
    /// Followed breakers opened because the instances' windows, added up, met their rate
    /// rule; each of these openings is published like one of the breaker's own.
    pub opened_by_windows: usize,
    /// Store errors, with the name they concern; the other names were still polled.
    pub errors: Vec<(String, StoreError)>,
}

impl<S: OpeningStore> SharedOpenings<S> {
    /// Follows nothing yet; add breakers with [`follow`](SharedOpenings::follow).
    pub fn new(store: S) -> Self {
        SharedOpenings {
            store,
            entries: Vec::new(),
            registries: Vec::new(),
            wait_for_probe: Duration::ZERO,
            window_sharing: None,
            wall_clock: SystemTime::now,
        }
    }

    /// Reads the wall clock with `now` instead of [`SystemTime::now`]: every time this
    /// follower stamps (an opening's deadline and publish time, a recovery, a shared window)
    /// and every time it compares one with the present. For simulations and tests that place
    /// times to the millisecond. A store reads the machine's wall clock of its own, not this
    /// one: both stores drop an opening once its end has passed by it, and the Redis store
    /// drops windows too old to count by it. So a follower's clock set far from the
    /// machine's sees openings kept or dropped by the machine's time.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use hotbreaker::shared::{MemoryStore, SharedOpenings};
    ///
    /// // A follower that lives a minute in this machine's past.
    /// fn a_minute_ago() -> SystemTime {
    ///     SystemTime::now() - Duration::from_secs(60)
    /// }
    /// let following = SharedOpenings::new(MemoryStore::new()).wall_clock(a_minute_ago);
    /// ```
    #[must_use]
    pub fn wall_clock(mut self, now: fn() -> SystemTime) -> Self {
        self.wall_clock = now;
        self
    }

    /// Lets one instance probe for all: an opening applied from the store lasts up to
    /// `longest` past its deadline, so that the instance that published it (whose own period
    /// ends at the deadline) probes first. If its probe succeeds, it publishes a recovery, and
    /// at their next poll the others end their openings (their next call probes, and
    /// closes); if it fails, its new opening reaches the others before their openings end,
    /// and makes them longer. If no verdict comes within `longest` (the probing instance went
    /// away), each probes for itself. Zero (the default) waits for nothing: every instance
    /// probes when the deadline passes. Make it longer than the polling interval plus the
    /// time a probe's call takes.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming `wait_for_probe` if `longest` is above
    /// [`MAX_OPEN_DURATION`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use hotbreaker::shared::{MemoryStore, SharedOpenings};
    ///
    /// let following = SharedOpenings::new(MemoryStore::new())
    ///     .wait_for_probe(Duration::from_secs(2))?;
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn wait_for_probe(mut self, longest: Duration) -> Result<Self, ConfigError> {
        if longest > MAX_OPEN_DURATION {
            return Err(ConfigError::new(
                "wait_for_probe",
                format!(
                    "must be at most {} s, got {longest:?}",
                    MAX_OPEN_DURATION.as_secs()
                ),
            ));
        }
        self.wait_for_probe = longest;
        Ok(self)
    }

    /// Judges each followed breaker's rate rule over the windows of all the instances that
    /// follow its name, not only its own: at each poll, it publishes its breaker's rate
    /// window (failures and calls in it) under `instance`, adds up the windows that every
    /// instance published in the last `fresh_for`, and if that sum meets the breaker's rule
    /// (as many calls as its minimum, and the failure share at its threshold), opens the
    /// breaker for its open duration ([`Trigger::External`](crate::Trigger::External)) and
    /// publishes the opening as its own. So instances whose traffic is too thin to fill their
    /// windows alone still trip, together, on the failure share of all their calls.
    ///
    /// `instance` must be unique among the instances sharing the store (a host name and
    /// process id, for example); `fresh_for` should be a few polling intervals, so that an
    /// instance that stopped still counts until it has missed a few polls, then no more.
    /// Breakers without a rate rule take no part.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming `share_windows` if `instance` is empty, or if `fresh_for` is
    /// under a millisecond (the windows' clock unit) or above
    /// [`MAX_OPEN_DURATION`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use hotbreaker::shared::{MemoryStore, SharedOpenings};
    /// use hotbreaker::{Breaker, State};
    ///
    /// let store = MemoryStore::new();
    /// let mut instances = Vec::new();
    /// for n in 0..2 {
    ///     let breaker = Arc::new(Breaker::builder().failure_rate(0.5, 10).build()?);
    ///     let follower = SharedOpenings::new(store.clone())
    ///         .share_windows(format!("instance-{n}"), Duration::from_secs(5))?
    ///         .follow("payments", breaker.clone());
    ///     instances.push((breaker, follower));
    /// }
    /// // Each instance: 3 failures in 5 calls, too few calls to judge a window of 10 alone.
    /// for (breaker, _) in &instances {
    ///     for fails in [true, false, true, false, true] {
    ///         let permit = breaker.try_acquire().unwrap();
    ///         if fails { permit.failure() } else { permit.success() }
    ///     }
    ///     assert_eq!(breaker.state(), State::Closed);
    /// }
    /// assert_eq!(instances[0].1.poll().opened_by_windows, 0, "5 calls seen in all");
    /// assert_eq!(instances[1].1.poll().opened_by_windows, 1, "6 failures in 10 calls");
    /// assert_eq!(instances[1].0.state(), State::Open);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn share_windows(
        mut self,
        instance: impl Into<String>,
        fresh_for: Duration,
    ) -> Result<Self, ConfigError> {
        let instance = instance.into();
        if instance.is_empty() {
            return Err(ConfigError::new(
                "share_windows",
                "the instance's name must not be empty",
            ));
        }
        if fresh_for < Duration::from_millis(1) || fresh_for > MAX_OPEN_DURATION {
            return Err(ConfigError::new(
                "share_windows",
                format!(
                    "fresh_for must be at least 1 ms and at most {} s, got {fresh_for:?}",
                    MAX_OPEN_DURATION.as_secs()
                ),
            ));
        }
        self.window_sharing = Some((instance, fresh_for));
        Ok(self)
    }

    /// Follows `breaker` under `name`, the name every instance gives the same dependency.
    pub fn follow<C: Clock>(mut self, name: impl Into<String>, breaker: Arc<Breaker<C>>) -> Self {
        self.entries.push(Entry::new(name.into(), breaker, None));
        self
    }

    /// Follows every breaker of `registry` under its name there, as [`follow`] would: those
    /// it holds now, those inserted later (from the next poll on), and no longer one that is
    /// removed or replaced.
    ///
    /// [`follow`]: SharedOpenings::follow
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hotbreaker::shared::{MemoryStore, SharedOpenings};
    /// use hotbreaker::{Breaker, Registry, State};
    ///
    /// let store = MemoryStore::new();
    /// let here = Arc::new(Registry::new());
    /// let there = Arc::new(Registry::new());
    /// let mut follow_here = SharedOpenings::new(store.clone()).follow_registry(here.clone());
    /// let mut follow_there = SharedOpenings::new(store).follow_registry(there.clone());
    /// for registry in [&here, &there] {
    ///     registry.get_or_insert_with("payments", |_| Breaker::builder().consecutive_failures(1))?;
    /// }
    /// here.get("payments").unwrap().try_acquire().unwrap().failure();
    /// follow_here.poll();
    /// follow_there.poll();
    /// assert_eq!(there.get("payments").unwrap().state(), State::Open);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn follow_registry<C: Clock>(mut self, registry: Arc<Registry<C>>) -> Self {
        self.registries.push(registry);
        self
    }

    /// Brings the entries that came from registries in line with what they hold now.
    fn sync_registries(&mut self) {
        // In sets: a registry of n breakers takes time in proportion to n a poll, not to n
        // squared (`benches/registry_poll.rs`: 4000 breakers, 36.5 ms a poll compared in
        // pairs, 2.5 ms in sets).
        for (index, registry) in self.registries.iter().enumerate() {
            let held = registry.followed();
            let in_registry: HashSet<_> = held
                .iter()
                .map(|(name, breaker)| identity(name, breaker))
                .collect();
            self.entries.retain(|entry| {
                entry.registry != Some(index)
                    || in_registry.contains(&identity(&entry.name, &entry.breaker))
            });
            let followed: HashSet<_> = self
                .entries
                .iter()
                .filter(|entry| entry.registry == Some(index))
                .map(|entry| identity(&entry.name, &entry.breaker))
                .collect();
            let new: Vec<Entry> = held
                .into_iter()
                .filter(|(name, breaker)| !followed.contains(&identity(name, breaker)))
                .map(|(name, breaker)| Entry::new(name, breaker, Some(index)))
                .collect();
            self.entries.extend(new);
        }
    }

    /// Publishes the followed breakers' recoveries, applies the store's openings and
    /// recoveries to them, judges the shared windows (with
    /// [`share_windows`](SharedOpenings::share_windows)), then publishes the breakers' own new
    /// openings (the steps in the [module docs](super)). A store error for one name is
    /// reported and does not stop the others.
    pub fn poll(&mut self) -> PollReport {
        self.sync_registries();
        let mut report = PollReport::default();
        for entry in &mut self.entries {
            entry.note_closing();
            // A recovery of this breaker first: it answers the openings published before it,
            // which this breaker's probe has seen end. Then the others' news: a breaker that
            // an opening from the store already opens waits for that opening's probe rather
            // than open on the windows by itself. Then this instance's own judgement, and
            // what it has to tell.
            let now = self.wall_clock;
            let own_recovery = Self::publish_own_recovery(&mut self.store, entry, now, &mut report);
            let applied_before = report.opened + report.extended;
            let remote_opening = Self::apply_remote_opening(
                &mut self.store,
                entry,
                self.wait_for_probe,
                now,
                &mut report,
            );
            // An opening applied just now was checked against the recovery a moment ago:
            // asking the store again would only repeat that read (and its error, if any).
            let remote_recovery = if report.opened + report.extended > applied_before {
                Ok(())
            } else {
                let ended_before = report.ended;
                let recovery =
                    Self::apply_remote_recovery(&mut self.store, entry, now, &mut report);
                // An opening published after the recovery, which the old opening's longer
                // period kept out a moment ago, takes its place now: left to the next poll,
                // the call in between would probe a dependency that failed since.
                if report.ended > ended_before && remote_opening.is_ok() {
                    Self::apply_remote_opening(
                        &mut self.store,
                        entry,
                        self.wait_for_probe,
                        now,
                        &mut report,
                    )
                } else {
                    recovery
                }
            };
            let steps = [
                own_recovery,
                remote_opening,
                remote_recovery,
                Self::share_window(
                    &mut self.store,
                    entry,
                    &self.window_sharing,
                    now,
                    &mut report,
                ),
                Self::publish_own_opening(&mut self.store, entry, now, &mut report),
            ];
            for error in steps.into_iter().filter_map(Result::err) {
                report.errors.push((entry.name.clone(), error));
            }
        }
        report
    }

    fn publish_own_opening(
        store: &mut S,
        entry: &mut Entry,
        wall_clock: fn() -> SystemTime,
        report: &mut PollReport,
    ) -> Result<(), StoreError> {
        let Some((generation, remaining)) = entry.breaker.current_opening() else {
            return Ok(());
        };
        // Applied from the store: by this entry, or by another follower of the same breaker
        // (followed under two names, or an entry built again after a registry change).
        if Some(generation) == entry.published_generation
            || entry.breaker.opened_from_store(generation)
        {
            return Ok(());
        }
        let now = wall_clock();
        let until = later_by(now, remaining);
        store.publish(&entry.name, Opening::new(until, now))?;
        entry.published_generation = Some(generation);
        // Deadlines published before a closing are of an earlier failure, whose recovery
        // answered them: the same failure is the one since.
        entry.published_until = if entry.closed_since_published {
            unix_millis(until)
        } else {
            entry.published_until.max(unix_millis(until))
        };
        entry.published = Some((unix_millis(until), unix_millis(now)));
        entry.closed_since_published = false;
        entry.recovery_due = Some(generation);
        report.published += 1;
        Ok(())
    }

    /// Publishes the breaker's window, then opens the breaker if the fresh windows of every
    /// instance, its own included, meet its rate rule. The opening is left to
    /// `publish_own_opening`, as if the breaker had tripped.
    fn share_window(
        store: &mut S,
        entry: &mut Entry,
        sharing: &Option<(String, Duration)>,
        wall_clock: fn() -> SystemTime,
        report: &mut PollReport,
    ) -> Result<(), StoreError> {
        let (Some((instance, fresh_for)), Some((rate, open_for))) =
            (sharing, entry.breaker.rate_rule())
        else {
            return Ok(());
        };
        let (failures, calls) = entry.breaker.window();
        let now = wall_clock();
        store.publish_window(
            &entry.name,
            &WindowShare::new(instance.clone(), failures, calls, now),
        )?;
        report.windows_published += 1;
        if entry.breaker.closed_generation().is_none() {
            return Ok(());
        }
        // Fresh: published no more than `fresh_for` before now, or after it (another
        // machine's clock may run ahead of this one's).
        let fresh = |window: &WindowShare| match now.duration_since(window.at) {
            Ok(age) => age <= *fresh_for,
            Err(ahead) => ahead.duration() <= *fresh_for,
        };
        let (failures, calls) = store
            .windows(&entry.name)?
            .iter()
            .filter(|window| fresh(window))
            .fold((0u64, 0u64), |(f, c), window| {
                (f + u64::from(window.failures), c + u64::from(window.calls))
            });
        let calls = u32::try_from(calls).unwrap_or(u32::MAX);
        let failures = u32::try_from(failures).unwrap_or(u32::MAX).min(calls);
        if calls == 0 || calls < rate.minimum_calls || failures < rate.failures_needed(calls) {
            return Ok(());
        }
        if let Some(generation) = entry.breaker.open_externally(open_for) {
            // Not an opening from the store: this instance's own, to publish and to probe.
            entry.recovery_due = Some(generation);
            report.opened_by_windows += 1;
        }
        Ok(())
    }

    /// Publishes that the dependency recovered when the breaker is closed after the latest
    /// opening this follower knows of. Timed when the breaker closed (its own clock's time
    /// since, taken from this machine's wall clock), not when this poll sees it: an opening
    /// another instance published between the two is news after the recovery, not answered
    /// by it.
    fn publish_own_recovery(
        store: &mut S,
        entry: &mut Entry,
        wall_clock: fn() -> SystemTime,
        report: &mut PollReport,
    ) -> Result<(), StoreError> {
        let (Some(opened), Some(closed)) = (entry.recovery_due, entry.breaker.closed_generation())
        else {
            return Ok(());
        };
        if !comes_after(closed, opened) {
            return Ok(());
        }
        let now = wall_clock();
        let closed_at = now.checked_sub(entry.breaker.closed_ago()).unwrap_or(now);
        store.publish_recovery(&entry.name, closed_at)?;
        entry.recovery_due = None;
        report.recoveries_published += 1;
        Ok(())
    }

    /// Ends the opening applied from the store early if another instance recorded a recovery
    /// that answers it (`applied_at`). The store is asked only while that opening runs.
    fn apply_remote_recovery(
        store: &mut S,
        entry: &mut Entry,
        wall_clock: fn() -> SystemTime,
        report: &mut PollReport,
    ) -> Result<(), StoreError> {
        let Some(external) = entry.external_generation else {
            return Ok(());
        };
        if entry
            .breaker
            .current_opening()
            .map(|(generation, _)| generation)
            != Some(external)
        {
            return Ok(());
        }
        let Some(recovered) = store.recovered_at(&entry.name)? else {
            return Ok(());
        };
        let recovered = unix_millis(recovered);
        let believable = unix_millis(later_by(wall_clock(), RECOVERY_AHEAD));
        if recovered > entry.applied_at
            && recovered <= believable
            && entry.breaker.end_opening(external)
        {
            report.ended += 1;
        }
        Ok(())
    }

    fn apply_remote_opening(
        store: &mut S,
        entry: &mut Entry,
        wait_for_probe: Duration,
        wall_clock: fn() -> SystemTime,
        report: &mut PollReport,
    ) -> Result<(), StoreError> {
        let own_opening = entry
            .breaker
            .current_opening()
            .is_some_and(|(generation, _)| !entry.breaker.opened_from_store(generation));
        let now = unix_millis(wall_clock());
        if own_opening {
            entry.own_opening_seen_at = now;
        }
        // A stamp ahead of now says the wall clock was stepped back since: the own opening
        // was seen no later than now. Left ahead, it would take every opening published
        // before it, however new, for one older than the probe (below), for as long as the
        // clock had been ahead.
        entry.own_opening_seen_at = entry.own_opening_seen_at.min(now);
        let Some(opening) = store.opening(&entry.name)? else {
            return Ok(());
        };
        if entry.settled == Some(opening) {
            return Ok(()); // applied already, or answered
        }
        let until_millis = unix_millis(opening.until);
        if entry.published == Some((until_millis, unix_millis(opening.published_at))) {
            return Ok(()); // this instance's own
        }
        let same_failure = entry
            .published_until
            .saturating_add(SAME_FAILURE.as_millis() as u64);
        if !entry.closed_since_published && until_millis <= same_failure {
            return Ok(()); // this instance's failure, seen by another that tripped with it
        }
        let closed = entry.breaker.closed_generation();
        if closed.is_some() && unix_millis(opening.published_at) <= entry.own_opening_seen_at {
            return Ok(()); // older than the probe that closed the breaker after its own opening
        }
        let Ok(remaining) = opening.until.duration_since(wall_clock()) else {
            return Ok(()); // passed while it travelled
        };
        // No longer than the period its publisher meant: deadline and publish time come from
        // the same clock, so their difference holds whatever that clock's offset from ours.
        // A deadline measured on our clock alone would hold this breaker open for as long
        // again as a publisher's clock runs ahead, a year at most (`MAX_OPEN_DURATION`).
        let meant = opening
            .until
            .duration_since(opening.published_at)
            .unwrap_or(Duration::ZERO);
        let remaining = remaining.min(meant);
        if remaining < SHORTEST_OPENING {
            return Ok(());
        }
        // Asked only of news that would be applied: a recovery after its publish time means
        // the dependency answered someone since (this follower may have come late to it). A
        // recovery the store cannot read answers nothing: the opening is applied, and the
        // error reported, rather than one bad value keeping every opening from this breaker.
        let (recovered, unreadable) = match store.recovered_at(&entry.name) {
            Ok(recovered) => (recovered, None),
            Err(error) => (None, Some(error)),
        };
        if let Some(recovered) = recovered {
            let believable = later_by(wall_clock(), RECOVERY_AHEAD);
            if recovered <= believable && opening.is_answered_by(recovered) {
                entry.settled = Some(opening);
                return Ok(());
            }
        }
        let hold = remaining
            .saturating_add(wait_for_probe)
            .min(MAX_OPEN_DURATION);
        // A recovery after the opening's publish answers it, even one published after now.
        let applied_at = unix_millis(wall_clock()).min(unix_millis(opening.published_at));
        // The opening applied before, still running: a later deadline makes it longer.
        if let Some(external) = entry.external_generation {
            if entry.breaker.extend_opening(external, hold) {
                entry.settled = Some(opening);
                entry.applied_at = applied_at;
                report.extended += 1;
                return unreadable.map_or(Ok(()), Err);
            }
        }
        // A breaker still in an open period (its own, or the one applied before, which ends
        // later) is left to it, and tried again at the next poll: this deadline may outlast it.
        if let Some(generation) = entry.breaker.open_from_store(hold) {
            entry.external_generation = Some(generation);
            entry.settled = Some(opening);
            entry.applied_at = applied_at;
            entry.recovery_due = Some(generation);
            report.opened += 1;
        }
        unreadable.map_or(Ok(()), Err)
    }
}

impl<S: OpeningStore + 'static> SharedOpenings<S> {
    /// Polls every `interval` on a thread of its own until the returned [`Polling`] is dropped,
    /// passing each store error to `on_error` with the name it concerns.
    ///
    /// # Errors
    ///
    /// An [`std::io::ErrorKind::InvalidInput`] error for an `interval` under a millisecond (it
    /// would poll the store without pause), or the [`std::io::Error`] of spawning the thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use hotbreaker::Breaker;
    /// use hotbreaker::shared::{MemoryStore, SharedOpenings};
    ///
    /// let payments = Arc::new(Breaker::builder().build().unwrap());
    /// let polling = SharedOpenings::new(MemoryStore::new())
    ///     .follow("payments", payments.clone())
    ///     .spawn_polling(Duration::from_millis(200), |name, error| {
    ///         eprintln!("shared openings of {name}: {error}")
    ///     })?;
    /// drop(polling); // stops the thread
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn spawn_polling(
        mut self,
        interval: Duration,
        mut on_error: impl FnMut(&str, &StoreError) + Send + 'static,
    ) -> std::io::Result<Polling> {
        if interval < Duration::from_millis(1) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("invalid interval: must be at least 1 ms, got {interval:?}"),
            ));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("hotbreaker-shared".into())
            .spawn(move || {
                // Acquire: pairs with the release store in `Polling::drop`; nothing else is
                // handed over through it.
                while !stopped.load(Ordering::Acquire) {
                    for (name, error) in self.poll().errors {
                        on_error(&name, &error);
                    }
                    std::thread::park_timeout(interval);
                }
            })?;
        Ok(Polling {
            stop,
            thread: Some(thread),
        })
    }
}

/// The polling thread of [`SharedOpenings::spawn_polling`]; dropping it stops the thread and
/// waits for its poll in progress to end.
///
/// The thread ends by itself only if the store or `on_error` panics. The panic is printed
/// where it happened and is not caught: a store that panicked halfway through a command may
/// have left its connection or its data half changed, and polling on with it could share
/// wrong openings. The breakers go on judging their own calls; what they no longer do is
/// follow the others. [`is_running`](Polling::is_running) tells a health check. A breaker's
/// listener that panics at an opening the thread applies does not end it (see
/// [`Builder::on_transition`](crate::Builder::on_transition)).
pub struct Polling {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Polling {
    /// Whether the polling thread still polls: `false` once it has ended, which before the
    /// `Polling` is dropped means the store or `on_error` panicked.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use hotbreaker::Breaker;
    /// use hotbreaker::shared::{MemoryStore, SharedOpenings};
    ///
    /// let payments = Arc::new(Breaker::builder().build().unwrap());
    /// let polling = SharedOpenings::new(MemoryStore::new())
    ///     .follow("payments", payments)
    ///     .spawn_polling(Duration::from_millis(200), |_, _| {})?;
    /// // In a readiness check:
    /// assert!(polling.is_running(), "shared openings are no longer followed");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn is_running(&self) -> bool {
        self.thread
            .as_ref()
            .is_some_and(|thread| !thread.is_finished())
    }
}

impl Drop for Polling {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            // A panic on the polling thread (a store's, or `on_error`'s) is not re-raised in a
            // destructor; it was already printed where it happened.
            let _ = thread.join();
        }
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for SharedOpenings<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedOpenings")
            .field("store", &self.store)
            .field(
                "names",
                &self.entries.iter().map(|e| &e.name).collect::<Vec<_>>(),
            )
            .field("registries", &self.registries.len())
            .field("wait_for_probe", &self.wait_for_probe)
            .field("window_sharing", &self.window_sharing)
            .finish()
    }
}

impl std::fmt::Debug for Polling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Polling").finish_non_exhaustive()
    }
}
