//! tower-gzip in an axum app: compressed responses and decompressed uploads.
//!
//! ```text
//! cargo run --example axum                    # ADDR=127.0.0.1:0 for any free port
//! curl --compressed -v http://127.0.0.1:3000/api/items     # Content-Encoding: zstd, br or gzip
//! curl -H 'accept-encoding: gzip' http://127.0.0.1:3000/api/items | gunzip | head -c 200
//! seq 100000 | gzip > numbers.gz
//! curl -H 'content-encoding: gzip' --data-binary @numbers.gz http://127.0.0.1:3000/upload
//! ```
//!
//! `/upload` answers 413 past 20 MiB decoded (or a ratio worse than 200:1) and 400 for a
//! corrupt or truncated body; axum's `Bytes` extractor maps the layer's errors for us.

use axum::routing::{get, post};
use axum::{Json, Router, body::Bytes, extract::DefaultBodyLimit};
use serde_json::{Value, json};
use tower_gzip::CompressionLevel;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::compression::predicate::{
    DefaultPredicate, NotForContentType, Predicate, SizeAbove,
};
use tower_gzip::decompression::RequestDecompressionLayer;

/// `GET /api/items`: a JSON array of 500 records, about 30 KB before compression.
async fn items() -> Json<Value> {
    let items: Vec<Value> = (0..500)
        .map(|i| json!({ "id": i, "name": format!("item-{i:04}"), "in_stock": i % 7 != 0 }))
        .collect();
    Json(json!(items))
}

/// `POST /upload`: the size of the decoded body and its number of lines.
async fn upload(body: Bytes) -> Json<Value> {
    let lines = body.iter().filter(|&&b| b == b'\n').count();
    Json(json!({ "decoded_bytes": body.len(), "lines": lines }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let compression = CompressionLayer::new()
        .quality(CompressionLevel::Fastest)
        // The default rules (no images, no small bodies...), minus newline-delimited JSON
        // streams, and only bodies over 1 KiB.
        .compress_when(
            DefaultPredicate::new()
                .and(NotForContentType::new("application/x-ndjson"))
                .and(SizeAbove::new(1024)),
        );
    let app = Router::new()
        .route("/api/items", get(items))
        // axum's own limit counts decoded bytes, since the layer sits outside the extractor.
        .route(
            "/upload",
            post(upload).layer(DefaultBodyLimit::max(32 << 20)),
        )
        .layer(RequestDecompressionLayer::new())
        .layer(compression);

    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
