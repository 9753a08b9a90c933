use std::sync::Arc;

use tower_layer::Layer;

use super::builder::compression_builder_methods;
use super::service::Compression;
use super::settings::CompressionSettings;
use crate::predicate::{DefaultPredicate, Predicate};

/// Compresses response bodies with zstd, br, gzip or deflate, as the client's
/// `Accept-Encoding` allows.
///
/// See the [module docs](crate::compression) for what it does and when.
///
/// ```
/// use axum::{Router, routing::get};
/// use tower_gzip::compression::CompressionLayer;
///
/// let app: Router = Router::new()
///     .route("/", get(|| async { "hello ".repeat(100) }))
///     .layer(CompressionLayer::new());
/// ```
#[derive(Clone, Debug)]
pub struct CompressionLayer<P = DefaultPredicate> {
    settings: Arc<CompressionSettings>,
    predicate: P,
}

impl CompressionLayer {
    /// Every coding compiled in (zstd > br > gzip > deflate when q-values tie), each
    /// coding's default level, [`DefaultPredicate`], a minimum size of
    /// 256 bytes and the
    /// [global pool](crate::CodecPool::global).
    pub fn new() -> Self {
        CompressionLayer {
            settings: Arc::new(CompressionSettings::default()),
            predicate: DefaultPredicate::new(),
        }
    }
}

impl Default for CompressionLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<P> CompressionLayer<P> {
    compression_builder_methods!();

    /// Replaces the predicate that decides which responses to compress.
    ///
    /// The predicate decides alone, as in tower-http: `compress_when(|_, _, _, _| true)`
    /// compresses a 10-byte body. The hard rules still apply whatever it says (see the
    /// [module docs](crate::compression#what-gets-compressed)).
    pub fn compress_when<C: Predicate>(self, predicate: C) -> CompressionLayer<C> {
        CompressionLayer {
            settings: self.settings,
            predicate,
        }
    }

    /// Registers this layer's metrics with the recorder installed now, so that every series
    /// shows (at zero) before the first response, and publishes the level it is configured
    /// with for each coding compiled in as the `tower_gzip_level` gauge.
    /// Without it, the layer registers its series at its first response.
    ///
    /// The levels are the configured ones: a level chooser's choices per response are not
    /// gauges; the load governor sets them as it moves levels.
    #[cfg(feature = "metrics")]
    pub fn publish_metrics(&self) {
        self.settings.stats.handles();
        for &coding in crate::ContentCoding::ALL {
            let level = self.settings.levels.of(coding).native(coding);
            crate::telemetry::publish_level(coding, level.into());
        }
    }
}

impl<S, P: Clone> Layer<S> for CompressionLayer<P> {
    type Service = Compression<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        Compression::from_parts(inner, self.settings.clone(), self.predicate.clone())
    }
}
