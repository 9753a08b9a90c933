//! Both client layers around hyper-util's client, against a real server on loopback.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request as AxumRequest;
use axum::routing::{get, post};
use bytes::Bytes;
use http::header::{CONTENT_ENCODING, CONTENT_TYPE, HeaderValue};
use http::{HeaderMap, Request, Response, StatusCode};

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::{ServiceBuilder, ServiceExt};
use tower_gzip::client::RequestCompressionLayer;
use tower_gzip::decompression::DecompressionLayer;
use tower_gzip::decompression::RequestDecompressionLayer;

use crate::common::server::Loopback;
use crate::common::{Probe, Tap};
use crate::json_document;

#[derive(Default)]
pub struct Arrived {
    pub content_encoding: Mutex<Vec<Option<String>>>,
}

/// An axum server: RequestDecompressionLayer for uploads, tower-http's CompressionLayer for
/// responses, and a probe outside both that records each request's Content-Encoding.
pub async fn serve() -> (Loopback, Arc<Arrived>) {
    let arrived = Arc::new(Arrived::default());
    let probe = arrived.clone();
    let app = Router::new()
        .route(
            "/api/echo",
            post(|headers: HeaderMap, body: Bytes| async move {
                let mut response = Response::new(axum::body::Body::from(body));
                if let Some(ct) = headers.get(CONTENT_TYPE) {
                    response.headers_mut().insert(CONTENT_TYPE, ct.clone());
                }
                response
            }),
        )
        .route(
            "/api/items",
            get(|| async {
                let mut response = Response::new(axum::body::Body::from(json_document(200)));
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }),
        )
        .layer(RequestDecompressionLayer::new())
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(axum::middleware::map_request(move |req: AxumRequest| {
            let coding = req
                .headers()
                .get(CONTENT_ENCODING)
                .map(|v| v.to_str().unwrap().to_owned());
            probe.content_encoding.lock().unwrap().push(coding);
            async move { req }
        }));
    (Loopback::serve(app).await, arrived)
}

#[tokio::test]
async fn hyper_client_round_trip_over_loopback() {
    let (server, arrived) = serve().await;
    let addr = server.addr;
    let wire = Arc::new(Probe::default());
    let tap = wire.clone();
    let client = Client::builder(TokioExecutor::new()).build_http();
    let client = ServiceBuilder::new()
        .layer(DecompressionLayer::new())
        .map_response(move |response: Response<hyper::body::Incoming>| {
            response.map(|inner| Tap::new(inner, tap.clone()))
        })
        .layer(RequestCompressionLayer::new())
        .service(client);

    // A JSON upload: compressed on the way out, decoded by the server, echoed back
    // compressed, decoded by the client.
    let doc = json_document(300);
    let request = Request::post(format!("http://{addr}/api/echo"))
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(doc.clone())))
        .unwrap();
    let response = client.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    assert!(response.headers().get(CONTENT_ENCODING).is_none());
    let echoed = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(echoed, doc);
    assert_eq!(
        arrived.content_encoding.lock().unwrap()[0].as_deref(),
        Some("gzip")
    );
    let wire_bytes = wire.take_total();
    assert!(wire_bytes < doc.len() / 3, "{wire_bytes} on the wire");

    // A compressed response.
    let request = Request::get(format!("http://{addr}/api/items"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = client.clone().oneshot(request).await.unwrap();
    let items = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(items, json_document(200));
    assert!(wire.total() < items.len() / 3);
    let parsed: serde_json::Value = serde_json::from_slice(&items).unwrap();
    assert_eq!(parsed["items"].as_array().unwrap().len(), 200);
}
