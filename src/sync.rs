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
