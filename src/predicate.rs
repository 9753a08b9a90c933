//! When to compress a response. (Temporary minimal version; replaced by the full module.)

use http::{Extensions, HeaderMap, StatusCode, Version};
use http_body::Body;

/// Decides whether a response should be compressed.
pub trait Predicate: Clone {
    /// Whether `response` should be compressed.
    fn should_compress<B: Body>(&self, response: &http::Response<B>) -> bool;
}

impl<F> Predicate for F
where
    F: Fn(StatusCode, Version, &HeaderMap, &Extensions) -> bool + Clone,
{
    fn should_compress<B: Body>(&self, response: &http::Response<B>) -> bool {
        self(
            response.status(),
            response.version(),
            response.headers(),
            response.extensions(),
        )
    }
}

/// The default predicate.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultPredicate;

impl DefaultPredicate {
    /// The default predicate.
    pub fn new() -> Self {
        DefaultPredicate
    }
}

impl Predicate for DefaultPredicate {
    fn should_compress<B: Body>(&self, response: &http::Response<B>) -> bool {
        let ct = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        !(ct.starts_with("image/png") || ct.starts_with("application/grpc"))
    }
}

/// The exact body size: the body's exact size hint, else a valid Content-Length.
pub(crate) fn body_size<B: Body>(response: &http::Response<B>) -> Option<u64> {
    response.body().size_hint().exact().or_else(|| {
        response
            .headers()
            .get(http::header::CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .parse()
            .ok()
    })
}
