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
/// use tower_gzip::decompression::{DecompressionLimits, RatioLimit, RequestDecompressionLayer};
///
/// let limits = DecompressionLimits::new()
///     .with_max_size(Some(8 * 1024 * 1024))
///     .with_ratio(Some(RatioLimit::new(100, 3)));
/// let app: Router = Router::new()
///     .route("/upload", post(|body: String| async move { body.len().to_string() }))
///     .layer(RequestDecompressionLayer::new().limits(limits));
/// ```
///
/// # With axum's body limit
///
/// axum's extractors (`String`, `Bytes`, `Json`, ...) read the body this layer has decoded,
/// under axum's own limit (`DefaultBodyLimit`, 2 MB unless set), and answer
/// `413 Payload Too Large` past it, as this layer does past its own. So with axum the lower
/// of the two limits counts, in decoded bytes. To let this layer's limit decide, raise
/// axum's to it (or `DefaultBodyLimit::disable()`):
///
/// ```
/// use axum::{Router, body::Body, extract::DefaultBodyLimit, routing::post};
/// use tower::ServiceExt;
/// use tower_gzip::codec::OneShot;
/// use tower_gzip::decompression::{DecompressionLimits, RequestDecompressionLayer};
/// use tower_gzip::ContentCoding;
///
/// const LIMIT: usize = 8 * 1024 * 1024;
/// let limits = DecompressionLimits::new().with_max_size(Some(LIMIT));
/// let app: Router = Router::new()
///     .route("/upload", post(|body: String| async move { body.len().to_string() }))
///     .layer(RequestDecompressionLayer::new().limits(limits))
///     .layer(DefaultBodyLimit::max(LIMIT));
///
/// // 3.9 MB once decoded: past axum's default, within both limits here.
/// let plain: String = (0..500_000).map(|i| format!("{i},")).collect();
/// let mut gzip = bytes::BytesMut::new();
/// OneShot::new(ContentCoding::Gzip).encode(plain.as_bytes(), &mut gzip).unwrap();
/// let request = http::Request::post("/upload")
///     .header("content-encoding", "gzip")
///     .body(Body::from(gzip.freeze()))
///     .unwrap();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let response = app.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), 200);
/// # });
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
    /// three are refused either way.
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
