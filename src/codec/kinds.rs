//! The kinds of state the codecs pool, and the pool's counters by kind.
//!
//! Each kind has its slot in every pool here; a codec's state type names its kind in its
//! [`PooledState`](crate::pool::PooledState) impl. A new kind is one line here and one field
//! of [`PoolStats`].

use crate::pool::{CodecPool, Kind, KindStats};

/// Streaming deflate compressors (raw deflate: gzip and zlib framing are the codec's).
pub(crate) const DEFLATE_COMPRESSORS: Kind = Kind::new(0, "compressors");
/// Raw deflate decompressors.
pub(crate) const DEFLATE_DECOMPRESSORS: Kind = Kind::new(1, "decompressors");
/// libdeflate whole-buffer compressors.
pub(crate) const BLOCK_COMPRESSORS: Kind = Kind::new(2, "block_compressors");
/// zstd compression contexts.
pub(crate) const ZSTD_COMPRESSORS: Kind = Kind::new(3, "zstd_compressors");
/// zstd decompression contexts.
pub(crate) const ZSTD_DECOMPRESSORS: Kind = Kind::new(4, "zstd_decompressors");
/// Brotli encoder memory.
pub(crate) const BR_COMPRESSORS: Kind = Kind::new(5, "br_compressors");
/// Brotli decoder memory.
pub(crate) const BR_DECOMPRESSORS: Kind = Kind::new(6, "br_decompressors");
/// zstd compression contexts for `dcz`.
pub(crate) const DCZ_COMPRESSORS: Kind = Kind::new(7, "dictionary_compressors");
/// zstd decompression contexts for `dcz`.
pub(crate) const DCZ_DECOMPRESSORS: Kind = Kind::new(8, "dictionary_decompressors");
/// C brotli encoder memory for `dcb`.
pub(crate) const DCB_COMPRESSORS: Kind = Kind::new(9, "dcb_compressors");

/// A snapshot of the pool's counters by kind, from [`CodecPool::stats`]. Kinds whose cargo
/// feature is off stay at zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Streaming deflate compressors (gzip and deflate).
    pub compressors: KindStats,
    /// Deflate decompressors (gzip and deflate).
    pub decompressors: KindStats,
    /// libdeflate whole-buffer compressors, used for gzip and deflate bodies known in full.
    pub block_compressors: KindStats,
    /// zstd compression contexts (streaming and one-shot).
    pub zstd_compressors: KindStats,
    /// zstd decompression contexts.
    pub zstd_decompressors: KindStats,
    /// Brotli encoder memory (see [`codec`](crate::codec)'s br notes).
    pub br_compressors: KindStats,
    /// Brotli decoder memory.
    pub br_decompressors: KindStats,
    /// zstd compression contexts for `dcz` (raw-content dictionaries referenced per
    /// response).
    pub dictionary_compressors: KindStats,
    /// zstd decompression contexts for `dcz`.
    pub dictionary_decompressors: KindStats,
    /// C brotli encoder memory for `dcb` (the blocks of a finished stream's encoder, for the
    /// next stream at the same quality).
    pub dcb_compressors: KindStats,
    /// br streams holding an encoder now (at most
    /// [`CodecPoolBuilder::br_stream_limit`](crate::CodecPoolBuilder::br_stream_limit)).
    pub br_streams_active: usize,
    /// br streams waiting for their turn to draw an encoder.
    pub br_streams_waiting: usize,
}

impl PoolStats {
    /// Every kind with its name, for reports: `("compressors", stats)`, ... A list, not a
    /// fixed-size array: kinds come with new codings.
    pub fn kinds(&self) -> Vec<(&'static str, KindStats)> {
        vec![
            (DEFLATE_COMPRESSORS.name(), self.compressors),
            (DEFLATE_DECOMPRESSORS.name(), self.decompressors),
            (BLOCK_COMPRESSORS.name(), self.block_compressors),
            (ZSTD_COMPRESSORS.name(), self.zstd_compressors),
            (ZSTD_DECOMPRESSORS.name(), self.zstd_decompressors),
            (BR_COMPRESSORS.name(), self.br_compressors),
            (BR_DECOMPRESSORS.name(), self.br_decompressors),
            (DCZ_COMPRESSORS.name(), self.dictionary_compressors),
            (DCZ_DECOMPRESSORS.name(), self.dictionary_decompressors),
            (DCB_COMPRESSORS.name(), self.dcb_compressors),
        ]
    }

    /// States of every kind checked out now.
    pub fn in_use(&self) -> u64 {
        self.kinds().iter().map(|(_, kind)| kind.in_use()).sum()
    }
}

impl CodecPool {
    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        let (br_streams_active, br_streams_waiting) = self.turn_counts();
        PoolStats {
            compressors: self.kind_stats(DEFLATE_COMPRESSORS),
            decompressors: self.kind_stats(DEFLATE_DECOMPRESSORS),
            block_compressors: self.kind_stats(BLOCK_COMPRESSORS),
            zstd_compressors: self.kind_stats(ZSTD_COMPRESSORS),
            zstd_decompressors: self.kind_stats(ZSTD_DECOMPRESSORS),
            br_compressors: self.kind_stats(BR_COMPRESSORS),
            br_decompressors: self.kind_stats(BR_DECOMPRESSORS),
            dictionary_compressors: self.kind_stats(DCZ_COMPRESSORS),
            dictionary_decompressors: self.kind_stats(DCZ_DECOMPRESSORS),
            dcb_compressors: self.kind_stats(DCB_COMPRESSORS),
            br_streams_active,
            br_streams_waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_slot_and_name() {
        let kinds = [
            DEFLATE_COMPRESSORS,
            DEFLATE_DECOMPRESSORS,
            BLOCK_COMPRESSORS,
            ZSTD_COMPRESSORS,
            ZSTD_DECOMPRESSORS,
            BR_COMPRESSORS,
            BR_DECOMPRESSORS,
            DCZ_COMPRESSORS,
            DCZ_DECOMPRESSORS,
            DCB_COMPRESSORS,
        ];
        for (i, a) in kinds.iter().enumerate() {
            for b in &kinds[i + 1..] {
                assert_ne!(a, b);
                assert_ne!(a.name(), b.name());
            }
        }
        let names: Vec<_> = PoolStats::default()
            .kinds()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, kinds.map(Kind::name));
    }
}
