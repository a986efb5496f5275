//! A listener that panics while the calling thread is already unwinding. In a file of its own:
//! without the guard in `listener::tell` the panic aborts the whole test process.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hotbreaker::{Breaker, State};

#[test]
fn a_listener_panicking_while_a_panicking_call_trips_the_breaker_does_not_abort() {
    let told = Arc::new(AtomicUsize::new(0));
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .on_transition(|_| panic!("a listener's own bug"))
        .on_transition({
            let told = told.clone();
            move |_| {
                told.fetch_add(1, Ordering::Relaxed);
            }
        })
        .build()
        .unwrap();

    // The call panics; its permit, dropped while unwinding, records a failure, which trips
    // the breaker and tells the listeners, the first of which panics too.
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        breaker.call(|| -> Result<(), ()> { panic!("the dependency's client") })
    }));

    let payload = unwound.expect_err("the call's own panic goes on");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"the dependency's client"),
        "the caller gets its own panic, not the listener's"
    );
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(
        told.load(Ordering::Relaxed),
        1,
        "the next listener is still told"
    );

    // Outside unwinding, a listener's panic reaches the caller that made the transition.
    let reset = catch_unwind(AssertUnwindSafe(|| breaker.reset()));
    assert!(reset.is_err(), "the listener's panic, from a plain reset");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "made before the listeners ran"
    );
}
