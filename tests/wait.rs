//! Waiting for a permit: woken by a probe's verdict, by the end of the open period, by a reset;
//! giving up at the deadline. Sequencing uses channels; nothing asserts how long anything took.

use std::sync::{Arc, mpsc};
use std::time::Duration;

use hotbreaker::{Breaker, ManualClock, State};

/// How long waiters are willing to wait: far longer than any test run, so a waiter that is
/// admitted was woken, not timed out.
const LONG: Duration = Duration::from_secs(3600);
/// How long the test waits for a woken waiter before declaring the wake lost. A guard against
/// hanging, not a measurement.
const GUARD: Duration = Duration::from_secs(20);

fn half_open_with_probe_out() -> Breaker<ManualClock> {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(1))
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    breaker
}

/// Runs `wait` on its own thread (not joined if it never returns) and hands back a receiver
/// for its result, once the thread has gone to sleep in it: a waiter that the test's next
/// step admitted at its first try would let the test pass without a wake-up. For a wait that
/// nothing but the test's next step can end.
fn waiter<T: Send + 'static>(wait: impl FnOnce() -> T + Send + 'static) -> mpsc::Receiver<T> {
    spawn_waiter(wait, true)
}

/// As [`waiter`], for a wait that ends by itself after a few milliseconds of the real clock
/// (an open period, a probe's timeout): the thread may have finished before it is seen
/// asleep.
fn timed_waiter<T: Send + 'static>(wait: impl FnOnce() -> T + Send + 'static) -> mpsc::Receiver<T> {
    spawn_waiter(wait, false)
}

fn spawn_waiter<T: Send + 'static>(
    wait: impl FnOnce() -> T + Send + 'static,
    must_sleep: bool,
) -> mpsc::Receiver<T> {
    let (started, has_started) = mpsc::channel();
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        started.send(own_thread_id()).unwrap();
        let _ = done.send(wait());
    });
    let thread = has_started.recv().unwrap();
    until_asleep(thread, must_sleep);
    result
}

/// The calling thread's id in `/proc/self/task`, where Linux has one.
fn own_thread_id() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?; // "<pid>/task/<tid>"
    Some(link.file_name()?.to_str()?.to_owned())
}

/// Returns once thread `thread` sleeps: its state in `/proc/self/task/<tid>/stat` is `S`.
/// Started, the waiter's thread has nothing left to sleep in but the wait (a blocked thread
/// also shows `S`, a running or preempted one `R`). Or once it has finished, unless
/// `must_sleep`. Without `/proc`, sleeps 20 ms instead and hopes.
///
/// # Panics
///
/// If the thread does not sleep within `GUARD`, or finishes first though it `must_sleep`: the
/// waiter was admitted, or gave up, at once.
fn until_asleep(thread: Option<String>, must_sleep: bool) {
    let Some(thread) = thread else {
        std::thread::sleep(Duration::from_millis(20));
        return;
    };
    let path = format!("/proc/self/task/{thread}/stat");
    let deadline = std::time::Instant::now() + GUARD;
    loop {
        let Ok(stat) = std::fs::read_to_string(&path) else {
            assert!(!must_sleep, "the waiter finished without waiting");
            return;
        };
        // "<tid> (<name>) <state> ...": the name may hold spaces and parentheses.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        if state == Some('S') {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the waiter never went to sleep (state {state:?})"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A thread blocked in `acquire_timeout(LONG)` on `breaker`: whether it got a probe.
fn probe_waiter<C: hotbreaker::Clock>(
    breaker: &Arc<Breaker<C>>,
) -> mpsc::Receiver<Result<bool, hotbreaker::Rejected>> {
    let waiting = Arc::clone(breaker);
    waiter(move || {
        waiting
            .acquire_timeout(LONG)
            .map(|permit| permit.is_probe())
    })
}

#[test]
fn a_waiter_is_woken_by_the_probes_verdict() {
    let breaker = Arc::new(half_open_with_probe_out());
    let probe = breaker.try_acquire_owned().unwrap();
    let result = probe_waiter(&breaker);
    probe.success(); // closes the breaker and wakes the waiter
    let admitted = result
        .recv_timeout(GUARD)
        .expect("the verdict did not wake the waiter");
    assert_eq!(admitted, Ok(false), "admitted as an ordinary closed call");
    assert_eq!(breaker.metrics().rejected, 0, "waiting is not rejection");
}

#[test]
fn a_waiter_gives_up_at_its_deadline_when_the_probe_never_ends() {
    let breaker = half_open_with_probe_out();
    let _stuck_probe = breaker.try_acquire().unwrap();
    let rejected = breaker
        .acquire_timeout(Duration::from_millis(30))
        .unwrap_err();
    assert_eq!(rejected.state(), State::HalfOpen);
    assert_eq!(
        breaker.metrics().rejected,
        1,
        "the rejection it gave up on is counted once"
    );
}

#[test]
fn a_waiter_waits_out_the_open_period_and_probes() {
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_millis(30))
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    let breaker = Arc::new(breaker);
    let waiting = breaker.clone();
    let result = timed_waiter(move || {
        waiting.acquire_timeout(LONG).map(|probe| {
            let is_probe = probe.is_probe();
            probe.success();
            is_probe
        })
    });
    let admitted = result
        .recv_timeout(GUARD)
        .expect("the waiter slept past the end of the open period");
    assert_eq!(admitted, Ok(true), "admitted as the probe");
    assert_eq!(breaker.state(), State::Closed);
}

/// Open for an hour on a manual clock.
fn open_for_an_hour_on_a_manual_clock() -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(3600))
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    (breaker, clock)
}

#[test]
fn a_waiter_sees_a_manual_clock_moved_past_the_open_period() {
    let (breaker, clock) = open_for_an_hour_on_a_manual_clock();
    let breaker = Arc::new(breaker);
    let waiting = breaker.clone();
    let result = waiter(move || waiting.acquire_timeout(LONG).map(|p| p.is_probe()));
    clock.advance(Duration::from_secs(3600)); // wakes no one: the waiter must look
    assert_eq!(
        result
            .recv_timeout(GUARD)
            .expect("the waiter slept the clock's hour out in real time"),
        Ok(true)
    );
}

#[test]
fn a_reset_wakes_a_waiter_on_a_forced_open_breaker() {
    let breaker = Arc::new(Breaker::builder().build().unwrap());
    breaker.force_open();
    let waiting = breaker.clone();
    let result = waiter(move || waiting.acquire_timeout(LONG).map(|permit| permit.success()));
    breaker.reset();
    assert_eq!(
        result
            .recv_timeout(GUARD)
            .expect("the reset did not wake the waiter"),
        Ok(())
    );
}

/// Half-open on the real clock, with a probe out that never ends and a probe timeout of 30 ms:
/// nothing is announced when the probe passes its timeout.
fn half_open_with_a_hung_probe_and_a_probe_timeout() -> Breaker {
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_millis(30))
        .probe_timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    // GUARD, not LONG: a wait that misses the end of the open period fails here, not in an hour.
    let hung = breaker
        .acquire_timeout(GUARD)
        .expect("the probe, once the open period ends");
    std::mem::forget(hung);
    breaker
}

#[test]
fn a_waiter_wakes_when_the_probe_passes_its_timeout_and_probes_after_the_next_period() {
    let breaker = Arc::new(half_open_with_a_hung_probe_and_a_probe_timeout());
    let waiting = breaker.clone();
    let admitted = timed_waiter(move || waiting.acquire_timeout(LONG).map(|p| p.is_probe()));
    assert_eq!(
        admitted
            .recv_timeout(GUARD)
            .expect("the waiter slept through the probe timeout"),
        Ok(true)
    );
}

#[tokio::test]
async fn an_async_waiter_wakes_when_the_probe_passes_its_timeout() {
    let breaker = half_open_with_a_hung_probe_and_a_probe_timeout();
    let admitted = tokio::time::timeout(GUARD, breaker.acquire_timeout_async(LONG))
        .await
        .expect("the waiter slept through the probe timeout");
    assert!(admitted.expect("admitted").is_probe());
}

/// A task waiting [`LONG`] for a permit, whether a probe, once it has had time to block
/// (not asserted).
async fn async_waiter(
    breaker: &Arc<Breaker<ManualClock>>,
) -> tokio::task::JoinHandle<Result<bool, hotbreaker::Rejected>> {
    let breaker = breaker.clone();
    let waiter = tokio::spawn(async move {
        breaker
            .acquire_timeout_async(LONG)
            .await
            .map(|permit| permit.is_probe())
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    waiter
}

#[tokio::test]
async fn an_async_waiter_is_woken_by_the_probes_verdict() {
    let breaker = std::sync::Arc::new(half_open_with_probe_out());
    let probe = breaker.try_acquire_owned().unwrap();
    let waiter = async_waiter(&breaker).await;
    probe.ignore(); // frees the probe place: the waiter becomes the probe
    let woken = tokio::time::timeout(GUARD, waiter)
        .await
        .expect("the verdict did not wake the task");
    assert_eq!(woken.unwrap(), Ok(true));
}

#[tokio::test]
async fn an_async_waiter_gives_up_at_its_deadline() {
    let breaker = half_open_with_probe_out();
    let _stuck_probe = breaker.try_acquire().unwrap();
    let rejected = tokio::time::timeout(
        GUARD,
        breaker.acquire_timeout_async(Duration::from_millis(30)),
    )
    .await
    .expect("the task did not give up at its deadline")
    .unwrap_err();
    assert_eq!(rejected.state(), State::HalfOpen);
}

#[tokio::test]
async fn an_async_waiter_waits_out_the_open_period() {
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_millis(30))
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    let probe = tokio::time::timeout(GUARD, breaker.acquire_timeout_async(LONG))
        .await
        .expect("the task slept past the end of the open period")
        .expect("admitted after the open period");
    assert!(probe.is_probe());
}

#[tokio::test]
async fn an_async_waiter_sees_a_manual_clock_moved_past_the_open_period() {
    let (breaker, clock) = open_for_an_hour_on_a_manual_clock();
    let waiter = async_waiter(&Arc::new(breaker)).await;
    clock.advance(Duration::from_secs(3600));
    let woken = tokio::time::timeout(GUARD, waiter)
        .await
        .expect("the task slept the clock's hour out in real time");
    assert_eq!(woken.unwrap(), Ok(true));
}

#[tokio::test]
async fn many_async_waiters_more_than_the_wake_slots_all_get_in() {
    // Eight tasks can leave wakers; the rest fall back to polling. All must be admitted.
    let breaker = std::sync::Arc::new(half_open_with_probe_out());
    let probe = breaker.try_acquire_owned().unwrap();
    let waiters = twelve_waiting_tasks(&breaker).await;
    probe.success();
    all_get_in(waiters, "a task was not woken").await;
}

/// Twelve tasks, more than the eight wake slots, each waiting [`LONG`] for a permit and
/// recording a success with it, once they have had time to wait (not asserted).
async fn twelve_waiting_tasks<C: hotbreaker::Clock>(
    breaker: &Arc<Breaker<C>>,
) -> Vec<tokio::task::JoinHandle<Result<(), hotbreaker::Rejected>>> {
    let waiters = (0..12)
        .map(|_| {
            let breaker = breaker.clone();
            tokio::spawn(async move {
                breaker
                    .acquire_timeout_async(LONG)
                    .await
                    .map(|permit| permit.success())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(20)).await;
    waiters
}

/// Every one of `waiters` is admitted within [`GUARD`]; `lost` says what it means if not.
async fn all_get_in(
    waiters: Vec<tokio::task::JoinHandle<Result<(), hotbreaker::Rejected>>>,
    lost: &str,
) {
    for waiter in waiters {
        let woken = tokio::time::timeout(GUARD, waiter).await.expect(lost);
        assert_eq!(woken.unwrap(), Ok(()));
    }
}

#[tokio::test]
async fn an_async_wait_takes_any_timeout() {
    let breaker = Breaker::builder().build().unwrap();
    // Too long to add to an instant: "wait for good", as the blocking wait takes it.
    breaker.acquire_timeout(Duration::MAX).unwrap().success();
    breaker
        .acquire_timeout_async(Duration::MAX)
        .await
        .unwrap()
        .success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn more_probe_places_wake_a_waiter_on_a_half_open_breaker() {
    let breaker = Arc::new(half_open_with_probe_out());
    let _stuck_probe = breaker.try_acquire_owned().unwrap();
    let result = probe_waiter(&breaker);
    let config = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(1))
        .half_open_probes(2)
        .to_config()
        .unwrap();
    breaker.reconfigure(config).unwrap();
    assert_eq!(
        result
            .recv_timeout(GUARD)
            .expect("the second probe place did not wake the waiter"),
        Ok(true)
    );
}

/// Counts the wakes of a waker made from it.
struct CountsWakes(std::sync::atomic::AtomicUsize);

impl std::task::Wake for CountsWakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A current-thread runtime with the time driver, never driven: a waiting task's timer cannot
/// fire, so only a notify that finds its waker wakes it.
fn undriven_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// Polls `wait` once with a waker of its own, which it returns with the poll's outcome.
fn poll_once<F: std::future::Future>(
    wait: std::pin::Pin<&mut F>,
) -> (std::task::Poll<F::Output>, Arc<CountsWakes>) {
    let wakes = Arc::new(CountsWakes(std::sync::atomic::AtomicUsize::new(0)));
    let waker = std::task::Waker::from(wakes.clone());
    let poll = wait.poll(&mut std::task::Context::from_waker(&waker));
    (poll, wakes)
}

/// Eight tasks (as many as there are wake slots) wait on a forced-open breaker; the reset
/// wakes every one of them then and there, before any timer could. Checks that each claims a
/// slot of its own, that the notify wakes the waker of every slot taken, and that a poll
/// leaves its waker in its slot.
#[test]
fn a_reset_wakes_each_of_eight_waiting_tasks_at_once() {
    let runtime = undriven_runtime();
    let _entered = runtime.enter();
    let breaker = Breaker::builder().build().unwrap();
    breaker.force_open();
    let mut waits: Vec<_> = (0..8)
        .map(|_| Box::pin(breaker.acquire_timeout_async(LONG)))
        .collect();
    let wakes: Vec<_> = waits
        .iter_mut()
        .map(|wait| {
            let (poll, wakes) = poll_once(wait.as_mut());
            assert!(poll.is_pending(), "forced open: the task waits");
            wakes
        })
        .collect();
    breaker.reset();
    let woken: Vec<usize> = wakes
        .iter()
        .map(|w| w.0.load(std::sync::atomic::Ordering::SeqCst))
        .collect();
    assert!(woken.iter().all(|&n| n > 0), "wakes per task: {woken:?}");
}

/// A task that waited and was dropped leaves nothing behind: its waker is let go (not kept
/// in the slot), and its slot is free again, so that after more dropped waits than there
/// are slots a new waiting task is still woken by a reset at once.
#[test]
fn a_dropped_wait_lets_go_of_its_waker_and_its_slot() {
    let runtime = undriven_runtime();
    let _entered = runtime.enter();
    let breaker = Breaker::builder().build().unwrap();
    breaker.force_open();
    for _ in 0..9 {
        let mut wait = Box::pin(breaker.acquire_timeout_async(LONG));
        let (poll, wakes) = poll_once(wait.as_mut());
        assert!(poll.is_pending(), "forced open: the task waits");
        drop(wait);
        assert_eq!(
            Arc::strong_count(&wakes),
            1,
            "the dropped wait kept its waker"
        );
    }
    let mut wait = Box::pin(breaker.acquire_timeout_async(LONG));
    let (poll, wakes) = poll_once(wait.as_mut());
    assert!(poll.is_pending());
    breaker.reset();
    assert!(
        wakes.0.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "the reset did not wake the task: no slot was free"
    );
}

/// Nine tasks wait on a forced-open breaker: the ninth finds every wake slot taken, so it
/// looks again on its timer. One of the eight leaves, and the ninth's timer comes due (the
/// runtime's clock is paused, and moved only here). Checks that at that look the ninth claims
/// the slot given back, so that the reset wakes it then and there rather than at its next
/// look.
#[test]
fn a_task_without_a_slot_claims_one_given_back_at_its_next_look() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let breaker = Breaker::builder().build().unwrap();
    breaker.force_open();
    let mut waits: Vec<_> = (0..9)
        .map(|_| Box::pin(breaker.acquire_timeout_async(LONG)))
        .collect();
    for wait in &mut waits {
        assert!(
            poll_once(wait.as_mut()).0.is_pending(),
            "forced open: waits"
        );
    }
    let mut ninth = waits.pop().expect("nine");
    drop(waits.pop());
    runtime.block_on(tokio::time::sleep(Duration::from_millis(5)));
    let (poll, wakes) = poll_once(ninth.as_mut());
    assert!(poll.is_pending(), "still forced open");
    breaker.reset();
    assert!(
        wakes.0.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "the reset did not wake the ninth task: it holds no slot"
    );
}

/// `Duration::MAX` ("wait for good") on a breaker that rejects: the task waits, rather than
/// giving up at once on a deadline it could not compute.
#[test]
fn an_async_wait_for_good_waits() {
    let runtime = undriven_runtime();
    let _entered = runtime.enter();
    let breaker = Breaker::builder().build().unwrap();
    breaker.force_open();
    let mut wait = Box::pin(breaker.acquire_timeout_async(Duration::MAX));
    let (poll, wakes) = poll_once(wait.as_mut());
    assert!(poll.is_pending(), "gave up at once: {poll:?}");
    breaker.reset();
    assert!(wakes.0.load(std::sync::atomic::Ordering::SeqCst) > 0);
    let (poll, _) = poll_once(wait.as_mut());
    assert!(matches!(poll, std::task::Poll::Ready(Ok(_))), "{poll:?}");
}

/// A task that gives up at its deadline counts that one rejection, as the blocking wait does.
#[tokio::test]
async fn an_async_waiter_that_gives_up_counts_one_rejection() {
    let breaker = half_open_with_probe_out();
    let _stuck_probe = breaker.try_acquire().unwrap();
    breaker
        .acquire_timeout_async(Duration::from_millis(30))
        .await
        .unwrap_err();
    assert_eq!(breaker.metrics().rejected, 1, "the rejection it gave up on");
}

/// Twelve tasks wait on a breaker open for an hour on the real clock, four of them with no
/// wake slot; the open period is ended early. Checks that the tasks without a slot look
/// again soon (they cannot be woken) rather than sleep the rest of the hour out, so all get
/// in: one probes and closes the breaker, the rest are admitted closed.
#[tokio::test]
async fn tasks_without_a_slot_see_the_open_period_ended_early() {
    let breaker = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .open_duration(Duration::from_secs(3600))
            .build()
            .unwrap(),
    );
    breaker.try_acquire().unwrap().failure();
    let waiters = twelve_waiting_tasks(&breaker).await;
    assert!(breaker.end_open_period());
    all_get_in(waiters, "a task slept through the end of the open period").await;
}

/// Counts the polls of the future it wraps.
struct CountsPolls<F> {
    inner: std::pin::Pin<Box<F>>,
    polls: usize,
}

impl<F: std::future::Future> std::future::Future for CountsPolls<F> {
    type Output = (F::Output, usize);

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        self.polls += 1;
        let polls = self.polls;
        self.inner.as_mut().poll(cx).map(|out| (out, polls))
    }
}

/// A task on a forced-open breaker, where only an event could admit it, sleeps until its
/// deadline: it is polled once to start and once when its timer ends, not again and again
/// in between. (Counts polls, not time: the deadline only bounds the run.)
#[tokio::test]
async fn a_task_nothing_can_admit_is_not_polled_until_its_deadline() {
    let breaker = Breaker::builder().build().unwrap();
    breaker.force_open();
    let (result, polls) = CountsPolls {
        inner: Box::pin(breaker.acquire_timeout_async(Duration::from_millis(100))),
        polls: 0,
    }
    .await;
    assert_eq!(result.unwrap_err().state(), State::ForcedOpen);
    assert!(polls <= 3, "polled {polls} times");
}

#[test]
fn a_probe_success_short_of_the_threshold_wakes_a_waiter_for_its_place() {
    // Two successes close; one probe place. The first success frees the place without a
    // transition, and the waiter sleeping on the real clock (no recheck) must be told.
    let breaker = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .half_open_probes(1)
            .success_threshold(2)
            .build()
            .unwrap(),
    );
    breaker.open_for(Duration::from_secs(3600)).unwrap();
    assert!(breaker.end_open_period());
    let probe = breaker.try_acquire_owned().unwrap();
    let result = probe_waiter(&breaker);
    probe.success();
    assert_eq!(
        result
            .recv_timeout(GUARD)
            .expect("the freed probe place did not wake the waiter"),
        Ok(true)
    );
}

#[test]
fn ending_the_open_period_wakes_a_waiter_sleeping_until_its_old_end() {
    // On the real clock the waiter sleeps until the period's end, an hour away: only the
    // wake that `end_open_period` sends gets it to probe now.
    let breaker = Arc::new(Breaker::builder().build().unwrap());
    breaker.open_for(Duration::from_secs(3600)).unwrap();
    let result = probe_waiter(&breaker);
    assert!(breaker.end_open_period());
    assert_eq!(
        result
            .recv_timeout(GUARD)
            .expect("ending the open period did not wake the waiter"),
        Ok(true)
    );
}
