//! Per-thread counter stripes: how a healthy call counts without writing shared memory.
//!
//! Each thread that uses a breaker takes a *slot* number, unique among live threads, from a
//! process-wide registry, and gives it back when it exits. Slot `i` owns stripe `i` of every
//! breaker that has more than `i` stripes. A stripe is a cache line written by its owner alone,
//! with a plain load and store (no `lock` prefix). Threads whose slot is beyond a breaker's
//! stripes share one extra stripe and update it with atomic read-modify-writes.
//!
//! Ownership makes the plain stores safe: only the owner writes an owned stripe, so no update
//! is lost. A slot changes owner only through the registry, whose release (`fetch_and`,
//! `Release`) and claim (`compare_exchange`, `Acquire`) order the old owner's last store before
//! the new owner's first.
//!
//! A stripe holds the metrics counters and the window's success count. Readers (metrics, the
//! failure path) sum the stripes with relaxed loads; why that is enough for the window is
//! argued in `window/mod.rs` ("Memory ordering", point 1).

use std::cell::Cell;

use crate::calls_out::OutRing;
use crate::sync::{AtomicU32, AtomicU64, CachePadded, Ordering, thread_local_cell};

/// A thread's slot number when it has not asked for one yet.
const UNASSIGNED: u32 = u32::MAX;
/// A thread's slot number when it found none free, or after its slot was given back.
const NO_SLOT: u32 = u32::MAX - 1;
/// The index [`Stripes::local_indexed`] gives the shared stripe: above every owned one.
pub(crate) const SHARED_INDEX: u32 = SLOTS as u32;
/// Slots in the registry: the most threads that can own stripes at once.
const SLOTS: usize = 256;
const SLOT_WORDS: usize = SLOTS / 64;

thread_local_cell! {
    /// This thread's slot, or [`UNASSIGNED`] / [`NO_SLOT`].
    static SLOT: Cell<u32> = Cell::new(UNASSIGNED);
}
thread_local_cell! {
    /// Gives the slot back when the thread exits.
    static SLOT_RELEASE: SlotRelease = SlotRelease;
}

struct Registry {
    taken: [AtomicU64; SLOT_WORDS],
}

impl Registry {
    fn new() -> Self {
        Registry {
            taken: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn claim(&self) -> Option<u32> {
        for (word_index, word) in self.taken.iter().enumerate() {
            let mut taken = word.load(Ordering::Relaxed);
            while taken != u64::MAX {
                let bit = (!taken).trailing_zeros();
                // Acquire: the previous owner's stores to this slot's stripes happen before ours
                // (loom: `a_slot_handed_to_another_thread_keeps_its_counts`).
                match word.compare_exchange_weak(
                    taken,
                    taken | 1 << bit,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(word_index as u32 * 64 + bit),
                    Err(seen) => taken = seen,
                }
            }
        }
        None
    }

    fn release(&self, slot: u32) {
        let (word, bit) = (slot as usize / 64, slot % 64);
        // Release: pairs with the Acquire of the next claim of this slot.
        self.taken[word].fetch_and(!(1 << bit), Ordering::Release);
    }
}

#[cfg(not(loom))]
fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(Registry::new)
}

/// Under loom the registry lives for one execution of a model (loom drops its statics after
/// each), so every execution starts with all slots free. Loom takes all of an exiting
/// thread's locals out before dropping any, so `SlotRelease` then finds `SLOT` gone and
/// releases nothing. A model that wants a slot reused gives it back with [`give_back_slot`];
/// the release at a thread's exit is tested by the std tests below, not by loom.
#[cfg(loom)]
fn registry() -> &'static Registry {
    loom::lazy_static! {
        static ref REGISTRY: Registry = Registry::new();
    }
    &REGISTRY
}

/// Gives the calling thread's slot back, as its exit would, if it holds one; the thread shares
/// the common stripe of every breaker afterwards. For loom models: under loom a thread's exit
/// releases nothing (see `registry`), so a model that wants a slot handed to another thread
/// calls this as the last thing its thread does with any breaker. And for the differential
/// harness (`testing`), which runs on a thread that shares the common stripe this way to
/// compare that path with the model.
#[cfg(any(loom, feature = "testing"))]
#[cfg_attr(not(loom), allow(unreachable_pub))] // public for `loom_hooks`, which only loom has
#[doc(hidden)]
pub fn give_back_slot() {
    SLOT.with(|slot| {
        let mine = slot.replace(NO_SLOT);
        if mine < SLOTS as u32 {
            registry().release(mine);
        }
    });
}

struct SlotRelease;

impl Drop for SlotRelease {
    fn drop(&mut self) {
        // Under loom this would never find `SLOT` (see `registry`); and when a failing model
        // unwinds, loom drops thread-locals outside the model, where touching `SLOT` panics
        // again and aborts the whole test binary, hiding the other models' results.
        if cfg!(loom) {
            return;
        }
        let _ = SLOT.try_with(|slot| {
            let mine = slot.replace(NO_SLOT);
            if mine < SLOTS as u32 {
                registry().release(mine);
            }
        });
    }
}

/// This thread's slot as it stands: [`UNASSIGNED`] before its first claim.
#[inline(always)]
fn slot_as_is() -> u32 {
    SLOT.try_with(Cell::get).unwrap_or(NO_SLOT)
}

/// This thread's slot, claiming one on first use.
#[inline(always)]
fn current_slot() -> u32 {
    SLOT.try_with(|slot| {
        let mine = slot.get();
        if mine != UNASSIGNED {
            mine
        } else {
            assign_slot(slot)
        }
    })
    .unwrap_or(NO_SLOT)
}

#[cold]
#[inline(never)]
fn assign_slot(slot: &Cell<u32>) -> u32 {
    // Register the release first; if the thread is already tearing down its thread-locals
    // this fails, and the thread shares the common stripe rather than leak a slot.
    let assigned = match SLOT_RELEASE.try_with(|_| ()) {
        Ok(()) => registry().claim().unwrap_or(NO_SLOT),
        Err(_) => NO_SLOT,
    };
    crate::sync::prepare_thread();
    slot.set(assigned);
    assigned
}

/// The counters of one stripe. Its counts are written by the stripe's owner only, except in
/// the shared stripe, where every writer uses atomic read-modify-writes; the hints
/// (`quiet_below`, `failed_checks`) are stored by whichever thread checks them, which in the
/// shared stripe is any of its threads, and `calls_out` is read-modify-written by every thread
/// (its own docs say why).
#[derive(Default)]
#[repr(C)]
pub(crate) struct Stripe {
    /// Window generation (high 32 bits) and successes recorded in it by this stripe (low 32),
    /// while the window needs successes counted.
    pub(crate) window_successes: AtomicU64,
    /// While the stripe's count of window successes is below this, a success only adds one to
    /// it; the one that finds it reached checks whether the window has forgotten its failures.
    /// A hint: a value too low costs time, never correctness. One too high would let a window
    /// per thread's filling successes skip its word, so each of them zeroes it
    /// (`window/mod.rs`, point 9).
    pub(crate) quiet_below: AtomicU32,
    /// How many of this stripe's checks in a row, in the window of the whole breaker, found
    /// the window's newest failure still in view: each one asks the failure to be older
    /// before the stripe forgets it, and sets `quiet_below` further away
    /// (`Window::check_ages`). A hint as well; it shares `quiet_below`'s eight bytes, so the
    /// stripe stays two cache lines.
    pub(crate) failed_checks: AtomicU32,
    pub(crate) successes: AtomicU64,
    pub(crate) failures: AtomicU64,
    pub(crate) ignored: AtomicU64,
    pub(crate) released: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) slow_calls: AtomicU64,
    /// Timed closed calls issued by this stripe's threads and still out (`calls_out.rs`).
    /// Unlike the counters above, every thread may change it, by read-modify-writes: a call
    /// may end on another thread, and sweeps take hung calls from every stripe. It fills the
    /// rest of the stripe's padded line, so it costs no memory on x86-64.
    pub(crate) calls_out: OutRing,
}

/// Which counter of a stripe to add to.
#[derive(Clone, Copy)]
pub(crate) enum Counter {
    Successes,
    Failures,
    Ignored,
    Released,
    Rejected,
    SlowCalls,
}

impl Stripe {
    fn counter(&self, counter: Counter) -> &AtomicU64 {
        match counter {
            Counter::Successes => &self.successes,
            Counter::Failures => &self.failures,
            Counter::Ignored => &self.ignored,
            Counter::Released => &self.released,
            Counter::Rejected => &self.rejected,
            Counter::SlowCalls => &self.slow_calls,
        }
    }
}

/// One breaker's stripes.
pub(crate) struct Stripes {
    owned: Box<[CachePadded<Stripe>]>,
    shared: CachePadded<Stripe>,
}

/// The stripe the current thread writes, and how.
#[derive(Clone, Copy)]
pub(crate) enum LocalStripe<'a> {
    /// Written by this thread alone: plain load and store.
    Owned(&'a Stripe),
    /// Shared with other threads: atomic read-modify-write.
    Shared(&'a Stripe),
}

impl Stripes {
    pub(crate) fn new(count: u32) -> Self {
        Stripes {
            owned: (0..count)
                .map(|_| CachePadded::new(Stripe::default()))
                .collect(),
            shared: CachePadded::new(Stripe::default()),
        }
    }

    /// Heap memory the owned stripes take, in bytes (the shared one is inline).
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.owned)
    }

    /// Registers the calling thread (its slot, and the per-thread setup that goes with it) if it
    /// has not been yet: the one moment a thread may allocate, on its first call that leaves the
    /// healthy path.
    #[inline]
    pub(crate) fn register_thread(&self) {
        let _ = current_slot();
    }

    /// The current thread's stripe and its index for [`by_index`](Stripes::by_index): its own,
    /// or the shared one ([`SHARED_INDEX`]).
    pub(crate) fn local_indexed(&self) -> (u32, &Stripe) {
        let slot = current_slot();
        match self.owned.get(slot as usize) {
            Some(stripe) => (slot, stripe),
            None => (SHARED_INDEX, &self.shared),
        }
    }

    /// [`local`](Stripes::local) and its index for [`by_index`](Stripes::by_index), from one
    /// lookup of the thread's slot (claimed on first use).
    pub(crate) fn local_with_index(&self) -> (u32, LocalStripe<'_>) {
        match self.local_indexed() {
            (SHARED_INDEX, stripe) => (SHARED_INDEX, LocalStripe::Shared(stripe)),
            (index, stripe) => (index, LocalStripe::Owned(stripe)),
        }
    }

    /// The stripe `index` names (from [`local_indexed`](Stripes::local_indexed)).
    pub(crate) fn by_index(&self, index: u32) -> &Stripe {
        self.owned
            .get(index as usize)
            .map_or(&*self.shared, |padded| &**padded)
    }

    /// The stripe that threads without one of their own share; successes of a filling window
    /// all take their numbers here.
    pub(crate) fn shared(&self) -> &Stripe {
        &self.shared
    }

    #[inline(always)]
    pub(crate) fn local(&self) -> LocalStripe<'_> {
        // One bounds check serves both rare cases, a thread with no slot yet and one whose
        // slot is beyond these stripes: both sentinels are above every stripe index.
        match self.thread_stripe() {
            Some(stripe) => LocalStripe::Owned(stripe),
            None => self.local_without_own_stripe(),
        }
    }

    /// This thread's own stripe, if it has one here: [`local`](Stripes::local)'s common case
    /// alone. A thread without one yet does not claim it here.
    #[inline(always)]
    pub(crate) fn thread_stripe(&self) -> Option<&Stripe> {
        self.owned
            .get(slot_as_is() as usize)
            .map(|padded| &**padded)
    }

    /// This thread's slot number, which may be beyond these stripes, or a sentinel above
    /// every slot if it has none (yet); claims nothing, as
    /// [`thread_stripe`](Stripes::thread_stripe).
    #[inline(always)]
    pub(crate) fn thread_slot(&self) -> usize {
        slot_as_is() as usize
    }

    /// [`local`](Stripes::local) for a thread that has no stripe here yet: it claims a slot
    /// if it has none, and shares the common stripe if the slot is beyond these.
    #[cold]
    #[inline(never)]
    fn local_without_own_stripe(&self) -> LocalStripe<'_> {
        match self.owned.get(current_slot() as usize) {
            Some(stripe) => LocalStripe::Owned(stripe),
            None => LocalStripe::Shared(&self.shared),
        }
    }

    /// Adds one to `counter` on the current thread's stripe.
    ///
    /// The thread's own stripe is looked up as an `Option` and the rest goes to a cold
    /// function: through [`local`](Stripes::local), the two-way `LocalStripe` was built and
    /// its tag tested (always "owned", but the compiler kept the test) on every count.
    #[inline(always)]
    pub(crate) fn bump(&self, counter: Counter) {
        match self.thread_stripe() {
            Some(stripe) => LocalStripe::Owned(stripe).bump(counter),
            None => self.bump_without_own_stripe(counter),
        }
    }

    #[cold]
    #[inline(never)]
    fn bump_without_own_stripe(&self, counter: Counter) {
        self.local_without_own_stripe().bump(counter);
    }

    /// The sum of `counter` over all stripes. Relaxed: metrics are a snapshot, not a fence.
    pub(crate) fn total(&self, counter: Counter) -> u64 {
        self.all()
            .map(|stripe| stripe.counter(counter).load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }

    /// [`total`](Stripes::total) with acquire loads: a snapshot that reads `counter` so, and
    /// another counter after it, sees every count added to that one before an
    /// [`add_after`](Stripes::add_after) of this one that it read.
    pub(crate) fn total_acquired(&self, counter: Counter) -> u64 {
        self.all()
            .map(|stripe| stripe.counter(counter).load(Ordering::Acquire))
            .fold(0, u64::wrapping_add)
    }

    /// Adds `amount` to `counter` on the current thread's stripe with release ordering, after
    /// counts it is a part of: see [`total_acquired`](Stripes::total_acquired). (On the
    /// shared stripe, each thread's release add heads a release sequence that the later adds
    /// continue, so a load that reads any of them synchronizes with all before it.)
    pub(crate) fn add_after(&self, counter: Counter, amount: u64) {
        self.local().add_ordered(counter, amount, Ordering::Release);
    }

    /// The stripes owned by thread slots, without the shared one.
    pub(crate) fn owned(&self) -> impl Iterator<Item = &Stripe> {
        self.owned.iter().map(|padded| &**padded)
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = &Stripe> {
        self.owned().chain(std::iter::once(&*self.shared))
    }

    /// Every stripe with its index for [`by_index`](Stripes::by_index): the owned ones, then
    /// the shared one ([`SHARED_INDEX`]).
    pub(crate) fn all_indexed(&self) -> impl Iterator<Item = (u32, &Stripe)> {
        (0..)
            .zip(self.owned())
            .chain(std::iter::once((SHARED_INDEX, &*self.shared)))
    }
}

impl LocalStripe<'_> {
    #[inline(always)]
    pub(crate) fn bump(self, counter: Counter) {
        self.add(counter, 1);
    }

    /// Adds `amount` to `counter` on this stripe.
    #[inline(always)]
    pub(crate) fn add(self, counter: Counter, amount: u64) {
        self.add_ordered(counter, amount, Ordering::Relaxed);
    }

    /// Adds `amount` to `counter` on this stripe, the write with `order` (relaxed, or
    /// release for [`Stripes::add_after`]).
    #[inline(always)]
    fn add_ordered(self, counter: Counter, amount: u64, order: Ordering) {
        match self {
            LocalStripe::Owned(stripe) => {
                let cell = stripe.counter(counter);
                // Only this thread writes an owned stripe, so load-add-store loses nothing.
                cell.store(cell.load(Ordering::Relaxed).wrapping_add(amount), order);
            }
            LocalStripe::Shared(stripe) => {
                stripe.counter(counter).fetch_add(amount, order);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn threads_alive_together_get_distinct_slots() {
        let barrier = std::sync::Barrier::new(8);
        let slots: Vec<u32> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        let slot = current_slot();
                        barrier.wait(); // all eight hold their slots at this point
                        slot
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut unique = slots.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 8, "slots were shared: {slots:?}");
        assert!(slots.iter().all(|&s| s < SLOTS as u32));
    }

    #[test]
    fn an_exited_thread_gives_its_slot_back() {
        // Every thread that exits frees its slot, so far more threads than slots can come and go.
        for _ in 0..3 * SLOTS {
            let slot = std::thread::spawn(current_slot).join().unwrap();
            assert!(
                slot < SLOTS as u32,
                "ran out of slots: exited threads did not release theirs"
            );
        }
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let stripes = Stripes::new(2); // fewer stripes than threads: some share
        std::thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    for _ in 0..10_000 {
                        stripes.bump(Counter::Successes);
                    }
                });
            }
        });
        assert_eq!(stripes.total(Counter::Successes), 60_000);
    }

    /// Slot `s` owns stripe `s` of every breaker with more than `s` stripes and shares the
    /// common stripe of the others (the module's docs), and every lookup agrees on which it
    /// is: `thread_stripe`, `local`, `local_indexed`, `local_with_index`, `by_index` and
    /// `all_indexed`. The sums include the shared stripe, and add the amounts added.
    ///
    /// Catches (each tried): one owned stripe too few (`1..count`); a slot looked up one
    /// stripe off (`thread_stripe`, `thread_slot`, `by_index`), a shared stripe named by the
    /// thread's slot rather than `SHARED_INDEX` (`local_indexed`) or handed out as owned, to be
    /// written with plain stores (`local_with_index`, `local_without_own_stripe`);
    /// `all_indexed` numbering from 1 or leaving the shared stripe out; `total` or
    /// `total_acquired` leaving the shared stripe out; an add that adds 1, not its amount.
    #[test]
    fn a_slot_owns_its_stripe_where_there_are_more_stripes_than_its_number() {
        let slot = current_slot();
        assert!(slot < SLOTS as u32, "a slot is free");
        let has = Stripes::new(slot + 1);
        let lacks = Stripes::new(slot);

        let own = has.thread_stripe().expect("stripe `slot` of `slot + 1`");
        assert!(std::ptr::eq(own, has.owned().last().unwrap()));
        assert!(std::ptr::eq(own, has.by_index(slot)));
        assert_eq!(has.thread_slot(), slot as usize);
        assert!(matches!(has.local(), LocalStripe::Owned(s) if std::ptr::eq(s, own)));
        let (index, stripe) = has.local_indexed();
        assert!(index == slot && std::ptr::eq(stripe, own));
        assert!(matches!(
            has.local_with_index(),
            (i, LocalStripe::Owned(s)) if i == slot && std::ptr::eq(s, own)
        ));

        let common = lacks.shared();
        assert!(lacks.thread_stripe().is_none());
        assert!(matches!(lacks.local(), LocalStripe::Shared(s) if std::ptr::eq(s, common)));
        let (index, stripe) = lacks.local_indexed();
        assert!(index == SHARED_INDEX && std::ptr::eq(stripe, common));
        assert!(matches!(
            lacks.local_with_index(),
            (SHARED_INDEX, LocalStripe::Shared(s)) if std::ptr::eq(s, common)
        ));
        assert!(std::ptr::eq(lacks.by_index(SHARED_INDEX), common));

        // Every index `all_indexed` gives names its stripe to `by_index`, the shared one last.
        let indexed: Vec<(u32, *const Stripe)> = has
            .all_indexed()
            .map(|(index, stripe)| (index, stripe as *const Stripe))
            .collect();
        assert_eq!(indexed.len(), slot as usize + 2);
        assert_eq!(
            *indexed.last().unwrap(),
            (SHARED_INDEX, has.shared() as *const Stripe)
        );
        for (index, stripe) in indexed {
            assert!(std::ptr::eq(stripe, has.by_index(index)), "index {index}");
        }

        // Counts land where the lookups say, and the sums find them.
        for stripes in [&has, &lacks] {
            stripes.bump(Counter::Failures);
            stripes.local().add(Counter::Failures, 2);
            stripes.add_after(Counter::SlowCalls, 3);
            assert_eq!(stripes.total(Counter::Failures), 3);
            assert_eq!(stripes.total_acquired(Counter::SlowCalls), 3);
        }
        assert_eq!(own.failures.load(Ordering::Relaxed), 3);
        assert_eq!(common.failures.load(Ordering::Relaxed), 3);
        assert_eq!(has.shared().failures.load(Ordering::Relaxed), 0);
    }
}
