//! tower-gzip with plain hyper 1: a `tower::ServiceBuilder` stack served through
//! hyper-util's `TowerToHyperService`.
//!
//! ```text
//! cargo run --example hyper                   # ADDR=127.0.0.1:0 for any free port
//! curl --compressed -v http://127.0.0.1:3000/
//! seq 100000 | gzip > numbers.gz
//! curl -H 'content-encoding: gzip' --data-binary @numbers.gz http://127.0.0.1:3000/
//! head -c 1000 /dev/urandom > junk
//! curl -H 'content-encoding: gzip' --data-binary @junk http://127.0.0.1:3000/   # 400
//! ```
//!
//! Without axum's extractors the handler maps the request body's errors itself: a
//! decompression limit surfaces as `http_body_util::LengthLimitError` (413), a corrupt or
//! truncated body as `tower_gzip::codec::DecodeError` (400).

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tower::ServiceBuilder;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::decompression::{DecompressionBody, RequestDecompressionLayer};

/// Any method: reports the decoded request body, then a long, compressible text.
///
/// The request body is hyper's, decoded by the layer when it has a `Content-Encoding`; its
/// error is a `tower_gzip::BoxError`.
async fn handle(
    req: Request<DecompressionBody<Incoming>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) => {
            let (status, why) = if err
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                (StatusCode::PAYLOAD_TOO_LARGE, "decompression limit reached")
            } else if err
                .downcast_ref::<tower_gzip::codec::DecodeError>()
                .is_some()
            {
                (StatusCode::BAD_REQUEST, "corrupt or truncated body")
            } else {
                (StatusCode::BAD_REQUEST, "the request body failed")
            };
            let reply = Full::new(Bytes::from(format!("{why}: {err}\n")));
            return Ok(Response::builder().status(status).body(reply).unwrap());
        }
    };
    let text = format!("received {} decoded bytes\n", body.len());
    let filler = "tower-gzip compresses this line, every time it repeats.\n".repeat(200);
    let reply = Full::new(Bytes::from(text + &filler));
    Ok(Response::builder()
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(reply)
        .unwrap())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = ServiceBuilder::new()
        .layer(CompressionLayer::new())
        .layer(RequestDecompressionLayer::new())
        .service_fn(handle);

    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let builder = auto::Builder::new(TokioExecutor::new());
            if let Err(err) = builder
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                eprintln!("connection error: {err}");
            }
        });
    }
}
