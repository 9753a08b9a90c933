//! Test bodies: fed by a channel, stuttering, all ready, made as polled, and a tap that
//! counts what passes.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

use crate::BoxError;

/// A body fed by a channel: frames arrive when the test sends them, and the body is
/// pending in between. Its size is unknown. Ends when the sender is dropped.
pub struct ChannelBody {
    rx: mpsc::UnboundedReceiver<Result<Frame<Bytes>, BoxError>>,
}

/// The sending side of a [`ChannelBody`].
#[derive(Clone)]
pub struct BodySender {
    tx: mpsc::UnboundedSender<Result<Frame<Bytes>, BoxError>>,
}

impl BodySender {
    pub fn data(&self, data: impl Into<Bytes>) {
        self.tx
            .send(Ok(Frame::data(data.into())))
            .expect("body receiver is alive");
    }

    pub fn trailers(&self, trailers: HeaderMap) {
        self.tx
            .send(Ok(Frame::trailers(trailers)))
            .expect("body receiver is alive");
    }

    pub fn error(&self, message: &str) {
        self.tx
            .send(Err(message.to_string().into()))
            .expect("body receiver is alive");
    }

    /// Whether the body (the receiver) was dropped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

pub fn channel_body() -> (BodySender, ChannelBody) {
    let (tx, rx) = mpsc::unbounded_channel();
    (BodySender { tx }, ChannelBody { rx })
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.rx.poll_recv(cx)
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// A body that yields its frames with a `Pending` (and a self-wake) before each one, so a
/// consumer sees it go pending between frames. Size unknown, unless [`sized`](Self::sized).
pub struct StutterBody {
    frames: VecDeque<Frame<Bytes>>,
    ready: bool,
    sized: bool,
}

impl StutterBody {
    pub fn new(frames: impl IntoIterator<Item = Frame<Bytes>>) -> Self {
        StutterBody {
            frames: frames.into_iter().collect(),
            ready: false,
            sized: false,
        }
    }

    /// Tells its exact remaining size, as a file's body does (`Content-Length` known).
    pub fn sized(mut self) -> Self {
        self.sized = true;
        self
    }

    pub fn data<I, D>(chunks: I) -> Self
    where
        I: IntoIterator<Item = D>,
        D: Into<Bytes>,
    {
        Self::new(chunks.into_iter().map(|d| Frame::data(d.into())))
    }
}

impl Body for StutterBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if !self.ready {
            self.ready = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.ready = false;
        Poll::Ready(self.frames.pop_front().map(Ok))
    }

    fn size_hint(&self) -> SizeHint {
        let data = self.frames.iter().filter_map(Frame::data_ref);
        match self.sized {
            true => SizeHint::with_exact(data.map(|d| d.len() as u64).sum()),
            false => SizeHint::default(),
        }
    }
}

/// A body of the given frames, all ready at once, size unknown (no exact hint and
/// `is_end_stream` only after the end).
pub struct ReadyFrames {
    frames: VecDeque<Result<Frame<Bytes>, BoxError>>,
}

impl ReadyFrames {
    pub fn new(frames: impl IntoIterator<Item = Result<Frame<Bytes>, BoxError>>) -> Self {
        ReadyFrames {
            frames: frames.into_iter().collect(),
        }
    }

    pub fn data<I, D>(chunks: I) -> Self
    where
        I: IntoIterator<Item = D>,
        D: Into<Bytes>,
    {
        Self::new(chunks.into_iter().map(|d| Ok(Frame::data(d.into()))))
    }
}

impl Body for ReadyFrames {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Poll::Ready(self.frames.pop_front())
    }
}

/// A producer with everything ready: `frames` frames of `size` bytes of JSON-like rows with
/// varied numbers (compressible, but not to nothing), each made when polled, so what a body
/// over it keeps of a chunk is counted where it is kept. Size unknown.
pub struct Rows {
    left: usize,
    size: usize,
}

impl Rows {
    pub fn new(frames: usize, size: usize) -> Self {
        Rows { left: frames, size }
    }
}

impl Body for Rows {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        self.left -= 1;
        let mut seed = self.left as u64 + 1;
        let mut chunk = Vec::with_capacity(self.size + 64);
        while chunk.len() < self.size {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            chunk.extend_from_slice(
                format!("{{\"id\":{},\"score\":{}}},", seed >> 40, seed % 9973).as_bytes(),
            );
        }
        chunk.truncate(self.size);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk)))))
    }
}

/// What a [`Tap`] saw: data bytes in total and the largest data frame.
#[derive(Debug, Default)]
pub struct Probe {
    pub total: AtomicU64,
    pub max_frame: AtomicUsize,
}

impl Probe {
    pub fn total(&self) -> usize {
        self.total.load(Ordering::SeqCst) as usize
    }

    pub fn max_frame(&self) -> usize {
        self.max_frame.load(Ordering::SeqCst)
    }

    /// Starts the count again from zero; returns the bytes counted so far.
    pub fn take_total(&self) -> usize {
        self.total.swap(0, Ordering::SeqCst) as usize
    }
}

/// A body that passes `inner`'s frames through unchanged (its size hint is not: unknown) and
/// records its data frames in a [`Probe`].
pub struct Tap<B> {
    inner: B,
    probe: Arc<Probe>,
}

impl<B> Tap<B> {
    pub fn new(inner: B, probe: Arc<Probe>) -> Self {
        Tap { inner, probe }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Tap<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let poll = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &poll {
            if let Some(data) = frame.data_ref() {
                let probe = &self.probe;
                probe.total.fetch_add(data.len() as u64, Ordering::SeqCst);
                probe.max_frame.fetch_max(data.len(), Ordering::SeqCst);
            }
        }
        poll
    }
}
