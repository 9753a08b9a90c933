//! The pool shelves of the raw-content zstd contexts, through the crate's [`CodecPool`]
//! machinery (checkout counters, `max_idle`, reset on return, discard on panic).
//!
//! The pool's plain zstd shelves hold `zstd-safe` contexts, which cannot reference a
//! raw-content `CDict` (see `zstd_raw.rs`), so these have shelves of their own
//! (`dictionary_compressors`, `dictionary_decompressors` in `PoolStats`). Contexts on them
//! are neutral: no dictionary, default parameters (see `CompressContext::clear`), so any
//! dictionary's response can use any.

use crate::ffi::zstd_raw::{CompressContext, DecompressContext};
use crate::pool::{CodecPool, Kind, Level, Pooled, PooledState};

/// A context grown past this (a large window, a big one-shot body) is freed rather than
/// shelved, as the plain zstd shelves do (`codec::zstd`).
const MAX_KEPT_CONTEXT: usize = 4 << 20;

impl PooledState for CompressContext {
    const KIND: Kind = crate::kinds::PoolKind::DczCompressors.kind();

    fn reset(&mut self) -> bool {
        self.clear(MAX_KEPT_CONTEXT)
    }
}

impl PooledState for DecompressContext {
    const KIND: Kind = crate::kinds::PoolKind::DczDecompressors.kind();

    fn reset(&mut self) -> bool {
        self.clear(MAX_KEPT_CONTEXT)
    }
}

/// A neutral compression context from `pool`'s shelf (or a new one).
pub(super) fn draw_compressor(pool: &CodecPool) -> Pooled<CompressContext> {
    // Neutral contexts serve every level (the CDict sets it), so they share one tag.
    pool.take(Level::NONE, || {
        // Like `zstd_safe::CCtx::create` and every Rust allocation: out of memory aborts.
        CompressContext::new().expect("libzstd could not allocate a context: out of memory")
    })
}

/// A neutral decompression context from `pool`'s shelf (or a new one).
pub(super) fn draw_decompressor(pool: &CodecPool) -> Pooled<DecompressContext> {
    pool.take(Level::NONE, || {
        DecompressContext::new().expect("libzstd could not allocate a context: out of memory")
    })
}
