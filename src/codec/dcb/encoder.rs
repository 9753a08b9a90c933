//! `dcb` (RFC 9842 section 4): the 36-byte header, then a brotli stream (RFC 7932) with the
//! dictionary as a prefix ("custom dictionary"), window at most 16 MiB.
//!
//! The pure-Rust `brotli` crate's `set_custom_dictionary` writes what Chromium decodes (the
//! headless browser test in `tests/interop`). Quality is at least 5: below, brotli gives a
//! dictionary little or no use.

use brotli::enc::encode::BrotliEncoderOperation as BrOp;
use bytes::BytesMut;

use crate::codec::br::{CompressorState, compress, draw_compressor};
use crate::codec::dictionary::Dictionary;
use crate::codec::dictionary::frame::DCB_MAGIC;
use crate::codec::dictionary::{DictCodec, HeadedEncoder as Headed, Op, Stream, dict_encoder};
use crate::codec::encoding::Driving;
use crate::codec::{CompressionLevel, ContentCoding, EncodeError, Level};
use crate::pool::{CodecPool, Pooled};

/// The largest window log a `dcb` stream may use: 24, brotli's 16 MiB (RFC 7932 without the
/// large-window extension), as RFC 9842 caps it.
pub(crate) const DCB_MAX_WINDOW_LOG: u32 = 24;

/// The lowest quality used: brotli makes (almost) no use of a dictionary below 5.
const MIN_QUALITY: u32 = 5;

/// The brotli quality for `level`: `Default` and `Fastest` are 5, `Best` 11, `Precise(n)`
/// is clamped to 5..=11; as the pool's level tag.
fn quality(level: CompressionLevel) -> Level {
    let q = match level {
        CompressionLevel::Default => MIN_QUALITY,
        level => u32::from(level.resolve(ContentCoding::Br).get()).max(MIN_QUALITY),
    };
    CompressionLevel::Precise(q as i32).resolve(ContentCoding::Br)
}

/// The window log: the smallest from 18 (256 KiB) that holds the dictionary and `body`
/// bytes after it (brotli keeps at most a window minus 16 bytes), up to 24 (16 MiB). The
/// encoder's ring buffer is twice the window and, once glibc serves it from its heap, is
/// cleared whole at the stream's second write (the body after the dictionary): with
/// brotli's default 4 MiB window that costs ~1 ms per 1 KiB response.
fn lgwin(dictionary_len: usize, body: usize) -> u32 {
    let span = dictionary_len.saturating_add(body);
    (18..DCB_MAX_WINDOW_LOG)
        .find(|&log| span <= (1usize << log) - 16)
        .unwrap_or(DCB_MAX_WINDOW_LOG)
}

/// The body size assumed for a stream of unknown size: 1 MiB beyond the dictionary.
const UNKNOWN_BODY: usize = 1 << 20;

/// A pooled brotli encoder (the br shelf's, at the dcb quality) with the dictionary loaded
/// as its prefix. The pooled state spares the fresh encoder's zero-filled tables; the
/// dictionary itself is hashed in per response (the `brotli` crate has no shared prepared
/// dictionary).
fn new_state(
    dictionary: &Dictionary,
    level: CompressionLevel,
    pool: &CodecPool,
    size_hint: Option<usize>,
) -> Pooled<CompressorState> {
    let mut state = draw_compressor(pool, quality(level));
    if let Some(len) = size_hint {
        state.hint(len as u64);
    }
    let body = size_hint.unwrap_or(UNKNOWN_BODY);
    state.set_dictionary(lgwin(dictionary.len(), body), dictionary.bytes());
    state
}

/// `dcb`'s codec: a pooled brotli encoder with the dictionary as its prefix.
#[derive(Debug)]
pub(super) struct DcbCore;

impl DictCodec for DcbCore {
    type State = Pooled<CompressorState>;
    const MAGIC: &'static [u8] = &DCB_MAGIC;
    const RELEASES_WHEN_IDLE: bool = false;

    fn redraw(&self) -> Result<Self::State, EncodeError> {
        // Never called (`RELEASES_WHEN_IDLE` is false): a brotli stream cannot restart.
        Err(EncodeError::new("a dcb stream cannot restart"))
    }
}

impl Stream for Pooled<CompressorState> {
    fn run(&mut self, op: Op, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        let op = match op {
            Op::Process => BrOp::BROTLI_OPERATION_PROCESS,
            Op::Flush => BrOp::BROTLI_OPERATION_FLUSH,
            Op::Finish => BrOp::BROTLI_OPERATION_FINISH,
        };
        // The `brotli` crate's encoder (9.1.1) panics on some inputs once a custom
        // dictionary is set: it cuts a match from the dictionary's last byte to a one-byte
        // copy it cannot code (`StoreCommandExtra`). The cut itself is right for dcb (the
        // decoder reads the dictionary apart from the data), so the defect stays. A panic
        // must not reach the server: it becomes this stream's error, and the state is
        // discarded.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compress(self, op, input, out)
        }))
        .unwrap_or_else(|_| {
            Err(EncodeError::new(
                "brotli: the dictionary encoder failed on this input (a brotli crate defect)",
            ))
        })
    }

    fn discard(self) {
        Pooled::discard(self);
    }
}

dict_encoder!(
    /// A streaming `dcb` encoder. Output is appended to the caller's buffer; the header goes
    /// out with the first call that writes.
    ///
    /// Its brotli encoder comes from the pool's br shelf, and hashes the dictionary in at the
    /// start of each stream (the `brotli` crate has no shared prepared dictionary).
    DcbEncoder,
    DcbCore
);

impl DcbEncoder {
    /// An encoder at `level` (see the module notes: quality 5 by default, never below), its
    /// brotli state from `pool`.
    pub(crate) fn new(
        dictionary: &Dictionary,
        level: CompressionLevel,
        pool: &CodecPool,
    ) -> DcbEncoder {
        DcbEncoder(Driving::with_core(headed(dictionary, level, pool, None)))
    }
}

/// The header and the stream, its brotli state sized by `size_hint`.
fn headed(
    dictionary: &Dictionary,
    level: CompressionLevel,
    pool: &CodecPool,
    size_hint: Option<usize>,
) -> Headed<DcbCore> {
    let state = new_state(dictionary, level, pool, size_hint);
    Headed::new(DcbCore, state, dictionary.hash())
}

/// Compresses all of `input` as a `dcb` body appended to `out`, with its size as brotli's
/// size hint, the brotli state from `pool`.
pub(crate) fn encode_dcb(
    dictionary: &Dictionary,
    level: CompressionLevel,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    out.reserve(36 + input.len() / 4 + 64);
    headed(dictionary, level, pool, Some(input.len())).encode_all(input, out)
}
