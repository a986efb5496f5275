//! An opening store in memory: for instances in one process, and for tests.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::SystemTime;

use super::{
    Opening, OpeningStore, RECOVERY_AHEAD, StoreError, WindowShare, from_unix_millis, unix_millis,
};
use crate::sync::Swappable;

/// Openings, recoveries and windows kept in this process. Clones share them, so each instance (a
/// [`SharedOpenings`](super::SharedOpenings)) takes a clone.
///
/// Lock-free: a publish replaces the whole map by compare-and-swap, which suits names that
/// number in the tens and openings that come seconds apart.
#[derive(Clone)]
pub struct MemoryStore {
    /// Per name, the opening kept: its deadline and publish time, in Unix milliseconds.
    openings: Arc<Swappable<HashMap<String, (u64, u64)>>>,
    recoveries: Arc<Swappable<HashMap<String, u64>>>,
    /// Per name, each instance's latest window.
    windows: Arc<Swappable<WindowsByName>>,
}

type WindowsByName = HashMap<String, BTreeMap<String, WindowShare>>;

/// Keeps `millis` under `name` unless a later time is kept, no more than `ahead` later.
fn keep_later(times: &Swappable<HashMap<String, u64>>, name: &str, millis: u64, ahead: u64) {
    times.update(|current| {
        if current
            .get(name)
            .is_some_and(|&kept| kept >= millis && kept - millis <= ahead)
        {
            return None; // a later time is kept already
        }
        let mut next = HashMap::clone(current);
        next.insert(name.to_owned(), millis);
        Some(next)
    });
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore {
            openings: Arc::new(Swappable::new(HashMap::new())),
            recoveries: Arc::new(Swappable::new(HashMap::new())),
            windows: Arc::new(Swappable::new(HashMap::new())),
        }
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("names", &self.openings.load().len())
            .finish()
    }
}

impl OpeningStore for MemoryStore {
    fn publish(&mut self, name: &str, opening: Opening) -> Result<(), StoreError> {
        let until = unix_millis(opening.until);
        let published_at = unix_millis(opening.published_at);
        // The recovery is read before the openings change: one published meanwhile is not
        // seen, and the later deadline is kept, as if it had come after this opening.
        let recovered = self.recoveries.load().get(name).copied();
        let believable = published_at.saturating_add(RECOVERY_AHEAD.as_millis() as u64);
        self.openings.update(|current| {
            if let Some(&(kept_until, kept_published_at)) = current.get(name) {
                let answered =
                    recovered.is_some_and(|at| at > kept_published_at && at <= believable);
                // Published further ahead of this one than clocks are taken to differ: a
                // clock running ahead stamped it, and its deadline would hide every honest
                // opening until the clocks caught up with it.
                let from_ahead = kept_published_at > believable;
                if kept_until >= until && !answered && !from_ahead {
                    return None; // a later opening, still unanswered, is kept
                }
            }
            let mut next = HashMap::clone(current);
            next.insert(name.to_owned(), (until, published_at));
            Some(next)
        });
        Ok(())
    }

    fn opening(&mut self, name: &str) -> Result<Option<Opening>, StoreError> {
        let now = unix_millis(SystemTime::now());
        Ok(self
            .openings
            .load()
            .get(name)
            .filter(|&&(until, _)| until > now)
            .map(|&(until, published_at)| {
                Opening::new(from_unix_millis(until), from_unix_millis(published_at))
            }))
    }

    fn publish_recovery(&mut self, name: &str, at: SystemTime) -> Result<(), StoreError> {
        let ahead = RECOVERY_AHEAD.as_millis() as u64;
        keep_later(&self.recoveries, name, unix_millis(at), ahead);
        Ok(())
    }

    fn recovered_at(&mut self, name: &str) -> Result<Option<SystemTime>, StoreError> {
        Ok(self
            .recoveries
            .load()
            .get(name)
            .map(|&at| from_unix_millis(at)))
    }

    fn publish_window(&mut self, name: &str, window: &WindowShare) -> Result<(), StoreError> {
        self.windows.update(|current| {
            let mut next = HashMap::clone(current);
            next.entry(name.to_owned())
                .or_default()
                .insert(window.instance.clone(), window.clone());
            Some(next)
        });
        Ok(())
    }

    fn windows(&mut self, name: &str) -> Result<Vec<WindowShare>, StoreError> {
        Ok(self
            .windows
            .load()
            .get(name)
            .map(|windows| windows.values().cloned().collect())
            .unwrap_or_default())
    }
}
