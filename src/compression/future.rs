use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use http::Response;
use http_body::Body;
use pin_project_lite::pin_project;

use super::body::CompressionBody;
use super::execute::execute;
use super::plan::{RequestFacts, decide};
use super::settings::CompressionSettings;
use crate::BoxError;
use crate::predicate::Predicate;

pin_project! {
    /// The response future of [`Compression`](super::Compression).
    pub struct ResponseFuture<F, P> {
        #[pin]
        inner: F,
        request: RequestFacts,
        settings: Arc<CompressionSettings>,
        predicate: P,
    }
}

impl<F, P> ResponseFuture<F, P> {
    pub(crate) fn new(
        inner: F,
        request: RequestFacts,
        settings: Arc<CompressionSettings>,
        predicate: P,
    ) -> Self {
        ResponseFuture {
            inner,
            request,
            settings,
            predicate,
        }
    }
}

impl<F, B, E, P> Future for ResponseFuture<F, P>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: Body,
    B::Error: Into<BoxError>,
    P: Predicate,
{
    type Output = Result<Response<CompressionBody<B>>, E>;

    /// The inner response, then the plan for it (from its head), carried out.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.inner.poll(cx))?;
        let plan = decide(this.request, this.settings, this.predicate, &response);
        Poll::Ready(Ok(execute(plan, response, this.settings, cx)))
    }
}
