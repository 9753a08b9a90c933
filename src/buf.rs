//! Input buffers the bodies read from.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame};

/// Advances `input` past `n` bytes it has been used for, and lets the buffer behind it go
/// once all of it is: an empty view still holds its whole allocation (a producer's chunk,
/// or part of hyper's read buffer), which a body waiting for more input would pin.
pub(crate) fn consume(input: &mut Bytes, n: usize) {
    input.advance(n);
    if input.is_empty() {
        *input = Bytes::new();
    }
}

/// The next frame of `body` as it is, its data as `Bytes`: how every body here passes an
/// inner body through (`copy_to_bytes` on data that is `Bytes` already is a cheap split).
pub(crate) fn poll_bytes<B: Body>(
    body: Pin<&mut B>,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
    body.poll_frame(cx).map(|frame| {
        frame.map(|frame| frame.map(|f| f.map_data(|mut d| d.copy_to_bytes(d.remaining()))))
    })
}
