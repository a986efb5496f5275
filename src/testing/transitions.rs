//! What every recorded history of transitions must look like, whatever the interleaving.

use crate::{State, Transition};

/// Puts `events` in generation order and checks that they form one chain from a new
/// breaker: generations 1, 2, 3, ... without a gap, each transition leaving the state the one
/// before it entered, the first leaving `Closed`. Returns the state the last one entered
/// (`Closed` if there is none).
///
/// # Panics
///
/// When the events do not form such a chain; the message lists them.
pub fn assert_one_chain(events: &mut [Transition]) -> State {
    events.sort_by_key(|event| event.generation);
    let mut state = State::Closed;
    for (n, event) in events.iter().enumerate() {
        assert_eq!(
            event.generation as usize,
            n + 1,
            "one generation per transition, without gaps: {events:?}"
        );
        assert_eq!(event.from, state, "broken chain at {event:?}: {events:?}");
        state = event.to;
    }
    state
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::assert_one_chain;
    use crate::{State, Transition, Trigger};

    fn transition(generation: u32, from: State, to: State) -> Transition {
        Transition {
            from,
            to,
            generation,
            trigger: Trigger::Manual,
            at: Duration::ZERO,
            open_for: None,
        }
    }

    #[test]
    fn a_chain_out_of_order_ends_where_its_last_transition_went() {
        let mut events = [
            transition(2, State::Open, State::HalfOpen),
            transition(1, State::Closed, State::Open),
        ];
        assert_eq!(assert_one_chain(&mut events), State::HalfOpen);
        assert_eq!(assert_one_chain(&mut []), State::Closed);
    }

    #[test]
    #[should_panic(expected = "without gaps")]
    fn a_missing_generation_is_refused() {
        assert_one_chain(&mut [
            transition(1, State::Closed, State::Open),
            transition(3, State::Open, State::HalfOpen),
        ]);
    }

    #[test]
    #[should_panic(expected = "broken chain")]
    fn a_transition_from_the_wrong_state_is_refused() {
        assert_one_chain(&mut [
            transition(1, State::Closed, State::Open),
            transition(2, State::Closed, State::Open),
        ]);
    }
}
