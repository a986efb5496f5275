//! The registry's map, replaced whole by a compare-and-swap from the map each change copied.

#![cfg(loom)]

mod common;

use common::{Role, check_each_order, spawn_in};
use hotbreaker::{Breaker, Builder, ManualClock, Registry};
use loom::sync::Arc;

fn small(_name: &str) -> Builder<ManualClock> {
    Breaker::builder().stripes(1).clock(ManualClock::new())
}

/// Two threads register two names at once.
///
/// Each copies the map it loaded, adds its name and swaps the copy in; the loser of the race
/// must copy again from the winner's map. Checks that both names are registered.
///
/// Catches: a change that stores its copy without comparing (the other insertion is lost),
/// and one that gives up when its compare-and-swap fails.
#[test]
fn racing_insertions_keep_both_names() {
    check_each_order(2, 2, |order| {
        let registry = Arc::new(Registry::<ManualClock>::default());
        let inserter = |name: &'static str| -> Role<()> {
            let registry = registry.clone();
            Box::new(move || {
                registry.get_or_insert_with(name, small).unwrap();
            })
        };
        spawn_in(order, vec![inserter("a"), inserter("b")]);
        let names: Vec<String> = registry.breakers().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b"]);
    });
}

/// Two threads register the same name at once, each with a breaker of its own.
///
/// Checks that one breaker wins and both threads get it: the loser of the race finds the
/// name in the winner's map and returns that breaker, not its own.
///
/// Catches: a change that overwrites an entry it did not see (two breakers handed out for one
/// dependency, one of them no longer in the registry).
#[test]
fn racing_insertions_of_one_name_hand_out_one_breaker() {
    check_each_order(2, 2, |order| {
        let registry = Arc::new(Registry::<ManualClock>::default());
        let inserter = || -> Role<std::sync::Arc<Breaker<ManualClock>>> {
            let registry = registry.clone();
            Box::new(move || registry.get_or_insert_with("payments", small).unwrap())
        };
        let got = spawn_in(order, vec![inserter(), inserter()]);
        assert!(std::sync::Arc::ptr_eq(&got[0], &got[1]));
        let registered = registry.get("payments").expect("registered");
        assert!(std::sync::Arc::ptr_eq(&registered, &got[0]));
        assert_eq!(registry.len(), 1);
    });
}

/// A removal races an insertion of another name.
///
/// Checks that the removed name is gone and the inserted one is there, whichever change
/// lands first.
///
/// Catches: a removal whose copy, taken before the insertion landed, is swapped in over it.
#[test]
fn a_removal_races_an_insertion() {
    check_each_order(2, 2, |order| {
        let registry = Arc::new(Registry::<ManualClock>::default());
        registry.get_or_insert_with("old", small).unwrap();
        let remover: Role<()> = {
            let registry = registry.clone();
            Box::new(move || {
                assert!(registry.remove("old").is_some());
            })
        };
        let inserter: Role<()> = {
            let registry = registry.clone();
            Box::new(move || {
                registry.get_or_insert_with("new", small).unwrap();
            })
        };
        spawn_in(order, vec![remover, inserter]);
        let names: Vec<String> = registry.breakers().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["new"]);
    });
}
