//! Named breakers, one per dependency, and a snapshot of all of them for a health endpoint.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::breaker::Breaker;
use crate::builder::Builder;
use crate::clock::{Clock, QuantaClock};
use crate::config::ConfigError;
use crate::metrics::Metrics;
use crate::state::State;
use crate::sync::Swappable;

/// Breakers by name, one per dependency (`"payments"`, `"users-db"`), shared by the parts of a
/// program that call the same dependency, and listed together for a health endpoint.
///
/// # Performance
///
/// Look a breaker up once (when a client is built, when a tower layer is made) and keep the
/// [`Arc`]: the breaker's own calls never touch the registry.
///
/// - [`get`](Registry::get) takes no lock: the map is read through `arc-swap`, and a hit
///   clones one `Arc`.
/// - Inserting or removing a name copies the map and swaps the copy in with a
///   compare-and-swap, retried when another insertion won, so that neither readers nor
///   writers ever wait for each other; only two [`apply_config`](Registry::apply_config)
///   reloads wait, one for the other. Registries are meant to hold tens of breakers, filled
///   at start-up.
/// - [`snapshot`](Registry::snapshot) reads each breaker's [`metrics`](Breaker::metrics)
///   and takes no lock either.
///
/// # Examples
///
/// ```
/// use hotbreaker::{Breaker, Registry};
///
/// let registry = Registry::new();
/// let payments = registry.get_or_insert_with("payments", |_name| {
///     Breaker::builder().consecutive_failures(5)
/// })?;
/// // Another part of the program asks for the same dependency and gets the same breaker.
/// let again = registry.get_or_insert_with("payments", |_name| Breaker::builder())?;
/// assert!(std::sync::Arc::ptr_eq(&payments, &again));
///
/// payments.try_acquire().unwrap().failure();
/// let health = registry.snapshot();
/// assert_eq!(health[0].name, "payments");
/// assert_eq!(health[0].metrics.failures, 1);
/// # Ok::<(), hotbreaker::ConfigError>(())
/// ```
pub struct Registry<C: Clock = QuantaClock> {
    /// Replaced whole on every change, so readers load it without a lock; a change is a
    /// compare-and-swap from the map it copied, so two changes never both copy the same map.
    breakers: Swappable<BreakerMap<C>>,
    /// Held by [`apply_config`](Registry::apply_config) from its check to its last
    /// reconfiguration, so that two reloads at once apply one file and then the other, not a
    /// mix of both breaker by breaker. Guards no data (a panic in a builder leaves nothing to
    /// repair) and is taken by nothing else: lookups and insertions never wait for it.
    reloads: std::sync::Mutex<()>,
    /// The thread holding `reloads` (its [`thread_token`]), 0 if none: a builder that
    /// applies a configuration to this registry again, on the same thread, goes on without
    /// waiting for itself. Relaxed: a thread only ever compares it with its own token, which
    /// only it writes (while it holds the lock, and back to 0 before letting it go).
    reload_holder: std::sync::atomic::AtomicUsize,
}

/// A number unique to the calling thread among the threads alive: the address of a
/// thread-local of its own.
fn thread_token() -> usize {
    std::thread_local! {
        static TOKEN: u8 = const { 0 };
    }
    TOKEN.with(|token| std::ptr::from_ref(token) as usize)
}

/// [`Registry::one_reload_at_a_time`]'s guard.
pub(crate) struct ReloadGuard<'a> {
    /// The lock and the holder to clear, unless this thread held them already.
    held: Option<(
        std::sync::MutexGuard<'a, ()>,
        &'a std::sync::atomic::AtomicUsize,
    )>,
}

impl Drop for ReloadGuard<'_> {
    fn drop(&mut self) {
        if let Some((_lock, holder)) = self.held.take() {
            holder.store(0, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

type BreakerMap<C> = BTreeMap<String, Arc<Breaker<C>>>;

impl Registry<QuantaClock> {
    /// An empty registry of breakers on the default clock. For another clock (a
    /// [`ManualClock`](crate::ManualClock) in tests), use `Registry::<ManualClock>::default()`.
    pub fn new() -> Self {
        Registry::default()
    }
}

impl<C: Clock> Default for Registry<C> {
    fn default() -> Self {
        Registry {
            breakers: Swappable::new(BTreeMap::new()),
            reloads: std::sync::Mutex::new(()),
            reload_holder: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

impl<C: Clock> Registry<C> {
    /// Waits for a reload in progress on another thread; see `reloads`. On the thread that
    /// holds it (a builder of that reload applying another), goes on at once.
    pub(crate) fn one_reload_at_a_time(&self) -> ReloadGuard<'_> {
        use std::sync::atomic::Ordering::Relaxed;
        let me = thread_token();
        if self.reload_holder.load(Relaxed) == me {
            return ReloadGuard { held: None };
        }
        let lock = self
            .reloads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.reload_holder.store(me, Relaxed);
        ReloadGuard {
            held: Some((lock, &self.reload_holder)),
        }
    }

    /// The breaker registered as `name`, if any. Takes no lock.
    pub fn get(&self, name: &str) -> Option<Arc<Breaker<C>>> {
        self.breakers.load().get(name).cloned()
    }

    /// The breaker registered as `name`, or a new one built from `builder(name)` and
    /// registered. `builder` gets the name so that it can attach listeners labelled with it
    /// (`.on_transition(hotbreaker::tracing::log_transitions(name))`).
    ///
    /// `builder` runs while nothing of the registry is held, so it may use the registry. When
    /// two threads insert the same new name at once, both may build, and only the first
    /// breaker is registered and returned to both.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`Builder::build`]; nothing is registered then.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, Registry};
    ///
    /// let registry = Registry::new();
    /// let err = registry
    ///     .get_or_insert_with("search", |_| Breaker::builder().failure_rate(1.5, 20))
    ///     .unwrap_err();
    /// assert_eq!(err.field(), "failure_rate.threshold");
    /// assert!(registry.get("search").is_none());
    /// ```
    pub fn get_or_insert_with(
        &self,
        name: &str,
        builder: impl FnOnce(&str) -> Builder<C>,
    ) -> Result<Arc<Breaker<C>>, ConfigError>
    where
        C: Default,
    {
        if let Some(breaker) = self.get(name) {
            return Ok(breaker);
        }
        let built = Arc::new(builder(name).build()?);
        Ok(self.insert_if_absent(name, built))
    }

    /// Registers `breaker` as `name`, unless a breaker is registered under that name already.
    /// Returns the breaker registered as `name` afterwards: `breaker`, or the one that was
    /// there.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hotbreaker::{Breaker, Registry};
    ///
    /// let registry = Registry::new();
    /// let first = Arc::new(Breaker::builder().build()?);
    /// let second = Arc::new(Breaker::builder().build()?);
    /// let kept = registry.insert_if_absent("db", first.clone());
    /// assert!(Arc::ptr_eq(&kept, &first));
    /// let kept = registry.insert_if_absent("db", second);
    /// assert!(Arc::ptr_eq(&kept, &first), "the one that was there");
    /// assert!(Arc::ptr_eq(&registry.get("db").unwrap(), &first));
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn insert_if_absent(&self, name: &str, breaker: Arc<Breaker<C>>) -> Arc<Breaker<C>> {
        let mut registered = breaker;
        self.breakers.update(|current| {
            if let Some(existing) = current.get(name) {
                registered = Arc::clone(existing);
                return None;
            }
            let mut next = BTreeMap::clone(current);
            next.insert(name.to_owned(), Arc::clone(&registered));
            Some(next)
        });
        registered
    }

    /// Unregisters the breaker named `name` and returns it. Holders of its `Arc` keep using
    /// it; the next [`get_or_insert_with`](Registry::get_or_insert_with) of that name builds a
    /// new one. With the `metrics` feature, the breaker's gauges are set to 0
    /// (`metrics_export::forget`; its transitions after that, if a `count_transitions`
    /// listener counts them, set its state gauge again).
    ///
    /// # Panics
    ///
    /// With the `metrics` feature, if the installed recorder panics while the gauges are set
    /// to 0. The breaker is unregistered by then; the gauges not yet set keep their values.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, Registry};
    ///
    /// let registry = Registry::new();
    /// let db = registry.get_or_insert_with("db", |_| Breaker::builder().consecutive_failures(1))?;
    /// db.try_acquire().unwrap().failure(); // open
    /// let removed = registry.remove("db").expect("registered");
    /// assert!(registry.get("db").is_none());
    /// assert!(removed.try_acquire().is_err(), "its holders keep using it");
    /// let rebuilt = registry.get_or_insert_with("db", |_| Breaker::builder())?;
    /// assert!(rebuilt.try_acquire().is_ok(), "a new breaker, closed");
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn remove(&self, name: &str) -> Option<Arc<Breaker<C>>> {
        let mut removed = None;
        self.breakers.update(|current| {
            removed = current.get(name).cloned();
            removed.as_ref()?;
            let mut next = BTreeMap::clone(current);
            next.remove(name);
            Some(next)
        });
        // Its gauges would otherwise go on showing its last state at every scrape.
        #[cfg(feature = "metrics")]
        if removed.is_some() {
            crate::metrics_export::forget(name);
        }
        removed
    }

    /// Registers each of `new` under its name, in one change of the map, if every name in
    /// `names` still maps to what `expected` says (the same breaker, or none); returns whether
    /// it did. For [`apply_config`](Registry::apply_config), whose checks hold only for the
    /// breakers it checked.
    pub(crate) fn insert_all_if_unchanged(
        &self,
        names: &[&str],
        expected: &BTreeMap<String, Arc<Breaker<C>>>,
        new: &[(String, Arc<Breaker<C>>)],
    ) -> bool {
        let mut unchanged = true;
        self.breakers.update(|current| {
            unchanged = names
                .iter()
                .all(|name| match (current.get(*name), expected.get(*name)) {
                    (None, None) => true,
                    (Some(now), Some(checked)) => Arc::ptr_eq(now, checked),
                    _ => false,
                });
            if !unchanged || new.is_empty() {
                return None;
            }
            let mut next = BTreeMap::clone(current);
            for (name, breaker) in new {
                next.insert(name.clone(), Arc::clone(breaker));
            }
            Some(next)
        });
        unchanged
    }

    /// How many breakers are registered.
    pub fn len(&self) -> usize {
        self.breakers.load().len()
    }

    /// Whether no breaker is registered.
    pub fn is_empty(&self) -> bool {
        self.breakers.load().is_empty()
    }

    /// The registered breakers with their names, sorted by name: a copy of the map taken
    /// without a lock, unaffected by later insertions.
    pub fn breakers(&self) -> Vec<(String, Arc<Breaker<C>>)> {
        self.breakers
            .load()
            .iter()
            .map(|(name, breaker)| (name.clone(), Arc::clone(breaker)))
            .collect()
    }

    /// The health of every registered breaker, sorted by name: what a health endpoint shows.
    /// With the `serde` feature, it serializes (to JSON, for example) as a list of flat
    /// objects.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, Registry, State};
    ///
    /// let registry = Registry::new();
    /// registry.get_or_insert_with("users-db", |_| Breaker::builder().consecutive_failures(1))?;
    /// registry.get("users-db").unwrap().try_acquire().unwrap().failure();
    /// let unhealthy: Vec<_> = registry
    ///     .snapshot()
    ///     .into_iter()
    ///     .filter(|health| health.state != State::Closed)
    ///     .map(|health| health.name)
    ///     .collect();
    /// assert_eq!(unhealthy, ["users-db"]);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn snapshot(&self) -> Vec<BreakerHealth> {
        self.breakers
            .load()
            .iter()
            .map(|(name, breaker)| BreakerHealth::new(name.clone(), breaker.metrics()))
            .collect()
    }
}

impl<C: Clock> fmt::Debug for Registry<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let breakers = self.breakers.load();
        f.debug_map()
            .entries(
                breakers
                    .iter()
                    .map(|(name, breaker)| (name, breaker.state())),
            )
            .finish()
    }
}

/// One breaker's health, from [`Registry::snapshot`].
///
/// With the `serde` feature it serializes as one flat object: `name`, `state` (as
/// [`State::as_str`] writes it), `failure_rate`, then every field of [`Metrics`] but the state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BreakerHealth {
    /// The name the breaker is registered under.
    pub name: String,
    /// The state; an open breaker whose open period has ended reads as half-open.
    pub state: State,
    /// While closed: the share of failures in the failure-rate window (0 when it is empty).
    pub failure_rate: f64,
    /// The breaker's counters and window.
    pub metrics: Metrics,
}

impl BreakerHealth {
    /// The health of a breaker known as `name` whose metrics are `metrics`; for health
    /// reports of breakers kept outside a [`Registry`].
    pub fn new(name: impl Into<String>, metrics: Metrics) -> Self {
        BreakerHealth {
            name: name.into(),
            state: metrics.state,
            failure_rate: metrics.failure_rate(),
            metrics,
        }
    }
}

#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl serde::Serialize for BreakerHealth {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;

        let m = &self.metrics;
        // A field per field of `Metrics` but the state: a destructuring that names them all,
        // so that a field added there and not here does not compile.
        let Metrics {
            state: _,
            successes,
            failures,
            slow_calls,
            hung_calls,
            ignored,
            released,
            rejected,
            openings,
            half_openings,
            closings,
            window_failures,
            window_calls,
            consecutive_failures,
            probes_out,
        } = m;
        let mut s = serializer.serialize_struct("BreakerHealth", 17)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("state", self.state.as_str())?;
        s.serialize_field("failure_rate", &self.failure_rate)?;
        s.serialize_field("successes", successes)?;
        s.serialize_field("failures", failures)?;
        s.serialize_field("slow_calls", slow_calls)?;
        s.serialize_field("hung_calls", hung_calls)?;
        s.serialize_field("ignored", ignored)?;
        s.serialize_field("released", released)?;
        s.serialize_field("rejected", rejected)?;
        s.serialize_field("openings", openings)?;
        s.serialize_field("half_openings", half_openings)?;
        s.serialize_field("closings", closings)?;
        s.serialize_field("window_failures", window_failures)?;
        s.serialize_field("window_calls", window_calls)?;
        s.serialize_field("consecutive_failures", consecutive_failures)?;
        s.serialize_field("probes_out", probes_out)?;
        s.end()
    }
}
