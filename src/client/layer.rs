use std::sync::Arc;

use tower_layer::Layer;

use super::RequestCompression;
use crate::CodecPool;
use crate::builders::coding_builders;
use crate::codec::{CompressionLevel, Format};
use crate::negotiate::Offered;
use crate::predicate::{DefaultPredicate, Predicate};

/// Requests whose body is known to be smaller than this are sent uncompressed by default:
/// 1 KiB, Go gzhttp's figure. Below it, compression saves less than it costs the peer.
pub const DEFAULT_REQUEST_MIN_SIZE: u64 = 1024;

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// The codings that may be sent; the most preferred one enabled is used.
    pub(crate) offered: Offered,
    pub(crate) level: CompressionLevel,
    pub(crate) min_size: u64,
    pub(crate) pool: CodecPool,
}

impl Default for Settings {
    fn default() -> Self {
        // gzip alone by default: every server that decodes request bodies takes it.
        let mut offered = Offered::default();
        for format in Format::ALL {
            offered.set(*format, *format == Format::Gzip);
        }
        Settings {
            offered,
            level: CompressionLevel::Default,
            min_size: DEFAULT_REQUEST_MIN_SIZE,
            pool: CodecPool::global().clone(),
        }
    }
}

impl Settings {
    /// The coding requests are sent with: the most preferred enabled one.
    pub(crate) fn coding(&self) -> Option<Format> {
        self.offered.in_order().next()
    }
}

/// The builder methods shared by the layer and the service; the type needs
/// `settings: Arc<Settings>` and `predicate` fields.
macro_rules! request_compression_builders {
    () => {
        coding_builders!("sent (the most preferred one enabled is used: zstd, br, gzip, deflate)");

        fn set_coding(self, format: $crate::codec::Format, enable: bool) -> Self {
            self.with(|s| s.offered.set(format, enable))
        }

        /// Sends `format` and nothing else (default: [`Format::Gzip`](crate::codec::Format::Gzip)).
        pub fn coding(self, format: $crate::codec::Format) -> Self {
            self.with(|s| {
                for other in $crate::codec::Format::ALL {
                    s.offered.set(*other, *other == format);
                }
            })
        }

        /// The compression level (default [`CompressionLevel::Default`](crate::CompressionLevel::Default)).
        pub fn quality(self, level: $crate::CompressionLevel) -> Self {
            self.with(|s| s.level = level)
        }

        /// Under [`DefaultPredicate`](crate::predicate::DefaultPredicate), bodies whose size
        /// is known (exact size hint or `Content-Length`) and smaller than this are sent as
        /// they are; bodies of unknown size are compressed. Default
        /// [`DEFAULT_REQUEST_MIN_SIZE`](crate::client::DEFAULT_REQUEST_MIN_SIZE) (1 KiB).
        pub fn min_size(self, min_size: u64) -> Self {
            self.with(|s| s.min_size = min_size)
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
/// use tower_gzip::predicate::{DefaultPredicate, Predicate, RequestFn};
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
    request_compression_builders!();

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
