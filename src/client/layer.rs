use std::fmt;
use std::sync::Arc;

use http::request::Parts;
use tower_layer::Layer;

use super::RequestCompression;
use crate::CodecPool;
use crate::codec::{CompressionLevel, Format};

/// Requests whose body is known to be smaller than this are sent uncompressed by default:
/// 1 KiB, Go gzhttp's figure. Below it, compression saves less than it costs the peer.
pub const DEFAULT_REQUEST_MIN_SIZE: u64 = 1024;

/// A caller's decision on whether to compress a request, from its head.
pub(crate) type RequestPredicate = Arc<dyn Fn(&Parts) -> bool + Send + Sync>;

#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) format: Format,
    pub(crate) level: CompressionLevel,
    pub(crate) min_size: u64,
    pub(crate) skip_compressed_types: bool,
    pub(crate) predicate: Option<RequestPredicate>,
    pub(crate) pool: CodecPool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            format: Format::Gzip,
            level: CompressionLevel::Default,
            min_size: DEFAULT_REQUEST_MIN_SIZE,
            skip_compressed_types: true,
            predicate: None,
            pool: CodecPool::global().clone(),
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("format", &self.format)
            .field("level", &self.level)
            .field("min_size", &self.min_size)
            .field("skip_compressed_types", &self.skip_compressed_types)
            .field(
                "predicate",
                &self.predicate.as_ref().map(|_| "Fn(&Parts) -> bool"),
            )
            .field("pool", &self.pool)
            .finish()
    }
}

/// The builder methods shared by the layer and the service; the type needs a
/// `settings: Arc<Settings>` field.
macro_rules! request_compression_builders {
    () => {
        /// The coding to send: [`Format::Gzip`](crate::codec::Format::Gzip) (the default) or
        /// [`Format::Deflate`](crate::codec::Format::Deflate) (zlib).
        pub fn coding(self, format: $crate::codec::Format) -> Self {
            self.with(|s| s.format = format)
        }

        /// The compression level (default [`CompressionLevel::Default`](crate::CompressionLevel::Default), 6).
        pub fn level(self, level: $crate::CompressionLevel) -> Self {
            self.with(|s| s.level = level)
        }

        /// Bodies whose size is known (exact size hint or `Content-Length`) and smaller than
        /// this are sent as they are. Bodies of unknown size are compressed. Default
        /// [`DEFAULT_REQUEST_MIN_SIZE`](crate::client::DEFAULT_REQUEST_MIN_SIZE) (1 KiB).
        pub fn min_size(self, min_size: u64) -> Self {
            self.with(|s| s.min_size = min_size)
        }

        /// Whether bodies whose `Content-Type` is already compressed (images other than SVG,
        /// audio, video, archives, gRPC; see
        /// [`DefaultPredicate`](crate::predicate::DefaultPredicate)) are sent as they are. On
        /// by default.
        pub fn skip_compressed_types(self, skip: bool) -> Self {
            self.with(|s| s.skip_compressed_types = skip)
        }

        /// Compresses only requests for which `predicate` returns true (on top of the
        /// built-in rules).
        pub fn compress_when<F>(self, predicate: F) -> Self
        where
            F: Fn(&http::request::Parts) -> bool + Send + Sync + 'static,
        {
            self.with(|s| s.predicate = Some(std::sync::Arc::new(predicate)))
        }

        /// The pool encoders are drawn from (default [`CodecPool::global`](crate::CodecPool::global)).
        pub fn pool(self, pool: $crate::CodecPool) -> Self {
            self.with(|s| s.pool = pool)
        }

        fn with(mut self, f: impl FnOnce(&mut super::layer::Settings)) -> Self {
            f(std::sync::Arc::make_mut(&mut self.settings));
            self
        }
    };
}

pub(crate) use request_compression_builders;

/// Compresses request bodies: a [`Layer`] that wraps client services in
/// [`RequestCompression`].
///
/// Defaults: gzip at level 6, bodies of at least 1 KiB (or of unknown size), already
/// compressed content types skipped, encoders from [`CodecPool::global`].
///
/// # Example
///
/// ```
/// use tower::ServiceBuilder;
/// use tower_gzip::CompressionLevel;
/// use tower_gzip::client::RequestCompressionLayer;
/// use tower_gzip::codec::Format;
///
/// # fn wrap<S>(client: S) {
/// let client = ServiceBuilder::new()
///     .layer(
///         RequestCompressionLayer::new()
///             .coding(Format::Gzip)
///             .level(CompressionLevel::Fastest)
///             .min_size(4096)
///             .compress_when(|parts| parts.uri.path().starts_with("/api/")),
///     )
///     .service(client);
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct RequestCompressionLayer {
    pub(super) settings: Arc<Settings>,
}

impl RequestCompressionLayer {
    /// A layer with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    request_compression_builders!();
}

impl<S> Layer<S> for RequestCompressionLayer {
    type Service = RequestCompression<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestCompression {
            inner,
            settings: self.settings.clone(),
        }
    }
}
