//! Reading ahead what a response body has ready, before its headers are fixed.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Buf;
use http::HeaderMap;
use http_body::Body;

use crate::BoxError;
use crate::buf::Chunks;

/// What [`read_ahead`] found.
pub(super) struct ReadAhead {
    pub(super) chunks: Chunks,
    pub(super) end: End,
}

pub(super) enum End {
    /// The body may have more: it went pending, or holds more than one poll's slice.
    Open,
    /// The body ended, with these trailers if any.
    Complete(Option<HeaderMap>),
    Failed(BoxError),
}

/// Reads the frames `body` has ready now, until it ends, goes pending, or holds more than
/// `limit` bytes (one poll's slice,
/// [`MAX_INPUT_PER_POLL`](crate::compression::body::MAX_INPUT_PER_POLL), unless a cache may serve a
/// body known in full). A body of exactly that size whose end is ready counts as complete.
pub(super) fn read_ahead<B>(mut body: Pin<&mut B>, cx: &mut Context<'_>, limit: usize) -> ReadAhead
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut chunks = Chunks::default();
    let end = loop {
        if chunks.len() > limit {
            break End::Open;
        }
        // A body that says it is done has no more frames: no need to poll for its end.
        if chunks.len() > 0 && body.is_end_stream() {
            break End::Complete(None);
        }
        match body.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(mut data) => chunks.push(data.copy_to_bytes(data.remaining())),
                Err(frame) => {
                    if let Ok(trailers) = frame.into_trailers() {
                        break End::Complete(Some(trailers));
                    }
                }
            },
            Poll::Ready(Some(Err(e))) => break End::Failed(e.into()),
            Poll::Ready(None) => break End::Complete(None),
            Poll::Pending => break End::Open,
        }
    };
    ReadAhead { chunks, end }
}
