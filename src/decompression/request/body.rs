use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use crate::buf::{PolledFrame, poll_bytes};

pin_project! {
    /// The response body of [`RequestDecompression`](super::RequestDecompression): the inner
    /// service's body, or the short text of a 415 rejection or of a 413 naming its limit.
    ///
    /// Data frames are [`Bytes`] (taken from the inner body's buffers without copying when
    /// they already are `Bytes`); errors are the inner body's own, unboxed.
    pub struct RequestDecompressionResponseBody<B> {
        #[pin]
        kind: Source<B>,
    }
}

pin_project! {
    #[project = SourceProj]
    enum Source<B> {
        Inner { #[pin] body: B },
        Rejection { text: Option<Bytes> },
    }
}

impl<B> RequestDecompressionResponseBody<B> {
    pub(super) fn inner(body: B) -> Self {
        RequestDecompressionResponseBody {
            kind: Source::Inner { body },
        }
    }

    /// A short text of the layer's own: a 415 rejection, or a 413 naming its limit.
    pub(super) fn text(text: Bytes) -> Self {
        RequestDecompressionResponseBody {
            kind: Source::Rejection { text: Some(text) },
        }
    }
}

impl<B> std::fmt::Debug for RequestDecompressionResponseBody<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            Source::Inner { .. } => "inner",
            Source::Rejection { .. } => "rejection",
        };
        f.debug_struct("RequestDecompressionResponseBody")
            .field("kind", &kind)
            .finish()
    }
}

impl<B: Body> Body for RequestDecompressionResponseBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> PolledFrame<B::Error> {
        match self.project().kind.project() {
            SourceProj::Inner { body } => poll_bytes(body, cx),
            SourceProj::Rejection { text } => {
                Poll::Ready(text.take().map(|text| Ok(Frame::data(text))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Source::Inner { body } => body.is_end_stream(),
            Source::Rejection { text } => text.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Source::Inner { body } => body.size_hint(),
            Source::Rejection { text } => {
                SizeHint::with_exact(text.as_ref().map_or(0, |t| t.len() as u64))
            }
        }
    }
}
