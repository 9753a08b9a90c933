//! Input buffers the bodies read from.

use std::pin::Pin;
use std::task::{Context, Poll};

use std::collections::VecDeque;

use bytes::{Buf, Bytes, BytesMut};
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

/// What a `Body` of `Bytes` frames answers a poll with.
pub(crate) type PolledFrame<E> = Poll<Option<Result<Frame<Bytes>, E>>>;

/// The next frame of `body` as it is, its data as `Bytes`: how every body here passes an
/// inner body through (`copy_to_bytes` on data that is `Bytes` already is a cheap split).
pub(crate) fn poll_bytes<B: Body>(
    body: Pin<&mut B>,
    cx: &mut Context<'_>,
) -> PolledFrame<B::Error> {
    body.poll_frame(cx).map(|frame| {
        frame.map(|frame| frame.map(|f| f.map_data(|mut d| d.copy_to_bytes(d.remaining()))))
    })
}

/// Input read ahead, in order. Usually one chunk (a `Full` body), so the
/// first is kept inline and the queue allocates only for bodies of several ready frames.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    first: Bytes,
    rest: VecDeque<Bytes>,
    len: usize,
}

impl From<Bytes> for Chunks {
    fn from(chunk: Bytes) -> Self {
        let mut chunks = Chunks::default();
        chunks.push(chunk);
        chunks
    }
}

impl Chunks {
    pub(crate) fn push(&mut self, chunk: Bytes) {
        if chunk.is_empty() {
            return;
        }
        self.len += chunk.len();
        if self.first.is_empty() && self.rest.is_empty() {
            self.first = chunk;
        } else {
            self.rest.push_back(chunk);
        }
    }

    /// Bytes queued.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn pop(&mut self) -> Option<Bytes> {
        let chunk = if self.first.is_empty() {
            self.rest.pop_front()?
        } else {
            std::mem::take(&mut self.first)
        };
        self.len -= chunk.len();
        Some(chunk)
    }

    /// All the bytes as one buffer: the chunk itself when there is one.
    pub(crate) fn concat(mut self) -> Bytes {
        if self.rest.is_empty() {
            return self.first;
        }
        let mut all = BytesMut::with_capacity(self.len);
        while let Some(chunk) = self.pop() {
            all.extend_from_slice(&chunk);
        }
        all.freeze()
    }
}
