//! The streaming, bounded decoding body both decompression layers hand out.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::capture::Capture;
use super::coding::Chain;
use super::limits::{DecompressionLimits, TripReport, Tripped, length_limit_error};
use crate::BoxError;
use crate::buf::{PolledFrame, poll_bytes};
use crate::client::dictionaries::{Candidate, ClientDictionaryStore};
use crate::codec::{DecodeError, DecodeErrorKind, Decoder};
use crate::dictionary::Dictionary;
use crate::ended::Ended;
use crate::pool::CodecPool;

/// The largest data frame the body emits.
pub(crate) const FRAME_SIZE: usize = 64 * 1024;

/// How much an intermediate stage of a coding chain decodes ahead of the next stage.
const STAGE_CHUNK: usize = 16 * 1024;

/// The smallest first allocation of an output frame.
const MIN_FRAME_ALLOC: usize = 4 * 1024;

pin_project! {
    /// A body that decodes its inner body's content coding as it streams.
    ///
    /// It is the request body [`RequestDecompression`](super::RequestDecompression) hands the
    /// inner service and the response body [`Decompression`](super::Decompression) returns.
    /// Bodies that were not encoded pass through frame by frame, keeping their
    /// [`size_hint`](Body::size_hint). Encoded bodies are decoded with a pooled
    /// [`Decoder`](crate::codec::Decoder) per coding: output comes in frames of at most 64 KiB,
    /// nothing is buffered beyond one frame (plus 16 KiB per extra stage of a stacked coding),
    /// trailers are forwarded after the data, and the decoders go back to the pool as soon as
    /// the stream ends or fails.
    ///
    /// # Errors
    ///
    /// The error type is [`BoxError`]; match it with `downcast_ref`:
    ///
    /// - [`http_body_util::LengthLimitError`]: a [`DecompressionLimits`] limit was hit
    ///   (axum answers 413).
    /// - [`DecodeError`]: the body is not a valid stream of its coding; its
    ///   [`kind`](DecodeError::kind) says how (axum answers 400).
    /// - anything else: the inner body's own error, passed through.
    ///
    /// ```
    /// use http_body_util::LengthLimitError;
    /// use tower_gzip::codec::DecodeError;
    ///
    /// fn status_for(err: &tower_gzip::BoxError) -> u16 {
    ///     if err.downcast_ref::<LengthLimitError>().is_some() {
    ///         413
    ///     } else if err.downcast_ref::<DecodeError>().is_some() {
    ///         400
    ///     } else {
    ///         500 // the connection or the inner body failed
    ///     }
    /// }
    /// # let err: tower_gzip::BoxError = "x".into();
    /// # assert_eq!(status_for(&err), 500);
    /// ```
    pub struct DecompressionBody<B> {
        #[pin]
        inner: B,
        mode: Mode,
        // A response becoming a client's dictionary (RFC 9842), kept as it is read.
        capture: Option<Box<Capture>>,
    }
}

enum Mode {
    Identity,
    Decode(Box<Decoding>),
    /// Decoding ended (completed, failed or stopped); the decoders are back in the pool.
    Finished(Ended),
    /// Decoding could not start (a dictionary coding without the dictionary): the error,
    /// once, then the end.
    Refused(Option<DecodeError>),
}

struct Decoding {
    /// One per coding, the wire side first.
    stages: Vec<Stage>,
    /// The unconsumed part of the last wire frame.
    wire: Bytes,
    /// The frame being filled.
    out: BytesMut,
    limits: DecompressionLimits,
    /// Frames in a row that exceeded the ratio limit.
    strikes: u32,
    inner_done: bool,
    trailers: Option<HeaderMap>,
    /// Where to tell which limit stopped the body, if anyone asks.
    report: Option<TripReport>,
}

struct Stage {
    decoder: Decoder,
    /// Output not yet consumed by the next stage (unused on the last stage).
    buf: BytesMut,
}

/// Why decoding stopped early.
enum Stop {
    Decode(DecodeError),
    Limit(Tripped),
}

enum Step {
    Data(Bytes),
    End,
    Error(BoxError),
}

impl<B> DecompressionBody<B> {
    /// A body that passes `inner` through unchanged.
    pub(crate) fn identity(inner: B) -> Self {
        DecompressionBody {
            inner,
            mode: Mode::Identity,
            capture: None,
        }
    }

    /// A body that decodes `chain` from `inner`; a dictionary coding in it decodes with
    /// `dictionary`, the one the request offered (without one, the body fails with
    /// [`DictionaryMismatch`](crate::codec::DecodeErrorKind::DictionaryMismatch)).
    pub(crate) fn decode(
        inner: B,
        chain: Chain,
        limits: DecompressionLimits,
        pool: &CodecPool,
        dictionary: Option<&Dictionary>,
    ) -> Self {
        let stages: Result<Vec<Stage>, DecodeError> = chain
            .decode_order()
            .map(|coding| {
                let decoder = match (coding.needs_dictionary(), dictionary) {
                    (false, _) | (true, Some(_)) => {
                        Decoder::for_coding(coding, dictionary.map(Dictionary::codec), pool)?
                    }
                    (true, None) => {
                        return Err(DecodeError::new(
                            DecodeErrorKind::DictionaryMismatch,
                            "a dictionary-compressed response to a request that offered none",
                        ));
                    }
                };
                Ok(Stage {
                    decoder,
                    buf: BytesMut::new(),
                })
            })
            .collect();
        let stages = match stages {
            Ok(stages) => stages,
            Err(err) => {
                return DecompressionBody {
                    inner,
                    mode: Mode::Refused(Some(err)),
                    capture: None,
                };
            }
        };
        DecompressionBody {
            inner,
            capture: None,
            mode: Mode::Decode(Box::new(Decoding {
                stages,
                wire: Bytes::new(),
                out: BytesMut::new(),
                limits,
                strikes: 0,
                inner_done: false,
                trailers: None,
                report: None,
            })),
        }
    }

    /// Keeps the body as it is read and stores it in `store` as the dictionary `candidate`
    /// announced, if it ends cleanly.
    pub(crate) fn learning(mut self, store: ClientDictionaryStore, candidate: Candidate) -> Self {
        self.capture = Some(Box::new(Capture::new(store, candidate)));
        self
    }

    /// Tells `report` which limit stopped the body, if one does (a body that does not
    /// decode never stops for one).
    pub(crate) fn reporting_to(mut self, report: &TripReport) -> Self {
        if let Mode::Decode(decoding) = &mut self.mode {
            decoding.report = Some(report.clone());
        }
        self
    }

    /// Whether this body decodes (rather than passes its inner body through).
    pub fn is_decoding(&self) -> bool {
        !matches!(self.mode, Mode::Identity)
    }

    /// The inner body.
    pub fn get_ref(&self) -> &B {
        &self.inner
    }

    /// The inner body, mutably. Reading from it directly corrupts the decoding.
    pub fn get_mut(&mut self) -> &mut B {
        &mut self.inner
    }

    /// The inner body; any decoding state is dropped.
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B> fmt::Debug for DecompressionBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match &self.mode {
            Mode::Identity => "identity",
            Mode::Decode(_) => "decoding",
            Mode::Finished(_) => "finished",
            Mode::Refused(_) => "refused",
        };
        f.debug_struct("DecompressionBody")
            .field("mode", &mode)
            .finish_non_exhaustive()
    }
}

impl<B> Body for DecompressionBody<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> PolledFrame<BoxError> {
        let this = self.project();
        let mut inner = this.inner;
        let poll = poll_mode(this.mode, inner.as_mut(), cx);
        if let Some(capture) = this.capture {
            let keep = match &poll {
                Poll::Ready(Some(Ok(frame))) => frame.data_ref().is_none_or(|d| capture.keep(d)),
                Poll::Ready(Some(Err(_))) => false,
                Poll::Ready(None) | Poll::Pending => true,
            };
            // The last frame: hyper and `collect` stop at `is_end_stream` or at `None`.
            let ended = matches!(poll, Poll::Ready(None))
                || (matches!(poll, Poll::Ready(Some(Ok(_))))
                    && ended(this.mode, inner.as_ref().get_ref()));
            if !keep {
                *this.capture = None;
            } else if ended {
                if let Some(capture) = this.capture.take() {
                    capture.finish();
                }
            }
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        ended(&self.mode, &self.inner)
    }

    fn size_hint(&self) -> SizeHint {
        match &self.mode {
            Mode::Identity => self.inner.size_hint(),
            Mode::Decode(_) | Mode::Refused(Some(_)) => SizeHint::default(),
            Mode::Finished(ended) => ended.size_hint(),
            Mode::Refused(None) => SizeHint::with_exact(0),
        }
    }
}

fn ended<B: Body>(mode: &Mode, inner: &B) -> bool {
    match mode {
        Mode::Identity => inner.is_end_stream(),
        Mode::Decode(_) => false,
        Mode::Finished(ended) => ended.is_end_stream(),
        Mode::Refused(error) => error.is_none(),
    }
}

/// The next frame of whichever mode the body is in.
fn poll_mode<B>(
    mode: &mut Mode,
    inner: Pin<&mut B>,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Frame<Bytes>, BoxError>>>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let step = match mode {
        Mode::Identity => return poll_bytes(inner, cx).map_err(Into::into),
        Mode::Finished(ended) => return ended.poll_frame(),
        Mode::Refused(error) => return Poll::Ready(error.take().map(|e| Err(e.into()))),
        Mode::Decode(decoding) => ready!(decoding.poll_step(inner, cx)),
    };
    match step {
        Step::Data(data) => Poll::Ready(Some(Ok(Frame::data(data)))),
        Step::End => {
            // The decoders go back to the pool as `Decoding` is dropped here.
            let trailers = match std::mem::replace(mode, Mode::Finished(Ended::default())) {
                Mode::Decode(mut decoding) => decoding.trailers.take(),
                _ => None,
            };
            let mut ended = Ended::with_trailers(trailers);
            let last = ended.poll_frame();
            *mode = Mode::Finished(ended);
            last
        }
        Step::Error(err) => {
            *mode = Mode::Finished(Ended::default());
            Poll::Ready(Some(Err(err)))
        }
    }
}

impl Decoding {
    /// The body's error for `stop`; a limit is told to the report and to `tracing`.
    fn stopped(&self, stop: Stop) -> BoxError {
        match stop {
            Stop::Decode(err) => Box::new(err),
            Stop::Limit(tripped) => {
                tracing::debug!(target: "tower_gzip::decompression", limit = %tripped, "decoding stopped");
                if let Some(report) = &self.report {
                    let _ = report.set(tripped);
                }
                length_limit_error()
            }
        }
    }

    /// Decodes until a frame is ready, the inner body ends, or more input is needed.
    fn poll_step<B>(&mut self, mut inner: Pin<&mut B>, cx: &mut Context<'_>) -> Poll<Step>
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        loop {
            let produced = match self.decode_some() {
                Ok(produced) => produced,
                Err(stop) => return Poll::Ready(Step::Error(self.stopped(stop))),
            };
            // Emit a full frame, or whatever the input so far gave before waiting for more.
            if self.out.len() >= FRAME_SIZE || (produced == 0 && !self.out.is_empty()) {
                return Poll::Ready(match self.emit() {
                    Ok(frame) => Step::Data(frame),
                    Err(stop) => Step::Error(self.stopped(stop)),
                });
            }
            if produced > 0 {
                continue;
            }
            // Every stage has drained its input.
            if self.inner_done {
                return Poll::Ready(match self.finish() {
                    Ok(()) => Step::End,
                    Err(stop) => Step::Error(self.stopped(stop)),
                });
            }
            match ready!(inner.as_mut().poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(mut data) => self.wire = data.copy_to_bytes(data.remaining()),
                    Err(frame) => {
                        // Trailers end the body.
                        self.trailers = frame.into_trailers().ok();
                        self.inner_done = true;
                    }
                },
                Some(Err(err)) => return Poll::Ready(Step::Error(err.into())),
                None => self.inner_done = true,
            }
        }
    }

    /// Decodes into the current frame as far as the input, the frame size and the size limit
    /// allow. Returns the bytes added.
    fn decode_some(&mut self) -> Result<usize, Stop> {
        let max_size = self.limits.max_size.map(|max| max as u64);
        let room = FRAME_SIZE - self.out.len();
        let budget = match max_size {
            // One byte past the allowance, to see the overflow without inflating further.
            Some(max) => (room as u64).min(max.saturating_sub(self.total_out()) + 1) as usize,
            None => room,
        };
        if self.out.capacity() == 0 {
            // The size a zstd frame header announces (capped by the budget, so a lie costs at
            // most one frame), else room for 4:1 on the input at hand.
            let announced = match self.stages.as_slice() {
                [only] => only.decoder.announced_size(&self.wire),
                _ => None,
            };
            let guess = announced
                .map_or(self.wire.len().saturating_mul(4), |n| {
                    usize::try_from(n).unwrap_or(usize::MAX)
                })
                .max(MIN_FRAME_ALLOC);
            self.out.reserve(guess.min(budget));
        }
        let produced = pull(
            &mut self.stages,
            &mut self.wire,
            &mut self.out,
            budget,
            max_size,
        )?;
        if let Some(max) = max_size.filter(|&max| self.total_out() > max) {
            return Err(Stop::Limit(Tripped::Size(max)));
        }
        // Input that decodes to nothing (empty or skippable frames) is bounded too.
        if let Some(max_wire) = self.limits.max_wire_size() {
            if self.stages.first().map_or(0, |s| s.decoder.total_in()) > max_wire {
                return Err(Stop::Limit(Tripped::Wire(max_wire)));
            }
        }
        Ok(produced)
    }

    /// Takes the current frame, after checking the ratio limit.
    fn emit(&mut self) -> Result<Bytes, Stop> {
        if let Some(ratio) = self.limits.ratio {
            let compressed = self.stages.first().map_or(0, |s| s.decoder.total_in());
            if ratio.exceeded(self.total_out(), compressed) {
                self.strikes += 1;
                if self.strikes > ratio.burst {
                    return Err(Stop::Limit(Tripped::Ratio(ratio)));
                }
            } else {
                self.strikes = 0;
            }
        }
        Ok(self.out.split().freeze())
    }

    /// The end of input: every stage must have seen a complete stream.
    fn finish(&mut self) -> Result<(), Stop> {
        for stage in &self.stages {
            stage.decoder.finish().map_err(Stop::Decode)?;
        }
        Ok(())
    }

    fn total_out(&self) -> u64 {
        self.stages.last().map_or(0, |s| s.decoder.total_out())
    }
}

/// Pulls at most `max` bytes of the last stage's output into `out`, refilling each stage's
/// input from the stage before it (the first from `wire`). Returns the bytes added; fewer
/// than `max` only when the wire input is used up.
fn pull(
    stages: &mut [Stage],
    wire: &mut Bytes,
    out: &mut BytesMut,
    max: usize,
    max_size: Option<u64>,
) -> Result<usize, Stop> {
    let Some((last, earlier)) = stages.split_last_mut() else {
        return Ok(0);
    };
    let start = out.len();
    loop {
        let produced = out.len() - start;
        if produced >= max {
            return Ok(produced);
        }
        if !stage_input(earlier, wire).is_empty() || last.decoder.has_pending_output() {
            decode_stage(last, earlier, wire, out, max - produced)?;
            continue;
        }
        // This stage's input is used up: refill it from the stage before.
        if refill(earlier, wire, max_size)? == 0 {
            return Ok(out.len() - start);
        }
    }
}

/// The input of the stage after `earlier`: the output of the last of them, or `wire`.
fn stage_input<'a>(earlier: &'a [Stage], wire: &'a Bytes) -> &'a [u8] {
    match earlier.last() {
        Some(prev) => &prev.buf,
        None => wire,
    }
}

/// One decode call of `stage` over its input, adding at most `room` bytes to `out`, and
/// consuming what it took from that input.
fn decode_stage(
    stage: &mut Stage,
    earlier: &mut [Stage],
    wire: &mut Bytes,
    out: &mut BytesMut,
    room: usize,
) -> Result<(), Stop> {
    let input = stage_input(earlier, wire);
    let (len, before) = (input.len(), out.len());
    let consumed = stage
        .decoder
        .decode(input, out, room)
        .map_err(Stop::Decode)?;
    match earlier.last_mut() {
        Some(prev) => prev.buf.advance(consumed),
        None => crate::buf::consume(wire, consumed),
    }
    let stalled = consumed == 0 && out.len() == before;
    if stalled && len > 0 && !stage.decoder.has_pending_output() {
        // The decoder promises progress; never spin if it breaks that promise.
        return Err(Stop::Decode(DecodeError::new(
            DecodeErrorKind::CorruptData,
            "the decoder made no progress",
        )));
    }
    Ok(())
}

/// Refills the last of `earlier`'s output buffer, the next stage's input, with up to
/// [`STAGE_CHUNK`] bytes (within `max_size`) pulled through the stages before it. Returns
/// how many: 0 once the wire input is used up, or when there is no stage before.
fn refill(earlier: &mut [Stage], wire: &mut Bytes, max_size: Option<u64>) -> Result<usize, Stop> {
    let Some(prev) = earlier.last_mut() else {
        return Ok(0);
    };
    let mut buf = std::mem::take(&mut prev.buf);
    buf.clear();
    let stage_max = match max_size {
        Some(limit) => {
            let allowance = limit.saturating_sub(prev.decoder.total_out()) + 1;
            (STAGE_CHUNK as u64).min(allowance) as usize
        }
        None => STAGE_CHUNK,
    };
    let refilled = pull(earlier, wire, &mut buf, stage_max, max_size)?;
    if let Some(prev) = earlier.last_mut() {
        if let Some(limit) = max_size.filter(|&limit| prev.decoder.total_out() > limit) {
            return Err(Stop::Limit(Tripped::Size(limit)));
        }
        prev.buf = buf;
    }
    Ok(refilled)
}
