//! The pooled states: a brotli encoder at one quality (with the hasher of its last stream)
//! and a brotli decoder, each over an allocator that keeps its blocks.

use std::sync::{Arc, Mutex};

use brotli::BrotliState;
use brotli::enc::backward_references::{AnyHasher, BrotliHasherParams, UnionHasher};
use brotli::enc::encode::{
    BrotliEncoderDestroyInstance, BrotliEncoderParameter, BrotliEncoderStateStruct,
};

use super::alloc::{DecAlloc, EncAlloc, FreeLists};
use super::{LGWIN, MAX_KEPT_DECODER, MAX_KEPT_ENCODER};
use crate::Level;
use crate::pool::{CodecPool, Kind, Pooled, PooledState};

pub(super) type EncoderCore = BrotliEncoderStateStruct<EncAlloc>;
pub(super) type DecoderCore = BrotliState<DecAlloc, DecAlloc, DecAlloc>;

/// A brotli encoder at one quality whose allocator keeps the blocks of its last stream,
/// and the match finder (hasher) of that stream for the next one. Boxed: the encoder struct
/// is kilobytes inline.
pub(crate) struct CompressorState {
    pub(super) core: Box<EncoderCore>,
    quality: u32,
    pub(super) spare: Option<SpareHasher>,
}

/// The hasher of an earlier stream, kept whole rather than freed into the lists.
///
/// A hasher brotli builds is marked prepared on the assumption that its new buckets are zero
/// (so the allocator must clear them: 512 KiB at quality 4, a large share of a small body's
/// time). A hasher given to a new encoder unprepared is instead prepared by brotli itself,
/// as C brotli does: for a stream that is one block of at most a few KiB (a small body) it
/// clears only the buckets that block's bytes hash to, else all of them; at qualities 5-9 it
/// clears the counts and not the multi-megabyte buckets behind them. Either way the search
/// sees exactly what it would in zeroed buckets, so the output is the same byte for byte.
pub(super) struct SpareHasher {
    hasher: UnionHasher<EncAlloc>,
    params: BrotliHasherParams,
    /// The window it was built for: the hasher's masks follow it.
    lgwin: i32,
}

/// The last distances of a flushed stream: the decoder keeps them across meta-blocks, and
/// a command may refer to them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Carry {
    dist_cache: [i32; 16],
    saved_dist_cache: [i32; 4],
}

/// Qualities whose hasher re-prepares itself fully on reuse. Below 2 brotli uses no hasher;
/// quality 10-11's binary-tree hasher (H10) has no prepare step.
const RECYCLED_QUALITIES: std::ops::RangeInclusive<u32> = 2..=9;

/// A hasher is handed on only between streams whose size hint is under this: below it,
/// brotli 9 picks the hasher from the quality and window alone (its first size threshold is
/// 1 MiB, where quality 4 moves to H54), so the recycled hasher is the one a fresh encoder
/// would build. Larger streams clear the whole table anyway.
const RECYCLE_MAX_HINT: u64 = 1 << 20;

impl CompressorState {
    fn new(level: Level) -> Self {
        let quality = u32::from(level.get());
        let mut core = Box::new(EncoderCore::new(EncAlloc::default()));
        set_params(&mut core, quality);
        CompressorState {
            core,
            quality,
            spare: None,
        }
    }

    /// Sets the window (log2), before the first compress call.
    pub(super) fn set_window(&mut self, lgwin: u32) {
        self.core
            .set_parameter(BrotliEncoderParameter::BROTLI_PARAM_LGWIN, lgwin);
    }

    /// Has brotli load a stream's own `history` as a custom dictionary (ring buffer, match
    /// finder, positions; its last two bytes as the context of the first literals), then
    /// moves what it loaded into a fresh encoder.
    ///
    /// The move is the point: an encoder that knows it has a custom dictionary cuts every
    /// match that starts in the dictionary and runs past its end at that end (`brotli`
    /// 9.1.1, `fix_unbroken_len`), and a match starting on the dictionary's last byte is
    /// cut to one byte, a copy brotli cannot code: it panics (`StoreCommandExtra`) or, in
    /// release builds, indexes out of range. The decoder of a resumed stream has the history
    /// and the data in one window, so no cut is needed; the fresh encoder has no boundary.
    /// (A dcb dictionary is another matter: there the cut is the format's.)
    fn load_history(&mut self, history: &[u8]) {
        // `true`: the last two bytes of the history are the context of the first literals,
        // as they are for the decoder.
        self.core
            .set_custom_dictionary_with_optional_precomputed_hasher(
                history.len(),
                history,
                UnionHasher::Uninit,
                true,
            );
        if history.len() < 2 || self.quality < 2 {
            // brotli took no dictionary (it marked the stream concatenable instead).
            return;
        }
        let mut primed = std::mem::replace(&mut *self.core, EncoderCore::new(EncAlloc::default()));
        let core = &mut *self.core;
        core.params = primed.params.clone();
        std::mem::swap(&mut core.ringbuffer_, &mut primed.ringbuffer_);
        std::mem::swap(&mut core.hasher_, &mut primed.hasher_);
        if let UnionHasher::H10(hasher) = &mut core.hasher_ {
            // Quality 10-11's match finder keeps its own copy of the boundary.
            hasher.ringbuffer_break = None;
        }
        core.input_pos_ = primed.input_pos_;
        core.last_flush_pos_ = primed.last_flush_pos_;
        core.last_processed_pos_ = primed.last_processed_pos_;
        core.prev_byte_ = primed.prev_byte_;
        core.prev_byte2_ = primed.prev_byte2_;
        core.last_bytes_ = primed.last_bytes_;
        core.last_bytes_bits_ = primed.last_bytes_bits_;
        core.remaining_metadata_bytes_ = primed.remaining_metadata_bytes_;
        core.dist_cache_ = primed.dist_cache_;
        core.saved_dist_cache_ = primed.saved_dist_cache_;
        core.is_initialized_ = primed.is_initialized_;
        // The blocks moved over came from this allocator, and go back to it.
        core.m8 = std::mem::take(&mut primed.m8);
        BrotliEncoderDestroyInstance(&mut primed);
    }

    /// What the stream carries past its last flush besides its bytes.
    pub(super) fn carry(&self) -> Carry {
        Carry {
            dist_cache: self.core.dist_cache_,
            saved_dist_cache: self.core.saved_dist_cache_,
        }
    }

    /// Makes this fresh encoder go on with a stream another encoder flushed and gave back:
    /// window `lgwin` (the stream's), `history` (its last input, at most the window) as the
    /// prefix, the distances the decoder remembers, and no stream header. The decoder sees
    /// one stream: after a flush it is byte-aligned, every distance refers to bytes it has,
    /// and brotli turns its static dictionary off with a custom one (a static reference is
    /// coded past the encoder's position, which is short of the decoder's).
    pub(super) fn resume(&mut self, lgwin: u32, history: &[u8], carry: &Carry) {
        debug_assert!(history.len() >= 2, "brotli ignores a shorter dictionary");
        self.set_window(lgwin);
        self.adopt_spare(history.len());
        self.load_history(history);
        let core = &mut *self.core;
        core.dist_cache_ = carry.dist_cache;
        core.saved_dist_cache_ = carry.saved_dist_cache;
        // The window bits the stream began with are already sent.
        core.last_bytes_ = 0;
        core.last_bytes_bits_ = 0;
    }

    /// Sets brotli's size hint only (it picks the match finder from it).
    pub(crate) fn hint(&mut self, len: u64) {
        let hint = u32::try_from(len).unwrap_or(u32::MAX);
        self.core
            .set_parameter(BrotliEncoderParameter::BROTLI_PARAM_SIZE_HINT, hint);
    }

    /// Before a compress call that may build the hasher (none built yet): hands the spare
    /// hasher to the encoder if brotli would build the same one, else frees it.
    pub(super) fn adopt_spare(&mut self, available_in: usize) {
        if !matches!(self.core.hasher_, UnionHasher::Uninit) {
            return;
        }
        let Some(mut spare) = self.spare.take() else {
            return;
        };
        let core = &mut *self.core;
        // What brotli's `update_size_hint` will set at its first block: the explicit hint,
        // else the input buffered plus the input of this call (constant within a call).
        let hint = match core.params.size_hint {
            0 => core
                .input_pos_
                .wrapping_sub(core.last_processed_pos_)
                .saturating_add(available_in as u64),
            hint => hint as u64,
        };
        if hint < RECYCLE_MAX_HINT && spare.lgwin == core.params.lgwin {
            spare.hasher.GetHasherCommon().is_prepared_ = 0;
            core.hasher_ = spare.hasher;
            core.params.hasher = spare.params;
        } else {
            spare.hasher.free(&mut core.m8);
        }
    }
}

fn set_params(core: &mut EncoderCore, quality: u32) {
    // Both are accepted on an encoder that has not started (set_parameter only refuses
    // after the first compress call).
    core.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_QUALITY, quality);
    core.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_LGWIN, LGWIN);
}

impl PooledState for CompressorState {
    const KIND: Kind = crate::kinds::PoolKind::BrCompressors.kind();

    fn reset(&mut self) -> bool {
        // The hasher of a small stream is kept whole (see `SpareHasher`); if the stream built
        // none, an earlier spare stays.
        let built = !matches!(self.core.hasher_, UnionHasher::Uninit);
        if built
            && RECYCLED_QUALITIES.contains(&self.quality)
            && (self.core.params.size_hint as u64) < RECYCLE_MAX_HINT
        {
            if let Some(mut old) = self.spare.take() {
                old.hasher.free(&mut self.core.m8);
            }
            self.spare = Some(SpareHasher {
                hasher: std::mem::take(&mut self.core.hasher_),
                params: self.core.params.hasher,
                lgwin: self.core.params.lgwin,
            });
        }
        // The crate's teardown frees every other block of the stream into the allocator; a
        // new encoder on that allocator starts from `BrotliEncoderStateStruct::new`, exactly
        // as a fresh one does, and draws its blocks (cleared) from the lists.
        BrotliEncoderDestroyInstance(&mut self.core);
        let alloc = std::mem::take(&mut self.core.m8);
        *self.core = EncoderCore::new(alloc);
        set_params(&mut self.core, self.quality);
        // What is still live is the spare hasher: one too large to keep (quality 9's is
        // 32 MiB) is freed, and the rest of the state is still worth keeping.
        let over = |core: &EncoderCore| core.m8.0.kept() + core.m8.0.live() > MAX_KEPT_ENCODER;
        if over(&self.core) {
            if let Some(mut spare) = self.spare.take() {
                spare.hasher.free(&mut self.core.m8);
            }
        }
        !over(&self.core)
    }
}

/// A brotli decoder whose allocator keeps the blocks of its last stream (the ring buffer
/// above all). Boxed: `BrotliState` is a few KB inline.
pub(crate) struct DecompressorState {
    pub(super) core: Box<DecoderCore>,
    pub(super) lists: DecAlloc,
}

impl DecompressorState {
    fn new() -> Self {
        let lists = DecAlloc(Arc::new(Mutex::new(FreeLists::new(MAX_KEPT_DECODER))));
        DecompressorState {
            core: Box::new(new_decoder_core(&lists)),
            lists,
        }
    }
}

fn new_decoder_core(lists: &DecAlloc) -> DecoderCore {
    // Strict: RFC 7932 windows only (up to 16 MiB), not the large-window extension that
    // lets a stream ask for a 1 GiB ring buffer.
    BrotliState::new_strict(lists.clone(), lists.clone(), lists.clone())
}

impl PooledState for DecompressorState {
    const KIND: Kind = crate::kinds::PoolKind::BrDecompressors.kind();

    fn reset(&mut self) -> bool {
        // Dropping the old state frees its blocks into the shared lists.
        *self.core = new_decoder_core(&self.lists);
        self.lists.lists().kept() <= MAX_KEPT_DECODER
    }
}

pub(crate) fn draw_compressor(pool: &CodecPool, level: Level) -> Pooled<CompressorState> {
    pool.take(level, || CompressorState::new(level))
}

pub(super) fn draw_decompressor(pool: &CodecPool) -> Pooled<DecompressorState> {
    pool.take(Level::NONE, DecompressorState::new)
}
