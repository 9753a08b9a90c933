//! Request and response decompression, bounded against decompression bombs.
//!
//! - [`RequestDecompressionLayer`] (servers) decodes request bodies sent with any coding
//!   compiled in (`zstd`, `br`, `gzip` or `x-gzip`, `deflate`), and answers `415 Unsupported
//!   Media Type` with `Accept-Encoding` for codings it does not decode.
//! - [`DecompressionLayer`] (clients) asks for compressed responses with `Accept-Encoding`
//!   and decodes them; with a `client::ClientDictionaryStore` (cargo feature
//!   `dictionary-client`) it also learns and offers dictionaries and decodes `dcz` and `dcb`
//!   (RFC 9842).
//!
//! Both hand out a streaming [`DecompressionBody`] over pooled decoders: frames of at most
//! 64 KiB, trailers forwarded, and [`DecompressionLimits`] on by default: at most 20 MiB
//! decoded per body (20 MiB, the OpenTelemetry collector's figure)
//! and Apache's ratio limit of 200:1 with a burst of 3 frames, past 1 MiB
//! ([`RatioLimit`]'s default). Inflation stops when a limit is reached, not after.
//!
//! # Errors and status codes
//!
//! Problems in the body surface as the body's error, while the handler reads it:
//!
//! | cause | error (boxed) | axum extractors answer |
//! |---|---|---|
//! | a limit was hit | [`http_body_util::LengthLimitError`] | 413 Payload Too Large |
//! | corrupt, truncated or trailing data | [`DecodeError`](crate::codec::DecodeError) | 400 Bad Request |
//! | the connection failed | the inner body's error | 400 Bad Request |
//!
//! axum's `Bytes`, `String`, `Json` and `Form` extractors map errors exactly this way, with
//! no extra code. When a limit of this layer's tripped, [`RequestDecompression`] gives the
//! 413 a body that names it (`Payload Too Large: the body inflates past 200:1 after
//! 1048576 bytes (ratio limit)`), which an extractor cannot: it sees only the error type. With hyper or tower directly, downcast the [`BoxError`](crate::BoxError):
//! `err.downcast_ref::<http_body_util::LengthLimitError>()` and
//! `err.downcast_ref::<tower_gzip::codec::DecodeError>()` (see [`DecompressionBody`]).
//!
//! axum also applies its own `DefaultBodyLimit` (2 MB) to what its extractors buffer; since
//! this layer sits outside the router's extractors, that limit counts *decoded* bytes too.
//!
//! # Example
//!
//! ```
//! use axum::{Router, routing::post};
//! use tower_gzip::decompression::RequestDecompressionLayer;
//!
//! async fn upload(body: String) -> String {
//!     format!("received {} decoded bytes", body.len())
//! }
//!
//! let app: Router = Router::new()
//!     .route("/upload", post(upload))
//!     .layer(RequestDecompressionLayer::new());
//! # let _ = app;
//! ```
//!
//! A client, with [`tower::ServiceBuilder`](https://docs.rs/tower):
//!
//! ```
//! use http_body_util::Full;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::ServiceBuilder;
//! use tower_gzip::decompression::DecompressionLayer;
//!
//! let client = Client::builder(TokioExecutor::new()).build_http::<Full<bytes::Bytes>>();
//! let client = ServiceBuilder::new()
//!     .layer(DecompressionLayer::new())
//!     .service(client);
//! # let _ = client;
//! ```

mod body;
mod capture;
mod coding;
mod limits;
mod request;
mod response;

pub use body::DecompressionBody;
pub use limits::{DecompressionLimits, RatioLimit};
pub use request::{
    RequestDecompression, RequestDecompressionFuture, RequestDecompressionLayer,
    RequestDecompressionResponseBody,
};
pub use response::{Decompression, DecompressionLayer, ResponseFuture};
