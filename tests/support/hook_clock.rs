//! A manual clock that runs a hook at its `n`-th reading after it is armed: in the middle of
//! whatever breaker operation reads it, a deterministic stand-in for another thread acting at
//! that instant. Included with `#[path]` by the test crates that need it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::Clock;

#[derive(Clone, Default)]
pub struct HookClock(Arc<HookClockInner>);

#[derive(Default)]
pub struct HookClockInner {
    nanos: AtomicU64,
    countdown: AtomicUsize,
    hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl HookClock {
    /// Sets the time every reading returns.
    pub fn set(&self, at: Duration) {
        let nanos = u64::try_from(at.as_nanos()).expect("a test's time fits");
        self.0.nanos.store(nanos, Ordering::SeqCst);
    }

    /// Runs `hook` during the `nth_reading`-th reading from now (1 is the next).
    pub fn arm(&self, nth_reading: usize, hook: impl FnOnce() + Send + 'static) {
        *self.0.hook.lock().unwrap() = Some(Box::new(hook));
        self.0.countdown.store(nth_reading, Ordering::SeqCst);
    }
}

impl Clock for HookClock {
    fn now_nanos(&self) -> u64 {
        let now = self.0.nanos.load(Ordering::SeqCst);
        let fires = self
            .0
            .countdown
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            == Ok(1);
        if fires {
            // Taken out first: the hook may read the clock itself.
            let hook = self.0.hook.lock().unwrap().take();
            if let Some(hook) = hook {
                hook();
            }
        }
        now
    }
}
