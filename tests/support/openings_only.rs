//! A store that shares openings and keeps no recoveries (the trait's defaults record none), so
//! that only a follower's own memory tells a remote opening from before its probe from news.
//! Included with `#[path]` by `tests/shared.rs` and `tests/shared_wall_clock.rs`.

use hotbreaker::shared::{MemoryStore, Opening, OpeningStore, StoreError};

#[derive(Clone)]
pub struct OpeningsOnly(pub MemoryStore);

impl OpeningStore for OpeningsOnly {
    fn publish(&mut self, name: &str, opening: Opening) -> Result<(), StoreError> {
        self.0.publish(name, opening)
    }

    fn opening(&mut self, name: &str) -> Result<Option<Opening>, StoreError> {
        self.0.opening(name)
    }
}
