//! Runs one sequence of operations on the breaker and on the reference model, and requires
//! them to decide alike at every step.

use std::fmt;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use super::hung_bounds;
use super::model::{ModelConfig, ModelCounts, ModelPermit, ReferenceModel};
use crate::{Breaker, ManualClock, Outcome, Permit};

/// One step of a differential run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Ask for a permit; a granted one is held until a later step ends it.
    Acquire,
    /// End the held permit at this index (modulo the number held) with a verdict.
    Record(usize, Outcome),
    /// Drop the held permit at this index (modulo the number held) without a verdict.
    Release(usize),
    /// A whole call through [`Breaker::call_with`], classified as this outcome: the path a
    /// call takes when the caller does not hold its permit (the healthy one inlined).
    Call(Outcome),
    /// Move the clock forward by this many microseconds.
    Advance(u32),
    /// Move the clock forward by this many nanoseconds (off the microsecond grid, where the
    /// breaker rounds).
    AdvanceNanos(u32),
    /// Move the clock to one of the moments ahead at which a decision changes with time alone
    /// ([`ReferenceModel::boundaries`]; this index, halved, modulo their number), or 1 ns past
    /// it if the index is odd. Nothing if there is none.
    AdvanceToBoundary(usize),
    /// Move the clock to this many microseconds (modulo 1,000) before the next point at which
    /// the breaker's kept times wrap: every 2^48 µs (about 8.9 years) from its build, where
    /// an open period's end and a probe's admission are kept modulo 2^48 µs
    /// (`tagged_time.rs`). The model keeps whole times, so the two disagree if a period or a
    /// probe that spans the point is misread. Nothing moves while a permit is held (see
    /// `advance_to_time_wrap`).
    AdvanceToTimeWrap(u16),
    /// [`Breaker::force_open`].
    ForceOpen,
    /// [`Breaker::force_closed`].
    ForceClosed,
    /// [`Breaker::reset`].
    Reset,
    /// [`Breaker::open_for`] this many microseconds (an opening decided elsewhere).
    OpenFor(u32),
    /// [`Breaker::end_open_period`] (a recovery seen elsewhere).
    EndOpenPeriod,
    /// [`Breaker::reconfigure`] to a variation of the configuration in force that this number
    /// picks (a rule, the open period, the probe settings or the back-off), then
    /// [`Breaker::reset`], after which the new rules judge exactly.
    ReconfigureAndReset(u8),
    /// [`Breaker::reconfigure`] of a live breaker, with permits out, to a variation that this
    /// number picks of a setting other than the rules: the slow-call limit (on, off, changed,
    /// or too long to count), the probe timeout, success counting (switched), the open
    /// period, the probe settings or the back-off. No reset: the calls out are judged across
    /// it.
    Reconfigure(u8),
    /// [`Breaker::reconfigure`], with permits out and no reset, to a variation that this
    /// number picks as [`Op::ReconfigureAndReset`] picks it (a rule included), if the breaker
    /// is not closed: open, half-open, or forced either way. The window is cleared when the
    /// breaker next closes, so the new rules then judge exactly, as `reconfigure` documents.
    /// While closed, where what the window holds depends on the old rules, nothing.
    ReconfigureUnlessClosed(u8),
    /// [`Breaker::reconfigure`], with permits out and no reset, of a closed breaker, to a
    /// change of its rules that this number picks (its low two bits the change, the rest the
    /// new value) among those the model follows
    /// ([`ReferenceModel::reconfigure_rules_while_closed`]): the run added,
    /// removed or changed, the rate rule's threshold or minimum changed once the window is
    /// full, or the rate rule removed beside a run. Otherwise nothing.
    ReconfigureRulesWhileClosed(u8),
}

/// Where the breaker and the model first disagreed.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Index of the operation after which they disagreed.
    pub step: usize,
    /// The operation.
    pub op: Op,
    /// What differed.
    pub what: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {} ({:?}): {}", self.step, self.op, self.what)
    }
}

impl std::error::Error for Mismatch {}

/// How a breaker under test is built beside its rules and durations: what no decision may
/// depend on. [`Default`] is the builder's defaults, successes not counted, on the calling
/// thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// [`Builder::stripes`](crate::Builder::stripes), if set.
    pub stripes: Option<usize>,
    /// [`Builder::failure_records`](crate::Builder::failure_records), if set: reconfigurations
    /// ([`Op::ReconfigureAndReset`]) then lengthen windows and runs up to it.
    pub failure_records: Option<usize>,
    /// [`Builder::per_thread_windows`](crate::Builder::per_thread_windows).
    pub per_thread_windows: bool,
    /// [`Builder::count_successes`](crate::Builder::count_successes).
    pub count_successes: bool,
    /// Run on a thread of its own that holds no stripe, as a thread beyond a breaker's stripes
    /// (or past the last free slot) does: it writes the stripe that such threads share, with
    /// atomic read-modify-writes, and with a window per thread the window they share. With
    /// [`turns`](Layout::turns), every thread that takes a turn holds no stripe.
    pub shared_stripe: bool,
    /// Hand the steps between threads of their own, one step at a time, if set: see
    /// [`Turns`]. Only with one window, which judges the calls of every thread together, as
    /// the model judges its calls.
    pub turns: Option<Turns>,
}

/// Which thread takes each step of a run whose steps are handed between threads.
///
/// Each step ends before the next begins, so the steps keep their order in time, and the
/// breaker must decide as the model does over the same order, whichever thread recorded each
/// outcome: the one window's stripes, quiet bit and hints, written by one thread and read by
/// the next, must add up to the calls in the order they were made. A window that kept each
/// thread's recent successes to itself for a while, or judged each thread's calls apart,
/// would disagree with the model here even on one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turns {
    /// How many threads take turns (at least one). Each takes a stripe of its own, as any
    /// thread does, while the breaker has stripes and the process has slots free.
    pub threads: u8,
    /// Picks the thread of each step: the first step's, and after each step whether the
    /// next stays on the same thread (three times in four) or goes to one picked anew, so
    /// that a run has both long stretches on one thread and quick changes.
    pub seed: u64,
}

impl Turns {
    /// The thread, `0..threads`, that takes each of `steps` steps.
    fn threads_of_steps(self, steps: usize) -> Vec<usize> {
        let threads = u64::from(self.threads.max(1));
        // xorshift64*: enough to spread the turns; zero is its one fixed point.
        let mut state = self.seed | 1;
        let mut next = || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let mut current = self.seed % threads;
        (0..steps)
            .map(|_| {
                let turn = current as usize;
                let draw = next();
                if draw % 4 == 0 {
                    current = (draw >> 8) % threads;
                }
                turn
            })
            .collect()
    }
}

impl Layout {
    fn builder(&self, config: &ModelConfig) -> crate::Builder {
        let mut builder = config
            .builder()
            .count_successes(self.count_successes)
            .per_thread_windows(self.per_thread_windows);
        if let Some(stripes) = self.stripes {
            builder = builder.stripes(stripes);
        }
        if let Some(records) = self.failure_records {
            builder = builder.failure_records(records);
        }
        builder
    }
}

/// Runs `ops` on a breaker built from `config` and on the reference model.
///
/// Returns `Ok(false)` without running anything if the builder refuses `config` (it must then
/// be out of range), `Ok(true)` if the two agreed throughout.
///
/// # Errors
///
/// The first [`Mismatch`]: a different admission decision, state, counter, window content or
/// number of probes out.
pub fn run_differential(config: &ModelConfig, ops: &[Op]) -> Result<bool, Mismatch> {
    run_differential_split(config, config, ops)
}

/// Like [`run_differential`], returning the counters the two agreed on at the end (`None`
/// if the builder refuses `config`): for a test that must also know what happened, such as
/// how many times the breaker opened.
///
/// # Errors
///
/// The first [`Mismatch`].
pub fn run_differential_counts(
    config: &ModelConfig,
    ops: &[Op],
) -> Result<Option<ModelCounts>, Mismatch> {
    let layout = Layout {
        count_successes: true,
        ..Layout::default()
    };
    run_on(layout.builder(config), config, None, Steps::here(ops), true)
}

/// Like [`run_differential`], with the model built from its own configuration: for checking
/// that the harness notices a model that differs from the breaker.
///
/// # Errors
///
/// The first [`Mismatch`].
pub fn run_differential_split(
    breaker_config: &ModelConfig,
    model_config: &ModelConfig,
    ops: &[Op],
) -> Result<bool, Mismatch> {
    let layout = Layout {
        count_successes: true,
        ..Layout::default()
    };
    run_on(
        layout.builder(breaker_config),
        model_config,
        None,
        Steps::here(ops),
        true,
    )
    .map(|counts| counts.is_some())
}

/// Like [`run_differential`], with the breaker built as `layout` says (while successes are not
/// counted, [`Metrics::successes`](crate::Metrics::successes) must be `None`). However it is
/// laid out, on one thread it must decide exactly as the model does.
///
/// # Errors
///
/// The first [`Mismatch`].
///
/// # Panics
///
/// If `layout` asks for [`turns`](Layout::turns) with a window per thread, which the model
/// does not follow across threads; and if a thread that runs steps panics: the panic goes on
/// from here.
pub fn run_differential_laid_out(
    config: &ModelConfig,
    layout: Layout,
    ops: &[Op],
) -> Result<bool, Mismatch> {
    assert!(
        layout.turns.is_none() || !layout.per_thread_windows,
        "turns between threads are compared with the model only for one window"
    );
    let steps = Steps {
        ops,
        turns: layout.turns,
        shared_stripe: layout.shared_stripe,
    };
    run_on(
        layout.builder(config),
        config,
        layout.failure_records,
        steps,
        layout.count_successes,
    )
    .map(|counts| counts.is_some())
}

/// Runs `ops` on the breaker `builder` builds (on a manual clock, with a listener) and on a
/// model of `model_config`, comparing after every step; the breaker counts its successes if
/// `successes_counted` (until an [`Op::Reconfigure`] switches that), and keeps
/// `failure_records` if they were set. The model's counters at the end, `None` if the
/// builder refuses the configuration.
fn run_on(
    builder: crate::Builder,
    model_config: &ModelConfig,
    failure_records: Option<usize>,
    steps: Steps<'_>,
    successes_counted: bool,
) -> Result<Option<ModelCounts>, Mismatch> {
    let clock = ManualClock::new();
    let told = Arc::new(Mutex::new(Vec::new()));
    let listener = Arc::clone(&told);
    let built = builder
        .on_transition(move |transition| listener.lock().unwrap().push(*transition))
        .clock(clock.clone())
        .build();
    let Ok(breaker) = built else {
        return Ok(None);
    };
    let mut model = ReferenceModel::new(*model_config);
    model.set_counting(successes_counted);
    let records = failure_records
        .and_then(|records| u32::try_from(records).ok())
        .unwrap_or_else(|| failure_records_by_default(model_config));
    let context = Context {
        breaker: &breaker,
        clock: &clock,
        told: &told,
        records,
    };
    let run = Mutex::new(RunState {
        model,
        in_force: *model_config,
        held: Vec::new(),
        hung_so_far: 0,
        horizon: LOOK_WITHIN.as_nanos() as u64,
    });
    steps.take(&|step, op| run_step(&context, &mut run.lock().unwrap(), step, op))?;
    Ok(Some(run.into_inner().unwrap().model.counts))
}

/// The operations of a run, and the threads that take them.
struct Steps<'o> {
    ops: &'o [Op],
    turns: Option<Turns>,
    /// Whether the threads that take the steps hold no stripe (`Layout::shared_stripe`).
    shared_stripe: bool,
}

impl<'o> Steps<'o> {
    /// `ops`, every one on the calling thread.
    fn here(ops: &'o [Op]) -> Self {
        Steps {
            ops,
            turns: None,
            shared_stripe: false,
        }
    }

    /// Runs `step` on every operation in order, on the thread its turn names (or, without
    /// turns, on the calling thread; on one other thread if that must hold no stripe), each
    /// ending before the next begins. The first error ends the run.
    fn take(
        &self,
        step: &(dyn Fn(usize, Op) -> Result<(), Mismatch> + Sync),
    ) -> Result<(), Mismatch> {
        if self.turns.is_none() && !self.shared_stripe {
            return self
                .ops
                .iter()
                .enumerate()
                .try_for_each(|(index, &op)| step(index, op));
        }
        let (threads, thread_of) = match self.turns {
            Some(turns) => (
                usize::from(turns.threads.max(1)),
                turns.threads_of_steps(self.ops.len()),
            ),
            None => (1, vec![0; self.ops.len()]),
        };
        type Reply = mpsc::Sender<Result<(), Mismatch>>;
        std::thread::scope(|scope| {
            let workers: Vec<mpsc::Sender<(usize, Op, Reply)>> = (0..threads)
                .map(|_| {
                    let (sender, jobs) = mpsc::channel::<(usize, Op, Reply)>();
                    let shared_stripe = self.shared_stripe;
                    scope.spawn(move || {
                        if shared_stripe {
                            crate::stripes::give_back_slot();
                        }
                        for (index, op, reply) in jobs {
                            // The caller waits for this reply before it hands out the next
                            // step, so that steps never overlap.
                            let _ = reply.send(step(index, op));
                        }
                    });
                    sender
                })
                .collect();
            for ((index, &op), &thread) in self.ops.iter().enumerate().zip(&thread_of) {
                let (reply, replied) = mpsc::channel();
                if workers[thread].send((index, op, reply)).is_err() {
                    // The thread is gone (it panicked); the scope's end reports the panic.
                    break;
                }
                match replied.recv() {
                    Ok(result) => result?,
                    Err(_) => break,
                }
            }
            Ok(())
        })
    }
}

/// What every step of a run reads and no step changes.
struct Context<'b> {
    breaker: &'b Breaker<ManualClock>,
    clock: &'b ManualClock,
    told: &'b Mutex<Vec<crate::Transition>>,
    /// The failure records the breaker keeps: how long a varied window or run may be.
    records: u32,
}

/// What the steps of a run change, handed from one to the next.
struct RunState<'b> {
    model: ReferenceModel,
    /// The configuration the breaker and the model were last given.
    in_force: ModelConfig,
    /// Permits granted and not yet ended, each beside the model's.
    held: Vec<(Permit<'b, ManualClock>, ModelPermit)>,
    /// Hung calls counted so far.
    hung_so_far: u64,
    /// The clock time (the model's nanoseconds) that no move to a boundary may reach: four
    /// years after the build, or after the last look of [`Op::AdvanceToTimeWrap`]. The
    /// breaker reads a time by its distance modulo 2^48 µs (`tagged_time.rs`): an open period
    /// that ended more than 6.7 years before the next call, or a probe out that long, reads as
    /// running or fresh, which the model, keeping whole times, does not.
    horizon: u64,
}

/// How far a run moves the clock past a look (four years), short of the 6.7 years after which
/// a time the breaker keeps reads as ahead again.
const LOOK_WITHIN: Duration = Duration::from_secs(4 * 365 * 24 * 3600);

/// Runs step `step`, `op`, on the breaker and the model, and compares them after it.
fn run_step<'b>(
    context: &Context<'b>,
    run: &mut RunState<'b>,
    step: usize,
    op: Op,
) -> Result<(), Mismatch> {
    if let Op::AdvanceToTimeWrap(micros) = op {
        return advance_to_time_wrap(context, run, step, micros);
    }
    let Context {
        breaker,
        clock,
        told,
        records,
    } = *context;
    let RunState {
        model,
        in_force,
        held,
        hung_so_far,
        horizon,
    } = run;
    let now = clock.now_nanos_for_model();
    let mismatch = |what: String| Mismatch { step, op, what };
    let in_buckets = hung_bounds::calls_in_buckets(model, held.iter().map(|(_, p)| p));
    // A timed call admitted while closed sweeps every bucket that is due first.
    let sweeps = matches!(op, Op::Acquire | Op::Call(_))
        && model.state(now) == crate::State::Closed
        && in_force.slow_call.is_some();
    match op {
        Op::Acquire => match (breaker.try_acquire(), model.acquire(now)) {
            (Ok(permit), Ok(model_permit)) => {
                if permit.is_probe() != (model.state(now) == crate::State::HalfOpen) {
                    return Err(mismatch(format!(
                        "probe flag {} in state {}",
                        permit.is_probe(),
                        model.state(now)
                    )));
                }
                held.push((permit, model_permit));
            }
            (Err(rejected), Err(state)) if rejected.state() == state => {
                check_rejection(&rejected, model, now).map_err(mismatch)?;
            }
            (real, expected) => {
                return Err(mismatch(format!(
                    "breaker {:?}, model {:?}",
                    real.map(|p| p.generation()),
                    expected
                )));
            }
        },
        Op::Record(index, outcome) if !held.is_empty() => {
            let (permit, model_permit) = held.swap_remove(index % held.len());
            permit.record(outcome);
            model.record(model_permit, outcome, now);
        }
        Op::Release(index) if !held.is_empty() => {
            let (permit, model_permit) = held.swap_remove(index % held.len());
            drop(permit);
            model.release(model_permit, now);
        }
        Op::Record(..) | Op::Release(_) => {}
        Op::Call(outcome) => {
            let real = breaker.call_with(|_| outcome, || Ok::<(), ()>(()));
            match (real, model.acquire(now)) {
                (Ok(()), Ok(model_permit)) => model.record(model_permit, outcome, now),
                (Err(crate::CallError::Rejected(rejected)), Err(state))
                    if rejected.state() == state =>
                {
                    check_rejection(&rejected, model, now).map_err(mismatch)?;
                }
                (real, expected) => {
                    return Err(mismatch(format!(
                        "call: breaker {real:?}, model {expected:?}"
                    )));
                }
            }
        }
        Op::Advance(micros) => clock.advance(Duration::from_micros(u64::from(micros))),
        Op::AdvanceNanos(nanos) => clock.advance(Duration::from_nanos(u64::from(nanos))),
        Op::AdvanceToTimeWrap(_) => unreachable!("taken in steps by `advance_to_time_wrap`"),
        Op::AdvanceToBoundary(index) => {
            let mut moments = model.boundaries(now, held.iter().map(|(_, permit)| permit));
            moments.retain(|&moment| moment + 1 < *horizon);
            if !moments.is_empty() {
                let moment = moments[index / 2 % moments.len()] + (index % 2) as u64;
                clock.advance(Duration::from_nanos(moment - now));
            }
        }
        Op::ForceOpen => {
            breaker.force_open();
            model.force_open();
        }
        Op::ForceClosed => {
            breaker.force_closed();
            model.force_closed();
        }
        Op::Reset => {
            breaker.reset();
            model.reset();
        }
        Op::OpenFor(micros) => {
            let duration = Duration::from_micros(u64::from(micros));
            let opened = breaker
                .open_for(duration)
                .map_err(|error| mismatch(format!("open_for({duration:?}) refused: {error}")))?;
            let expected = model.open_for(duration, now);
            if opened != expected {
                return Err(mismatch(format!(
                    "open_for opened: breaker {opened}, model {expected}"
                )));
            }
        }
        Op::ReconfigureAndReset(pick) => {
            let next = varied(in_force, pick, records);
            reconfigure(breaker, &next, false).map_err(mismatch)?;
            breaker.reset();
            model.reconfigure_and_reset(next);
            *in_force = next;
        }
        Op::ReconfigureUnlessClosed(pick) => {
            if !model.is_closed() {
                let next = varied(in_force, pick, records);
                reconfigure(breaker, &next, false).map_err(mismatch)?;
                model.reconfigure_unless_closed(next);
                *in_force = next;
            }
        }
        Op::ReconfigureRulesWhileClosed(pick) => {
            let closed_change = model
                .is_closed()
                .then(|| varied_while_closed(in_force, pick, records, model.is_full()))
                .flatten();
            if let Some(next) = closed_change {
                reconfigure(breaker, &next, false).map_err(mismatch)?;
                model.reconfigure_rules_while_closed(next);
                *in_force = next;
            }
        }
        Op::Reconfigure(pick) => {
            let next = varied_beside_the_rules(in_force, pick);
            let switch_counting = switches_success_counts(pick);
            reconfigure(breaker, &next, switch_counting).map_err(mismatch)?;
            model.reconfigure(next);
            if switch_counting {
                model.set_counting(!model.counting());
            }
            *in_force = next;
        }
        Op::EndOpenPeriod => {
            let (ended, expected) = (breaker.end_open_period(), model.end_open_period(now));
            if ended != expected {
                return Err(mismatch(format!(
                    "end_open_period ended: breaker {ended}, model {expected}"
                )));
            }
        }
    }
    let hung = compare(breaker, model, clock.now_nanos_for_model())
        .map_err(mismatch)?
        .hung_calls;
    hung_bounds::check(
        &in_buckets,
        hung - *hung_so_far,
        now,
        in_force.slow_call,
        sweeps,
    )
    .map_err(mismatch)?;
    *hung_so_far = hung;
    compare_transitions(
        &told.lock().unwrap(),
        model.transitions(),
        model.trip_causes(),
    )
    .map_err(mismatch)?;
    Ok(())
}

/// [`Breaker::reconfigure`] to `next`, with what a reconfiguration cannot change as the
/// breaker was built, and success counting as it is (switched if `switch_counting`).
pub(super) fn reconfigure(
    breaker: &Breaker<ManualClock>,
    next: &ModelConfig,
    switch_counting: bool,
) -> Result<(), String> {
    let mut config = next
        .builder()
        .to_config()
        .map_err(|error| format!("a varied configuration is invalid: {error}"))?;
    let built = breaker.config();
    config.stripes = built.stripes;
    config.failure_records = built.failure_records;
    config.per_thread_windows = built.per_thread_windows;
    config.count_successes = built.count_successes != switch_counting;
    breaker
        .reconfigure(config)
        .map_err(|error| format!("reconfigure to {next:?} refused: {error}"))
}

/// Whether `rejected`, which the model agrees on, says what the model does of the time left:
/// while open, how long is left of the period; otherwise nothing.
fn check_rejection(
    rejected: &crate::Rejected,
    model: &ReferenceModel,
    now: u64,
) -> Result<(), String> {
    let left = model
        .open_period_end()
        .filter(|_| rejected.state() == crate::State::Open)
        .map(|until| Duration::from_nanos(until - now));
    if rejected.retry_after() == left {
        Ok(())
    } else {
        Err(format!(
            "retry_after: breaker {:?}, model {left:?}",
            rejected.retry_after()
        ))
    }
}

/// Whether the listener was told of the model's transitions: one for each, in order, of
/// consecutive generations, with the states, (for an opening) the period, and (for a trip) the
/// rule met with the failures it saw and the calls it judged.
fn compare_transitions(
    told: &[crate::Transition],
    expected: &[(crate::State, crate::State, Option<Duration>)],
    trip_causes: &[Option<(crate::TripRule, u32, u32)>],
) -> Result<(), String> {
    let seen: Vec<_> = told.iter().map(|t| (t.from, t.to, t.open_for)).collect();
    if seen != expected {
        return Err(format!(
            "transitions told {seen:?}\n      model {expected:?}"
        ));
    }
    let tripped = |t: &crate::Transition| match t.trigger {
        crate::Trigger::Tripped {
            rule,
            failures,
            calls,
        } => Some((rule, failures, calls)),
        _ => None,
    };
    let seen_causes: Vec<_> = told.iter().map(tripped).collect();
    if seen_causes != trip_causes {
        return Err(format!(
            "trip causes told {seen_causes:?}\n      model {trip_causes:?}"
        ));
    }
    match told.iter().zip(1..).find(|(t, n)| t.generation != *n) {
        Some((t, n)) => Err(format!(
            "transition {n} told as generation {}",
            t.generation
        )),
        None => Ok(()),
    }
}

/// Whether the breaker's metrics and state agree with the model's at `now`; the metrics if
/// they do.
fn compare(
    breaker: &Breaker<ManualClock>,
    model: &ReferenceModel,
    now: u64,
) -> Result<crate::Metrics, String> {
    let metrics = breaker.metrics();
    let mut counts = model.counts;
    if metrics.successes.is_some() != model.counting() {
        return Err(format!(
            "successes {:?} from a breaker that counts them: {}",
            metrics.successes,
            model.counting()
        ));
    }
    if !model.counting() {
        counts.successes = u64::MAX;
    }
    let (failures, calls, run) = model.window();
    let real = (
        metrics.state,
        [
            metrics.successes.unwrap_or(u64::MAX),
            metrics.failures,
            metrics.ignored,
            metrics.released,
            metrics.rejected,
            metrics.slow_calls,
            metrics.hung_calls,
        ],
        [metrics.openings, metrics.half_openings, metrics.closings],
        (
            metrics.window_failures,
            metrics.window_calls,
            metrics.consecutive_failures,
        ),
        metrics.probes_out,
    );
    let expected = (
        model.state(now),
        [
            counts.successes,
            counts.failures,
            counts.ignored,
            counts.released,
            counts.rejected,
            counts.slow_calls,
            counts.hung_calls,
        ],
        [counts.openings, counts.half_openings, counts.closings],
        (failures, calls, run),
        model.probes_out(),
    );
    if real != expected {
        return Err(format!(
            "breaker (state, [succ, fail, ign, rel, rej, slow, hung], [open, half, close], (win fail, win calls, run), probes) = \
             {real:?}\n      model = {expected:?}"
        ));
    }
    if breaker.state() != model.state(now) {
        return Err(format!(
            "state() {} but model {}",
            breaker.state(),
            model.state(now)
        ));
    }
    Ok(metrics)
}

impl ManualClock {
    fn now_nanos_for_model(&self) -> u64 {
        use crate::Clock;
        self.now_nanos()
    }
}

/// The failure records a breaker built from `config` keeps unless told otherwise: the longer
/// of its rate window (the default rule's, if it has no rule) and its run, rounded up to a
/// power of two. A reconfiguration may lengthen either up to it.
pub(super) fn failure_records_by_default(config: &ModelConfig) -> u32 {
    let rules = if config.failure_rate.is_none() && config.consecutive_failures.is_none() {
        crate::DEFAULT_FAILURE_RATE.1
    } else {
        config.failure_rate.map_or(0, |(_, window, _)| window)
    };
    rules
        .max(config.consecutive_failures.unwrap_or(0))
        .max(1)
        .next_power_of_two()
}

/// A variation of `config` that `pick` chooses, for [`Op::ReconfigureAndReset`]: its low three
/// bits the setting, the rest the new value; windows and runs no longer than `records`.
pub(super) fn varied(config: &ModelConfig, pick: u8, records: u32) -> ModelConfig {
    let mut next = *config;
    let value = u32::from(pick >> 3);
    match pick & 7 {
        0 => {
            let window = value % records + 1;
            let threshold = config.failure_rate.map_or(0.5, |(threshold, ..)| threshold);
            next.failure_rate = Some((threshold, window, value % (window + 1)));
        }
        1 => {
            let (_, window, minimum) = config.failure_rate.unwrap_or((0.5, records.min(20), 0));
            next.failure_rate = Some((f64::from(value % 10 + 1) / 10.0, window, minimum));
        }
        2 => next.consecutive_failures = Some(value % records.min(8) + 1),
        3 if config.failure_rate.is_some() && config.consecutive_failures.is_some() => {
            if value % 2 == 0 {
                next.failure_rate = None;
            } else {
                next.consecutive_failures = None;
            }
        }
        // With one rule only, removing it would bring in the default rule, whose window may
        // be longer than the records.
        3 => {}
        4 => {
            next.open_duration = Duration::from_micros(u64::from(value % 60 + 1));
            if let Some((multiplier, _)) = config.open_backoff {
                next.open_backoff = Some((multiplier, next.open_duration * 4));
            }
        }
        5 => next.half_open_probes = value % 3 + 1,
        6 => next.success_threshold = value % 3 + 1,
        _ => {
            next.open_backoff = match config.open_backoff {
                Some(_) => None,
                None => Some((
                    f64::from(value % 30 + 10) / 10.0,
                    (config.open_duration * 8).min(crate::config::MAX_OPEN_DURATION),
                )),
            };
        }
    }
    next
}

/// A change of `config`'s rules that `pick` chooses, for [`Op::ReconfigureRulesWhileClosed`],
/// if it is one the model follows while closed, `full` saying whether the rate window is
/// full: its low two bits the change, the rest the new value.
///
/// - 0: the run set to 1 to 8 calls (no longer than `records`), or removed if a rate rule
///   stays;
/// - 1: the threshold set to a tenth to a whole, once full;
/// - 2: the minimum set to 0 (not set) up to the window, once full;
/// - 3: the rate rule removed, if there is a run.
///
/// A configuration with no rule has the default rate rule's, which is kept.
pub(super) fn varied_while_closed(
    config: &ModelConfig,
    pick: u8,
    records: u32,
    full: bool,
) -> Option<ModelConfig> {
    let mut next = super::model::with_default_rule(*config);
    let value = u32::from(pick >> 2);
    match (pick & 3, next.failure_rate) {
        (0, Some(_)) if value % 5 == 0 => next.consecutive_failures = None,
        (0, _) => next.consecutive_failures = Some(value % records.min(8) + 1),
        (1, Some((_, window, minimum))) if full => {
            next.failure_rate = Some((f64::from(value % 10 + 1) / 10.0, window, minimum));
        }
        (2, Some((threshold, window, _))) if full => {
            next.failure_rate = Some((threshold, window, value % (window + 1)));
        }
        (3, Some(_)) if next.consecutive_failures.is_some() => next.failure_rate = None,
        _ => return None,
    }
    Some(next)
}

/// A variation of `config` beside its rules that `pick` chooses, for [`Op::Reconfigure`]: its
/// value (`pick / 8`) sets the slow-call limit or the probe timeout (off, a few microseconds
/// with or without half of one, or, for the limit, longer than nanoseconds can count), or
/// one of [`varied`]'s other settings; or nothing, when the pick switches success counting
/// instead ([`switches_success_counts`]).
pub(super) fn varied_beside_the_rules(config: &ModelConfig, pick: u8) -> ModelConfig {
    let value = u64::from(pick >> 3);
    let short = || Duration::from_nanos((value / 4 + 1) * 1_000 + value % 2 * 500);
    let mut next = *config;
    match pick & 7 {
        0 | 1 => {
            next.slow_call = match value % 4 {
                0 => None,
                3 => Some(Duration::MAX),
                _ => Some(short()),
            };
        }
        2 => next.probe_timeout = (value % 4 != 0).then(short),
        // Success counting is switched, not a setting of `ModelConfig`: see
        // `switches_success_counts`.
        3 => {}
        other => next = varied(config, pick & !7 | other, 0),
    }
    next
}

/// Whether [`Op::Reconfigure`]`(pick)` switches success counting on or off (and changes
/// nothing else).
pub(super) fn switches_success_counts(pick: u8) -> bool {
    pick & 7 == 3
}

/// [`Op::AdvanceToTimeWrap`]: a look (a call whose outcome is ignored: it moves the breaker
/// as any call does, and records nothing), then hops of four years with a look after each,
/// each compared as a step of its own, so that the breaker is looked at within every four
/// years (see `RunState::horizon`). Nothing moves while a permit is held: a probe out for 6.7
/// years reads as just admitted, which a probe timeout set later would not give up on, and
/// after about 2^19 times its limit a timed call's bucket can no longer be told from a later
/// one (`calls_out.rs`, README "Hung calls"). Permits taken after the move, a few hundred
/// microseconds short of the wrap, cross it with the steps that follow.
fn advance_to_time_wrap<'b>(
    context: &Context<'b>,
    run: &mut RunState<'b>,
    step: usize,
    micros: u16,
) -> Result<(), Mismatch> {
    if !run.held.is_empty() {
        return run_step(context, run, step, Op::Advance(0));
    }
    let look = Op::Call(Outcome::Ignore);
    run_step(context, run, step, look)?;
    let mut left = to_before_time_wrap(context.clock.now_nanos_for_model(), micros);
    while !left.is_zero() {
        let hop = left.min(LOOK_WITHIN);
        context.clock.advance(hop);
        left -= hop;
        run_step(context, run, step, look)?;
    }
    run.horizon = context.clock.now_nanos_for_model() + LOOK_WITHIN.as_nanos() as u64;
    Ok(())
}

/// How far to move a clock that reads `now` (nanoseconds; the breaker was built at 0) for
/// [`Op::AdvanceToTimeWrap`]: to `micros` (modulo 1,000) microseconds before the next point
/// where the breaker's kept times wrap, or before the one after if that is not ahead.
pub(crate) fn to_before_time_wrap(now: u64, micros: u16) -> Duration {
    const WRAP_NANOS: u64 = (1 << 48) * 1_000;
    let before = u64::from(micros % 1_000) * 1_000;
    let mut target = (now / WRAP_NANOS + 1) * WRAP_NANOS - before;
    if target <= now {
        target += WRAP_NANOS;
    }
    Duration::from_nanos(target - now)
}
