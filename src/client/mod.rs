//! The client side: compressing requests and decoding responses.
//!
//! - [`RequestCompressionLayer`] compresses request bodies with a pooled gzip (or deflate)
//!   encoder and sets `Content-Encoding`.
//! - [`DecompressionLayer`](crate::decompression::DecompressionLayer) (in
//!   [`decompression`](crate::decompression), where tower-http has it) asks for compressed
//!   responses and decodes them, with the same
//!   [limits](crate::decompression::DecompressionLimits) as the server side: servers can send
//!   decompression bombs too.
//! - `ClientDictionaryStore` (cargo feature `dictionary-client`): the dictionaries (RFC 9842)
//!   the decompression layer learns from responses and offers on later requests.
//!
//! # Example: a hyper-util client
//!
//! ```no_run
//! use bytes::Bytes;
//! use http_body_util::{BodyExt, Full};
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::{ServiceBuilder, ServiceExt};
//! use tower_gzip::client::RequestCompressionLayer;
//! use tower_gzip::decompression::DecompressionLayer;
//!
//! # async fn run() -> Result<(), tower_gzip::BoxError> {
//! let client = Client::builder(TokioExecutor::new()).build_http();
//! let client = ServiceBuilder::new()
//!     .layer(DecompressionLayer::new())
//!     .layer(RequestCompressionLayer::new())
//!     .service(client);
//!
//! let document = serde_json::json!({ "items": vec!["a long, repetitive list"; 100] });
//! let request = http::Request::post("http://127.0.0.1:3000/api/echo")
//!     .header("content-type", "application/json")
//!     .body(Full::new(Bytes::from(document.to_string())))?;
//! // The body goes out gzip-compressed; the response comes back decoded.
//! let response = client.oneshot(request).await?;
//! let echoed = response.into_body().collect().await?.to_bytes();
//! assert_eq!(echoed, document.to_string());
//! # Ok(())
//! # }
//! ```

pub(crate) mod dictionaries;
mod layer;
mod service;

#[cfg(dictionary_client)]
pub use dictionaries::{
    ClientDictionaryStats, ClientDictionaryStore, ClientDictionaryStoreBuilder, linked_dictionaries,
};
pub use layer::RequestCompressionLayer;
pub use service::RequestCompression;
