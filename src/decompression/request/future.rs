use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use pin_project_lite::pin_project;

use super::RequestDecompressionResponseBody;
use crate::CodingSet;
use crate::decompression::coding::MAX_CODINGS;
use crate::decompression::coding::accept_encoding;
use crate::decompression::limits::{TripReport, Tripped};

/// Why a request was refused before reaching the inner service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rejection {
    /// A coding that is unknown or disabled.
    Unsupported,
    /// More than [`MAX_CODINGS`] codings.
    TooMany,
}

pin_project! {
    /// The response future of [`RequestDecompression`](super::RequestDecompression): the inner
    /// service's future, or a ready `415 Unsupported Media Type`.
    pub struct RequestDecompressionFuture<F> {
        #[pin]
        kind: Answer<F>,
    }
}

pin_project! {
    #[project = AnswerProj]
    enum Answer<F> {
        Inner { #[pin] future: F, report: Option<TripReport> },
        Rejected { rejection: Rejection, accept: CodingSet },
    }
}

impl<F> RequestDecompressionFuture<F> {
    /// The inner service's answer; a 413 given when `report` says a decoding limit tripped
    /// names that limit.
    pub(super) fn inner(future: F, report: Option<TripReport>) -> Self {
        RequestDecompressionFuture {
            kind: Answer::Inner { future, report },
        }
    }

    pub(super) fn rejected(rejection: Rejection, accept: CodingSet) -> Self {
        RequestDecompressionFuture {
            kind: Answer::Rejected { rejection, accept },
        }
    }
}

impl<F> fmt::Debug for RequestDecompressionFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Answer::Inner { .. } => "inner",
            Answer::Rejected { .. } => "rejected",
        };
        f.debug_struct("RequestDecompressionFuture")
            .field("kind", &kind)
            .finish()
    }
}

impl<F, B, E> Future for RequestDecompressionFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<RequestDecompressionResponseBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            AnswerProj::Inner { future, report } => {
                let response = ready!(future.poll(cx))?;
                let tripped = report.as_ref().and_then(|report| report.get().copied());
                Poll::Ready(Ok(match tripped {
                    Some(tripped) if response.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                        payload_too_large(response, tripped)
                    }
                    _ => response.map(RequestDecompressionResponseBody::inner),
                }))
            }
            AnswerProj::Rejected { rejection, accept } => {
                Poll::Ready(Ok(unsupported_media_type(*rejection, *accept)))
            }
        }
    }
}

/// The inner service's 413 (an extractor that read the decoded body into a limit), its body
/// naming the limit: an extractor's own text cannot, as it sees only a length limit error.
fn payload_too_large<B>(
    response: Response<B>,
    tripped: Tripped,
) -> Response<RequestDecompressionResponseBody<B>> {
    let (mut parts, _) = response.into_parts();
    let text = format!("Payload Too Large: {tripped}\n");
    parts.headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    parts
        .headers
        .insert(CONTENT_LENGTH, HeaderValue::from(text.len()));
    let body = RequestDecompressionResponseBody::text(Bytes::from(text));
    Response::from_parts(parts, body)
}

fn unsupported_media_type<B>(
    rejection: Rejection,
    accept: CodingSet,
) -> Response<RequestDecompressionResponseBody<B>> {
    let text: &'static str = match rejection {
        Rejection::Unsupported => "Unsupported Content-Encoding\n",
        Rejection::TooMany => TOO_MANY,
    };
    let text = Bytes::from_static(text.as_bytes());
    let mut response = Response::new(RequestDecompressionResponseBody::text(text));
    *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        ACCEPT_ENCODING,
        accept_encoding(accept).unwrap_or_else(|| HeaderValue::from_static("identity")),
    );
    response
}

/// The body for an overlong coding chain; it names the limit.
const TOO_MANY: &str = "Too many content codings: at most 3 are decoded\n";
const _: () = assert!(MAX_CODINGS == 3, "TOO_MANY names the limit");
