//! What an opening store keeps when two times tie at one of its lines, to the millisecond it
//! keeps them in: the same for every store, so that instances on different stores agree.
//! Included with `#[path]` by `tests/shared.rs` (the memory store) and `tests/shared_redis.rs`.

use std::time::{Duration, SystemTime};

use hotbreaker::shared::{Opening, OpeningStore, RECOVERY_AHEAD};

/// A time on a whole millisecond (stores keep milliseconds), a minute from now.
fn whole_millisecond_ahead() -> SystemTime {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    SystemTime::UNIX_EPOCH + Duration::from_millis(now.as_millis() as u64 + 60_000)
}

fn kept(store: &mut impl OpeningStore, name: &str) -> (SystemTime, SystemTime) {
    let kept = store.opening(name).unwrap().expect("an opening is kept");
    (kept.until, kept.published_at)
}

/// Runs every tie on `store`, each under a name of its own (prefixed with `prefix`).
pub fn check_store_ties(store: &mut impl OpeningStore, prefix: &str) {
    let name = |what: &str| format!("{prefix}{what}");
    let until = whole_millisecond_ahead();
    let published = until - Duration::from_secs(30);

    // Two openings with one deadline: the first is kept, publish time and all.
    let first = name("same-deadline");
    store
        .publish(&first, Opening::new(until, published))
        .unwrap();
    let later_publish = published + Duration::from_millis(5);
    store
        .publish(&first, Opening::new(until, later_publish))
        .unwrap();
    assert_eq!(kept(store, &first), (until, published), "same deadline");

    // A kept opening that ends later, published exactly `RECOVERY_AHEAD` after the new one:
    // clocks that far apart still agree, so it is kept.
    let ahead = name("published-just-ahead");
    let kept_publish = published + RECOVERY_AHEAD;
    store
        .publish(&ahead, Opening::new(until, kept_publish))
        .unwrap();
    let sooner = until - Duration::from_secs(10);
    store
        .publish(&ahead, Opening::new(sooner, published))
        .unwrap();
    assert_eq!(
        kept(store, &ahead),
        (until, kept_publish),
        "published just ahead"
    );

    // A kept opening answered by a recovery stamped exactly `RECOVERY_AHEAD` after the new
    // one's publish time (believed), and one stamped on the kept one's publish time (not
    // after it, so no answer).
    let answered = name("answered-at-the-edge");
    store
        .publish(&answered, Opening::new(until, published))
        .unwrap();
    let new_publish = published + Duration::from_secs(2);
    store
        .publish_recovery(&answered, new_publish + RECOVERY_AHEAD)
        .unwrap();
    store
        .publish(&answered, Opening::new(sooner, new_publish))
        .unwrap();
    assert_eq!(
        kept(store, &answered),
        (sooner, new_publish),
        "answered at the edge"
    );

    let unanswered = name("recovered-at-the-publish-time");
    store
        .publish(&unanswered, Opening::new(until, published))
        .unwrap();
    store.publish_recovery(&unanswered, published).unwrap();
    store
        .publish(&unanswered, Opening::new(sooner, new_publish))
        .unwrap();
    assert_eq!(kept(store, &unanswered), (until, published), "not answered");

    // A kept recovery exactly `RECOVERY_AHEAD` later than a new one is kept.
    let recovery = name("recovery-just-ahead");
    let at = until - Duration::from_secs(40);
    store
        .publish_recovery(&recovery, at + RECOVERY_AHEAD)
        .unwrap();
    store.publish_recovery(&recovery, at).unwrap();
    assert_eq!(
        store.recovered_at(&recovery).unwrap(),
        Some(at + RECOVERY_AHEAD),
        "recovery just ahead"
    );
}
