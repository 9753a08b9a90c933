//! gRPC message compression for tonic and any tower service speaking gRPC over HTTP/2,
//! over the same [`CodecPool`](crate::CodecPool) and codecs as the HTTP layers.
//!
//! gRPC compresses each message, not the body: a message is a 5-byte prefix (a compressed
//! flag and a big-endian `u32` length) and its bytes, compressed whole in the coding named by
//! `grpc-encoding` when the flag is set, that coding chosen from the peer's
//! `grpc-accept-encoding` (the gRPC "Compression" and "HTTP/2 protocol" documents). So these
//! are layers of their own, not modes of the HTTP ones:
//!
//! - [`GrpcCompressionLayer`], for servers (`tonic::transport::Server::builder().layer(..)`):
//!   decodes request messages, compresses response messages in the best coding the client
//!   accepts, with a level per coding and a size under which messages go uncompressed.
//! - [`GrpcClientCompressionLayer`], its mirror for clients (a tonic `Channel`).
//!
//! Each message draws its codec state (a deflate window, a zstd context) from the pool and
//! gives it back when it is done, so a warm pool makes a message cost its output buffer and
//! nothing else. Streaming calls go message by message in both directions; a body holds at
//! most one message at a time. Received messages are held to a decoded-size limit (4 MiB by
//! default, tonic's) and a ratio limit, checked while they inflate.
//!
//! A call the layers cannot carry ends with the gRPC status the spec names, with a
//! `grpc-message` saying why: `RESOURCE_EXHAUSTED` (8) for a message over a limit,
//! `UNIMPLEMENTED` (12) for a `grpc-encoding` not decoded here (the answer lists ours in
//! `grpc-accept-encoding`), `INTERNAL` (13) for a corrupt or truncated message, a broken
//! prefix, or a message flagged compressed under `grpc-encoding: identity`. Otherwise
//! trailers and `grpc-status` pass untouched.
//!
//! The codings are gzip, deflate (zlib) and, with its feature, zstd.
//!
//! # Example
//!
//! ```
//! use tower::ServiceBuilder;
//! use tower_gzip::grpc::{GrpcClientCompressionLayer, GrpcCompressionLayer};
//! use tower_gzip::{CompressionLevel, ContentCoding};
//!
//! // Server side: tonic's `Server::builder().layer(server)`.
//! let server = GrpcCompressionLayer::new()
//!     .prefer(&[ContentCoding::Gzip])
//!     .level(ContentCoding::Gzip, CompressionLevel::Precise(3));
//!
//! // Client side: around a tonic `Channel` (or any HTTP/2 client service).
//! # fn client<S>(channel: S) {
//! let channel = ServiceBuilder::new()
//!     .layer(GrpcClientCompressionLayer::new().send(Some(ContentCoding::Gzip)))
//!     .service(channel);
//! # }
//! # let _ = server;
//! ```

use http::HeaderMap;

mod body;
mod client;
mod encoding;
mod frame;
mod message;
mod server;
mod settings;
mod status;

pub use body::GrpcBody;
pub use client::{GrpcClientCompression, GrpcClientCompressionLayer};
pub use server::GrpcCompressionLayer;
pub use status::{Code, GrpcStatus};

/// Whether `headers` are a gRPC call's: `content-type: application/grpc` or
/// `application/grpc+proto` and the like, not gRPC-Web, whose bodies are framed otherwise.
fn is_grpc(headers: &HeaderMap) -> bool {
    let Some(content_type) = headers.get(http::header::CONTENT_TYPE) else {
        return false;
    };
    let value = content_type.as_bytes();
    let prefix = value.get(..16);
    prefix.is_some_and(|p| p.eq_ignore_ascii_case(b"application/grpc"))
        && matches!(value.get(16), None | Some(b'+' | b';'))
}
