use std::sync::Arc;

use tower_layer::Layer;

use super::service::{Compression, Settings};
use super::stats::CompressionStats;
use crate::codec::CompressionLevel;
use crate::pool::CodecPool;
use crate::predicate::{DefaultPredicate, Predicate};

/// Compresses response bodies with gzip or deflate, as the client's `Accept-Encoding` allows.
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

/// Bodies below this many bytes are sent as they are.
///
/// Measured on synthetic JSON with zlib-rs at level 6 (`cargo run --release --example
/// min_size` prints the table): gzip makes bodies under ~100 bytes *larger* (32 B -> 49 B,
/// 64 B -> 79 B), saves 26% at 128 B and 52% at 256 B, and 68-76% from 512 B to 1 KiB. 256 B
/// sits between tower-http's 32 B, which spends a compressor pass to grow tiny bodies, and Go
/// gzhttp's 1,024 B, which leaves half to two thirds of a typical 256-1023 B API response
/// uncompressed.
pub const DEFAULT_MIN_SIZE: u64 = 256;

impl CompressionLayer {
    /// gzip and deflate, the default level (6), [`DefaultPredicate`], a minimum size of
    /// [`DEFAULT_MIN_SIZE`] bytes and the [global pool](CodecPool::global).
    pub fn new() -> Self {
        CompressionLayer {
            settings: Arc::new(Settings {
                gzip: true,
                deflate: true,
                level: CompressionLevel::Default,
                min_size: DEFAULT_MIN_SIZE,
                jitter: 0,
                pool: CodecPool::global().clone(),
                stats: CompressionStats::new(),
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
    fn with(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    /// Offers gzip (default on).
    pub fn gzip(self, enable: bool) -> Self {
        self.with(|s| s.gzip = enable)
    }

    /// Offers deflate (zlib-wrapped, default on). gzip is preferred when both are acceptable.
    pub fn deflate(self, enable: bool) -> Self {
        self.with(|s| s.deflate = enable)
    }

    /// Turns gzip off.
    pub fn no_gzip(self) -> Self {
        self.gzip(false)
    }

    /// Turns deflate off.
    pub fn no_deflate(self) -> Self {
        self.deflate(false)
    }

    /// The compression level (default [`CompressionLevel::Default`], level 6).
    pub fn quality(self, level: CompressionLevel) -> Self {
        self.with(|s| s.level = level)
    }

    /// Bodies smaller than this are sent uncompressed (default [`DEFAULT_MIN_SIZE`]).
    ///
    /// When the size is unknown, up to this many bytes are read before deciding, but only
    /// while the body has data ready: if it goes pending first, the response is compressed,
    /// so streaming is never delayed.
    pub fn min_size(self, bytes: u64) -> Self {
        self.with(|s| s.min_size = bytes)
    }

    /// The pool to draw codec states from (default: [`CodecPool::global`]).
    pub fn pool(self, pool: CodecPool) -> Self {
        self.with(|s| s.pool = pool)
    }

    /// A BREACH mitigation, off by default (`0`): pads each gzip header with 1 to `max_bytes`
    /// random bytes (a header comment), so that the response length no longer reveals
    /// exactly how well secret and attacker-controlled content compressed together.
    ///
    /// Padding raises the number of requests an attacker needs; it does not make reflecting
    /// secrets next to attacker input safe. deflate (zlib) has no header room, so with
    /// jitter on, gzip responses are padded and deflate ones are not. Go's gzhttp does the
    /// same with `RandomJitter`.
    pub fn breach_jitter(self, max_bytes: u16) -> Self {
        self.with(|s| s.jitter = max_bytes)
    }

    /// Counters for the responses this layer's services handle.
    pub fn stats(&self) -> CompressionStats {
        self.settings.stats.clone()
    }

    /// Replaces the predicate that decides which responses to compress. Hard rules apply
    /// whatever the predicate says (see the [module docs](crate::compression)).
    pub fn compress_when<C: Predicate>(self, predicate: C) -> CompressionLayer<C> {
        CompressionLayer {
            settings: self.settings,
            predicate,
        }
    }
}

impl<S, P: Clone> Layer<S> for CompressionLayer<P> {
    type Service = Compression<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        Compression::from_parts(inner, self.settings.clone(), self.predicate.clone())
    }
}
