//! The one place the crate takes its concurrency primitives from.
//!
//! Under `cfg(loom)` every atomic, `Arc`, spin hint and thread-local here is loom's, so the
//! loom models in `loom-tests/` explore the breaker's real code rather than a copy of it.
//! Nothing outside this module names `std::sync::atomic` or `loom` directly.

#[cfg(not(loom))]
pub(crate) use std::sync::Arc;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::Arc;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};

pub(crate) use crossbeam_utils::CachePadded;

/// Pauses between retries of a compare-and-swap that lost a race.
///
/// Outside loom this is crossbeam's exponential backoff. Under loom a lost race must hand the
/// turn to another thread, or loom would explore the same spinning schedule forever.
pub(crate) struct Backoff {
    #[cfg(not(loom))]
    inner: crossbeam_utils::Backoff,
}

impl Backoff {
    pub(crate) fn new() -> Self {
        Backoff {
            #[cfg(not(loom))]
            inner: crossbeam_utils::Backoff::new(),
        }
    }

    pub(crate) fn spin(&self) {
        #[cfg(not(loom))]
        self.inner.spin();
        #[cfg(loom)]
        loom::thread::yield_now();
    }
}

/// Declares thread-locals through loom under `cfg(loom)` and through std otherwise.
///
/// std's `const` initializer form is used outside loom: it compiles to a plain TLS access with
/// no lazy-initialization check, which matters on the per-call path.
macro_rules! thread_local_cell {
    ($(#[$attr:meta])* static $name:ident: $ty:ty = $init:expr;) => {
        #[cfg(not(loom))]
        std::thread_local! { $(#[$attr])* static $name: $ty = const { $init }; }
        #[cfg(loom)]
        loom::thread_local! { $(#[$attr])* static $name: $ty = $init; }
    };
}
pub(crate) use thread_local_cell;

/// A value read on every decision but replaced rarely (the settings, on reconfiguration):
/// `arc-swap` outside loom, a loom-visible stand-in under it.
#[cfg(not(loom))]
pub(crate) struct Swappable<T>(arc_swap::ArcSwap<T>);

#[cfg(not(loom))]
impl<T> Swappable<T> {
    pub(crate) fn new(value: T) -> Self {
        Swappable(arc_swap::ArcSwap::from_pointee(value))
    }

    /// The current value. Lock-free; no reference count is touched on the common path.
    #[inline]
    pub(crate) fn load(&self) -> arc_swap::Guard<std::sync::Arc<T>> {
        self.0.load()
    }

    pub(crate) fn store(&self, value: T) {
        self.0.store(std::sync::Arc::new(value));
    }
}

#[cfg(loom)]
pub(crate) struct Swappable<T>(loom::sync::Mutex<std::sync::Arc<T>>);

#[cfg(loom)]
impl<T> Swappable<T> {
    pub(crate) fn new(value: T) -> Self {
        Swappable(loom::sync::Mutex::new(std::sync::Arc::new(value)))
    }

    pub(crate) fn load(&self) -> std::sync::Arc<T> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub(crate) fn store(&self, value: T) {
        *self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = std::sync::Arc::new(value);
    }
}
