use std::sync::Arc;

use tower_layer::Layer;

use super::service::{Compression, Settings};
use super::stats::CompressionStats;
use crate::builders::builder_methods;
use crate::codec::Levels;
use crate::negotiate::Offered;
use crate::pool::CodecPool;
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
    settings: Arc<Settings>,
    predicate: P,
}

/// Bodies below this many bytes are sent as they are by [`DefaultPredicate`] (and by any
/// predicate when the size is only learned by reading the body).
///
/// Measured on synthetic JSON with zlib-rs at level 6 (`cargo run --release --example
/// min_size` prints the table): gzip makes bodies under ~100 bytes *larger* (32 B -> 49 B,
/// 64 B -> 79 B), saves 26% at 128 B and 52% at 256 B, and 68-76% from 512 B to 1 KiB. 256 B
/// sits between tower-http's 32 B, which spends a compressor pass to grow tiny bodies, and Go
/// gzhttp's 1,024 B, which leaves half to two thirds of a typical 256-1023 B API response
/// uncompressed.
pub const DEFAULT_MIN_SIZE: u64 = 256;

impl CompressionLayer {
    /// Every coding compiled in (zstd > br > gzip > deflate when q-values tie), each
    /// coding's default level, [`DefaultPredicate`], a minimum size of [`DEFAULT_MIN_SIZE`]
    /// bytes and the [global pool](CodecPool::global).
    pub fn new() -> Self {
        CompressionLayer {
            settings: Arc::new(Settings {
                offered: Offered::default(),
                levels: Levels::default(),
                min_size: DEFAULT_MIN_SIZE,
                jitter: 0,
                pool: CodecPool::global().clone(),
                stats: CompressionStats::new(),
                dictionaries: None,
                dictionary_codings: crate::ContentCoding::DICTIONARY.to_vec(),
                level_chooser: None,
                governor: None,
            }),
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
    builder_methods!(compression);

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
    /// with for each coding compiled in as the [`LEVEL`](crate::telemetry::LEVEL) gauge.
    /// Without it, the layer registers its series at its first response.
    ///
    /// The levels are the configured ones: a level chooser's choices per response are not
    /// gauges, and whatever changes levels at run time calls
    /// [`publish_level`](crate::telemetry::publish_level).
    #[cfg(feature = "metrics")]
    pub fn publish_metrics(&self) {
        self.settings.stats.handles();
        for &coding in crate::ContentCoding::ALL {
            let level = self.settings.levels.of(coding).resolve(coding).get();
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
