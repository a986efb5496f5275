//! Following named breakers: publishing their own openings, and applying the others'.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use super::{OpeningStore, StoreError, unix_millis};
use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::sync::{AtomicBool, Ordering};

/// A remote deadline closer than this is let pass: opening for less would only make a
/// transition, and the clocks of two machines do not agree that closely anyway.
const SHORTEST_OPENING: Duration = Duration::from_millis(1);

/// A remote deadline that ends no later than this after one this follower published is taken
/// for the same failure seen by two instances (both tripped at about the same time): it does
/// not reopen the breaker for the few milliseconds between their periods' ends.
const SAME_FAILURE: Duration = Duration::from_secs(1);

/// What [`SharedOpenings`] needs of a breaker, whatever its clock.
trait Followed: Send + Sync {
    fn current_opening(&self) -> Option<(u32, Duration)>;
    fn open_externally(&self, duration: Duration) -> Option<u32>;
}

impl<C: Clock> Followed for Breaker<C> {
    fn current_opening(&self) -> Option<(u32, Duration)> {
        Breaker::current_opening(self)
    }

    fn open_externally(&self, duration: Duration) -> Option<u32> {
        Breaker::open_externally(self, duration)
    }
}

/// One followed breaker, and what this follower did with it.
struct Entry {
    name: String,
    breaker: Arc<dyn Followed>,
    /// The generation of the last opening published, so that each is published once.
    published_generation: Option<u32>,
    /// The latest deadline this follower published, in Unix milliseconds: reading it back
    /// from the store is no news.
    published_until: u64,
    /// The generation this follower's last external opening made: not the breaker's own, so
    /// never published.
    external_generation: Option<u32>,
    /// The latest remote deadline applied, in Unix milliseconds: applied once.
    applied_until: u64,
}

/// Keeps followed breakers in step with an [`OpeningStore`]; see the [module docs](super).
///
/// Built once with every breaker it follows ([`follow`](SharedOpenings::follow)), then polled.
pub struct SharedOpenings<S> {
    store: S,
    entries: Vec<Entry>,
}

/// What one [`poll`](SharedOpenings::poll) did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct PollReport {
    /// Openings of followed breakers published to the store.
    pub published: usize,
    /// Followed breakers opened because the store held a later deadline for their name.
    pub opened: usize,
    /// Store errors, with the name they concern; the other names were still polled.
    pub errors: Vec<(String, StoreError)>,
}

impl<S: OpeningStore> SharedOpenings<S> {
    /// Follows nothing yet; add breakers with [`follow`](SharedOpenings::follow).
    pub fn new(store: S) -> Self {
        SharedOpenings {
            store,
            entries: Vec::new(),
        }
    }

    /// Follows `breaker` under `name`, the name every instance gives the same dependency.
    pub fn follow<C: Clock>(mut self, name: impl Into<String>, breaker: Arc<Breaker<C>>) -> Self {
        self.entries.push(Entry {
            name: name.into(),
            breaker,
            published_generation: None,
            published_until: 0,
            external_generation: None,
            applied_until: 0,
        });
        self
    }

    /// Publishes the followed breakers' new openings, then applies the store's deadlines to
    /// them. A store error for one name is reported and does not stop the others.
    pub fn poll(&mut self) -> PollReport {
        let mut report = PollReport::default();
        for entry in &mut self.entries {
            if let Err(error) = Self::publish_own_opening(&mut self.store, entry, &mut report) {
                report.errors.push((entry.name.clone(), error));
            }
            if let Err(error) = Self::apply_remote_opening(&mut self.store, entry, &mut report) {
                report.errors.push((entry.name.clone(), error));
            }
        }
        report
    }

    fn publish_own_opening(
        store: &mut S,
        entry: &mut Entry,
        report: &mut PollReport,
    ) -> Result<(), StoreError> {
        let Some((generation, remaining)) = entry.breaker.current_opening() else {
            return Ok(());
        };
        if Some(generation) == entry.published_generation
            || Some(generation) == entry.external_generation
        {
            return Ok(());
        }
        let until = SystemTime::now() + remaining;
        store.publish(&entry.name, until)?;
        entry.published_generation = Some(generation);
        entry.published_until = entry.published_until.max(unix_millis(until));
        report.published += 1;
        Ok(())
    }

    fn apply_remote_opening(
        store: &mut S,
        entry: &mut Entry,
        report: &mut PollReport,
    ) -> Result<(), StoreError> {
        let Some(until) = store.open_until(&entry.name)? else {
            return Ok(());
        };
        let until_millis = unix_millis(until);
        let ours = entry
            .published_until
            .saturating_add(SAME_FAILURE.as_millis() as u64);
        if until_millis <= ours.max(entry.applied_until) {
            return Ok(()); // ours, or applied already
        }
        let Ok(remaining) = until.duration_since(SystemTime::now()) else {
            return Ok(()); // passed while it travelled
        };
        if remaining < SHORTEST_OPENING {
            return Ok(());
        }
        // A breaker still in an open period of its own is left to it, and tried again at the
        // next poll: the remote deadline may outlast it.
        let remaining = remaining.min(crate::MAX_OPEN_DURATION);
        if let Some(generation) = entry.breaker.open_externally(remaining) {
            entry.external_generation = Some(generation);
            entry.applied_until = until_millis;
            report.opened += 1;
        }
        Ok(())
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
pub struct Polling {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
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

impl std::fmt::Debug for Polling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Polling").finish_non_exhaustive()
    }
}
