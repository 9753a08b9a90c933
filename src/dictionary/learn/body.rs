//! [`LearnBody`]: a response body passed through as it is, and kept (as `Bytes` handles, not
//! copies) when it is a sample; a learned dictionary's body when the layer served one.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use http_body::{Body, SizeHint};
use http_body_util::Full;
use pin_project_lite::pin_project;

use super::{Learner, Refusal};
use crate::buf::{PolledFrame, poll_bytes};

pin_project! {
    /// The response body of [`LearnService`](super::service::LearnService).
    pub struct LearnBody<B> {
        #[pin]
        state: State<B>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<B> {
        Passed {
            #[pin]
            body: B,
            sample: Option<Sample>,
        },
        Dictionary {
            #[pin]
            body: Full<Bytes>,
        },
    }
}

impl<B> LearnBody<B> {
    pub(crate) fn passed(body: B, sample: Option<Sample>) -> Self {
        LearnBody {
            state: State::Passed { body, sample },
        }
    }

    pub(crate) fn dictionary(body: Full<Bytes>) -> Self {
        LearnBody {
            state: State::Dictionary { body },
        }
    }
}

/// A response being kept as a sample: its frames so far. Sent to the learner when the body
/// ends; dropped (and counted) if it fails, is dropped early or grows past the bound.
pub(crate) struct Sample {
    learner: Learner,
    route: usize,
    client: u64,
    max_len: usize,
    frames: Vec<Bytes>,
    len: usize,
}

impl Sample {
    pub(crate) fn new(learner: Learner, route: usize, client: u64, max_len: usize) -> Self {
        Sample {
            learner,
            route,
            client,
            max_len,
            frames: Vec::new(),
            len: 0,
        }
    }

    /// Keeps `data`; `false` when the sample is now too long to keep.
    fn keep(&mut self, data: &Bytes) -> bool {
        self.len += data.len();
        if self.len > self.max_len {
            return false;
        }
        if !data.is_empty() {
            self.frames.push(data.clone());
        }
        true
    }

    fn finish(mut self) {
        let body = match self.frames.len() {
            0 => return,
            1 => self.frames.pop().expect("one frame"),
            _ => {
                let mut all = BytesMut::with_capacity(self.len);
                self.frames
                    .drain(..)
                    .for_each(|f| all.extend_from_slice(&f));
                all.freeze()
            }
        };
        self.learner.send(self.route, self.client, body);
    }

    fn refuse(mut self, why: Refusal) {
        self.frames.clear();
        self.learner.shared().routes[self.route]
            .counters
            .refused(why);
    }
}

impl<B: Body> Body for LearnBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> PolledFrame<B::Error> {
        let (mut body, sample) = match self.project().state.project() {
            StateProj::Dictionary { body } => {
                return body.poll_frame(cx).map_err(|never| match never {});
            }
            StateProj::Passed { body, sample } => (body, sample),
        };
        let frame = ready!(poll_bytes(body.as_mut(), cx));
        if sample.is_none() {
            return Poll::Ready(frame);
        }
        let outcome = match &frame {
            Some(Ok(frame)) => {
                let data = frame.data_ref();
                match sample.as_mut().zip(data).is_none_or(|(s, d)| s.keep(d)) {
                    false => Some(Err(Refusal::TooLarge)),
                    // hyper stops polling a body that says it has ended: finish now.
                    true => body.is_end_stream().then_some(Ok(())),
                }
            }
            Some(Err(_)) => Some(Err(Refusal::Incomplete)),
            None => Some(Ok(())),
        };
        match (outcome, sample.take()) {
            (Some(Ok(())), Some(taken)) => taken.finish(),
            (Some(Err(why)), Some(taken)) => taken.refuse(why),
            // Still going: keep it.
            (None, taken) => *sample = taken,
            (Some(_), None) => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        match &self.state {
            State::Passed { body, .. } => body.is_end_stream(),
            State::Dictionary { body } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.state {
            State::Passed { body, .. } => body.size_hint(),
            State::Dictionary { body } => body.size_hint(),
        }
    }
}

impl Drop for Sample {
    fn drop(&mut self) {
        // Sent and refused samples leave no frames behind; one with frames was cut short.
        if !self.frames.is_empty() {
            self.learner.shared().routes[self.route]
                .counters
                .refused(Refusal::Incomplete);
        }
    }
}
