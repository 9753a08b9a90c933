//! What a [`CompressionLayer`](super::CompressionLayer) is configured with, and how a level
//! is chosen per response: [`ToCompress`] is what a level chooser sees of one response (see
//! [`CompressionLayer::level_for`](super::CompressionLayer::level_for)).

use std::fmt;
use std::sync::Arc;

use http::{HeaderMap, StatusCode};

use super::governor::Governor;
use super::stats::CompressionStats;
use crate::CompressionLevel;
use crate::ContentCoding;
use crate::cache::VariantCache;
use crate::codec::Levels;
use crate::dictionary::DictionaryStore;
use crate::negotiate::Offered;
use crate::pool::CodecPool;

/// Bodies below this many bytes are sent as they are by
/// [`DefaultPredicate`](crate::predicate::DefaultPredicate) (and by any predicate when the
/// size is only learned by reading the body).
///
/// gzip makes the smallest bodies larger and saves about half at this size (`cargo run
/// --release -p tower-gzip-bench --bin min_size` prints the table; BENCHMARKS.md, "The size floor"). It sits
/// between tower-http's 32 B, which spends a compressor pass to grow tiny bodies, and Go
/// gzhttp's 1,024 B, which leaves much of a typical small API response uncompressed.
pub(crate) const DEFAULT_MIN_SIZE: u64 = 256;

/// What a [`CompressionLayer`](super::CompressionLayer) or
/// [`Compression`](super::Compression) is configured with, shared by its clones.
#[derive(Clone, Debug)]
pub(crate) struct CompressionSettings {
    pub(crate) offered: Offered,
    pub(crate) levels: Levels,
    pub(crate) min_size: u64,
    pub(crate) jitter: u16,
    pub(crate) pool: CodecPool,
    pub(crate) stats: CompressionStats,
    /// Dictionaries for `dcz`/`dcb` responses, when turned on.
    pub(crate) dictionaries: Option<DictionaryStore>,
    pub(crate) dictionary_codings: Vec<ContentCoding>,
    /// Chooses the level per response, when set.
    pub(crate) level_chooser: Option<LevelChooser>,
    /// Steps levels down under load, when set.
    pub(crate) governor: Option<Governor>,
    /// Compressed representations served again, when set.
    pub(crate) cache: Option<VariantCache>,
}

impl CompressionSettings {
    /// The cache, when there is one and it may hold `coding`'s bytes: a coding padded by
    /// the BREACH jitter is padded per response, so never cached.
    pub(crate) fn cache_for(&self, coding: ContentCoding) -> Option<&VariantCache> {
        self.cache.as_ref().filter(|_| !self.jittered(coding))
    }

    /// Whether `coding`'s responses get BREACH jitter: whenever the jitter is on (every
    /// coding has room for padding).
    pub(crate) fn jittered(&self, _coding: ContentCoding) -> bool {
        self.jitter > 0
    }
}

impl Default for CompressionSettings {
    /// Every coding compiled in, each at its default level, the size floor, the global pool.
    fn default() -> Self {
        CompressionSettings {
            offered: Offered::default(),
            levels: Levels::default(),
            min_size: DEFAULT_MIN_SIZE,
            jitter: 0,
            pool: CodecPool::global().clone(),
            stats: CompressionStats::new(),
            dictionaries: None,
            dictionary_codings: ContentCoding::DICTIONARY.to_vec(),
            level_chooser: None,
            governor: None,
            cache: None,
        }
    }
}

impl CompressionSettings {
    /// Whether responses also vary with `Available-Dictionary`.
    pub(crate) fn serves_dictionaries(&self) -> bool {
        self.dictionaries.is_some()
    }
}

/// One response the layer is about to compress, as a level chooser sees it: the coding
/// chosen for it, the level the layer would use, and the response's parts.
#[derive(Debug)]
pub struct ToCompress<'a> {
    pub(super) coding: ContentCoding,
    pub(super) level: CompressionLevel,
    pub(super) status: StatusCode,
    pub(super) headers: &'a HeaderMap,
    pub(super) size: Option<u64>,
    pub(super) path: &'a str,
}

impl ToCompress<'_> {
    /// The coding negotiated (or `dcz`/`dcb` against the client's dictionary).
    pub fn coding(&self) -> ContentCoding {
        self.coding
    }

    /// The level the layer is configured with for this coding.
    pub fn level(&self) -> CompressionLevel {
        self.level
    }

    /// The response's status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response's headers (`Content-Type`, ...).
    pub fn headers(&self) -> &HeaderMap {
        self.headers
    }

    /// The body's size when known before it is read (`Content-Length` or an exact size
    /// hint).
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// The request's path (no query).
    pub fn path(&self) -> &str {
        self.path
    }
}

/// A level chooser: the level for one response, or `None` to send it unencoded.
pub(crate) type ChooseLevel =
    Arc<dyn Fn(&ToCompress<'_>) -> Option<CompressionLevel> + Send + Sync + 'static>;

/// [`ChooseLevel`] in the settings, printable.
#[derive(Clone)]
pub(crate) struct LevelChooser(pub(crate) ChooseLevel);

impl fmt::Debug for LevelChooser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LevelChooser(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_padded_coding_bypasses_the_cache_with_jitter_on() {
        let mut settings = CompressionSettings {
            cache: Some(VariantCache::new(1 << 20)),
            ..CompressionSettings::default()
        };
        for &coding in ContentCoding::ALL {
            assert!(
                settings.cache_for(coding).is_some(),
                "{coding:?}, no jitter"
            );
        }
        settings.jitter = 16;
        for &coding in ContentCoding::ALL {
            assert!(settings.jittered(coding), "{coding:?}");
            assert!(settings.cache_for(coding).is_none(), "{coding:?}");
        }
    }
}
