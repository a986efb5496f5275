//! A breaker in front of a real HTTP dependency, through tower.
//!
//! Starts a small hyper server on 127.0.0.1 (a port the OS picks) that plays a dependency whose
//! health can be switched: healthy, down (503), hanging (answers after the client gave up).
//! A client calls it through this stack, in the order the article on circuit breakers gives
//! (the retry inside the breaker, each attempt with its own timeout):
//!
//! ```text
//! BreakerLayer (HttpClassifier) -> RetryLayer (3 attempts) -> TimeoutLayer (100 ms) -> hyper client
//! ```
//!
//! and prints, phase by phase, how many calls succeeded, failed or were rejected by the
//! breaker, and how many requests reached the dependency. Runs for a few seconds and stops.
//!
//! `cargo run --example tower_server --features tower`

#[path = "support/output.rs"]
mod output;

use output::say;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hotbreaker::tower::{BoxError, BreakerLayer, HttpClassifier};
use hotbreaker::{Breaker, CallError, Transition, Trigger};
use http_body_util::Empty;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tower::retry::{Policy, RetryLayer};
use tower::timeout::TimeoutLayer;
use tower::{Service, ServiceBuilder, ServiceExt};

const HEALTHY: u8 = 0;
const DOWN: u8 = 1;
const HANGING: u8 = 2;

/// Time between two calls of the client: a steady trickle of traffic.
const PACE: Duration = Duration::from_millis(25);
/// How long each attempt may take before the client gives up on it.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(100);
/// How long the breaker stays open before it lets a probe through.
const OPEN_DURATION: Duration = Duration::from_millis(400);

/// The dependency's switchable health, and the requests it received.
#[derive(Default)]
struct Dependency {
    mode: AtomicU8,
    requests: AtomicUsize,
}

async fn serve(
    dependency: Arc<Dependency>,
    request: Request<Incoming>,
) -> Result<Response<Empty<Bytes>>, Infallible> {
    dependency.requests.fetch_add(1, Ordering::Relaxed);
    let status = match (
        dependency.mode.load(Ordering::Relaxed),
        request.uri().path(),
    ) {
        (DOWN, _) => StatusCode::SERVICE_UNAVAILABLE,
        (HANGING, _) => {
            // Answers, but long after the client's timeout.
            tokio::time::sleep(ATTEMPT_TIMEOUT * 3).await;
            StatusCode::OK
        }
        (_, "/users/42") => StatusCode::OK,
        _ => StatusCode::NOT_FOUND,
    };
    let mut response = Response::new(Empty::new());
    *response.status_mut() = status;
    Ok(response)
}

/// Starts the dependency on loopback; returns its address.
async fn start_dependency(dependency: Arc<Dependency>) -> std::io::Result<std::net::SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let dependency = Arc::clone(&dependency);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    serve(Arc::clone(&dependency), request)
                });
                // A connection the client dropped mid-request ends with an error: expected here.
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(address)
}

/// Retries an attempt that got a 5xx or an error (a timeout, a refused connection), up to
/// `retries` times, 10 ms apart.
#[derive(Clone)]
struct Retries {
    retries: usize,
}

impl<B> Policy<Request<Empty<Bytes>>, Response<B>, BoxError> for Retries {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        _request: &mut Request<Empty<Bytes>>,
        result: &mut Result<Response<B>, BoxError>,
    ) -> Option<Self::Future> {
        let failed = result
            .as_ref()
            .map_or(true, |response| response.status().is_server_error());
        if failed && self.retries > 0 {
            self.retries -= 1;
            Some(tokio::time::sleep(Duration::from_millis(10)))
        } else {
            None
        }
    }

    fn clone_request(&mut self, request: &Request<Empty<Bytes>>) -> Option<Request<Empty<Bytes>>> {
        let mut copy = Request::new(Empty::new());
        *copy.method_mut() = request.method().clone();
        *copy.uri_mut() = request.uri().clone();
        Some(copy)
    }
}

fn describe(transition: &Transition) -> String {
    let why = match transition.trigger {
        Trigger::Tripped {
            failures, calls, ..
        } => format!("tripped: {failures} failures in {calls} calls"),
        Trigger::OpenPeriodEnded => "open period ended, probing".to_owned(),
        Trigger::ProbeFailed => "probe failed".to_owned(),
        Trigger::ProbesSucceeded { successes } => format!("{successes} probe(s) succeeded"),
        _ => "by hand".to_owned(),
    };
    format!("{} -> {} ({why})", transition.from, transition.to)
}

#[derive(Default)]
struct Tally {
    ok: usize,
    client_errors: usize,
    failed: usize,
    rejected: usize,
}

fn main() -> std::process::ExitCode {
    if let Some(refused) = output::refuse_arguments("tower_server") {
        return refused;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), BoxError> {
    let start = Instant::now();
    let dependency = Arc::new(Dependency::default());
    let address = start_dependency(Arc::clone(&dependency)).await?;
    say!("dependency listening on http://{address}");

    let breaker = Arc::new(
        Breaker::builder()
            .count_successes(true)
            .consecutive_failures(3)
            .failure_rate(0.5, 20)
            .open_duration(OPEN_DURATION)
            .on_transition(move |t| {
                say!(
                    "    {:>5} ms  breaker {}",
                    start.elapsed().as_millis(),
                    describe(t)
                )
            })
            .build()?,
    );
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let mut service = ServiceBuilder::new()
        .layer(BreakerLayer::new(Arc::clone(&breaker)).classify(HttpClassifier))
        .layer(RetryLayer::new(Retries { retries: 2 }))
        .layer(TimeoutLayer::new(ATTEMPT_TIMEOUT))
        .service(client);

    let phases = [
        ("healthy", HEALTHY, "/users/42", 12),
        ("dependency down (503)", DOWN, "/users/42", 16),
        ("dependency back up", HEALTHY, "/users/42", 24),
        ("bad requests (404)", HEALTHY, "/users/missing", 8),
        ("dependency hangs (timeouts)", HANGING, "/users/42", 12),
        ("dependency back up", HEALTHY, "/users/42", 24),
    ];
    say!(
        "\n{:<28} {:>5} {:>5} {:>7} {:>9} {:>19}",
        "phase",
        "ok",
        "4xx",
        "failed",
        "rejected",
        "reached dependency"
    );
    for (name, mode, path, calls) in phases {
        dependency.mode.store(mode, Ordering::Relaxed);
        let requests_before = dependency.requests.load(Ordering::Relaxed);
        let mut tally = Tally::default();
        say!("{name}:");
        for _ in 0..calls {
            let request = Request::get(format!("http://{address}{path}")).body(Empty::new())?;
            let ready = service.ready().await.map_err(CallError::into_boxed)?;
            match ready.call(request).await {
                Ok(response) if response.status().is_client_error() => tally.client_errors += 1,
                Ok(response) if response.status().is_success() => tally.ok += 1,
                Ok(_) => tally.failed += 1, // a 5xx that outlasted the retries
                Err(CallError::Failed(_timeout_or_io)) => tally.failed += 1,
                Err(CallError::Rejected(_)) => tally.rejected += 1,
            }
            tokio::time::sleep(PACE).await;
        }
        let reached = dependency.requests.load(Ordering::Relaxed) - requests_before;
        say!(
            "{:<28} {:>5} {:>5} {:>7} {:>9} {:>19}",
            "",
            tally.ok,
            tally.client_errors,
            tally.failed,
            tally.rejected,
            reached
        );
    }

    let m = breaker.metrics();
    say!(
        "\nbreaker: {} | successes {} failures {} ignored (4xx) {} rejected {} | openings {} closings {}",
        m.state,
        m.successes.unwrap_or_default(),
        m.failures,
        m.ignored,
        m.rejected,
        m.openings,
        m.closings
    );
    say!("done in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}
