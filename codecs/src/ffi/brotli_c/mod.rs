//! Google's C brotli (through `brotlic-sys`): encoders and decoders whose memory is a
//! reusable `Blocks` arena, and raw dictionaries prepared once for every encoder.
//!
//! A raw dictionary is an LZ77 prefix (`BROTLI_SHARED_DICTIONARY_RAW`, the "compound
//! dictionary" of Shared Brotli): distances past a position's window reach into it. That is
//! what RFC 9842's `dcb` uses, and what Chromium's decoder (this same library) reads. The
//! encoder's prepared form is a hash table over the dictionary, built once and read by every
//! encoder it is attached to, where the pure-Rust `brotli` crate hashes the dictionary into
//! each stream.
//!
//! Out of memory, brotli's encoder ends the process (`exit`, its default build), as a Rust
//! allocation failure aborts; creating an instance or preparing a dictionary reports it.
//!
//! This folder uses nothing else of the crate, so the benchmarks include it as it is
//! (`bench/benches/brotli_c.rs`).

use std::ptr::NonNull;

use brotlic_sys::{
    BROTLI_MAX_QUALITY, BrotliEncoderDestroyPreparedDictionary,
    BrotliEncoderGetPreparedDictionarySize, BrotliEncoderPrepareDictionary,
    BrotliEncoderPreparedDictionary, BrotliSharedDictionaryType_BROTLI_SHARED_DICTIONARY_RAW,
};
use bytes::Bytes;

mod blocks;
// `dcb` decodes with `brotli-decompressor`, faster on this crate's bodies (see
// `bench/benches/brotli_c.rs`); Google's decoder checks the encoder's output in tests, as the
// decoder Chromium runs, and is what the benchmark measures it against.
#[cfg_attr(not(test), allow(dead_code))]
mod decoder;
mod encoder;
#[cfg(test)]
pub(crate) mod tests;

#[cfg_attr(not(test), allow(unused_imports))]
pub use decoder::{Decoder, Stop};
pub use encoder::{Encoder, Operation, Params};

/// What a C brotli call reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No encoder or decoder could be created: out of memory.
    OutOfMemory,
    /// The encoder refused a parameter, the dictionary, or a call.
    Refused,
    /// The encoder took no input and wrote no output, several calls in a row.
    Stalled,
    /// Invalid input, with the decoder's error code (negative, see `decode.h`).
    #[cfg_attr(not(test), allow(dead_code))]
    Corrupt(i32),
    /// A call on an encoder with no stream started, or after its end.
    NoStream,
}

impl Failure {
    /// A short description, for error messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Failure::OutOfMemory => "out of memory",
            Failure::Refused => "the encoder refused the call",
            Failure::Stalled => "the encoder made no progress",
            Failure::Corrupt(_) => "invalid brotli data",
            Failure::NoStream => "no stream is open",
        }
    }
}

/// A raw dictionary prepared for C brotli encoders: built once, attached to any number of
/// encoders on any threads. It references its source bytes, and keeps them.
pub struct PreparedDictionary {
    ptr: NonNull<BrotliEncoderPreparedDictionary>,
    /// The dictionary's bytes: the prepared form points into them.
    source: Bytes,
}

// SAFETY: once built, a prepared dictionary is only read: `BrotliEncoderAttachPreparedDictionary`
// takes it as `const` and copies its address and sizes into the encoder, and the encoder's
// match search reads its tables and source through `const` pointers (`compound_dictionary.c`,
// `LookupCompoundDictionaryMatch`). Nothing writes it until `Drop`, which runs once no encoder
// holds it (each holds an `Arc`). The source is an immutable `Bytes`.
unsafe impl Send for PreparedDictionary {}
// SAFETY: as above: every use through `&PreparedDictionary` is a read.
unsafe impl Sync for PreparedDictionary {}

impl PreparedDictionary {
    /// The largest source: brotli keeps positions in 31 bits.
    const MAX_LEN: usize = (1 << 31) - 1;

    /// Prepares `source` as a raw dictionary. `None` when it is empty, too large, or brotli
    /// cannot allocate the tables.
    pub fn new(source: &Bytes) -> Option<PreparedDictionary> {
        if source.is_empty() || source.len() > Self::MAX_LEN {
            return None;
        }
        // SAFETY: `source` points at `source.len()` readable bytes; brotli reads them to
        // build its tables and keeps their address (the "lean" prepared form), and they stay
        // alive and unchanged as long as the result: it owns a clone of the `Bytes`. Null
        // allocator functions select brotli's default (malloc and free). The quality only
        // matters for serialized dictionaries.
        let ptr = unsafe {
            BrotliEncoderPrepareDictionary(
                BrotliSharedDictionaryType_BROTLI_SHARED_DICTIONARY_RAW,
                source.len(),
                source.as_ptr(),
                i32::from(BROTLI_MAX_QUALITY),
                None,
                None,
                std::ptr::null_mut(),
            )
        };
        Some(PreparedDictionary {
            ptr: NonNull::new(ptr)?,
            source: source.clone(),
        })
    }

    /// The memory brotli holds for it, its source not included (the dictionary's own).
    pub fn size(&self) -> usize {
        // SAFETY: `ptr` is a live prepared dictionary; the call only reads it. (The lean
        // form counts its pointer to the source, not the source.)
        unsafe { BrotliEncoderGetPreparedDictionarySize(self.ptr.as_ptr()) }
    }

    fn as_ptr(&self) -> *const BrotliEncoderPreparedDictionary {
        self.ptr.as_ptr()
    }
}

impl Drop for PreparedDictionary {
    fn drop(&mut self) {
        // SAFETY: made by BrotliEncoderPrepareDictionary, destroyed once. No encoder
        // references it any more: an `Encoder` holds an `Arc<PreparedDictionary>` for as
        // long as its C instance (which holds the address) lives.
        unsafe { BrotliEncoderDestroyPreparedDictionary(self.ptr.as_ptr()) };
    }
}

impl std::fmt::Debug for PreparedDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedDictionary")
            .field("len", &self.source.len())
            .finish_non_exhaustive()
    }
}
