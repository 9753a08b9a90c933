//! [`LearnService`] and its future: what a request to a learned route costs is a path match,
//! a counter and, for the responses taken, a `Bytes` handle per body frame.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http::header::LINK;
use http::{HeaderValue, Request, Response, request, response};
use http_body::Body;
use http_body_util::Full;
use pin_project_lite::pin_project;
use tower_service::Service;

use super::Learner;
use super::body::{LearnBody, Sample};
use super::safety::{Refusal, request_refusal, response_refusal};

/// The service of [`LearnLayer`](super::LearnLayer).
#[derive(Clone, Debug)]
pub struct LearnService<S> {
    inner: S,
    learner: Learner,
}

impl<S> LearnService<S> {
    pub(crate) fn new(inner: S, learner: Learner) -> Self {
        LearnService { inner, learner }
    }
}

/// What a request to a learned route will do with its response.
struct Plan {
    learner: Learner,
    route: usize,
    link: Option<HeaderValue>,
    /// Set when the response is to be considered as a sample.
    sample: Option<Consider>,
}

/// A response to consider as a sample: its client's keyed hash, and the request's head for
/// the filter (only copied when there is one).
struct Consider {
    client: u64,
    request: Option<request::Parts>,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for LearnService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Body,
{
    type Response = Response<LearnBody<ResBody>>;
    type Error = S::Error;
    type Future = LearnFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let path = req.uri().path();
        if let Some(res) = self.learner.serve(req.method(), path, req.headers()) {
            let state = State::Served { res: Some(res) };
            return LearnFuture { state };
        }
        let Some(route) = self.learner.route_for(path) else {
            let (future, plan) = (self.inner.call(req), None);
            return LearnFuture {
                state: State::Inner { future, plan },
            };
        };
        // Moved apart and back (no copy): the client is read from the head's extensions.
        let (parts, body) = req.into_parts();
        let plan = self.plan(route, &parts);
        let state = State::Inner {
            future: self.inner.call(Request::from_parts(parts, body)),
            plan,
        };
        LearnFuture { state }
    }
}

impl<S> LearnService<S> {
    /// `None` when the response is neither announced to nor sampled, as most are: then the
    /// request costs no more than the route match, a counter and a header lookup.
    fn plan(&self, route: usize, req: &request::Parts) -> Option<Plan> {
        let shared = &self.learner.shared().routes[route];
        let sample = shared
            .consider()
            .then(|| self.consider(route, req))
            .flatten();
        let link = shared.link(&req.headers);
        (link.is_some() || sample.is_some()).then(|| Plan {
            learner: self.learner.clone(),
            route,
            link,
            sample,
        })
    }

    /// What the request lets a sample be: refused (and counted) for what the request says,
    /// or when no client is known.
    fn consider(&self, route: usize, req: &request::Parts) -> Option<Consider> {
        let shared = self.learner.shared();
        let counters = &shared.routes[route].counters;
        if let Some(refusal) = request_refusal(req, &shared.credentials) {
            counters.refused(refusal);
            return None;
        }
        let Some(client) = shared.clients.key(req) else {
            counters.refused(Refusal::UnknownClient);
            if !shared.warned_unknown.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    route = shared.routes[route].pattern.as_str(),
                    "learned dictionaries: a request has no client identity (no peer \
                     address, ClientId or `client` function): its response is no sample, and \
                     without client identities nothing is published (LearnerBuilder::client)"
                );
            }
            return None;
        };
        let request = shared.filter.as_ref().map(|_| head(req));
        Some(Consider { client, request })
    }
}

/// The request's head without its extensions (which need not be `Clone`).
fn head(req: &request::Parts) -> request::Parts {
    let (mut parts, ()) = Request::new(()).into_parts();
    parts.method = req.method.clone();
    parts.uri = req.uri.clone();
    parts.version = req.version;
    parts.headers = req.headers.clone();
    parts
}

pin_project! {
    /// The response future of [`LearnService`].
    pub struct LearnFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        /// A learned dictionary, answered by the layer.
        Served { res: Option<Response<Full<Bytes>>> },
        /// The inner service's response, announced and maybe sampled.
        Inner {
            #[pin]
            future: F,
            plan: Option<Plan>,
        },
    }
}

impl<F, B, E> Future for LearnFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: Body,
{
    type Output = Result<Response<LearnBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Served { res } => {
                let res = res.take().expect("polled after completion");
                Poll::Ready(Ok(res.map(LearnBody::dictionary)))
            }
            StateProj::Inner { future, plan } => {
                let res = ready!(future.poll(cx))?;
                Poll::Ready(Ok(match plan.take() {
                    Some(plan) => plan.apply(res),
                    None => res.map(|body| LearnBody::passed(body, None)),
                }))
            }
        }
    }
}

impl Plan {
    fn apply<B: Body>(mut self, res: Response<B>) -> Response<LearnBody<B>> {
        let (mut parts, body) = res.into_parts();
        if let Some(link) = self.link.take().filter(|_| parts.status.is_success()) {
            parts.headers.append(LINK, link);
        }
        let sample = match self.sample.take() {
            Some(consider) => self.sample(&consider, &parts, &body),
            None => None,
        };
        Response::from_parts(parts, LearnBody::passed(body, sample))
    }

    /// The sample to take of this response, or `None` (counted by why).
    fn sample<B: Body>(
        &self,
        consider: &Consider,
        parts: &response::Parts,
        body: &B,
    ) -> Option<Sample> {
        let route = &self.learner.shared().routes[self.route];
        let max_len = route.config.max_sample_len;
        let refusal = response_refusal(parts.status, &parts.headers).or_else(|| {
            let filter = self.learner.shared().filter.as_ref();
            match (filter, consider.request.as_ref()) {
                (Some(filter), Some(request)) if !filter(request, parts) => Some(Refusal::Filter),
                _ if body.size_hint().lower() > max_len as u64 => Some(Refusal::TooLarge),
                _ => None,
            }
        });
        if let Some(refusal) = refusal {
            route.counters.refused(refusal);
            return None;
        }
        let learner = self.learner.clone();
        Some(Sample::new(learner, self.route, consider.client, max_len))
    }
}
