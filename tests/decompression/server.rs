//! A real server: axum behind RequestDecompressionLayer, with a probe that records what the
//! decoded body emitted, on the loopback harness.

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request as AxumRequest};
use axum::routing::post;
use bytes::Bytes;
use http::header::CONTENT_ENCODING;
use http::{Request, StatusCode};
use http_body::Body;
use tower_gzip::BoxError;
use tower_gzip::decompression::RequestDecompressionLayer;

use crate::common::server::{Loopback, TestClient, send};
use crate::common::{Probe, Tap};

pub async fn serve(layer: RequestDecompressionLayer) -> (Loopback, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let tap = probe.clone();
    let app = Router::new()
        .route("/echo", post(|body: Bytes| async move { body }))
        .route(
            "/text",
            post(|body: String| async move { body.len().to_string() }),
        )
        .layer(DefaultBodyLimit::disable())
        .layer(axum::middleware::map_request(move |req: AxumRequest| {
            let probe = tap.clone();
            async move { req.map(|inner| axum::body::Body::new(Tap::new(inner, probe))) }
        }))
        .layer(layer);
    (Loopback::serve(app).await, probe)
}

/// POSTs `body` to `path` with this `Content-Encoding`; the status and the body.
pub async fn post_to<B>(
    client: &TestClient,
    server: &Loopback,
    path: &str,
    coding: Option<&str>,
    body: B,
) -> (StatusCode, Bytes)
where
    B: Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    let mut req = Request::post(server.url(path));
    if let Some(coding) = coding {
        req = req.header(CONTENT_ENCODING, coding);
    }
    let reply = send(client, req.body(body).unwrap()).await;
    (reply.status, reply.body)
}
