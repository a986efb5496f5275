//! Openings, recoveries and windows shared between instances: when one instance's breaker
//! trips, the others open too, for the rest of its open period, instead of each learning from
//! its own failed calls; when one sees the dependency recover, the others stop waiting; and,
//! if asked, their rate rules judge the calls of all of them together.
//!
//! Nothing here is on a call path. A [`SharedOpenings`] follows named breakers and, each time
//! it is polled (from a thread of its own with [`SharedOpenings::spawn_polling`], or from the
//! caller's own timer with [`SharedOpenings::poll`]):
//!
//! 1. publishes a recovery when a followed breaker has closed since its last opening (its
//!    probe succeeded, or it was reset): first, so that it answers the openings published
//!    before it, whose failure this breaker's probe saw end;
//! 2. reads each name's opening back from an [`OpeningStore`], and opens a closed or
//!    half-open breaker until its deadline ([`Breaker::open_for`](crate::Breaker::open_for),
//!    [`Trigger::External`](crate::Trigger::External)), or makes the opening it applied before
//!    longer; for no longer than the period its publisher meant (its deadline less its
//!    publish time, both on the publisher's clock), so that a clock running ahead does not
//!    hold the others open for as long again. Not the opening this instance published
//!    itself, nor one that ends within a second of it while no poll has seen its breaker
//!    closed since: that is the same failure seen by two instances that tripped at about the
//!    same time. Nor, while the breaker is closed, one published before this follower last
//!    saw the breaker in an opening of its own: the probe that closed it came later than that
//!    news. Nor one that a recovery recorded after its publish time has answered: the
//!    dependency answered someone since (this follower may have come late). A recovery the
//!    store cannot read answers none: the opening is applied and the store's error reported;
//! 3. ends an opening it applied from the store early when the store records a recovery made
//!    after that opening was published, or after it applied it if that was earlier
//!    ([`Breaker::end_open_period`](crate::Breaker::end_open_period)):
//!    the breaker's next call probes. A recovery stamped more than a second ahead of this
//!    machine's clock is not believed. An opening from step 2 that the ended one's longer
//!    period kept out is applied then, in the same poll: a failure after the recovery is not
//!    probed;
//! 4. with [`SharedOpenings::share_windows`], publishes each followed breaker's rate window,
//!    and opens a breaker that is still closed if the fresh windows of all instances, added
//!    up, meet its rule;
//! 5. publishes every opening a followed breaker made by itself (a trip, a failed probe, or
//!    step 4) as a wall-clock deadline and publish time under the breaker's name; the store
//!    keeps the opening that ends later, unless the one it keeps is answered by a recovery or
//!    was published more than a second after the new one (then the new one, whenever it
//!    ends), and the later of two recoveries.
//!
//! By default each instance still probes when the period ends, and one whose probe fails
//! opens again and publishes that. With [`SharedOpenings::wait_for_probe`], one instance
//! probes for all: an opening applied from the store lasts a while past its deadline, so the
//! instance that published it probes first; its recovery ends the others' openings (each
//! then probes once, against a dependency that just answered), and its failed probe's new
//! deadline makes their openings longer before they end. An opening that came from the store
//! is never published back. How soon the others follow is the polling interval; how far their
//! periods end apart is that plus the difference between the machines' wall clocks, which
//! also decides whether a recovery counts as after an opening. A recovery is stamped with
//! the time its breaker closed, an opening with the poll that publishes it, up to a polling
//! interval after the trip: a failure shortly before another instance's recovery may then be
//! taken for one after it, and a late follower applies it.
//!
//! This is what the article's "keep the breaker's state in a store shared by all instances"
//! asks for, without the cost other breakers pay for it: no lock and no round trip to the
//! store around the protected calls, which keep deciding from the local state word.
//!
//! Stores: [`MemoryStore`] (instances in one process, and tests), and with the `redis` feature
//! `RedisStore`, a small client of its own for one Redis server (no TLS, no cluster).
//!
//! # Examples
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use hotbreaker::shared::{MemoryStore, SharedOpenings};
//! use hotbreaker::{Breaker, State};
//!
//! let store = MemoryStore::new(); // a RedisStore between processes
//! let here = Arc::new(Breaker::builder().consecutive_failures(1).build()?);
//! let there = Arc::new(Breaker::builder().consecutive_failures(1).build()?);
//! let mut follow_here = SharedOpenings::new(store.clone()).follow("payments", here.clone());
//! let mut follow_there = SharedOpenings::new(store).follow("payments", there.clone());
//!
//! here.try_acquire().unwrap().failure(); // this instance trips
//! follow_here.poll(); // ...and publishes its opening
//! follow_there.poll(); // the other instance reads it
//! assert_eq!(there.state(), State::Open);
//! # Ok::<(), hotbreaker::ConfigError>(())
//! ```

mod follower;
mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::error::Error;
use std::fmt;
use std::time::{Duration, SystemTime};

pub use follower::{PollReport, Polling, SharedOpenings};
pub use memory::MemoryStore;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::RedisStore;

/// How far ahead of the reader's clock a recovery may be stamped and still be believed, and
/// how much later than a new recovery a recorded one may be, or than a new opening's publish
/// time a recorded opening's, and still be kept: the clocks of two machines that agree to
/// within this much are taken to agree.
pub const RECOVERY_AHEAD: Duration = Duration::from_secs(1);

/// Where instances leave their openings, and the times they saw the dependency recover, for
/// each other.
///
/// Times are wall-clock times ([`SystemTime`]), since instances on different machines share no
/// other clock. Implementations keep, per name, one [`Opening`]: the one with the later
/// deadline of two, except that one *answered* by a recovery (the latest recovery recorded for
/// the name, if the store keeps recoveries, is later than its publish time, and no more than
/// [`RECOVERY_AHEAD`] ahead of the new one's), or one published more than [`RECOVERY_AHEAD`]
/// later than the new one (a machine whose clock runs ahead stamped it), gives way to any new
/// opening, whenever it ends. They may forget an opening once its deadline has passed.
///
/// # Examples
///
/// A store that shares openings only (no recoveries, no windows), over a map that stands in
/// for a database table:
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
/// use std::time::SystemTime;
///
/// use hotbreaker::shared::{Opening, OpeningStore, RECOVERY_AHEAD, SharedOpenings, StoreError};
/// use hotbreaker::{Breaker, State};
///
/// #[derive(Clone, Default)]
/// struct TableStore(Arc<Mutex<HashMap<String, Opening>>>);
///
/// impl OpeningStore for TableStore {
///     fn publish(&mut self, name: &str, opening: Opening) -> Result<(), StoreError> {
///         let mut table = self.0.lock().map_err(|_| StoreError::new("table poisoned"))?;
///         // No recoveries here, so none answers the kept opening: it stays if it ends later,
///         // unless a clock running ahead stamped it.
///         let keeps = table.get(name).is_some_and(|kept| {
///             kept.until > opening.until
///                 && kept.published_at <= opening.published_at + RECOVERY_AHEAD
///         });
///         if !keeps {
///             table.insert(name.to_owned(), opening);
///         }
///         Ok(())
///     }
///
///     fn opening(&mut self, name: &str) -> Result<Option<Opening>, StoreError> {
///         let table = self.0.lock().map_err(|_| StoreError::new("table poisoned"))?;
///         let now = SystemTime::now();
///         Ok(table.get(name).copied().filter(|opening| opening.until > now))
///     }
/// }
///
/// let store = TableStore::default();
/// let here = Arc::new(Breaker::builder().consecutive_failures(1).build()?);
/// let there = Arc::new(Breaker::builder().consecutive_failures(1).build()?);
/// let mut follow_here = SharedOpenings::new(store.clone()).follow("payments", here.clone());
/// let mut follow_there = SharedOpenings::new(store).follow("payments", there.clone());
///
/// here.try_acquire().unwrap().failure();
/// follow_here.poll(); // publishes the opening
/// follow_there.poll(); // applies it
/// assert_eq!(there.state(), State::Open);
/// # Ok::<(), hotbreaker::ConfigError>(())
/// ```
pub trait OpeningStore: Send {
    /// Records that the dependency behind `name` is failing until `opening.until`, unless the
    /// opening already recorded for it ends later, is not answered by a recovery, and was not
    /// published more than [`RECOVERY_AHEAD`] later than `opening`.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when the store cannot be reached or refuses the write.
    fn publish(&mut self, name: &str, opening: Opening) -> Result<(), StoreError>;

    /// The opening recorded for `name`, if there is one whose deadline has not passed.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when the store cannot be reached or answers something unexpected.
    fn opening(&mut self, name: &str) -> Result<Option<Opening>, StoreError>;

    /// Records that an instance saw the dependency behind `name` recover at `at` (its breaker
    /// closed after an opening), unless a later recovery is already recorded for it. A
    /// recovery recorded more than [`RECOVERY_AHEAD`] later than `at` is replaced all the
    /// same: a machine whose clock runs ahead stamped it, and kept, it would hide every honest
    /// recovery until the clocks caught up with it (followers do not believe it either).
    ///
    /// The default records nothing: a store that does not keep recoveries shares openings
    /// only, and every instance probes for itself.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when the store cannot be reached or refuses the write.
    fn publish_recovery(&mut self, name: &str, at: SystemTime) -> Result<(), StoreError> {
        let _ = (name, at);
        Ok(())
    }

    /// The latest recovery recorded for `name`, if any. Implementations may forget one once no
    /// opening it answers can still be kept: an opening lasts up to
    /// [`MAX_OPEN_DURATION`](crate::MAX_OPEN_DURATION) after it was published, so a year and
    /// a day after the recovery is safe. Forgotten sooner, the opening it answered reads as
    /// unanswered again: an instance that starts then applies it, and a new opening that ends
    /// sooner gives way to it.
    ///
    /// The default has none (see [`publish_recovery`](OpeningStore::publish_recovery)).
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when the store cannot be reached or answers something unexpected.
    fn recovered_at(&mut self, name: &str) -> Result<Option<SystemTime>, StoreError> {
        let _ = name;
        Ok(None)
    }

    /// Records `window` as its instance's latest window for `name`, in place of the one it
    /// published before.
    ///
    /// The default records nothing: a store that does not keep windows shares none, and
    /// [`SharedOpenings::share_windows`] then judges nothing.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when the store cannot be reached or refuses the write.
    fn publish_window(&mut self, name: &str, window: &WindowShare) -> Result<(), StoreError> {
        let _ = (name, window);
        Ok(())
    }

    /// The latest window each instance published for `name`, however old. Implementations
    /// may forget an instance's window a day after it published it.
    ///
    /// The default has none (see [`publish_window`](OpeningStore::publish_window)).
    ///
    /// # Errors
    ///
    /// A [`StoreError`] when the store cannot be reached or answers something unexpected.
    fn windows(&mut self, name: &str) -> Result<Vec<WindowShare>, StoreError> {
        let _ = name;
        Ok(Vec::new())
    }
}

/// An opening as stores keep it: until when the dependency is taken to be failing, and when
/// the instance that opened published it. A recovery recorded after that publish time
/// *answers* it: the dependency answered someone since, so a follower that reads it only
/// now does not apply it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Opening {
    /// When the opening ends, on the publisher's wall clock.
    pub until: SystemTime,
    /// When it was published, on the publisher's wall clock.
    pub published_at: SystemTime,
}

impl Opening {
    /// An opening until `until`, published at `published_at`.
    pub fn new(until: SystemTime, published_at: SystemTime) -> Self {
        Opening {
            until,
            published_at,
        }
    }

    /// Whether a recovery recorded at `recovered` answers this opening: it is later than the
    /// publish time, to the millisecond (the unit stores keep).
    pub fn is_answered_by(&self, recovered: SystemTime) -> bool {
        unix_millis(recovered) > unix_millis(self.published_at)
    }
}

/// One instance's rate window, as it published it for the others
/// ([`SharedOpenings::share_windows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WindowShare {
    /// The instance that published it, unique among the instances sharing a store.
    pub instance: String,
    /// Failures among the calls in its window.
    pub failures: u32,
    /// Calls in its window (at most the window's size; with a window per thread, the
    /// threads' windows summed, as [`Metrics::window_calls`](crate::Metrics::window_calls)).
    pub calls: u32,
    /// When it was published, on the publisher's wall clock.
    pub at: SystemTime,
}

impl WindowShare {
    /// A window of `calls` calls, `failures` of them failures, published by `instance` at
    /// `at`.
    pub fn new(instance: impl Into<String>, failures: u32, calls: u32, at: SystemTime) -> Self {
        WindowShare {
            instance: instance.into(),
            failures,
            calls,
            at,
        }
    }
}

/// A store could not be read or written; the message says what happened.
#[derive(Debug)]
pub struct StoreError {
    message: String,
    source: Option<Box<dyn Error + Send + Sync>>,
}

impl StoreError {
    /// An error with `message` and no underlying cause.
    pub fn new(message: impl Into<String>) -> Self {
        StoreError {
            message: message.into(),
            source: None,
        }
    }

    /// An error with `message`, caused by `source`.
    pub fn with_source(
        message: impl Into<String>,
        source: impl Error + Send + Sync + 'static,
    ) -> Self {
        StoreError {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

// The cause's message is already in `Display` (most callers print an error with `{}` alone),
// so the chain goes on from the cause's own source: naming the cause again would print it twice
// in every report that walks the chain.
impl Error for StoreError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().and_then(Error::source)
    }
}

impl StoreError {
    /// Whether the error came from the operating system (a socket's, a file's), as against
    /// a reply or a value the store did not accept.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn is_io(&self) -> bool {
        self.source
            .as_deref()
            .is_some_and(|source| source.is::<std::io::Error>())
    }
}

/// Milliseconds since the Unix epoch: how deadlines travel through stores. A time before
/// the epoch is 0.
pub(crate) fn unix_millis(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

/// `at` plus `by`, or `at` itself past the latest time a [`SystemTime`] holds: a follower's
/// custom wall clock may read that late, and a follower never panics on the time it is given.
pub(crate) fn later_by(at: SystemTime, by: std::time::Duration) -> SystemTime {
    at.checked_add(by).unwrap_or(at)
}

/// The [`SystemTime`] `millis` after the Unix epoch.
pub(crate) fn from_unix_millis(millis: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(millis)
}

#[cfg(test)]
mod store_error_tests {
    use super::*;

    #[test]
    fn a_report_names_the_cause_once() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let error = StoreError::with_source("redis 127.0.0.1:1", refused);
        assert_eq!(error.to_string(), "redis 127.0.0.1:1: connection refused");
        assert!(error.source().is_none(), "its message is the whole chain");
        assert!(error.is_io());
        assert!(!StoreError::new("redis: ERR").is_io());
    }
}
