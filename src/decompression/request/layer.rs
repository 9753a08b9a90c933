use tower_layer::Layer;

use super::RequestDecompression;
use crate::builders::builder_methods;
use crate::decompression::coding::Settings;

/// Decodes request bodies by their `Content-Encoding`: a [`Layer`] that wraps services in
/// [`RequestDecompression`].
///
/// Defaults: every coding compiled in decoded (`zstd`, `br`, `gzip` and `x-gzip`,
/// `deflate`), others refused with `415 Unsupported Media Type`,
/// [`DecompressionLimits::default`] (20 MiB, ratio 200 burst 3 past 1 MiB), decoders from
/// [`CodecPool::global`].
///
/// [`DecompressionLimits::default`]: crate::decompression::DecompressionLimits::default
/// [`CodecPool::global`]: crate::CodecPool::global
///
/// # Example
///
/// ```
/// use axum::{Router, routing::post};
/// use tower_gzip::decompression::{RatioLimit, RequestDecompressionLayer};
///
/// let app: Router = Router::new()
///     .route("/upload", post(|body: String| async move { body.len().to_string() }))
///     .layer(
///         RequestDecompressionLayer::new()
///             .max_decompressed_size(Some(8 * 1024 * 1024))
///             .ratio_limit(Some(RatioLimit::new(100, 3))),
///     );
/// ```
#[derive(Clone, Debug, Default)]
pub struct RequestDecompressionLayer {
    pub(super) settings: Settings,
    pub(super) pass_through_unaccepted: bool,
}

impl RequestDecompressionLayer {
    /// A layer with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forwards requests whose coding is unknown or disabled unchanged (headers and body)
    /// instead of answering 415. Off by default. Chains longer than
    /// [`MAX_CODINGS`](crate::decompression::MAX_CODINGS) are refused either way.
    pub fn pass_through_unaccepted(mut self, enable: bool) -> Self {
        self.pass_through_unaccepted = enable;
        self
    }

    builder_methods!(decompression);
}

impl<S> Layer<S> for RequestDecompressionLayer {
    type Service = RequestDecompression<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestDecompression {
            inner,
            settings: self.settings.clone(),
            pass_through_unaccepted: self.pass_through_unaccepted,
        }
    }
}
