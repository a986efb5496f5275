//! The one place the crate takes its concurrency primitives from.
//!
//! Under `cfg(loom)` every atomic, `Arc`, spin hint and thread-local here is loom's, and the
//! futex is a loom lock and condition variable, so the loom models in `loom-tests/` explore
//! the breaker's real code rather than a copy of it.
//! Nothing outside this module names `std::sync::atomic` or `loom` directly.

#[cfg(not(loom))]
pub(crate) use std::sync::Arc;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering, fence};

#[cfg(loom)]
pub(crate) use loom::sync::Arc;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

// The slots where waiting tasks leave their wakers (`wait::async_wait`): with the `tokio`
// feature outside loom, always under it (the models drive the wait without tokio).
#[cfg(all(feature = "tokio", not(loom)))]
pub(crate) use atomic_waker::AtomicWaker;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::AtomicU8;
#[cfg(all(feature = "tokio", not(loom)))]
pub(crate) use std::sync::atomic::AtomicU8;

/// loom's `AtomicWaker` with `atomic-waker`'s method names.
#[cfg(loom)]
pub(crate) struct AtomicWaker(loom::future::AtomicWaker);

#[cfg(loom)]
impl AtomicWaker {
    pub(crate) fn new() -> Self {
        AtomicWaker(loom::future::AtomicWaker::new())
    }

    pub(crate) fn register(&self, waker: &std::task::Waker) {
        self.0.register_by_ref(waker);
    }

    pub(crate) fn wake(&self) {
        self.0.wake();
    }

    pub(crate) fn take(&self) -> Option<std::task::Waker> {
        self.0.take_waker()
    }
}

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

/// One-time setup of the calling thread, done on its first call into any breaker (when it
/// takes its counter stripe).
///
/// arc-swap gives every thread that reads an `ArcSwap` a node of its own, allocating one unless
/// an exited thread left one to reuse. Taking it here, with a throwaway read, means that reading
/// the settings later (on a failure, a trip, a probe) never allocates.
#[cfg(not(loom))]
pub(crate) fn prepare_thread() {
    static CLAIMS_THE_THREAD_NODE: arc_swap::ArcSwapOption<()> =
        arc_swap::ArcSwapOption::const_empty();
    drop(CLAIMS_THE_THREAD_NODE.load());
}

#[cfg(loom)]
pub(crate) fn prepare_thread() {}

/// Blocks while `word` holds `seen`, for at most `timeout`. May return early for any reason
/// (a wake, a signal, a spurious return); callers re-check what they wait for.
///
/// On Linux this is a futex wait with a timeout: `atomic-wait` has no timed wait, and a caller
/// who waits for a probe's verdict must still return by its deadline if the probe never ends.
#[cfg(all(not(loom), any(target_os = "linux", target_os = "android")))]
#[allow(unsafe_code)]
pub(crate) fn wait_while_equal(word: &AtomicU32, seen: u32, timeout: std::time::Duration) {
    let timeout = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 10^9: fits a `c_long` of any width.
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT only reads the 32-bit value at `word`, a live `AtomicU32` borrowed for
    // the whole call, compares it with `seen` atomically in the kernel and sleeps at most
    // `timeout` (a valid timespec on this stack frame). Every return value (woken, EAGAIN,
    // EINTR, ETIMEDOUT) is acceptable: the caller re-checks.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word as *const AtomicU32,
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            seen,
            &timeout as *const libc::timespec,
        );
    }
}

/// Elsewhere `atomic-wait` cannot bound the wait, so waiting polls in short sleeps.
#[cfg(all(not(loom), not(any(target_os = "linux", target_os = "android"))))]
pub(crate) fn wait_while_equal(word: &AtomicU32, seen: u32, timeout: std::time::Duration) {
    if word.load(Ordering::Acquire) == seen {
        std::thread::sleep(timeout.min(std::time::Duration::from_millis(1)));
    }
}

// Under loom, the futex's queue: one lock and one condition variable for every word. A wake
// on one word wakes the waiters on all of them, a spurious return the callers re-check.
#[cfg(loom)]
loom::lazy_static! {
    static ref FUTEX: (loom::sync::Mutex<()>, loom::sync::Condvar) =
        (loom::sync::Mutex::new(()), loom::sync::Condvar::new());
}

/// Under loom, the futex wait: the comparison with `seen` and the queueing are one step under
/// the lock, which [`wake_all`] takes too, as the kernel's compare-and-enqueue is atomic with
/// respect to `FUTEX_WAKE`. The word is read `SeqCst`, as the kernel reads it after a full
/// barrier. `timeout` is ignored: only a wake ends the wait, so a wakeup lost on the way
/// leaves the thread asleep for good, which loom reports as a deadlock.
#[cfg(loom)]
pub(crate) fn wait_while_equal(word: &AtomicU32, seen: u32, _timeout: std::time::Duration) {
    let (lock, queue) = &*FUTEX;
    let queued = lock.lock().expect("not poisoned");
    if word.load(Ordering::SeqCst) == seen {
        drop(queue.wait(queued).expect("not poisoned"));
    }
}

/// Wakes every thread blocked in [`wait_while_equal`] on `word`.
#[cfg(not(loom))]
pub(crate) fn wake_all(word: &AtomicU32) {
    atomic_wait::wake_all(word);
}

/// Under loom: wakes every thread queued in [`wait_while_equal`] (on any word), under the lock
/// that makes its comparison and queueing one step.
#[cfg(loom)]
pub(crate) fn wake_all(_word: &AtomicU32) {
    let (lock, queue) = &*FUTEX;
    let _queued = lock.lock().expect("not poisoned");
    queue.notify_all();
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

/// A value read on every decision but replaced rarely (the settings, on reconfiguration; the
/// registry's map): `arc-swap` outside loom, a loom-visible stand-in under it.
#[cfg(not(loom))]
pub(crate) struct Swappable<T>(arc_swap::ArcSwap<T>);

/// What [`Swappable::load`] returns.
#[cfg(not(loom))]
pub(crate) type SwappableGuard<T> = arc_swap::Guard<std::sync::Arc<T>>;
#[cfg(loom)]
pub(crate) type SwappableGuard<T> = std::sync::Arc<T>;

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

    /// The current value as an `Arc` of its own, for [`compare_and_swap`](Self::compare_and_swap).
    pub(crate) fn load_full(&self) -> std::sync::Arc<T> {
        self.0.load_full()
    }

    /// Replaces the value with `new` if it is still `current` (the same allocation, as
    /// loaded); otherwise changes nothing and returns the value found instead.
    pub(crate) fn compare_and_swap(
        &self,
        current: &std::sync::Arc<T>,
        new: T,
    ) -> Result<(), std::sync::Arc<T>> {
        let previous = self.0.compare_and_swap(current, std::sync::Arc::new(new));
        if std::sync::Arc::ptr_eq(&previous, current) {
            Ok(())
        } else {
            Err(arc_swap::Guard::into_inner(previous))
        }
    }
}

impl<T> Swappable<T> {
    /// Replaces the value with `edit`'s new one, unless `edit` says there is nothing to change
    /// (`None`). When another update lands between the load and the compare-and-swap, `edit`
    /// runs again on the value that update left, so no update is lost. (The registry's map;
    /// `shared::MemoryStore`'s deadlines.)
    pub(crate) fn update(&self, mut edit: impl FnMut(&T) -> Option<T>) {
        let mut current = self.load_full();
        while let Some(next) = edit(&current) {
            match self.compare_and_swap(&current, next) {
                Ok(()) => return,
                Err(found) => current = found,
            }
        }
    }
}

/// Under loom: every value stored is kept in a slot of its own until the `Swappable` is
/// dropped, and the current slot's index is a loom atomic, so loom sees (and permutes) the
/// publication a reader synchronizes with, as it would arc-swap's. Keeping old values stands
/// in for arc-swap's deferred reclamation: a loaded value is never freed under its reader.
#[cfg(loom)]
pub(crate) struct Swappable<T> {
    versions: Box<[std::sync::OnceLock<std::sync::Arc<T>>]>,
    claimed: loom::sync::atomic::AtomicUsize,
    current: loom::sync::atomic::AtomicUsize,
}

/// How many values a loom model may store in one `Swappable`, the first included.
#[cfg(loom)]
const LOOM_VERSIONS: usize = 16;

#[cfg(loom)]
impl<T> Swappable<T> {
    pub(crate) fn new(value: T) -> Self {
        let versions: Box<[std::sync::OnceLock<std::sync::Arc<T>>]> = (0..LOOM_VERSIONS)
            .map(|_| std::sync::OnceLock::new())
            .collect();
        let _ = versions[0].set(std::sync::Arc::new(value));
        Swappable {
            versions,
            claimed: loom::sync::atomic::AtomicUsize::new(1),
            current: loom::sync::atomic::AtomicUsize::new(0),
        }
    }

    pub(crate) fn load(&self) -> std::sync::Arc<T> {
        // SeqCst, as arc-swap's load: a reader sees the newest store, never an older one.
        let index = self.current.load(Ordering::SeqCst);
        std::sync::Arc::clone(
            self.versions[index]
                .get()
                .expect("published after it was set"),
        )
    }

    /// # Panics
    ///
    /// When a loom model stores more than `LOOM_VERSIONS - 1` values.
    pub(crate) fn store(&self, value: T) {
        let index = self.keep(value);
        // SeqCst, as arc-swap's store; it also publishes the slot's value to the reader that
        // loads this index.
        self.current.store(index, Ordering::SeqCst);
    }

    pub(crate) fn load_full(&self) -> std::sync::Arc<T> {
        self.load()
    }

    /// As arc-swap's: a compare-and-swap of the current slot's index, from the slot that
    /// holds `current`.
    ///
    /// # Panics
    ///
    /// When `current` is no value of this `Swappable`, or as [`store`](Self::store).
    pub(crate) fn compare_and_swap(
        &self,
        current: &std::sync::Arc<T>,
        new: T,
    ) -> Result<(), std::sync::Arc<T>> {
        let expected = self
            .versions
            .iter()
            .position(|slot| {
                slot.get()
                    .is_some_and(|v| std::sync::Arc::ptr_eq(v, current))
            })
            .expect("a value loaded from this Swappable");
        let index = self.keep(new);
        match self
            .current
            .compare_exchange(expected, index, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => Ok(()),
            Err(found) => Err(std::sync::Arc::clone(
                self.versions[found]
                    .get()
                    .expect("published after it was set"),
            )),
        }
    }

    /// Puts `value` in a slot of its own and returns the slot's index.
    fn keep(&self, value: T) -> usize {
        let index = self.claimed.fetch_add(1, Ordering::Relaxed);
        assert!(
            index < LOOM_VERSIONS,
            "a loom model stored more than {LOOM_VERSIONS} values"
        );
        let _ = self.versions[index].set(std::sync::Arc::new(value));
        index
    }
}
