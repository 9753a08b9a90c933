//! [`GrpcBody`]: a gRPC body read message by message, each compressed or decompressed whole
//! as it completes, at most one message held. Trailers pass through, with the layer's
//! status in place of the service's when the layer ended the call.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::encoding::MessageEncoding;
use super::frame::MessageReader;
use super::message::{Compress, Decompress};
use super::settings::Settings;
use super::status::GrpcStatus;
use crate::sync::lock;
use crate::{BoxError, ContentCoding};

/// What a body does to each message.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Transform {
    /// Nothing: frames pass as they come, unread.
    Pass,
    /// Compresses messages in this coding.
    Compress(ContentCoding),
    /// Decompresses messages flagged compressed, which are in this encoding.
    Decompress(MessageEncoding),
}

/// Where a status the body meets goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The body fails with it (boxed), and the call's verdict records it: a request body the
    /// server's service reads.
    Error,
    /// The body ends with it as trailers: a response body.
    Trailers,
}

/// The status a layer ended a call with, shared by the call's request and response bodies.
#[derive(Debug, Default)]
pub(crate) struct Verdict(Mutex<Option<GrpcStatus>>);

impl Verdict {
    pub(crate) fn set(&self, status: GrpcStatus) {
        lock(&self.0).get_or_insert(status);
    }

    pub(crate) fn get(&self) -> Option<GrpcStatus> {
        lock(&self.0).clone()
    }
}

/// Where a body is.
#[derive(Debug)]
enum BodyPhase {
    /// Reading the inner body.
    Streaming,
    /// The inner body is done; these trailers go out last.
    Ending(HeaderMap),
    /// Nothing more.
    Done,
}

pin_project! {
    /// A gRPC request or response body under one of the [`grpc`](super) layers: messages
    /// compressed or decompressed one by one, trailers passed through.
    #[derive(Debug)]
    pub struct GrpcBody<B> {
        #[pin]
        inner: Option<B>,
        state: State,
    }
}

/// A body's state besides its inner body.
#[derive(Debug)]
struct State {
    transform: Transform,
    failure: Failure,
    reader: MessageReader,
    settings: Arc<Settings>,
    verdict: Option<Arc<Verdict>>,
    phase: BodyPhase,
}

impl<B> GrpcBody<B> {
    /// `inner`, each message transformed; statuses go where `failure` says, and the call's
    /// `verdict` (set by the request's body) replaces the trailers' status.
    pub(crate) fn new(
        inner: B,
        transform: Transform,
        failure: Failure,
        settings: Arc<Settings>,
        verdict: Option<Arc<Verdict>>,
    ) -> Self {
        let reader = MessageReader::new(settings.limits.max_size);
        let state = State {
            transform,
            failure,
            reader,
            settings,
            verdict,
            phase: BodyPhase::Streaming,
        };
        GrpcBody {
            inner: Some(inner),
            state,
        }
    }

    /// A body with no data and no trailers (a trailers-only response's).
    pub(crate) fn empty(settings: Arc<Settings>) -> Self {
        let state = State {
            transform: Transform::Pass,
            failure: Failure::Trailers,
            reader: MessageReader::new(0),
            settings,
            verdict: None,
            phase: BodyPhase::Done,
        };
        GrpcBody { inner: None, state }
    }
}

impl State {
    /// The next message in hand, transformed.
    fn next_message(&mut self) -> Result<Option<Bytes>, GrpcStatus> {
        let Some(message) = self.reader.next_message()? else {
            return Ok(None);
        };
        let settings = &*self.settings;
        let pool = &settings.pool;
        let out = match self.transform {
            Transform::Pass => Ok(message.frame),
            Transform::Compress(coding) => Compress {
                coding,
                level: settings.level(coding),
                min_size: settings.min_size,
                pool,
            }
            .message(message),
            Transform::Decompress(encoding) => Decompress {
                encoding,
                limits: settings.limits,
                pool,
            }
            .message(message),
        };
        out.map(Some)
    }

    /// The body meets `status`: it ends, with an error or trailers.
    fn fail(&mut self, status: GrpcStatus) -> Option<Result<Frame<Bytes>, BoxError>> {
        self.phase = BodyPhase::Done;
        match self.failure {
            Failure::Error => {
                if let Some(verdict) = &self.verdict {
                    verdict.set(status.clone());
                }
                Some(Err(Box::new(status)))
            }
            Failure::Trailers => Some(Ok(Frame::trailers(status.trailers()))),
        }
    }

    /// The inner body ended, with `trailers` or none: a message begun is truncated; the
    /// verdict, if any, replaces the trailers' status.
    fn end(&mut self, trailers: Option<HeaderMap>) -> Option<Result<Frame<Bytes>, BoxError>> {
        if self.reader.is_mid_message() {
            return self.fail(GrpcStatus::internal("body ended inside a message"));
        }
        let verdict = self.verdict.as_ref().and_then(|v| v.get());
        self.phase = match (trailers, verdict) {
            (Some(mut trailers), Some(status)) => {
                status.write(&mut trailers);
                BodyPhase::Ending(trailers)
            }
            (None, Some(status)) => BodyPhase::Ending(status.trailers()),
            (Some(trailers), None) => BodyPhase::Ending(trailers),
            (None, None) => BodyPhase::Done,
        };
        None
    }
}

impl<B> Body for GrpcBody<B>
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
        let mut this = self.project();
        loop {
            match std::mem::replace(&mut this.state.phase, BodyPhase::Done) {
                BodyPhase::Done => return Poll::Ready(None),
                BodyPhase::Ending(trailers) => {
                    return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
                }
                BodyPhase::Streaming => this.state.phase = BodyPhase::Streaming,
            }
            match this.state.next_message() {
                Ok(Some(message)) => return Poll::Ready(Some(Ok(Frame::data(message)))),
                Ok(None) => {}
                Err(status) => return Poll::Ready(this.state.fail(status)),
            }
            let Some(inner) = this.inner.as_mut().as_pin_mut() else {
                this.state.phase = BodyPhase::Done;
                continue;
            };
            let frame = match ready!(inner.poll_frame(cx)) {
                Some(Ok(frame)) => frame,
                Some(Err(error)) => {
                    this.state.phase = BodyPhase::Done;
                    return Poll::Ready(Some(Err(error.into())));
                }
                None => match this.state.end(None) {
                    Some(end) => return Poll::Ready(Some(end)),
                    None => continue,
                },
            };
            match frame.into_data() {
                Ok(mut data) if matches!(this.state.transform, Transform::Pass) => {
                    let data = data.copy_to_bytes(data.remaining());
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Ok(data) => this.state.reader.push(data),
                Err(frame) => {
                    let trailers = frame.into_trailers().ok();
                    if let Some(end) = this.state.end(trailers) {
                        return Poll::Ready(Some(end));
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self.state.phase {
            BodyPhase::Done => true,
            BodyPhase::Ending(_) => false,
            BodyPhase::Streaming => {
                let passing = matches!(self.state.transform, Transform::Pass);
                let inner_ended = self.inner.as_ref().is_none_or(B::is_end_stream);
                passing && self.state.verdict.is_none() && inner_ended
            }
        }
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.inner, self.state.transform, &self.state.verdict) {
            (Some(inner), Transform::Pass, None) => inner.size_hint(),
            (None, _, _) => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}
