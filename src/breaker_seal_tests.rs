//! The seal (`newest_probe.rs`): the state the breaker is in while the call that sealed a
//! half-open generation has not yet made its compare-and-swap on the state word.

use super::*;
use crate::ManualClock;

/// Thread B calls `try_acquire`, finds the one probe out past the timeout, loads the state
/// word (unchanged), seals the newest-probe word, and is descheduled before its swap (a
/// preemption, a CFS-quota stall, a low-priority thread). The seal below is exactly what
/// B's closure in `reopen_if_probes_timed_out` writes; nothing else of B's is visible yet.
/// Then the hung probe ends. Every other call must make progress: the next one finishes
/// the reopening that the seal has already decided, and is rejected as open. (Before
/// `46aafa5` all were turned away as half-open, with no time to retry at, for as long as B
/// stayed off the CPU.)
#[test]
fn a_sealer_descheduled_after_its_seal_holds_up_no_other_call() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .half_open_probes(1)
        .open_duration(Duration::from_secs(10))
        .probe_timeout(Duration::from_secs(1))
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(10));
    let probe = breaker.try_acquire().unwrap(); // half-open, generation 2
    let generation = probe.generation();
    clock.advance(Duration::from_secs(2)); // the probe is overdue

    // B's decision and seal, then B is off the CPU.
    let Some(Newest::Admitted(newest)) = breaker.control.newest_probe.newest(generation) else {
        panic!("a probe is recorded");
    };
    assert!(breaker.control.newest_probe.seal(generation, newest));

    probe.ignore(); // the hung probe ends: its place is free
    assert_eq!(breaker.metrics().probes_out, 0);

    // A waiter is told to try again at once, not to sleep on B.
    assert_eq!(breaker.probes_time_out_in(), Some(Duration::ZERO));
    // An hour later, B still descheduled: other callers must make progress.
    clock.advance(Duration::from_secs(3600));
    let rejected = breaker.try_acquire().map(drop).unwrap_err();
    assert_eq!(
        (rejected.state(), rejected.retry_after(), breaker.state()),
        (State::Open, Some(Duration::from_secs(10)), State::Open),
        "a free probe place and an overdue period, yet every call waits on the sealer \
         (probes_time_out_in: {:?})",
        breaker.probes_time_out_in()
    );
}
