//! The `tracing` listener: one event per transition, with the name, the states, the trigger
//! and the counts from before it; nothing for ordinary calls.
#![cfg(feature = "tracing")]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::{Breaker, Config, ManualClock};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

/// One captured event: its level, target and fields as text.
#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    target: String,
    fields: BTreeMap<String, String>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
        });
    }
}

impl Capture {
    fn take(&self) -> Vec<Captured> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn capturing<T>(f: impl FnOnce(&Capture) -> T) -> T {
    let capture = Capture::default();
    let subscriber = Registry::default().with(capture.clone());
    tracing::subscriber::with_default(subscriber, || f(&capture))
}

/// A breaker that trips after `run` failures in a row, opens for `open`, and logs its
/// transitions under `name`.
fn logging(name: &str, run: usize, open: Duration, clock: &ManualClock) -> Breaker<ManualClock> {
    Breaker::builder()
        .consecutive_failures(run)
        .open_duration(open)
        .on_transition(hotbreaker::tracing::log_transitions(name))
        .clock(clock.clone())
        .build()
        .unwrap()
}

#[test]
fn one_event_per_transition_with_the_counts_from_before_it() {
    capturing(|capture| {
        let clock = ManualClock::new();
        let breaker = Breaker::builder()
            .failure_rate(0.5, 4)
            .open_duration(Duration::from_millis(1_500))
            .on_transition(hotbreaker::tracing::log_transitions("payments"))
            .clock(clock.clone())
            .build()
            .unwrap();

        // Ordinary calls, failures included, emit nothing.
        breaker.try_acquire().unwrap().success();
        breaker.try_acquire().unwrap().failure();
        breaker.try_acquire().unwrap().success();
        assert!(capture.take().is_empty());

        breaker.try_acquire().unwrap().failure(); // 2 of 4: trips
        let events = capture.take();
        assert_eq!(events.len(), 1, "{events:?}");
        let opened = &events[0];
        assert_eq!(opened.level, Level::WARN);
        assert_eq!(opened.target, "hotbreaker");
        assert_eq!(opened.field("message"), Some("circuit breaker opened"));
        assert_eq!(opened.field("breaker"), Some("payments"));
        assert_eq!(opened.field("from"), Some("closed"));
        assert_eq!(opened.field("to"), Some("open"));
        assert_eq!(opened.field("trigger"), Some("tripped"));
        assert_eq!(opened.field("rule"), Some("failure_rate"));
        assert_eq!(opened.field("failures"), Some("2"));
        assert_eq!(opened.field("calls"), Some("4"));
        assert_eq!(opened.field("open_for_ms"), Some("1500.0"));
        assert_eq!(opened.field("generation"), Some("1"));
        assert_eq!(opened.field("successes"), None);

        // Rejections emit nothing either.
        assert!(breaker.try_acquire().is_err());
        assert!(capture.take().is_empty());

        clock.advance(Duration::from_millis(1_500));
        breaker.try_acquire().unwrap().success();
        let events = capture.take();
        assert_eq!(events.len(), 2, "{events:?}");
        let (half_open, closed) = (&events[0], &events[1]);
        assert_eq!(half_open.level, Level::INFO);
        assert_eq!(half_open.field("to"), Some("half_open"));
        assert_eq!(half_open.field("trigger"), Some("open_period_ended"));
        assert_eq!(half_open.field("rule"), None);
        assert_eq!(closed.level, Level::INFO);
        assert_eq!(
            (closed.field("from"), closed.field("to")),
            (Some("half_open"), Some("closed"))
        );
        assert_eq!(closed.field("trigger"), Some("probes_succeeded"));
        assert_eq!(closed.field("successes"), Some("1"));
        assert_eq!(closed.field("open_for_ms"), None);
    });
}

#[test]
fn consecutive_trips_failed_and_timed_out_probes_and_manual_moves() {
    capturing(|capture| {
        let clock = ManualClock::new();
        let breaker = logging("users-db", 3, Duration::from_secs(1), &clock);
        for _ in 0..3 {
            breaker.try_acquire().unwrap().failure();
        }
        clock.advance(Duration::from_secs(1));
        breaker.try_acquire().unwrap().failure(); // the probe fails
        clock.advance(Duration::from_secs(1));
        let hung = breaker.try_acquire().unwrap(); // the next one hangs
        breaker
            .reconfigure(Config {
                probe_timeout: Some(Duration::from_millis(100)),
                ..breaker.config()
            })
            .unwrap();
        clock.advance(Duration::from_millis(101));
        assert!(breaker.try_acquire().is_err(), "gives up on the hung probe");
        drop(hung);
        breaker.force_open();
        breaker.reset();

        let events = capture.take();
        let summary: Vec<_> = events
            .iter()
            .map(|e| {
                (
                    e.level,
                    e.field("to").unwrap().to_owned(),
                    e.field("trigger").unwrap().to_owned(),
                )
            })
            .collect();
        let expected = [
            (Level::WARN, "open", "tripped"),
            (Level::INFO, "half_open", "open_period_ended"),
            (Level::WARN, "open", "probe_failed"),
            (Level::INFO, "half_open", "open_period_ended"),
            (Level::WARN, "open", "probes_timed_out"),
            (Level::WARN, "forced_open", "manual"),
            (Level::INFO, "closed", "manual"),
        ]
        .map(|(l, to, trigger)| (l, to.to_owned(), trigger.to_owned()));
        assert_eq!(summary, expected);
        assert_eq!(events[0].field("rule"), Some("consecutive_failures"));
        assert_eq!(events[0].field("failures"), Some("3"));
        assert_eq!(events[0].field("calls"), Some("3"));
        assert!(
            events
                .iter()
                .all(|e| e.field("breaker") == Some("users-db"))
        );
    });
}

#[test]
fn an_opening_under_a_millisecond_is_not_logged_as_zero() {
    capturing(|capture| {
        for (open_for, logged) in [(900, "0.9"), (1_900, "1.9")] {
            let breaker = logging(
                "payments",
                1,
                Duration::from_micros(open_for),
                &ManualClock::new(),
            );
            breaker.try_acquire().unwrap().failure();
            let events = capture.take();
            assert_eq!(events[0].field("open_for_ms"), Some(logged), "{events:?}");
        }
    });
}

#[test]
fn an_opening_from_outside_and_a_forced_closing_say_what_they_were() {
    capturing(|capture| {
        let breaker = logging("payments", 5, Duration::from_secs(1), &ManualClock::new());
        assert!(breaker.open_for(Duration::from_secs(2)).unwrap());
        breaker.force_closed();
        let events = capture.take();
        assert_eq!(events.len(), 2, "{events:?}");
        let (opened, forced) = (&events[0], &events[1]);
        assert_eq!(opened.level, Level::WARN);
        assert_eq!(
            (
                opened.field("to"),
                opened.field("trigger"),
                opened.field("open_for_ms")
            ),
            (Some("open"), Some("external"), Some("2000.0"))
        );
        assert_eq!(forced.level, Level::INFO);
        assert_eq!(
            (
                forced.field("to"),
                forced.field("trigger"),
                forced.field("message")
            ),
            (
                Some("forced_closed"),
                Some("manual"),
                Some("circuit breaker forced closed")
            )
        );
    });
}

#[test]
fn the_message_names_the_state_moved_to() {
    capturing(|capture| {
        let clock = ManualClock::new();
        let breaker = logging("payments", 1, Duration::from_secs(1), &clock);
        breaker.try_acquire().unwrap().failure();
        clock.advance(Duration::from_secs(1));
        breaker.try_acquire().unwrap().success();
        let messages: Vec<_> = capture
            .take()
            .iter()
            .map(|event| event.field("message").unwrap().to_owned())
            .collect();
        assert_eq!(
            messages,
            [
                "circuit breaker opened",
                "circuit breaker half-open: probing the dependency",
                "circuit breaker closed",
            ]
        );
    });
}

#[test]
fn an_opening_with_a_fraction_of_a_microsecond_is_logged_to_the_nanosecond() {
    capturing(|capture| {
        let breaker = logging("payments", 5, Duration::from_secs(1), &ManualClock::new());
        // 1.5 µs: not cut down to whole microseconds.
        assert!(breaker.open_for(Duration::from_nanos(1_500)).unwrap());
        let events = capture.take();
        assert_eq!(events[0].field("open_for_ms"), Some("0.0015"), "{events:?}");
    });
}
