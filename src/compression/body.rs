use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::stats::CompressionStats;
use crate::BoxError;
use crate::codec::{Encoder, deflate_bound};

/// Most input bytes compressed in one poll. At level 6 on zlib-rs that is ~0.6 ms of work,
/// so a huge frame cannot hold an executor thread for tens of milliseconds.
pub(crate) const MAX_INPUT_PER_POLL: usize = 64 * 1024;

/// Input per encoder call. Feeding deflate 16 KiB at a time keeps input, output and the
/// codec's window in cache; one 64 KiB call measured ~10% slower in wall time for the same
/// instruction count.
const ENCODE_CHUNK: usize = 16 * 1024;

/// Output is reserved in blocks of at least this much, so a long stream emits frames split
/// from a few large allocations rather than one allocation per frame.
const OUTPUT_BLOCK: usize = 32 * 1024;

pin_project! {
    /// The response body of [`Compression`](super::Compression): the inner body as it was,
    /// or compressed.
    pub struct CompressionBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B> {
        // Passed through untouched; keeps the inner size hint.
        Identity { #[pin] inner: B },
        // Fully known: a one-shot compressed body, a small body read ahead and kept
        // identity, or a 406 message. Ends with trailers or an error if the inner body did.
        Ready {
            data: Option<Bytes>,
            trailers: Option<HeaderMap>,
            error: Option<BoxError>,
        },
        // Streaming compression.
        Encoding { state: Encoding<B> },
    }
}

impl<B> CompressionBody<B> {
    /// The inner body, unchanged.
    pub(crate) fn identity(inner: B) -> Self {
        CompressionBody {
            kind: Kind::Identity { inner },
        }
    }

    /// A body whose frames are all known.
    pub(crate) fn ready(data: Bytes, trailers: Option<HeaderMap>, error: Option<BoxError>) -> Self {
        CompressionBody {
            kind: Kind::Ready {
                data: (!data.is_empty()).then_some(data),
                trailers,
                error,
            },
        }
    }

    /// Streams `inner` through `encoder`, starting with `queued` (input read ahead).
    pub(crate) fn encoding(
        inner: Pin<Box<B>>,
        encoder: Encoder,
        queued: Chunks,
        stats: CompressionStats,
    ) -> Self {
        CompressionBody {
            kind: Kind::Encoding {
                state: Encoding {
                    inner: Some(inner),
                    encoder: Some(encoder),
                    queued,
                    current: Bytes::new(),
                    out: BytesMut::new(),
                    unflushed: false,
                    trailers: None,
                    done: false,
                    bytes_in: 0,
                    bytes_out: 0,
                    stats,
                },
            },
        }
    }

    /// Compresses `inner` as it streams (for callers outside the response path, such as
    /// request compression), counting into a private stats handle.
    pub(crate) fn encode(inner: B, encoder: Encoder) -> Self {
        Self::encoding(
            Box::pin(inner),
            encoder,
            Chunks::default(),
            CompressionStats::new(),
        )
    }
}

impl<B> Body for CompressionBody<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.project().kind.project() {
            KindProj::Identity { inner } => match inner.poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => Poll::Ready(Some(Ok(
                    frame.map_data(|mut data| data.copy_to_bytes(data.remaining()))
                ))),
                Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
            KindProj::Ready {
                data,
                trailers,
                error,
            } => Poll::Ready(if let Some(data) = data.take() {
                Some(Ok(Frame::data(data)))
            } else if let Some(trailers) = trailers.take() {
                Some(Ok(Frame::trailers(trailers)))
            } else {
                error.take().map(Err)
            }),
            KindProj::Encoding { state } => state.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Identity { inner } => inner.is_end_stream(),
            Kind::Ready {
                data,
                trailers,
                error,
            } => data.is_none() && trailers.is_none() && error.is_none(),
            Kind::Encoding { state } => state.done && state.trailers.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Identity { inner } => inner.size_hint(),
            // Exact, so that hyper sends Content-Length instead of chunked encoding; but not
            // with trailers, which HTTP/1.1 can only send with chunked encoding.
            Kind::Ready { data, trailers, .. } => {
                let len = data.as_ref().map_or(0, |d| d.len() as u64);
                if trailers.is_some() {
                    let mut hint = SizeHint::new();
                    hint.set_lower(len);
                    hint
                } else {
                    SizeHint::with_exact(len)
                }
            }
            Kind::Encoding { .. } => SizeHint::default(),
        }
    }
}

/// Input read ahead of compression, in order. Usually one chunk (a `Full` body), so the
/// first is kept inline and the queue allocates only for bodies of several ready frames.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    first: Bytes,
    rest: VecDeque<Bytes>,
    len: usize,
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

    fn pop(&mut self) -> Option<Bytes> {
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

/// Streaming compression of an inner body.
pub(crate) struct Encoding<B> {
    /// `None` once the inner body has ended or failed: it is dropped as early as possible.
    inner: Option<Pin<Box<B>>>,
    /// `None` once finished or failed: the state goes back to the pool at once.
    encoder: Option<Encoder>,
    queued: Chunks,
    current: Bytes,
    out: BytesMut,
    /// Input was encoded since the last flush.
    unflushed: bool,
    trailers: Option<HeaderMap>,
    done: bool,
    bytes_in: u64,
    bytes_out: u64,
    stats: CompressionStats,
}

impl<B> Encoding<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.done {
            return Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))));
        }
        let mut budget = MAX_INPUT_PER_POLL;
        loop {
            if let Err(e) = self.encode_queued(&mut budget) {
                return self.fail(e);
            }
            if budget == 0 {
                // This poll's slice is used up: hand over what is ready, or yield.
                if !self.out.is_empty() {
                    return Poll::Ready(Some(Ok(self.emit())));
                }
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let Some(inner) = self.inner.as_mut() else {
                return self.finish();
            };
            match inner.as_mut().poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(mut data) => self.current = data.copy_to_bytes(data.remaining()),
                    Err(frame) => {
                        if let Ok(trailers) = frame.into_trailers() {
                            self.trailers = Some(trailers);
                            return self.finish();
                        }
                        // An unknown kind of frame carries nothing to compress.
                    }
                },
                Poll::Ready(Some(Err(e))) => return self.fail(e.into()),
                Poll::Ready(None) => return self.finish(),
                Poll::Pending => {
                    // The producer has nothing more for now: make what we have decodable.
                    if self.unflushed {
                        self.unflushed = false;
                        let encoder = self.encoder.as_mut().expect("present until done");
                        if let Err(e) = encoder.flush(&mut self.out) {
                            return self.fail(e.into());
                        }
                    }
                    if !self.out.is_empty() {
                        return Poll::Ready(Some(Ok(self.emit())));
                    }
                    return Poll::Pending;
                }
            }
        }
    }

    /// Compresses queued input until it runs out or `budget` does.
    fn encode_queued(&mut self, budget: &mut usize) -> Result<(), BoxError> {
        while *budget > 0 {
            if self.current.is_empty() {
                match self.queued.pop() {
                    Some(next) => self.current = next,
                    None => return Ok(()),
                }
            }
            let n = self.current.len().min(*budget).min(ENCODE_CHUNK);
            let room = deflate_bound(n);
            if self.out.capacity() - self.out.len() < room {
                self.out.reserve(room.max(OUTPUT_BLOCK));
            }
            let encoder = self.encoder.as_mut().expect("present until done");
            encoder.encode(&self.current[..n], &mut self.out)?;
            self.current.advance(n);
            self.bytes_in += n as u64;
            self.unflushed = true;
            *budget -= n;
        }
        Ok(())
    }

    fn emit(&mut self) -> Frame<Bytes> {
        self.bytes_out += self.out.len() as u64;
        Frame::data(self.out.split().freeze())
    }

    fn finish(&mut self) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.inner = None;
        // Taking the encoder returns its state to the pool as soon as the stream is done.
        if let Some(mut encoder) = self.encoder.take() {
            if let Err(e) = encoder.finish(&mut self.out) {
                return self.fail(e.into());
            }
        }
        self.done = true;
        Poll::Ready(Some(Ok(self.emit())))
    }

    fn fail(&mut self, error: BoxError) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        // The pool resets the interrupted state before anyone else gets it.
        self.encoder = None;
        self.inner = None;
        self.trailers = None;
        self.done = true;
        Poll::Ready(Some(Err(error)))
    }
}

impl<B> Drop for Encoding<B> {
    fn drop(&mut self) {
        self.stats.record_bytes(self.bytes_in, self.bytes_out);
    }
}
