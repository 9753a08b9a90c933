use std::sync::Arc;

use tower_layer::Layer;

use super::RequestCompression;
use crate::CodecPool;
use crate::builders::builder_methods;
use crate::codec::{ContentCoding, Levels};
use crate::negotiate::Offered;
use crate::predicate::{DefaultPredicate, Predicate};

/// Requests whose body is known to be smaller than this are sent uncompressed by default:
/// 1 KiB, Go gzhttp's figure. Below it, compression saves less than it costs the peer.
pub const DEFAULT_REQUEST_MIN_SIZE: u64 = 1024;

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// The codings that may be sent; the most preferred one enabled is used.
    pub(crate) offered: Offered,
    pub(crate) levels: Levels,
    pub(crate) min_size: u64,
    pub(crate) pool: CodecPool,
}

impl Default for Settings {
    fn default() -> Self {
        // gzip alone by default: every server that decodes request bodies takes it.
        let mut offered = Offered::default();
        for format in ContentCoding::PLAIN {
            offered.set(*format, *format == ContentCoding::Gzip);
        }
        Settings {
            offered,
            levels: Levels::default(),
            min_size: DEFAULT_REQUEST_MIN_SIZE,
            pool: CodecPool::global().clone(),
        }
    }
}

impl Settings {
    /// The coding requests are sent with: the most preferred enabled one.
    pub(crate) fn coding(&self) -> Option<ContentCoding> {
        self.offered.in_order().next()
    }
}

/// Compresses request bodies: a [`Layer`] that wraps client services in
/// [`RequestCompression`].
///
/// Defaults: gzip at level 6, bodies of at least 1 KiB (or of unknown size),
/// [`DefaultPredicate`] (already compressed content types are sent as they are), encoders
/// from [`CodecPool::global`].
///
/// # Example
///
/// ```
/// use tower::ServiceBuilder;
/// use tower_gzip::CompressionLevel;
/// use tower_gzip::client::RequestCompressionLayer;
/// use tower_gzip::compression::predicate::{DefaultPredicate, Predicate, RequestFn};
///
/// # fn wrap<S>(client: S) {
/// let client = ServiceBuilder::new()
///     .layer(
///         RequestCompressionLayer::new()
///             .quality(CompressionLevel::Fastest)
///             .min_size(4096)
///             .compress_when(DefaultPredicate::new().and(RequestFn::new(|_, uri: &http::Uri, _| {
///                 uri.path().starts_with("/api/")
///             }))),
///     )
///     .service(client);
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct RequestCompressionLayer<P = DefaultPredicate> {
    pub(super) settings: Arc<Settings>,
    pub(super) predicate: P,
}

impl RequestCompressionLayer {
    /// A layer with the defaults.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<P> RequestCompressionLayer<P> {
    builder_methods!(request_compression Settings);

    /// Replaces the predicate that decides which requests to compress; it sees each request
    /// through [`Predicate::should_compress_request`].
    pub fn compress_when<C: Predicate>(self, predicate: C) -> RequestCompressionLayer<C> {
        RequestCompressionLayer {
            settings: self.settings,
            predicate,
        }
    }
}

impl<S, P: Clone> Layer<S> for RequestCompressionLayer<P> {
    type Service = RequestCompression<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestCompression {
            inner,
            settings: self.settings.clone(),
            predicate: self.predicate.clone(),
        }
    }
}
