use tower_layer::Layer;

use super::Decompression;
use crate::builders::builder_methods;
use crate::decompression::coding::Settings;

/// Asks for compressed responses and decodes them: a [`Layer`] that wraps a client service
/// in [`Decompression`].
///
/// Defaults: `gzip` (and `x-gzip`) and `deflate` accepted and decoded,
/// [`DecompressionLimits::default`] (20 MiB, ratio 200 burst 3 past 1 MiB; servers can send
/// bombs too), decoders from [`CodecPool::global`].
///
/// [`DecompressionLimits::default`]: crate::decompression::DecompressionLimits::default
/// [`CodecPool::global`]: crate::CodecPool::global
///
/// # Example
///
/// ```
/// use tower::ServiceBuilder;
/// use tower_gzip::decompression::DecompressionLayer;
///
/// # fn wrap<S>(client: S) {
/// let client = ServiceBuilder::new()
///     .layer(DecompressionLayer::new().max_decompressed_size(Some(100 * 1024 * 1024)))
///     .service(client);
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct DecompressionLayer {
    pub(super) settings: Settings,
}

impl DecompressionLayer {
    /// A layer with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    builder_methods!(decompression);
}

impl<S> Layer<S> for DecompressionLayer {
    type Service = Decompression<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Decompression {
            inner,
            settings: self.settings.clone(),
        }
    }
}
