//! The ready-made classifier for HTTP clients and servers built on the `http` crate's types.

use ::http::{Response, StatusCode};

use super::Classify;
use crate::permit::Outcome;

/// Classifies HTTP calls as the breaker should count them:
///
/// | result | outcome |
/// | --- | --- |
/// | a 5xx response (500, 502, 503, 504, ...) | [`Outcome::Failure`] |
/// | an error (a timeout, a refused or reset connection) | [`Outcome::Failure`] |
/// | a 4xx response (400, 404, 429, ...) | [`Outcome::Ignore`]: the request was bad, not the service |
/// | any other response (1xx, 2xx, 3xx) | [`Outcome::Success`] |
///
/// For other rules (a 429 that should count, a 501 that should not), write a closure over
/// `&Result<Response<B>, E>`, using [`outcome_of_status`] for the cases it keeps.
///
/// # Examples
///
/// ```
/// use hotbreaker::Outcome;
/// use hotbreaker::tower::{Classify, HttpClassifier};
///
/// let response = |status: u16| {
///     let mut response = http::Response::new(());
///     *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
///     Ok::<_, std::io::Error>(response)
/// };
/// assert_eq!(HttpClassifier.classify(&response(503)), Outcome::Failure);
/// assert_eq!(HttpClassifier.classify(&response(404)), Outcome::Ignore);
/// assert_eq!(HttpClassifier.classify(&response(200)), Outcome::Success);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpClassifier;

impl<B, E> Classify<Response<B>, E> for HttpClassifier {
    fn classify(&self, result: &Result<Response<B>, E>) -> Outcome {
        match result {
            Ok(response) => outcome_of_status(response.status()),
            Err(_) => Outcome::Failure,
        }
    }
}

/// How [`HttpClassifier`] counts a response with `status`: 5xx fail, 4xx are ignored, the
/// rest succeed.
pub fn outcome_of_status(status: StatusCode) -> Outcome {
    if status.is_server_error() {
        Outcome::Failure
    } else if status.is_client_error() {
        Outcome::Ignore
    } else {
        Outcome::Success
    }
}
