//! br (RFC 7932) over the pure-Rust `brotli` crate, with its memory pooled.
//!
//! The crate's encoder has no reset, and a fresh one allocates hundreds of kilobytes (a small
//! body) to megabytes (a large one) in a score of blocks, all zero-filled (BENCHMARKS.md,
//! "Codec state, fresh against pooled"). The encoder and decoder are
//! generic over their allocator, so this module gives them one that keeps freed blocks in
//! per-type free lists ([`FreeLists`](alloc::FreeLists)): a pooled state is an encoder (or
//! decoder) whose allocator holds the blocks of its last stream, and its reset is the crate's
//! own teardown (which frees every block into those lists) followed by a new encoder on the
//! same allocator. A reused block is cleared to `T::default()` before brotli gets it, as the
//! crate's `StandardAlloc` does: brotli relies on zeroed memory, and clearing also means no
//! byte of one response can reach another.
//!
//! Clearing is most of what a fresh encoder costs on a small body (quality 4's 512 KiB hash
//! table alone is a large share of a small body's time), so the encoder's hasher is also handed
//! whole to the next stream, where brotli prepares it itself
//! (see [`SpareHasher`](state::SpareHasher)).
//!
//! Pooling saves every allocation, and a share of a small body's time; past a few KiB,
//! only the allocations (`cargo run --release -p tower-gzip-bench --bin br_pool`; figures in
//! BENCHMARKS.md, "Codec state, fresh against pooled").

mod alloc;
mod decoder;
mod encoder;
mod state;
mod stream;
#[cfg(test)]
mod tests;
mod turn;

pub(crate) use decoder::{BrDecoder, Step as DecodeStep, step as decode_step};
pub(crate) use encoder::{BrEncoder, encode_all};
pub(crate) use stream::{BrState, BrStream};

/// The window: brotli's default, 4 MiB.
const LGWIN: u32 = 22;

/// The most memory an idle encoder keeps. Idle encoders are the largest pooled states, and
/// a kept block is cleared (so made resident) when it is reused: a state over this (a
/// stream of unknown size, whose ring buffer is 8 MiB; quality 10-11 on large bodies) is
/// freed rather than shelved. A body known in full gets a window sized to it, so a 256 KiB
/// body at quality 4 stays under it.
const MAX_KEPT_ENCODER: usize = 4 << 20;

/// The most memory an idle decoder keeps: a window-22 stream's 4 MiB ring buffer and its
/// tables fit; the ring buffers of 8 and 16 MiB windows are freed after their stream.
const MAX_KEPT_DECODER: usize = 6 << 20;

super::single_coding_entry_points!(BrEncoder, BrDecoder, encode_all);
