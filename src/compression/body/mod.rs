use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::governor::Timed;
use super::report::{self, account};
use super::stats::CompressionStats;
use crate::BoxError;
use crate::buf::{Chunks, poll_bytes};
use crate::cache::Recorder;
use crate::codec::Encoder;
use crate::ended::Ended;
use crate::pool::{CodecPool, YieldSlot};
use crate::telemetry::ResponseTally;
use tower_gzip_codecs::SliceEnd;

/// Input bytes compressed in one poll before the body yields, so a huge frame cannot hold
/// an executor thread for long. A poll may go on to twice this to finish the input in hand.
pub(crate) const MAX_INPUT_PER_POLL: usize = 64 * 1024;

/// Input per encoder call. Feeding deflate in pieces this size keeps input, output and the
/// codec's window in cache: one call per slice was slower in wall time for the same
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
        shape: Shape<B>,
    }
}

pin_project! {
    #[project = ShapeProj]
    enum Shape<B> {
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
        Streaming { state: Streaming<B> },
    }
}

impl<B> CompressionBody<B> {
    /// The inner body, unchanged.
    pub(crate) fn identity(inner: B) -> Self {
        CompressionBody {
            shape: Shape::Identity { inner },
        }
    }

    /// A body whose frames are all known.
    pub(crate) fn ready(data: Bytes, trailers: Option<HeaderMap>, error: Option<BoxError>) -> Self {
        CompressionBody {
            shape: Shape::Ready {
                data: (!data.is_empty()).then_some(data),
                trailers,
                error,
            },
        }
    }

    /// Streams `inner` through `encoder`, starting with `queued` (input read ahead); a
    /// response's stream is told to `stats` when it ends (see [`report::finished`]).
    /// `pool`'s yield slots bound the streams that yield with a large body in hand.
    pub(crate) fn encoding(
        inner: Pin<Box<B>>,
        encoder: Encoder,
        queued: Chunks,
        stats: Option<(CompressionStats, ResponseTally)>,
        timed: Option<Timed>,
        pool: &CodecPool,
    ) -> Self {
        let (stats, tally) = match stats {
            Some((stats, tally)) => (Some(stats), tally),
            None => (None, ResponseTally::new(encoder.coding(), 0, false)),
        };
        CompressionBody {
            shape: Shape::Streaming {
                state: Streaming {
                    phase: StreamPhase::Running(Running {
                        inner,
                        encoder: encoder.for_stream(),
                        unflushed: false,
                    }),
                    queued,
                    current: Bytes::new(),
                    out: BytesMut::new(),
                    yield_first: false,
                    pace: Pace::Free,
                    pool: pool.clone(),
                    tally,
                    stats,
                    timed,
                    complete: false,
                    record: None,
                },
            },
        }
    }

    /// Records what a streaming body sends for the cache, which files it once complete.
    pub(crate) fn recorded(mut self, record: Option<Recorder>) -> Self {
        if let Shape::Streaming { state } = &mut self.shape {
            state.record = record;
        }
        self
    }

    /// Compresses `inner` as it streams, for callers outside the response path (request
    /// compression): nothing is counted nor told.
    pub(crate) fn encode(inner: B, encoder: Encoder, pool: &CodecPool) -> Self {
        Self::encoding(
            Box::pin(inner),
            encoder,
            Chunks::default(),
            None,
            None,
            pool,
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
        match self.project().shape.project() {
            ShapeProj::Identity { inner } => poll_bytes(inner, cx).map_err(Into::into),
            ShapeProj::Ready {
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
            ShapeProj::Streaming { state } => state.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.shape {
            Shape::Identity { inner } => inner.is_end_stream(),
            Shape::Ready {
                data,
                trailers,
                error,
            } => data.is_none() && trailers.is_none() && error.is_none(),
            Shape::Streaming { state } => match &state.phase {
                StreamPhase::Ended(ended) => ended.is_end_stream(),
                StreamPhase::Running(_) => false,
            },
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.shape {
            Shape::Identity { inner } => inner.size_hint(),
            // Exact, so that hyper sends Content-Length instead of chunked encoding; but not
            // with trailers, which HTTP/1.1 can only send with chunked encoding.
            Shape::Ready { data, trailers, .. } => {
                let len = data.as_ref().map_or(0, |d| d.len() as u64);
                if trailers.is_some() {
                    let mut hint = SizeHint::new();
                    hint.set_lower(len);
                    hint
                } else {
                    SizeHint::with_exact(len)
                }
            }
            Shape::Streaming { .. } => SizeHint::default(),
        }
    }
}

/// Streaming compression of an inner body.
pub(crate) struct Streaming<B> {
    phase: StreamPhase<B>,
    queued: Chunks,
    current: Bytes,
    out: BytesMut,
    /// A full slice was just handed over: let other tasks run before the next one.
    yield_first: bool,
    /// Whether the stream yields between slices while a large body is in hand.
    pace: Pace,
    /// The pool whose yield slots bound those that do.
    pool: CodecPool,
    /// Bytes in and out, and the time spent compressing when it is measured.
    tally: ResponseTally,
    /// Where the tally goes when the stream ends; `None` outside the response path.
    stats: Option<CompressionStats>,
    /// The stream reached its end (rather than failing or being dropped first).
    complete: bool,
    /// Under a governor: what compressing this stream costs.
    timed: Option<Timed>,
    /// For the cache: what was sent so far, filed if the stream completes.
    record: Option<Recorder>,
}

/// How a stream paces its slices while more than a slice of input is in hand.
#[derive(Debug)]
enum Pace {
    /// Nothing large in hand: the stream yields after each full slice.
    Free,
    /// It yields after each full slice with a large body in hand, on one of the pool's
    /// yield slots.
    Slot { _slot: YieldSlot },
    /// No slot was free: it compresses what is in hand through, without yielding, and so
    /// frees it sooner.
    Through,
}

/// Where the stream is. Each phase holds what only it needs, so "an encoder after the end"
/// cannot be written.
// Inline, not boxed: a box would cost an allocation per response for a phase that only
// the end of the stream leaves.
#[allow(clippy::large_enum_variant)]
enum StreamPhase<B> {
    /// Reading and compressing.
    Running(Running<B>),
    /// The stream is complete (or failed): the encoder is back in the pool and the inner
    /// body dropped.
    Ended(Ended),
}

struct Running<B> {
    inner: Pin<Box<B>>,
    encoder: Encoder,
    /// Input was encoded since the last flush.
    unflushed: bool,
}

/// A poll of the compressed body's next frame.
type FramePoll = Poll<Option<Result<Frame<Bytes>, BoxError>>>;

/// What the inner body gave.
enum Input {
    Data,
    End(Option<HeaderMap>),
    Failed(BoxError),
    Pending,
}

impl<B> Streaming<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let StreamPhase::Ended(ended) = &mut self.phase {
            return ended.poll_frame();
        }
        // The frame of a full slice went out in the last call: the consumer (hyper) would
        // poll again at once, so one response could compress its whole body in one task
        // turn while every other stream waits. Yield here instead: every stream gets one
        // slice per turn, and first bytes go out early everywhere.
        if std::mem::take(&mut self.yield_first) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let mut budget = MAX_INPUT_PER_POLL;
        loop {
            // A br stream may have to wait for its turn before it draws an encoder; it is
            // woken when one may be free. It keeps the input in hand meanwhile.
            if self.has_input() && self.running().encoder.poll_ready(cx).is_pending() {
                return Poll::Pending;
            }
            if let Err(e) = self.encode_input(&mut budget) {
                return self.fail(e);
            }
            if budget == 0 {
                if let Some(poll) = self.end_slice(cx) {
                    return poll;
                }
                // Compressing through: the next slice at once.
                budget = MAX_INPUT_PER_POLL;
                continue;
            }
            match self.poll_input(cx) {
                Input::Data => {}
                Input::End(trailers) => return self.finish(trailers),
                Input::Failed(e) => return self.fail(e),
                Input::Pending => return self.pause(),
            }
        }
    }

    fn running(&mut self) -> &mut Running<B> {
        match &mut self.phase {
            StreamPhase::Running(running) => running,
            StreamPhase::Ended(_) => unreachable!("only a running stream encodes"),
        }
    }

    fn has_input(&self) -> bool {
        !self.current.is_empty() || self.queued.len() > 0
    }

    /// Compresses the input in hand within `budget`. Where the budget runs out with at
    /// most one more slice in hand (the rest of a producer's chunk, or the chunk the
    /// read-ahead took), that is compressed too: a stream at rest then pins none of the
    /// producer's buffers, only what it has to say.
    fn encode_input(&mut self, budget: &mut usize) -> Result<(), BoxError> {
        let before = *budget;
        let StreamPhase::Running(running) = &mut self.phase else {
            unreachable!("only a running stream encodes")
        };
        let (encoder, queued, current) =
            (&mut running.encoder, &mut self.queued, &mut self.current);
        let out = &mut self.out;
        let slice = || {
            encode_queued(encoder, queued, current, out, budget)?;
            let in_hand = current.len() + queued.len();
            let mut used = before - *budget;
            if *budget == 0 && in_hand > 0 && in_hand <= MAX_INPUT_PER_POLL {
                let mut rest = in_hand;
                encode_queued(encoder, queued, current, out, &mut rest)?;
                used += in_hand - rest;
            }
            Ok::<_, BoxError>(used)
        };
        let used = account(&mut self.tally, self.timed.as_mut(), slice)?;
        if used > 0 {
            running.unflushed = true;
            self.tally.bytes_in += used as u64;
        }
        Ok(())
    }

    fn poll_input(&mut self, cx: &mut Context<'_>) -> Input {
        match self.running().inner.as_mut().poll_frame(cx) {
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
        }
    }

    /// This poll's slice is used up. The peer may take its time before the next poll (a
    /// slow reader, a full socket, a busy runtime): when many streams hold states, give
    /// this one back now rather than pin it until then; br flushes, so its output keeps
    /// pace with its input. `None`: go on with the next slice now (see [`Pace`]).
    fn end_slice(&mut self, cx: &mut Context<'_>) -> Option<FramePoll> {
        let yields = self.yields_after_slice();
        let StreamPhase::Running(running) = &mut self.phase else {
            unreachable!("only a running stream encodes")
        };
        let encoder = &mut running.encoder;
        let slice_end = encoder.at_slice_end();
        let out = &mut self.out;
        let ended = account(&mut self.tally, self.timed.as_mut(), || match slice_end {
            SliceEnd::Keep => Ok(()),
            SliceEnd::Flush => encoder.flush(out),
            SliceEnd::Release => encoder.idle(out),
        });
        if let Err(e) = ended {
            return Some(self.fail(e.into()));
        }
        if slice_end != SliceEnd::Keep {
            running.unflushed = false;
        }
        // Hand over what is ready, unless it is only the header (sent with the first
        // compressed bytes), or yield. Crowded, the output block goes too, so a stream
        // between slices pins no buffer (a new block per slice costs nothing beside the
        // state's redraw); otherwise the block is reused, no allocation.
        if self.out.is_empty() || !running.encoder.has_payload() {
            if !yields {
                return None;
            }
            cx.waker().wake_by_ref();
            return Some(Poll::Pending);
        }
        self.yield_first = yields;
        let frame = if slice_end == SliceEnd::Release {
            self.emit_all()
        } else {
            self.emit()
        };
        Some(Poll::Ready(Some(Ok(frame))))
    }

    /// Whether to yield after this slice. A stream with no more than a slice in hand (a
    /// producer making its input as it is asked) pins little and always does; one with a
    /// large body in hand (at a slice end that means more than a slice: see
    /// `encode_input`) does only on one of the pool's yield slots, taken at its first such
    /// slice end and kept until that input is used up.
    fn yields_after_slice(&mut self) -> bool {
        if !self.has_input() {
            // Used up, and freed: a stream compressing through goes on to its producer
            // (usually its end) rather than wait a turn holding its codec state.
            let through = matches!(self.pace, Pace::Through);
            self.pace = Pace::Free;
            return !through;
        }
        if let Pace::Free = self.pace {
            self.pace = match YieldSlot::take(&self.pool) {
                Some(slot) => Pace::Slot { _slot: slot },
                None => Pace::Through,
            };
        }
        matches!(self.pace, Pace::Slot { .. })
    }

    /// The producer has nothing more for now: make what we have decodable, and let the
    /// encoder park its codec state or give it back while we wait (see `Encoder::idle`).
    fn pause(&mut self) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let StreamPhase::Running(running) = &mut self.phase else {
            unreachable!("only a running stream encodes")
        };
        // Waiting on the producer: the slot goes to a stream that can use it.
        self.pace = Pace::Free;
        if std::mem::take(&mut running.unflushed) || running.encoder.holds_state() {
            let (encoder, out) = (&mut running.encoder, &mut self.out);
            let idled = account(&mut self.tally, self.timed.as_mut(), || encoder.idle(out));
            if let Err(e) = idled {
                return self.fail(e.into());
            }
        }
        if !self.out.is_empty() {
            return Poll::Ready(Some(Ok(self.emit_all())));
        }
        // No buffer is kept while idle.
        self.out = BytesMut::new();
        Poll::Pending
    }

    /// Hands over the output, keeping the block's spare room: once the consumer has written
    /// and dropped the frame, the next slice reuses the whole block (no allocation per
    /// slice).
    fn emit(&mut self) -> Frame<Bytes> {
        self.sent();
        let frame = self.out.split().freeze();
        // The rest of the block shares the frame's allocation: kept, it would pin the whole
        // block after the frame is written. Keep it only if the next encoder call fits in
        // it (small frames, such as events, share one block); a stream at rest then holds
        // no output buffer at all.
        if self.out.capacity() < encode_room(ENCODE_CHUNK) {
            self.out = BytesMut::new();
        }
        Frame::data(frame)
    }

    /// Hands over the output with its whole block, for a stream about to wait (on its
    /// producer, or its turn in a crowded pool) or at its end: it then holds no buffer.
    fn emit_all(&mut self) -> Frame<Bytes> {
        self.sent();
        Frame::data(std::mem::take(&mut self.out).freeze())
    }

    /// Counts the output about to go, and records it for the cache.
    fn sent(&mut self) {
        self.tally.bytes_out += self.out.len() as u64;
        if let Some(record) = &mut self.record {
            record.sent(&self.out);
        }
    }

    fn finish(
        &mut self,
        trailers: Option<HeaderMap>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        // Ending the phase drops the inner body and returns the encoder's state to the pool.
        // An entry stands for the whole body: one with trailers is not filed.
        let record = self.record.take().filter(|_| trailers.is_none());
        let StreamPhase::Running(Running { mut encoder, .. }) = std::mem::replace(
            &mut self.phase,
            StreamPhase::Ended(Ended::with_trailers(trailers)),
        ) else {
            return Poll::Ready(None);
        };
        self.pace = Pace::Free;
        let out = &mut self.out;
        let finished = account(&mut self.tally, self.timed.as_mut(), || encoder.finish(out));
        if let Err(e) = finished {
            return self.fail(e.into());
        }
        self.complete = true;
        let frame = self.emit_all();
        if let Some(mut record) = record {
            record.sent(frame.data_ref().map_or(&[][..], |data| &data[..]));
            record.complete();
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn fail(&mut self, error: BoxError) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        // The pool resets the interrupted state before anyone else gets it.
        self.phase = StreamPhase::Ended(Ended::default());
        self.pace = Pace::Free;
        Poll::Ready(Some(Err(error)))
    }
}

/// The output room one encoder call on `n` bytes is given (incompressible input grows a
/// little).
fn encode_room(n: usize) -> usize {
    n + n / 8 + 64
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
        let room = encode_room(n);
        if out.capacity() - out.len() < room {
            out.reserve(room.max(OUTPUT_BLOCK));
        }
        encoder.encode(&current[..n], out)?;
        crate::buf::consume(current, n);
        *budget -= n;
    }
    Ok(())
}

impl<B> Drop for Streaming<B> {
    fn drop(&mut self) {
        if let Some(timed) = &self.timed {
            timed.end(self.tally.bytes_in, self.tally.bytes_out);
        }
        if let Some(stats) = &self.stats {
            report::finished(stats, &self.tally, true, self.complete);
        }
    }
}

#[cfg(test)]
mod tests;
