use std::sync::Arc;

use tower_layer::Layer;

use super::RequestCompression;
use crate::CodecPool;
use crate::CompressionLevel;
use crate::ContentCoding;
use crate::codec::Levels;
use crate::predicate::{DefaultPredicate, Predicate};

/// Requests whose body is known to be smaller than this are sent uncompressed by default:
/// 1 KiB, Go gzhttp's figure. Below it, compression saves less than it costs the peer.
pub(crate) const DEFAULT_REQUEST_MIN_SIZE: u64 = 1024;

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// The coding requests are sent with.
    pub(crate) coding: ContentCoding,
    pub(crate) levels: Levels,
    pub(crate) min_size: u64,
    pub(crate) pool: CodecPool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            // gzip by default: every server that decodes request bodies takes it.
            coding: ContentCoding::Gzip,
            levels: Levels::default(),
            min_size: DEFAULT_REQUEST_MIN_SIZE,
            pool: CodecPool::global().clone(),
        }
    }
}

impl Settings {
    /// The coding requests are sent with, if this build can encode it.
    pub(crate) fn coding(&self) -> Option<ContentCoding> {
        let coding = self.coding;
        (coding.is_compiled() && !coding.needs_dictionary()).then_some(coding)
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
    fn with(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    /// The coding request bodies are sent with (default gzip, which every server that
    /// decodes request bodies takes). A coding this build cannot encode (its cargo feature
    /// off, or `dcz`/`dcb`, which need a dictionary) sends bodies as they are.
    pub fn coding(self, coding: ContentCoding) -> Self {
        self.with(|s| s.coding = coding)
    }

    /// The compression level (default
    /// [`CompressionLevel::Default`]: gzip and deflate 6, zstd 3, br 4), mapped per coding as
    /// [`CompressionLevel`] shows.
    pub fn quality(self, level: CompressionLevel) -> Self {
        self.with(|s| s.levels = Levels::all(level))
    }

    /// Under [`DefaultPredicate`], bodies whose size is known (exact size hint or
    /// `Content-Length`) and smaller than `min_size` are sent as they are; bodies of unknown
    /// size are compressed. Default 1 KiB, Go gzhttp's figure: below it, compression saves
    /// less than it costs the peer.
    pub fn min_size(self, min_size: u64) -> Self {
        self.with(|s| s.min_size = min_size)
    }

    /// The pool to draw encoder states from (default: [`CodecPool::global`]).
    pub fn pool(self, pool: CodecPool) -> Self {
        self.with(|s| s.pool = pool)
    }

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
