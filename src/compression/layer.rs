use std::sync::Arc;

use tower_layer::Layer;

use super::service::{Compression, Settings};
use super::stats::CompressionStats;
use crate::builders::coding_builders;
use crate::codec::CompressionLevel;
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
                level: CompressionLevel::Default,
                min_size: DEFAULT_MIN_SIZE,
                jitter: 0,
                pool: CodecPool::global().clone(),
                stats: CompressionStats::new(),
                dictionaries: None,
                dictionary_codings: super::dictionary::COMPILED.to_vec(),
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

/// The builder methods [`CompressionLayer`] and [`Compression`] share; the type needs a
/// `settings: Arc<Settings>` field.
macro_rules! compression_builders {
    () => {
        fn with(mut self, change: impl FnOnce(&mut Settings)) -> Self {
            change(Arc::make_mut(&mut self.settings));
            self
        }

        fn set_coding(self, format: $crate::codec::Format, enable: bool) -> Self {
            self.with(|s| s.offered.set(format, enable))
        }

        /// Which coding wins when the client's q-values tie: the codings listed, in that
        /// order, then the others in the default order (zstd, br, gzip, deflate).
        pub fn prefer(self, order: &[$crate::codec::Format]) -> Self {
            self.with(|s| s.offered.prefer(order))
        }

        /// The compression level (default [`CompressionLevel::Default`]: gzip and deflate 6,
        /// zstd 3, br 4), mapped per coding as [`CompressionLevel`] shows.
        pub fn quality(self, level: CompressionLevel) -> Self {
            self.with(|s| s.level = level)
        }

        /// The size floor (default [`DEFAULT_MIN_SIZE`](crate::compression::DEFAULT_MIN_SIZE)).
        ///
        /// [`DefaultPredicate`] refuses bodies known to be smaller. A body of unknown size
        /// is read ahead while it has frames ready: under [`DefaultPredicate`], one that ends
        /// below the floor is sent as it is; one that goes pending first is compressed, so
        /// streaming is never delayed. A custom predicate decides alone, whatever the size.
        pub fn min_size(self, bytes: u64) -> Self {
            self.with(|s| s.min_size = bytes)
        }

        /// The pool to draw codec states from (default: [`CodecPool::global`]).
        pub fn pool(self, pool: CodecPool) -> Self {
            self.with(|s| s.pool = pool)
        }

        /// A BREACH mitigation, off by default (`0`): pads each gzip header with 1 to
        /// `max_bytes` random bytes (a header comment), so that the response length no
        /// longer reveals exactly how well secret and attacker-controlled content compressed
        /// together.
        ///
        /// Padding raises the number of requests an attacker needs; it does not make
        /// reflecting secrets next to attacker input safe. Only gzip has header room, so
        /// with jitter on, gzip responses are padded and the other codings are not. Go's
        /// gzhttp does the same with `RandomJitter`.
        pub fn breach_jitter(self, max_bytes: u16) -> Self {
            self.with(|s| s.jitter = max_bytes)
        }

        /// Serves dictionary-compressed responses (RFC 9842, `dcz` and `dcb`) with the
        /// dictionaries in `store`: a request whose `Available-Dictionary` names one of them,
        /// whose `Accept-Encoding` offers `dcz` or `dcb`, and that passes the readability
        /// gate ([`gate`](crate::dictionary::gate)) gets its response compressed against
        /// that dictionary, if the predicate and the size floor say compress. Every other
        /// request is served as without it, and every response that varies with
        /// `Accept-Encoding` also varies with `Available-Dictionary`.
        ///
        /// The store is shared: add and retire dictionaries while the server runs.
        pub fn dictionaries(self, store: $crate::dictionary::DictionaryStore) -> Self {
            self.with(|s| s.dictionaries = Some(store))
        }

        /// The dictionary codings this layer makes, most preferred first when the client's
        /// q-values tie (default: `dcz`, then `dcb`, those compiled in). An empty list turns
        /// dictionary compression off.
        pub fn dictionary_codings(self, order: &[$crate::dictionary::DictCoding]) -> Self {
            let order: Vec<_> = order
                .iter()
                .copied()
                .filter(|c| $crate::compression::dictionary::COMPILED.contains(c))
                .collect();
            self.with(|s| s.dictionary_codings = order)
        }

        /// Counters for the responses handled with these settings.
        pub fn stats(&self) -> CompressionStats {
            self.settings.stats.clone()
        }
    };
}

pub(crate) use compression_builders;

impl<P> CompressionLayer<P> {
    coding_builders!("offered");
    compression_builders!();

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
}

impl<S, P: Clone> Layer<S> for CompressionLayer<P> {
    type Service = Compression<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        Compression::from_parts(inner, self.settings.clone(), self.predicate.clone())
    }
}
