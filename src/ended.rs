//! The end of a body, spelled one way in both directions.

use std::task::Poll;

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Frame, SizeHint};

/// The end of a body, both directions: the trailers still to send, if any.
#[derive(Debug, Default)]
pub(crate) struct Ended {
    trailers: Option<HeaderMap>,
}

impl Ended {
    pub(crate) fn with_trailers(trailers: Option<HeaderMap>) -> Self {
        Ended { trailers }
    }

    /// The last frame: the trailers once, then the end.
    pub(crate) fn poll_frame<E>(&mut self) -> Poll<Option<Result<Frame<Bytes>, E>>> {
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    pub(crate) fn is_end_stream(&self) -> bool {
        self.trailers.is_none()
    }

    pub(crate) fn size_hint(&self) -> SizeHint {
        if self.trailers.is_none() {
            SizeHint::with_exact(0)
        } else {
            SizeHint::default()
        }
    }
}
