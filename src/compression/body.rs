use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::stats::CompressionStats;
use crate::BoxError;
use crate::codec::{Encoder, Format};
use crate::ended::Ended;

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
                    format: encoder.format(),
                    phase: Phase::Running {
                        inner,
                        encoder: encoder.keep_history(),
                        unflushed: false,
                    },
                    queued,
                    current: Bytes::new(),
                    out: BytesMut::new(),
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
            Kind::Encoding { state } => match &state.phase {
                Phase::Ended(ended) => ended.is_end_stream(),
                Phase::Running { .. } => false,
            },
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
    phase: Phase<B>,
    queued: Chunks,
    current: Bytes,
    out: BytesMut,
    stats: CompressionStats,
    format: Format,
    bytes_in: u64,
    bytes_out: u64,
}

/// Where the stream is. Each phase holds what only it needs, so "an encoder after the end"
/// cannot be written.
enum Phase<B> {
    /// Reading and compressing. `unflushed`: input was encoded since the last flush.
    Running {
        inner: Pin<Box<B>>,
        encoder: Encoder,
        unflushed: bool,
    },
    /// The stream is complete (or failed): the encoder is back in the pool and the inner
    /// body dropped.
    Ended(Ended),
}

/// What the inner body gave.
enum Input {
    Data,
    End(Option<HeaderMap>),
    Failed(BoxError),
    Pending,
}

impl<B> Encoding<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let Phase::Running {
            inner,
            encoder,
            unflushed,
        } = &mut self.phase
        else {
            let Phase::Ended(ended) = &mut self.phase else {
                unreachable!()
            };
            return ended.poll_frame();
        };
        let mut budget = MAX_INPUT_PER_POLL;
        loop {
            let before = budget;
            if let Err(e) = encode_queued(
                encoder,
                &mut self.queued,
                &mut self.current,
                &mut self.out,
                &mut budget,
            ) {
                return self.fail(e);
            }
            if budget < before {
                *unflushed = true;
                self.bytes_in += (before - budget) as u64;
            }
            if budget == 0 {
                // This poll's slice is used up. The peer may take its time before the next
                // poll (a slow reader, a full socket, a busy runtime): when many streams
                // hold states, give this one back now rather than pin it until then.
                if encoder.releases_between_slices() {
                    if let Err(e) = encoder.idle(&mut self.out) {
                        return self.fail(e.into());
                    }
                    *unflushed = false;
                }
                // Hand over what is ready, unless it is only the header (sent with the first
                // compressed bytes), or yield.
                if !self.out.is_empty() && encoder.has_payload() {
                    return Poll::Ready(Some(Ok(self.emit())));
                }
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let input = match inner.as_mut().poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(mut data) => {
                        self.current = data.copy_to_bytes(data.remaining());
                        Input::Data
                    }
                    // Trailers end the body; an unknown kind of frame carries nothing.
                    Err(frame) => match frame.into_trailers() {
                        Ok(trailers) => Input::End(Some(trailers)),
                        Err(_) => Input::Data,
                    },
                },
                Poll::Ready(Some(Err(e))) => Input::Failed(e.into()),
                Poll::Ready(None) => Input::End(None),
                Poll::Pending => Input::Pending,
            };
            match input {
                Input::Data => {}
                Input::End(trailers) => return self.finish(trailers),
                Input::Failed(e) => return self.fail(e),
                Input::Pending => {
                    // The producer has nothing more for now: make what we have decodable,
                    // and give the codec state back to the pool while we wait.
                    if std::mem::take(unflushed) || encoder.holds_state() {
                        if let Err(e) = encoder.idle(&mut self.out) {
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

    fn emit(&mut self) -> Frame<Bytes> {
        self.bytes_out += self.out.len() as u64;
        Frame::data(self.out.split().freeze())
    }

    fn finish(
        &mut self,
        trailers: Option<HeaderMap>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        // Ending the phase drops the inner body and returns the encoder's state to the pool.
        let Phase::Running { mut encoder, .. } = std::mem::replace(
            &mut self.phase,
            Phase::Ended(Ended::with_trailers(trailers)),
        ) else {
            return Poll::Ready(None);
        };
        if let Err(e) = encoder.finish(&mut self.out) {
            return self.fail(e.into());
        }
        Poll::Ready(Some(Ok(self.emit())))
    }

    fn fail(&mut self, error: BoxError) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        // The pool resets the interrupted state before anyone else gets it.
        self.phase = Phase::Ended(Ended::default());
        Poll::Ready(Some(Err(error)))
    }
}

/// Compresses queued input until it runs out or `budget` does.
fn encode_queued(
    encoder: &mut Encoder,
    queued: &mut Chunks,
    current: &mut Bytes,
    out: &mut BytesMut,
    budget: &mut usize,
) -> Result<(), BoxError> {
    while *budget > 0 {
        if current.is_empty() {
            match queued.pop() {
                Some(next) => *current = next,
                None => return Ok(()),
            }
        }
        let n = current.len().min(*budget).min(ENCODE_CHUNK);
        let room = n + n / 8 + 64;
        if out.capacity() - out.len() < room {
            out.reserve(room.max(OUTPUT_BLOCK));
        }
        encoder.encode(&current[..n], out)?;
        current.advance(n);
        *budget -= n;
    }
    Ok(())
}

impl<B> Drop for Encoding<B> {
    fn drop(&mut self) {
        self.stats
            .record_bytes(self.format, self.bytes_in, self.bytes_out);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::convert::Infallible;

    use super::*;
    use crate::CodecPool;
    use crate::codec::{CompressionLevel, Decoder};

    /// A body that yields its queued chunks, then `Pending` until more are pushed through
    /// the shared handle.
    #[derive(Clone, Default)]
    struct Trickle(std::sync::Arc<std::sync::Mutex<(VecDeque<Bytes>, bool)>>);

    impl Trickle {
        fn push(&self, chunk: Bytes) {
            self.0.lock().unwrap().0.push_back(chunk);
        }

        fn end(&self) {
            self.0.lock().unwrap().1 = true;
        }
    }

    impl Body for Trickle {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            let mut state = self.0.lock().unwrap();
            match state.0.pop_front() {
                Some(chunk) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
                None if state.1 => Poll::Ready(None),
                None => Poll::Pending,
            }
        }
    }

    /// Polls until `Pending` or the end; returns the bytes emitted.
    fn drain(body: &mut Pin<Box<CompressionBody<Trickle>>>) -> Vec<u8> {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut out = Vec::new();
        while let Poll::Ready(Some(frame)) = body.as_mut().poll_frame(&mut cx) {
            if let Ok(data) = frame.unwrap().into_data() {
                out.extend_from_slice(&data);
            }
        }
        out
    }

    fn decode_prefix(format: Format, wire: &[u8]) -> Vec<u8> {
        let pool = CodecPool::new();
        let mut decoder = Decoder::new(format, &pool);
        let mut out = BytesMut::new();
        let mut input = wire;
        while !input.is_empty() || decoder.has_pending_output() {
            let n = decoder.decode(input, &mut out, usize::MAX).unwrap();
            input = &input[n..];
        }
        out.to_vec()
    }

    /// An idle stream (producer `Pending`) holds no codec state, whatever the coding allows
    /// to give back, and everything sent so far decodes.
    #[test]
    fn idle_streams_hold_no_codec_state() {
        let events: Vec<Bytes> = (0..6)
            .map(|i| {
                Bytes::from(format!(
                    "event: tick\ndata: {{\"n\":{i},\"msg\":\"hello hello hello\"}}\n\n"
                ))
            })
            .collect();
        // Every coding but br, which cannot restart a stream and keeps its state.
        let formats = Format::ALL.iter().copied().filter(|&f| !is_br(f));
        for format in formats {
            let pool = CodecPool::new();
            let encoder = Encoder::new(format, CompressionLevel::Default, &pool);
            let producer = Trickle::default();
            let mut body = Box::pin(CompressionBody::encode(producer.clone(), encoder));
            let mut wire = Vec::new();
            let mut plain = Vec::new();
            for event in &events {
                producer.push(event.clone());
                plain.extend_from_slice(event);
                wire.extend(drain(&mut body));
                let stats = pool.stats();
                assert_eq!(stats.in_use(), 0, "{format:?} idle: {stats:?}");
                assert_eq!(decode_prefix(format, &wire), plain, "{format:?}");
            }
            producer.end();
            wire.extend(drain(&mut body));
            assert!(body.is_end_stream());
            let pool = CodecPool::new();
            let mut decoder = Decoder::new(format, &pool);
            let mut out = BytesMut::new();
            let n = decoder.decode(&wire, &mut out, usize::MAX).unwrap();
            assert_eq!(n, wire.len());
            decoder.finish().unwrap();
            assert_eq!(&out[..], &plain[..], "{format:?}");
        }
    }

    fn is_br(format: Format) -> bool {
        format.as_str() == "br"
    }

    /// A producer with everything ready: `chunks` frames of `size` bytes of text.
    struct Ready {
        left: usize,
        size: usize,
    }

    impl Body for Ready {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            if self.left == 0 {
                return Poll::Ready(None);
            }
            self.left -= 1;
            // JSON-like rows with varied numbers: compressible, but not to nothing.
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

    /// In a crowded pool (more streams than its hold limit; here the limit is 0), a slow
    /// reader takes one frame and stalls: what the body pins meanwhile is bounded by the
    /// history it keeps (32 KiB) and its output block, not a codec state (~190 KB for
    /// zlib-rs at level 6). Counted with a per-thread allocation counter, not RSS.
    #[test]
    fn a_stalled_reader_pins_no_codec_state_in_a_crowded_pool() {
        for format in [Format::Gzip, Format::Deflate] {
            // No idle shelf: a state given back is freed, so live bytes show what is held.
            let pool = CodecPool::builder().max_idle(0).hold_limit(0).build();
            let before = live::bytes();
            let encoder = Encoder::new(format, CompressionLevel::Default, &pool);
            let mut body = Box::pin(CompressionBody::encode(
                Ready {
                    left: 64,
                    size: 16 * 1024,
                },
                encoder,
            ));
            let waker = std::task::Waker::noop();
            let mut cx = Context::from_waker(waker);
            let frame = loop {
                match body.as_mut().poll_frame(&mut cx) {
                    Poll::Ready(Some(Ok(frame))) => break frame,
                    Poll::Pending => continue,
                    other => panic!("{format:?}: {:?}", other.map(|f| f.map(|r| r.is_ok()))),
                }
            };
            let first = frame.into_data().unwrap_or_default();
            assert!(!first.is_empty());
            let pinned = live::bytes() - before;
            assert_eq!(pool.stats().in_use(), 0, "{format:?}");
            assert!(
                pinned < 128 * 1024,
                "{format:?}: a stalled reader pins {pinned} bytes"
            );
            // Reading on still yields one valid stream.
            let mut wire = first.to_vec();
            loop {
                match body.as_mut().poll_frame(&mut cx) {
                    Poll::Ready(Some(frame)) => {
                        if let Ok(data) = frame.unwrap().into_data() {
                            wire.extend_from_slice(&data);
                        }
                    }
                    Poll::Ready(None) => break,
                    Poll::Pending => {}
                }
            }
            assert!(body.is_end_stream());
            let mut decoder = Decoder::new(format, &CodecPool::new());
            let mut plain = BytesMut::new();
            let n = decoder.decode(&wire, &mut plain, usize::MAX).unwrap();
            assert_eq!(n, wire.len());
            decoder.finish().unwrap();
            assert_eq!(plain.len(), 64 * 16 * 1024);
        }
    }

    /// Under the hold limit a stream keeps its state between slices: no full flush, no
    /// priming, the speed of one uninterrupted stream. The output is one deflate stream as
    /// flate2 writes it when fed the same pieces.
    #[test]
    fn under_the_hold_limit_a_stream_keeps_its_state() {
        let pool = CodecPool::builder().hold_limit(1).build();
        let encoder = Encoder::new(Format::Gzip, CompressionLevel::Default, &pool);
        let mut body = Box::pin(CompressionBody::encode(
            Ready {
                left: 16,
                size: 16 * 1024,
            },
            encoder,
        ));
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut wire = Vec::new();
        let mut slices = 0;
        loop {
            match body.as_mut().poll_frame(&mut cx) {
                Poll::Ready(Some(frame)) => {
                    if let Ok(data) = frame.unwrap().into_data() {
                        wire.extend_from_slice(&data);
                    }
                }
                Poll::Ready(None) => break,
                Poll::Pending => {}
            }
            slices += 1;
            if !body.is_end_stream() {
                assert_eq!(pool.stats().compressors.in_use(), 1, "slice {slices}");
            }
        }
        assert!(slices > 4, "{slices} polls for 256 KiB");
        assert_eq!(pool.stats().compressors.created, 1);
        let mut decoder = Decoder::new(Format::Gzip, &CodecPool::new());
        let mut plain = BytesMut::new();
        let n = decoder.decode(&wire, &mut plain, usize::MAX).unwrap();
        assert_eq!(n, wire.len());
        decoder.finish().unwrap();
        assert_eq!(plain.len(), 16 * 16 * 1024);
        // No full flush anywhere: a full flush writes an empty stored block (00 00 ff ff).
        assert!(
            !wire.windows(4).any(|w| w == [0, 0, 0xff, 0xff]),
            "a slice end flushed"
        );
    }

    /// Live heap bytes allocated and not freed by this thread.
    mod live {
        use std::alloc::{GlobalAlloc, Layout, System};
        use std::cell::Cell;

        thread_local! {
            static LIVE: Cell<isize> = const { Cell::new(0) };
        }

        pub(super) fn bytes() -> isize {
            LIVE.with(Cell::get)
        }

        fn add(n: isize) {
            // `try_with`: the counter may be gone while a thread shuts down.
            let _ = LIVE.try_with(|live| live.set(live.get() + n));
        }

        struct Counting;

        // SAFETY: every call is forwarded to `System` with the same arguments; the counter
        // neither allocates nor panics. A realloc counts as a free of the old size and an
        // allocation of the new one.
        #[allow(unsafe_code)]
        unsafe impl GlobalAlloc for Counting {
            unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
                add(layout.size() as isize);
                unsafe { System.alloc(layout) }
            }

            unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
                add(layout.size() as isize);
                unsafe { System.alloc_zeroed(layout) }
            }

            unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
                add(new_size as isize - layout.size() as isize);
                unsafe { System.realloc(ptr, layout, new_size) }
            }

            unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
                add(-(layout.size() as isize));
                unsafe { System.dealloc(ptr, layout) }
            }
        }

        #[global_allocator]
        static GLOBAL: Counting = Counting;
    }
}
