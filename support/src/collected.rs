//! A response read to the end, with the questions tests ask of it.

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, VARY};
use http::{HeaderMap, Response, StatusCode, Version};
use http_body::Body;
use http_body_util::BodyExt;

use crate::decode::decode;

/// A response read to the end: head, body and trailers.
#[derive(Debug)]
pub struct Collected {
    pub status: StatusCode,
    pub version: Version,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub trailers: Option<HeaderMap>,
}

impl Collected {
    /// The `Content-Encoding`, if any.
    pub fn encoding(&self) -> Option<&str> {
        self.headers
            .get(CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap())
    }

    /// The body decoded as its `Content-Encoding` says, by [`decode`].
    pub fn decoded(&self) -> Vec<u8> {
        decode(self.encoding(), &self.body)
    }

    /// How many times `Vary` names `Accept-Encoding`, over every `Vary` line.
    pub fn vary_count(&self) -> usize {
        self.headers
            .get_all(VARY)
            .iter()
            .flat_map(|v| v.to_str().unwrap().split(','))
            .filter(|t| t.trim().eq_ignore_ascii_case("accept-encoding"))
            .count()
    }
}

/// Reads `response` to the end; the body must complete without an error.
pub async fn collect<B>(response: Response<B>) -> Collected
where
    B: Body,
    B::Error: std::fmt::Debug,
{
    let (parts, body) = response.into_parts();
    let collected = body.collect().await.expect("body completes");
    let trailers = collected.trailers().cloned();
    Collected {
        status: parts.status,
        version: parts.version,
        headers: parts.headers,
        body: collected.to_bytes(),
        trailers,
    }
}
