//! br (RFC 7932) over the pure-Rust `brotli` crate, with its memory pooled.
//!
//! The crate's encoder has no reset, and a fresh one allocates 561 KB (1 KiB body, quality
//! 4) to 11.2 MB (256 KiB body) in ~20 blocks, all zero-filled. The encoder and decoder are
//! generic over their allocator, so this module gives them one that keeps freed blocks in
//! per-type free lists ([`FreeLists`]): a pooled state is an encoder (or decoder) whose
//! allocator holds the blocks of its last stream, and its reset is the crate's own teardown
//! (which frees every block into those lists) followed by a new encoder on the same
//! allocator. A reused block is cleared to `T::default()` before brotli gets it, as the
//! crate's `StandardAlloc` does: brotli relies on zeroed memory, and clearing also means no
//! byte of one response can reach another.
//!
//! Clearing is most of what a fresh encoder costs on a small body (the 512 KiB hash table
//! of quality 4 is a third of a 1 KiB body's time), so the encoder's hasher is also handed
//! whole to the next stream, where brotli prepares it itself (see [`SpareHasher`]).
//! `examples/br_pool.rs`, quality 4, median per body on a shared, noisy 2-core VM (ranges
//! over runs; the variants run interleaved, so noise hits them alike):
//!
//! | body | fresh encoder (tower-http) | pooled encoder | fresh decoder | pooled decoder |
//! |---|---|---|---|---|
//! | 1 KiB | 32-42 µs; 561 KB, 20 allocs | 22-32 µs; none | 3.4-5.8 µs; 10 KB, 10 | same; none |
//! | 4 KiB | 53-80 µs; 607 KB, 20 | 47-72 µs (-9%); none | 6-10 µs; 13 KB, 10 | same; none |
//! | 16 KiB | 130-245 µs; 796 KB, 20 | same (±2%); none | 16-41 µs; 26 KB, 10 | same; none |
//! | 256 KiB | 2.5-3.6 ms; 11.2 MB, 23 | same (±2%); none | 250-430 µs; 291 KB, 13 | same; none |
//!
//! Past a few KiB the time is brotli's own work (and clearing what it asks for, as calloc
//! does for a fresh one); pooling then saves the allocations and malloc's churn, not time.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, MutexGuard};

use brotli::enc::BrotliAlloc;
use brotli::enc::backward_references::{AnyHasher, BrotliHasherParams, UnionHasher};
use brotli::enc::encode::{
    BrotliEncoderDestroyInstance, BrotliEncoderOperation, BrotliEncoderParameter,
    BrotliEncoderStateStruct,
};
use brotli::{
    Allocator, BrotliDecompressStream, BrotliResult, BrotliState, SliceWrapper, SliceWrapperMut,
};
use brotli_decompressor::{
    BrotliDecoderHasMoreOutput, BrotliDecoderIsFinished, BrotliDecoderTakeOutput,
};
use bytes::BytesMut;

use super::{Decode, DecodeError, DecodeErrorKind, Encode, EncodeError, Level, Progress};
use crate::pool::{CodecPool, Inner, Pooled, PooledState, Shelf};

/// The window: brotli's default, 4 MiB.
const LGWIN: u32 = 22;

/// The most memory an idle encoder keeps: a 256 KiB body at quality 4 uses ~11 MB of tables;
/// past this (quality 10-11 on large bodies, multi-megabyte streams) the blocks are freed.
const MAX_KEPT_ENCODER: usize = 16 << 20;

/// The most memory an idle decoder keeps: a window-22 stream's 4 MiB ring buffer and its
/// tables fit; the ring buffers of 8 and 16 MiB windows are freed after their stream.
const MAX_KEPT_DECODER: usize = 6 << 20;

// ---------------------------------------------------------------------------------------
// The allocator
// ---------------------------------------------------------------------------------------

/// Freed blocks, one list per element type, bounded in bytes.
///
/// brotli allocates a few dozen types (bytes, `u32`s, histograms, commands, Huffman
/// tables); a list is found by `TypeId` in a short vector and holds `Vec<Vec<T>>`.
pub(crate) struct FreeLists {
    lists: Vec<(TypeId, Box<dyn Any + Send>)>,
    /// Bytes held by the lists (capacity, not length).
    bytes: usize,
    /// Bytes handed out and not freed back (a block brotli drops without freeing stays
    /// counted, which only makes the bound stricter).
    live: usize,
    limit: usize,
}

impl FreeLists {
    fn new(limit: usize) -> Self {
        FreeLists {
            lists: Vec::new(),
            bytes: 0,
            live: 0,
            limit,
        }
    }

    fn list<T: Send + 'static>(lists: &mut Vec<(TypeId, Box<dyn Any + Send>)>) -> &mut Vec<Vec<T>> {
        let id = TypeId::of::<T>();
        let index = match lists.iter().position(|(t, _)| *t == id) {
            Some(index) => index,
            None => {
                lists.push((id, Box::new(Vec::<Vec<T>>::new())));
                lists.len() - 1
            }
        };
        lists[index]
            .1
            .downcast_mut()
            .expect("each list is stored under its element's TypeId")
    }

    /// `len` default values, in a kept block when one is large enough (the smallest such),
    /// else in a new one. When no kept block fits, the largest too-small one is freed, so a
    /// list never holds more blocks than brotli had live at once.
    fn alloc<T: Clone + Default + Send + 'static>(&mut self, len: usize) -> Vec<T> {
        if len == 0 {
            return Vec::new();
        }
        let size = size_of::<T>().max(1);
        let block = self.take_block(len, size);
        self.live += block.capacity() * size;
        block
    }

    fn take_block<T: Clone + Default + Send + 'static>(
        &mut self,
        len: usize,
        size: usize,
    ) -> Vec<T> {
        let list = Self::list::<T>(&mut self.lists);
        let mut best: Option<usize> = None;
        let mut largest: Option<usize> = None;
        for (i, block) in list.iter().enumerate() {
            let cap = block.capacity();
            if cap >= len && best.is_none_or(|b| cap < list[b].capacity()) {
                best = Some(i);
            }
            if largest.is_none_or(|l| cap > list[l].capacity()) {
                largest = Some(i);
            }
        }
        match best.or(largest) {
            Some(i) => {
                let mut block = list.swap_remove(i);
                self.bytes -= block.capacity() * size;
                if block.capacity() < len {
                    // Too small: give it back to the system and take a fresh one.
                    return vec![T::default(); len];
                }
                block.clear();
                block.resize(len, T::default());
                block
            }
            None => vec![T::default(); len],
        }
    }

    /// Keeps `block` for reuse unless that would take the lists past their limit.
    fn free<T: Send + 'static>(&mut self, block: Vec<T>) {
        let bytes = block.capacity() * size_of::<T>().max(1);
        self.live = self.live.saturating_sub(bytes);
        if bytes == 0 || self.bytes + bytes > self.limit {
            return;
        }
        self.bytes += bytes;
        Self::list::<T>(&mut self.lists).push(block);
    }

    /// Bytes kept for reuse.
    fn kept(&self) -> usize {
        self.bytes
    }

    /// Bytes handed out and not freed.
    fn live(&self) -> usize {
        self.live
    }
}

/// A block handed to brotli: exactly the length it asked for.
pub(crate) struct Block<T>(Vec<T>);

impl<T> Default for Block<T> {
    fn default() -> Self {
        Block(Vec::new())
    }
}

impl<T> SliceWrapper<T> for Block<T> {
    fn slice(&self) -> &[T] {
        &self.0
    }
}

impl<T> SliceWrapperMut<T> for Block<T> {
    fn slice_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

/// The encoder's allocator: owns its free lists (the encoder state is owned by one
/// [`CompressorState`], and its `m8` field is public, so no sharing is needed).
pub(crate) struct EncAlloc(FreeLists);

impl Default for EncAlloc {
    fn default() -> Self {
        EncAlloc(FreeLists::new(MAX_KEPT_ENCODER))
    }
}

impl<T: Clone + Default + Send + 'static> Allocator<T> for EncAlloc {
    type AllocatedMemory = Block<T>;

    fn alloc_cell(&mut self, len: usize) -> Block<T> {
        Block(self.0.alloc(len))
    }

    fn free_cell(&mut self, block: Block<T>) {
        self.0.free(block.0);
    }
}

impl BrotliAlloc for EncAlloc {}

/// The decoder's allocator: a handle on free lists shared by its three allocator slots and
/// by the [`DecompressorState`] that outlives each `BrotliState` (whose `Drop` frees every
/// block into these lists). The lock is uncontended: one decoder uses it at a time.
#[derive(Clone)]
pub(crate) struct DecAlloc(Arc<Mutex<FreeLists>>);

impl DecAlloc {
    fn lists(&self) -> MutexGuard<'_, FreeLists> {
        // A panic inside alloc/free cannot leave a Vec push or pop half done.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<T: Clone + Default + Send + 'static> Allocator<T> for DecAlloc {
    type AllocatedMemory = Block<T>;

    fn alloc_cell(&mut self, len: usize) -> Block<T> {
        Block(self.lists().alloc(len))
    }

    fn free_cell(&mut self, block: Block<T>) {
        self.lists().free(block.0);
    }
}

// ---------------------------------------------------------------------------------------
// Pooled states
// ---------------------------------------------------------------------------------------

type EncoderCore = BrotliEncoderStateStruct<EncAlloc>;
type DecoderCore = BrotliState<DecAlloc, DecAlloc, DecAlloc>;

/// A brotli encoder at one quality whose allocator keeps the blocks of its last stream,
/// and the match finder (hasher) of that stream for the next one. Boxed: the encoder struct
/// is 5.6 KB inline.
pub(crate) struct CompressorState {
    core: Box<EncoderCore>,
    quality: u32,
    spare: Option<SpareHasher>,
}

/// The hasher of an earlier stream, kept whole rather than freed into the lists.
///
/// A hasher brotli builds is marked prepared on the assumption that its new buckets are zero
/// (so the allocator must clear them: 512 KiB at quality 4, a third of the time of a 1 KiB
/// body). A hasher given to a new encoder unprepared is instead prepared by brotli itself,
/// as C brotli does: for a stream that is one block of at most a few KiB (a small body) it
/// clears only the buckets that block's bytes hash to, else all of them; at qualities 5-9 it
/// clears the counts and not the multi-megabyte buckets behind them. Either way the search
/// sees exactly what it would in zeroed buckets, so the output is the same byte for byte.
struct SpareHasher {
    hasher: UnionHasher<EncAlloc>,
    params: BrotliHasherParams,
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

    /// Before a compress call that may build the hasher (none built yet): hands the spare
    /// hasher to the encoder if brotli would build the same one, else frees it.
    fn adopt_spare(&mut self, available_in: usize) {
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
        if hint < RECYCLE_MAX_HINT {
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
    fn shelf(pool: &Inner) -> &Shelf<Self> {
        &pool.br_compressors
    }

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
    core: Box<DecoderCore>,
    lists: DecAlloc,
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
    fn shelf(pool: &Inner) -> &Shelf<Self> {
        &pool.br_decompressors
    }

    fn reset(&mut self) -> bool {
        // Dropping the old state frees its blocks into the shared lists.
        *self.core = new_decoder_core(&self.lists);
        self.lists.lists().kept() <= MAX_KEPT_DECODER
    }
}

fn draw_compressor(pool: &CodecPool, level: Level) -> Pooled<CompressorState> {
    pool.take(level, || CompressorState::new(level))
}

fn draw_decompressor(pool: &CodecPool) -> Pooled<DecompressorState> {
    pool.take(Level::NONE, DecompressorState::new)
}

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

/// Runs `op` over all of `input`, appending the output to `out`, until brotli has taken all
/// input and (for a flush or finish) written everything it owes.
///
/// brotli is called with no output space and its output taken from its own buffer
/// (`take_output`, the C API's `BrotliEncoderTakeOutput`), so `out` is never zero-filled in
/// advance.
fn compress(
    state: &mut CompressorState,
    op: BrotliEncoderOperation,
    input: &[u8],
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut available_in = input.len();
    let mut in_offset = 0;
    let mut stalled = 0;
    loop {
        state.adopt_spare(available_in);
        let core = &mut *state.core;
        let (mut available_out, mut out_offset, mut total_out) = (0, 0, None);
        let before_in = available_in;
        let ok = core.compress_stream(
            op,
            &mut available_in,
            input,
            &mut in_offset,
            &mut available_out,
            &mut [],
            &mut out_offset,
            &mut total_out,
            &mut |_, _, _, _| (),
        );
        if !ok {
            return Err(EncodeError::new("brotli: the encoder refused the call"));
        }
        // As the C API documents: call again while input is left or output was owed after
        // the call.
        let more = available_in != 0 || core.has_more_output();
        let mut produced = 0;
        loop {
            // `size` 0 asks for everything; the slice returned may run past what was
            // taken, `size` tells how much was.
            let mut size = 0;
            let chunk = core.take_output(&mut size);
            let chunk = &chunk[..size.min(chunk.len())];
            if chunk.is_empty() {
                break;
            }
            produced += chunk.len();
            out.extend_from_slice(chunk);
        }
        let done = match op {
            BrotliEncoderOperation::BROTLI_OPERATION_FINISH => core.is_finished(),
            _ => !more,
        };
        if done {
            return Ok(());
        }
        if produced == 0 && available_in == before_in {
            stalled += 1;
            if stalled > 2 {
                return Err(EncodeError::new("brotli: the encoder made no progress"));
            }
        } else {
            stalled = 0;
        }
    }
}

/// A streaming br encoder over a pooled brotli encoder.
///
/// [`idle`](Encode::idle) keeps the state (a flush): a brotli stream cannot be restarted
/// midway, unlike a zstd stream of frames.
pub(crate) struct BrEncoder {
    /// `None` after the finish or a failure.
    state: Option<Pooled<CompressorState>>,
    level: Level,
    finished: bool,
    failed: bool,
    total_in: u64,
    total_out: u64,
}

impl std::fmt::Debug for BrEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrEncoder")
            .field("level", &self.level)
            .field("holds_state", &self.state.is_some())
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl BrEncoder {
    pub(crate) fn new(level: Level, pool: &CodecPool) -> Self {
        BrEncoder {
            state: Some(draw_compressor(pool, level)),
            level,
            finished: false,
            failed: false,
            total_in: 0,
            total_out: 0,
        }
    }

    /// The stream's total input size, when known before it starts: brotli picks its match
    /// finder from it (at quality 4, a 1 MiB body gets the larger H54 hasher), as it does
    /// when a whole body arrives in one call.
    pub(crate) fn set_size_hint(&mut self, len: u64) {
        if self.total_in > 0 {
            return;
        }
        if let Some(state) = self.state.as_mut() {
            let hint = u32::try_from(len).unwrap_or(u32::MAX);
            state
                .core
                .set_parameter(BrotliEncoderParameter::BROTLI_PARAM_SIZE_HINT, hint);
        }
    }

    fn run(
        &mut self,
        op: BrotliEncoderOperation,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<Progress, EncodeError> {
        if self.failed {
            return Err(EncodeError::new(
                "an earlier call failed; the stream is unusable",
            ));
        }
        if self.finished {
            return Err(EncodeError::new("the stream is already finished"));
        }
        let before = out.len();
        let state = self
            .state
            .as_mut()
            .expect("present until the finish or a failure");
        let result = compress(state, op, input, out);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += input.len() as u64;
                Ok(Progress::since(input.len(), before, out))
            }
            Err(e) => {
                self.failed = true;
                if let Some(state) = self.state.take() {
                    state.discard();
                }
                Err(e)
            }
        }
    }
}

impl Encode for BrEncoder {
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if input.is_empty() && !self.failed && !self.finished {
            return Ok(Progress::default());
        }
        self.run(BrotliEncoderOperation::BROTLI_OPERATION_PROCESS, input, out)
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        self.run(BrotliEncoderOperation::BROTLI_OPERATION_FLUSH, &[], out)
    }

    fn finish(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if self.finished {
            return Ok(Progress::default());
        }
        let progress = self.run(BrotliEncoderOperation::BROTLI_OPERATION_FINISH, &[], out)?;
        self.finished = true;
        // Back to the pool now, not when the encoder is dropped.
        self.state = None;
        Ok(progress)
    }

    fn holds_state(&self) -> bool {
        self.state.is_some()
    }

    fn total_in(&self) -> u64 {
        self.total_in
    }

    fn total_out(&self) -> u64 {
        self.total_out
    }

    fn is_finished(&self) -> bool {
        self.finished
    }
}

/// Compresses all of `input` as one br stream, with its size as brotli's size hint (which
/// picks the hasher and block sizes for the body rather than for a stream of unknown size).
pub(crate) fn encode_all(
    level: Level,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut state = draw_compressor(pool, level);
    let hint = u32::try_from(input.len()).unwrap_or(u32::MAX);
    state
        .core
        .set_parameter(BrotliEncoderParameter::BROTLI_PARAM_SIZE_HINT, hint);
    out.reserve(input.len() / 4 + 64);
    let result = compress(
        &mut state,
        BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
        input,
        out,
    );
    if result.is_err() {
        state.discard();
    }
    result
}

// ---------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------

/// A streaming br decoder over pooled decoder memory: one stream (RFC 7932 has no framing
/// around it and nothing may follow its last meta-block), output bounded per call.
pub(crate) struct BrDecoder {
    /// `None` after a failure (the state is discarded, never reused).
    state: Option<Pooled<DecompressorState>>,
    done: bool,
    pending: bool,
    total_in: u64,
    total_out: u64,
    failed: Option<DecodeError>,
}

impl std::fmt::Debug for BrDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrDecoder")
            .field("done", &self.done)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

impl BrDecoder {
    pub(crate) fn new(pool: &CodecPool) -> Self {
        BrDecoder {
            state: Some(draw_decompressor(pool)),
            done: false,
            pending: false,
            total_in: 0,
            total_out: 0,
            failed: None,
        }
    }

    /// One decode call: returns the bytes consumed, or the error.
    fn step(
        core: &mut DecoderCore,
        input: &[u8],
        out: &mut BytesMut,
        budget: &mut usize,
    ) -> (usize, Result<Step, DecodeError>) {
        let mut available_in = input.len();
        let mut in_offset = 0;
        let corrupt = || DecodeError::new(DecodeErrorKind::CorruptData, "invalid brotli data");
        loop {
            // Output first: what the ring buffer holds goes out before more is decoded.
            while *budget > 0 && BrotliDecoderHasMoreOutput(core) {
                let mut size = *budget;
                let chunk = BrotliDecoderTakeOutput(core, &mut size);
                let chunk = &chunk[..size.min(chunk.len())];
                if chunk.is_empty() {
                    break;
                }
                out.extend_from_slice(chunk);
                *budget -= chunk.len();
            }
            if BrotliDecoderHasMoreOutput(core) {
                return (in_offset, Ok(Step::Budget));
            }
            if BrotliDecoderIsFinished(core) {
                return (in_offset, Ok(Step::End));
            }
            if *budget == 0 && available_in > 0 {
                return (in_offset, Ok(Step::Budget));
            }
            let (mut available_out, mut out_offset, mut total_out) = (0, 0, 0);
            let before_in = available_in;
            let result = BrotliDecompressStream(
                &mut available_in,
                &mut in_offset,
                input,
                &mut available_out,
                &mut out_offset,
                &mut [],
                &mut total_out,
                core,
            );
            match result {
                BrotliResult::ResultFailure => return (in_offset, Err(corrupt())),
                BrotliResult::NeedsMoreInput => {
                    if available_in != 0 {
                        return (in_offset, Err(corrupt()));
                    }
                    if !BrotliDecoderHasMoreOutput(core) {
                        return (in_offset, Ok(Step::Input));
                    }
                }
                BrotliResult::NeedsMoreOutput => {
                    if available_in == before_in && !BrotliDecoderHasMoreOutput(core) {
                        // Neither input taken nor output ready: cannot go on.
                        return (in_offset, Err(corrupt()));
                    }
                }
                BrotliResult::ResultSuccess => {}
            }
        }
    }
}

/// Where one decode call stopped.
enum Step {
    /// All input consumed, the stream goes on.
    Input,
    /// The budget ran out with output (or input) left.
    Budget,
    /// The stream ended and all its output was written.
    End,
}

#[cfg(test)]
impl BrDecoder {
    fn holds_state(&self) -> bool {
        self.state.is_some()
    }
}

impl Decode for BrDecoder {
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<Progress, DecodeError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let before = out.len();
        self.pending = false;
        let mut budget = max_out;
        let (consumed, result) = match self.state.as_mut() {
            Some(state) => Self::step(&mut state.core, input, out, &mut budget),
            None => (0, Ok(Step::End)),
        };
        self.total_in += consumed as u64;
        self.total_out += (out.len() - before) as u64;
        let result = match result {
            Ok(Step::End) => {
                self.done = true;
                if consumed < input.len() {
                    Err(DecodeError::new(
                        DecodeErrorKind::TrailingData,
                        "bytes after the end of the br stream",
                    ))
                } else {
                    // Back to the pool now, not when the decoder is dropped.
                    self.state = None;
                    Ok(())
                }
            }
            Ok(Step::Budget) => {
                self.pending = true;
                Ok(())
            }
            Ok(Step::Input) => Ok(()),
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => Ok(Progress::since(consumed, before, out)),
            Err(error) => {
                self.failed = Some(error.clone());
                // A state that saw an error is never shelved.
                if let Some(state) = self.state.take() {
                    state.discard();
                }
                Err(error)
            }
        }
    }

    fn has_pending_output(&self) -> bool {
        self.pending
    }

    fn finish(&self) -> Result<(), DecodeError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        if self.done || self.total_in == 0 {
            Ok(())
        } else {
            Err(DecodeError::new(
                DecodeErrorKind::Truncated,
                "the body ended inside the br stream",
            ))
        }
    }

    fn is_stream_end(&self) -> bool {
        self.done
    }

    fn total_in(&self) -> u64 {
        self.total_in
    }

    fn total_out(&self) -> u64 {
        self.total_out
    }

    fn members(&self) -> u64 {
        u64::from(self.done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*), so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A JSON array of user records, like an API response: mildly compressible.
    fn json(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng(seed | 1);
        let names = [
            "ada", "grace", "alan", "edsger", "barbara", "donald", "ken", "dennis",
        ];
        let tags = ["admin", "ops", "dev", "qa", "sales", "beta"];
        let mut out = b"[".to_vec();
        let mut id = 0;
        while out.len() < len {
            let name = names[rng.below(names.len())];
            out.extend_from_slice(
                format!(
                    "{{\"id\":{id},\"name\":\"{name}\",\"email\":\"{name}{}@example.com\",\"score\":{},\"tags\":[\"{}\"]}},",
                    rng.below(1000),
                    rng.below(100_000),
                    tags[rng.below(tags.len())]
                )
                .as_bytes(),
            );
            id += 1;
        }
        out.truncate(len);
        out
    }

    fn level(n: u8) -> Level {
        super::super::CompressionLevel::Precise(i32::from(n)).resolve(super::super::Format::Br)
    }

    /// Streams `input` through a `BrEncoder` in random chunks, flushing at random.
    fn encode_chunked(input: &[u8], quality: u8, rng: &mut Rng, pool: &CodecPool) -> Vec<u8> {
        let mut encoder = BrEncoder::new(level(quality), pool);
        let mut out = BytesMut::new();
        let mut rest = input;
        while !rest.is_empty() {
            let n = (1 + rng.below(4096)).min(rest.len());
            let progress = encoder.encode(&rest[..n], &mut out).unwrap();
            assert_eq!(progress.consumed, n);
            rest = &rest[n..];
            if rng.below(8) == 0 {
                encoder.flush(&mut out).unwrap();
            }
        }
        encoder.finish(&mut out).unwrap();
        assert!(encoder.is_finished());
        assert!(!encoder.holds_state());
        assert_eq!(encoder.total_in(), input.len() as u64);
        assert_eq!(encoder.total_out(), out.len() as u64);
        encoder.finish(&mut out).unwrap(); // again: nothing
        assert_eq!(encoder.total_out(), out.len() as u64);
        out.to_vec()
    }

    /// Decodes `wire` fed in random chunks with output budget `max_out` per call.
    fn decode_chunked(
        wire: &[u8],
        max_out: usize,
        rng: &mut Rng,
        pool: &CodecPool,
    ) -> Result<Vec<u8>, DecodeError> {
        let mut decoder = BrDecoder::new(pool);
        let mut out = BytesMut::new();
        let mut rest = wire;
        while !rest.is_empty() || decoder.has_pending_output() {
            let n = (1 + rng.below(2048)).min(rest.len());
            let before = out.len();
            let progress = decoder.decode(&rest[..n], &mut out, max_out)?;
            assert!(out.len() - before <= max_out);
            assert_eq!(progress.produced, out.len() - before);
            if !decoder.has_pending_output() {
                assert_eq!(
                    progress.consumed, n,
                    "all input is consumed unless the budget ran out"
                );
            }
            rest = &rest[progress.consumed..];
        }
        decoder.finish()?;
        assert_eq!(decoder.total_in(), wire.len() as u64);
        assert_eq!(decoder.total_out(), out.len() as u64);
        Ok(out.to_vec())
    }

    fn reference_decode(wire: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        brotli::BrotliDecompress(&mut &wire[..], &mut out).unwrap();
        out
    }

    /// A known size lets brotli pick the match finder a whole-body call would: the stream
    /// fed 64 KiB at a time is as small as the whole body in one call, where without the
    /// hint it is larger.
    #[test]
    fn size_hint_gives_a_stream_the_whole_body_ratio() {
        let pool = CodecPool::new();
        let input = json(1 << 20, 7);
        let encode = |hint: Option<u64>, piece: usize| {
            let mut encoder = BrEncoder::new(level(4), &pool);
            if let Some(hint) = hint {
                encoder.set_size_hint(hint);
            }
            let mut out = BytesMut::new();
            for chunk in input.chunks(piece) {
                encoder.encode(chunk, &mut out).unwrap();
            }
            encoder.finish(&mut out).unwrap();
            out
        };
        let whole = encode(None, input.len());
        let hinted = encode(Some(input.len() as u64), 64 * 1024);
        let unhinted = encode(None, 64 * 1024);
        assert_eq!(hinted, whole, "the same bytes as one whole-body call");
        assert!(unhinted.len() > hinted.len());
        let mut plain = Vec::new();
        std::io::Read::read_to_end(
            &mut brotli::Decompressor::new(&hinted[..], 4096),
            &mut plain,
        )
        .unwrap();
        assert_eq!(plain, input);
    }

    #[test]
    fn round_trips_at_levels_0_4_11() {
        let pool = CodecPool::new();
        let mut rng = Rng(7);
        for (quality, sizes) in [
            (0, &[0, 1, 100, 5000, 70_000, 300_000][..]),
            (1, &[0, 3000, 70_000][..]),
            (4, &[0, 1, 100, 5000, 70_000, 300_000][..]),
            (6, &[20_000][..]),
            (11, &[0, 1, 2000, 9000][..]),
        ] {
            for &size in sizes {
                let input = json(size, size as u64 + u64::from(quality));
                let wire = encode_chunked(&input, quality, &mut rng, &pool);
                assert_eq!(
                    reference_decode(&wire),
                    input,
                    "q{quality} {size} (reference decoder)"
                );
                let decoded = decode_chunked(&wire, 64 * 1024, &mut rng, &pool).unwrap();
                assert_eq!(decoded, input, "q{quality} {size}");
            }
        }
        assert_eq!(pool.stats().in_use(), 0);
    }

    #[test]
    fn encode_all_round_trips_and_matches_a_fresh_encoder() {
        let pool = CodecPool::new();
        for quality in [0, 2, 4, 5, 9, 11] {
            for size in [0, 10, 1024, 16 * 1024] {
                let input = json(size, 3);
                // Three times on one pool: the later ones run on reused memory and must give
                // the same bytes as the first (a fresh encoder).
                let mut outputs = Vec::new();
                for _ in 0..3 {
                    let mut out = BytesMut::new();
                    encode_all(level(quality), &input, &pool, &mut out).unwrap();
                    outputs.push(out.to_vec());
                }
                assert_eq!(outputs[0], outputs[1], "q{quality} {size}");
                assert_eq!(outputs[0], outputs[2], "q{quality} {size}");
                assert_eq!(reference_decode(&outputs[0]), input, "q{quality} {size}");
                let decoded = decode_chunked(&outputs[0], usize::MAX, &mut Rng(5), &pool).unwrap();
                assert_eq!(decoded, input);
            }
        }
        let stats = pool.stats().br_compressors;
        assert!(stats.reused > 0, "{stats:?}");
        assert_eq!(pool.stats().in_use(), 0);
    }

    /// Streams `input` through one encoder with flushes at fixed points.
    fn encode_with_flushes(input: &[u8], quality: u8, pool: &CodecPool) -> Vec<u8> {
        let mut encoder = BrEncoder::new(level(quality), pool);
        let mut out = BytesMut::new();
        for (i, chunk) in input.chunks(3000).enumerate() {
            encoder.encode(chunk, &mut out).unwrap();
            if i % 3 == 1 {
                encoder.flush(&mut out).unwrap();
            }
        }
        encoder.finish(&mut out).unwrap();
        out.to_vec()
    }

    #[test]
    fn reused_state_gives_the_output_of_a_fresh_encoder() {
        // Reused memory and a recycled hasher must not change a byte: the output is a
        // function of the input and the level only.
        let dirt = [json(300_000, 99), json(1_100_000, 98), json(700, 97)];
        for quality in [1, 2, 4, 5, 9, 10] {
            let pool = CodecPool::new();
            for size in [0, 100, 1000, 4000, 5000, 20_000] {
                let size = if quality >= 9 { size.min(5000) } else { size };
                let input = json(size, size as u64 + 1);
                let fresh_all = {
                    let mut out = BytesMut::new();
                    encode_all(level(quality), &input, &CodecPool::new(), &mut out).unwrap();
                    out
                };
                let fresh_stream = encode_with_flushes(&input, quality, &CodecPool::new());
                for dirt in &dirt {
                    // Dirty the pooled state: other data, other sizes (one over the 1 MiB
                    // size hint, where brotli picks another hasher), one-shot and streamed.
                    let dirt = if quality >= 5 {
                        &dirt[..dirt.len().min(40_000)]
                    } else {
                        &dirt[..]
                    };
                    let mut scratch = BytesMut::new();
                    encode_all(level(quality), dirt, &pool, &mut scratch).unwrap();
                    let mut out = BytesMut::new();
                    encode_all(level(quality), &input, &pool, &mut out).unwrap();
                    assert_eq!(out, fresh_all, "q{quality} {size} one-shot");
                    encode_with_flushes(dirt, quality, &pool);
                    assert_eq!(
                        encode_with_flushes(&input, quality, &pool),
                        fresh_stream,
                        "q{quality} {size} streamed"
                    );
                }
                assert_eq!(reference_decode(&fresh_all), input);
                assert_eq!(reference_decode(&fresh_stream), input);
            }
            let stats = pool.stats().br_compressors;
            assert_eq!(stats.created, 1, "q{quality}: {stats:?}");
        }
    }

    #[test]
    fn reset_leaves_nothing_live_but_the_spare_hasher() {
        let pool = CodecPool::new();
        for quality in [0, 1, 4, 10] {
            let mut state = draw_compressor(&pool, level(quality));
            let input = json(50_000, 1);
            compress(
                &mut state,
                BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
                &input,
                &mut BytesMut::new(),
            )
            .unwrap();
            assert!(state.reset());
            let live = state.core.m8.0.live();
            match quality {
                4 => assert!(
                    state.spare.is_some() && live > 0 && live < 600_000,
                    "q{quality}: {live}"
                ),
                _ => assert!(state.spare.is_none() && live == 0, "q{quality}: {live}"),
            }
        }
        let mut state = draw_decompressor(&pool);
        let mut wire = BytesMut::new();
        encode_all(level(4), &json(50_000, 1), &pool, &mut wire).unwrap();
        let mut budget = usize::MAX;
        BrDecoder::step(&mut state.core, &wire, &mut BytesMut::new(), &mut budget)
            .1
            .unwrap();
        assert!(state.lists.lists().live() > 0);
        assert!(state.reset());
        assert_eq!(state.lists.lists().live(), 0);
    }

    #[test]
    fn flush_makes_every_prefix_decodable() {
        let pool = CodecPool::new();
        let input = json(50_000, 21);
        for quality in [0, 1, 4, 11] {
            let input = if quality == 11 {
                &input[..6000]
            } else {
                &input[..]
            };
            let mut encoder = BrEncoder::new(level(quality), &pool);
            let mut decoder = BrDecoder::new(&pool);
            let mut wire = BytesMut::new();
            let mut plain = BytesMut::new();
            let mut rng = Rng(u64::from(quality) + 1);
            let mut fed = 0;
            while fed < input.len() {
                let n = (1 + rng.below(3000)).min(input.len() - fed);
                encoder.encode(&input[fed..fed + n], &mut wire).unwrap();
                fed += n;
                encoder.flush(&mut wire).unwrap();
                // A second flush with nothing new adds at most an empty block.
                let again = encoder.flush(&mut wire).unwrap();
                assert!(again.produced <= 2, "q{quality}: {again:?}");
                let chunk = wire.split();
                let progress = decoder.decode(&chunk, &mut plain, usize::MAX).unwrap();
                assert_eq!(progress.consumed, chunk.len());
                assert_eq!(
                    &plain[..],
                    &input[..fed],
                    "q{quality}: everything fed is decodable"
                );
                assert!(!decoder.is_stream_end());
            }
            // idle is a flush too and keeps the state.
            encoder.idle(&mut wire).unwrap();
            assert!(encoder.holds_state());
            encoder.finish(&mut wire).unwrap();
            decoder.decode(&wire, &mut plain, usize::MAX).unwrap();
            decoder.finish().unwrap();
            assert!(decoder.is_stream_end());
            assert_eq!(decoder.members(), 1);
            assert_eq!(&plain[..], input);
        }
    }

    #[test]
    fn tiny_output_budgets() {
        let pool = CodecPool::new();
        let input = json(20_000, 4);
        let mut wire = BytesMut::new();
        encode_all(level(4), &input, &pool, &mut wire).unwrap();
        for max_out in [1, 7, 100, 4096] {
            let decoded = decode_chunked(&wire, max_out, &mut Rng(max_out as u64), &pool).unwrap();
            assert_eq!(decoded, input, "max_out {max_out}");
        }
        // A budget of zero makes no progress but loses nothing.
        let mut decoder = BrDecoder::new(&pool);
        let mut out = BytesMut::new();
        let progress = decoder.decode(&wire, &mut out, 0).unwrap();
        assert_eq!(progress.produced, 0);
        assert!(decoder.has_pending_output());
        let mut rest = &wire[progress.consumed..];
        while !rest.is_empty() || decoder.has_pending_output() {
            let progress = decoder.decode(rest, &mut out, 1000).unwrap();
            rest = &rest[progress.consumed..];
        }
        decoder.finish().unwrap();
        assert_eq!(&out[..], &input[..]);
    }

    #[test]
    fn truncation_at_every_offset_is_an_error() {
        let pool = CodecPool::new();
        let input = json(3000, 9);
        let mut wire = BytesMut::new();
        encode_all(level(4), &input, &pool, &mut wire).unwrap();
        for cut in 1..wire.len() {
            let mut decoder = BrDecoder::new(&pool);
            let mut out = BytesMut::new();
            let result = decoder
                .decode(&wire[..cut], &mut out, usize::MAX)
                .and_then(|_| decoder.finish());
            let error = result.expect_err("a truncated stream is never Ok");
            assert!(
                matches!(
                    error.kind(),
                    DecodeErrorKind::Truncated | DecodeErrorKind::CorruptData
                ),
                "cut {cut}: {error}"
            );
            assert!(
                input.starts_with(&out),
                "cut {cut}: only a prefix of the data"
            );
            assert_eq!(
                decoder.finish().unwrap_err().kind(),
                error.kind(),
                "errors are sticky"
            );
        }
        // The empty body is fine: no stream at all.
        let decoder = BrDecoder::new(&pool);
        decoder.finish().unwrap();
        drop(decoder);
        assert_eq!(pool.stats().in_use(), 0);
    }

    #[test]
    fn corrupt_bytes_never_panic() {
        let pool = CodecPool::new();
        let input = json(2000, 13);
        let mut wire = BytesMut::new();
        encode_all(level(4), &input, &pool, &mut wire).unwrap();
        let mut rng = Rng(17);
        for i in 0..wire.len() {
            for _ in 0..3 {
                let mut bad = wire.to_vec();
                bad[i] ^= 1 << rng.below(8);
                let mut decoder = BrDecoder::new(&pool);
                let mut out = BytesMut::new();
                let _ = decoder
                    .decode(&bad, &mut out, 1 << 20)
                    .and_then(|_| decoder.finish());
            }
        }
        for _ in 0..200 {
            let garbage: Vec<u8> = (0..1 + rng.below(300)).map(|_| rng.next() as u8).collect();
            let mut decoder = BrDecoder::new(&pool);
            let _ = decoder.decode(&garbage, &mut BytesMut::new(), 1 << 20);
        }
        assert_eq!(pool.stats().in_use(), 0);
    }

    #[test]
    fn bytes_after_the_stream_are_trailing_data() {
        let pool = CodecPool::new();
        let input = json(5000, 2);
        let mut wire = BytesMut::new();
        encode_all(level(4), &input, &pool, &mut wire).unwrap();

        // In the same call.
        let mut with_junk = wire.to_vec();
        with_junk.extend_from_slice(b"junk");
        let mut decoder = BrDecoder::new(&pool);
        let error = decoder
            .decode(&with_junk, &mut BytesMut::new(), usize::MAX)
            .unwrap_err();
        assert_eq!(error.kind(), DecodeErrorKind::TrailingData);
        assert_eq!(
            decoder.finish().unwrap_err().kind(),
            DecodeErrorKind::TrailingData
        );

        // In a later call, even one byte (a second br stream is junk too).
        let mut decoder = BrDecoder::new(&pool);
        let mut out = BytesMut::new();
        decoder.decode(&wire, &mut out, usize::MAX).unwrap();
        assert!(decoder.is_stream_end());
        decoder.finish().unwrap();
        decoder.decode(&[], &mut out, usize::MAX).unwrap();
        let error = decoder
            .decode(&wire[..1], &mut out, usize::MAX)
            .unwrap_err();
        assert_eq!(error.kind(), DecodeErrorKind::TrailingData);
        assert_eq!(&out[..], &input[..]);
    }

    #[test]
    fn interop_with_the_brotli_crate() {
        let pool = CodecPool::new();
        for (size, quality) in [
            (0, 4),
            (1, 4),
            (1000, 1),
            (30_000, 5),
            (200_000, 4),
            (5000, 11),
        ] {
            let input = json(size, size as u64);
            // Theirs -> ours, at their defaults (quality 11, window 22) and at others.
            for (their_quality, lgwin) in [(11, 22), (quality, 24), (quality, 10)] {
                let params = brotli::enc::BrotliEncoderParams {
                    quality: their_quality,
                    lgwin,
                    ..Default::default()
                };
                let mut theirs = Vec::new();
                brotli::BrotliCompress(&mut &input[..], &mut theirs, &params).unwrap();
                let decoded = decode_chunked(&theirs, 1 << 16, &mut Rng(1), &pool).unwrap();
                assert_eq!(decoded, input, "{size} q{their_quality} w{lgwin}");
            }
            // Ours -> theirs.
            let ours = encode_chunked(&input, quality as u8, &mut Rng(2), &pool);
            assert_eq!(reference_decode(&ours), input);
        }
    }

    #[test]
    fn states_are_reused_and_returned() {
        let pool = CodecPool::new();
        let input = json(8000, 5);
        for _ in 0..2 {
            let wire = encode_chunked(&input, 4, &mut Rng(1), &pool);
            assert_eq!(
                decode_chunked(&wire, 1 << 16, &mut Rng(1), &pool).unwrap(),
                input
            );
        }
        let stats = pool.stats();
        assert_eq!(stats.br_compressors.created, 1, "{stats:?}");
        assert!(stats.br_compressors.reused > 0, "{stats:?}");
        assert_eq!(stats.br_decompressors.created, 1, "{stats:?}");
        assert!(stats.br_decompressors.reused > 0, "{stats:?}");
        assert_eq!(stats.in_use(), 0);

        // Dropped mid-stream: returned, and the next stream on it is still correct.
        let mut encoder = BrEncoder::new(level(4), &pool);
        encoder
            .encode(&json(100_000, 8), &mut BytesMut::new())
            .unwrap();
        assert_eq!(pool.stats().in_use(), 1);
        drop(encoder);
        assert_eq!(pool.stats().in_use(), 0);
        let wire = encode_chunked(&input, 4, &mut Rng(1), &pool);
        assert_eq!(reference_decode(&wire), input);

        // Levels do not share states.
        let mut out = BytesMut::new();
        encode_all(level(5), &input, &pool, &mut out).unwrap();
        assert_eq!(pool.stats().br_compressors.created, 2);
    }

    #[test]
    fn an_errored_decoder_state_is_not_reused() {
        let pool = CodecPool::new();
        let mut wire = BytesMut::new();
        encode_all(level(4), &json(4000, 1), &pool, &mut wire).unwrap();
        let mut bad = wire.to_vec();
        bad[wire.len() / 2] ^= 0xff;
        bad.extend_from_slice(b"\xff\xff\xff\xff");

        let mut decoder = BrDecoder::new(&pool);
        let error = decoder
            .decode(&bad, &mut BytesMut::new(), usize::MAX)
            .and_then(|_| decoder.finish())
            .unwrap_err();
        assert!(matches!(
            error.kind(),
            DecodeErrorKind::CorruptData | DecodeErrorKind::TrailingData
        ));
        assert!(!decoder.holds_state(), "dropped at the error");
        assert_eq!(
            decoder.decode(&wire, &mut BytesMut::new(), 10).unwrap_err(),
            error
        );
        drop(decoder);
        let stats = pool.stats().br_decompressors;
        assert_eq!(
            (stats.created, stats.discarded, stats.idle),
            (1, 1, 0),
            "{stats:?}"
        );

        // The next decoder gets a new state and works.
        let decoded = decode_chunked(&wire, 1 << 16, &mut Rng(3), &pool).unwrap();
        assert_eq!(decoded, json(4000, 1));
        let stats = pool.stats().br_decompressors;
        assert_eq!((stats.created, stats.reused), (2, 0), "{stats:?}");
    }

    #[test]
    fn free_lists_stay_bounded() {
        let mut lists = FreeLists::new(1000);
        let a: Vec<u32> = lists.alloc(100);
        let b: Vec<u32> = lists.alloc(200);
        lists.free(a);
        lists.free(b);
        assert_eq!(lists.kept(), 1200.min(lists.kept()));
        assert!(lists.kept() <= 1000);
        // Reused blocks come back cleared.
        let mut c: Vec<u32> = lists.alloc(50);
        assert!(c.iter().all(|&x| x == 0));
        c.fill(7);
        lists.free(c);
        let d: Vec<u32> = lists.alloc(100);
        assert_eq!(d.len(), 100);
        assert!(d.iter().all(|&x| x == 0));
        // A request no kept block fits frees one too-small block.
        let before = lists.kept();
        let e: Vec<u32> = lists.alloc(10_000);
        assert!(lists.kept() < before || before == 0);
        drop((d, e));
    }
}
