//! `dcb` (RFC 9842 section 4): the 36-byte header, then a brotli stream (RFC 7932) with the
//! dictionary as a raw prefix, window at most 16 MiB.
//!
//! The encoder is Google's C brotli, the library Chromium decodes with: the dictionary is
//! prepared once (a hash table kept with the [`Dictionary`]) and attached to each stream's
//! encoder, which finds matches in it without hashing it in. Quality is at least 5: below,
//! brotli's match finders do not search a dictionary.

use bytes::BytesMut;

use crate::dictionary::Dictionary;
use crate::dictionary::frame::DCB_MAGIC;
use crate::dictionary::{DictCodec, HeadedEncoder as Headed, Op, Start, Stream};
use crate::encoding::Driving;
use crate::ffi::brotli_c::{Encoder, Failure, Operation, Params};
use crate::pool::{CodecPool, Kind, Pooled, PooledState};
use crate::{CompressionLevel, ContentCoding, EncodeError, Level};

/// The largest window log a `dcb` stream may use: 24, brotli's 16 MiB (RFC 7932 without the
/// large-window extension), as RFC 9842 caps it.
pub(crate) const DCB_MAX_WINDOW_LOG: u32 = 24;

/// The most memory an idle encoder's arena keeps, as br's pooled encoders: a stream of
/// unknown size (a 2 MiB window: 4 MiB of ring buffer and tables) is freed rather than kept.
const MAX_KEPT: usize = 4 << 20;

/// The brotli quality for `level`, from the coding table: `Default` and `Fastest` are 5
/// (brotli searches a dictionary only from quality 5), `Best` 11, `Precise(n)` clamped to
/// 5..=11; as the pool's level tag.
fn quality(level: CompressionLevel) -> Level {
    level.resolve(ContentCoding::Dcb)
}

/// The window log: the smallest from 18 (256 KiB) that holds the dictionary and `body`
/// bytes after it (brotli keeps at most a window minus 16 bytes), up to 24 (16 MiB).
///
/// C brotli reaches the dictionary past the window whatever its size; a window that holds
/// both keeps every distance within what a decoder that puts the dictionary in its window
/// (an older "custom dictionary" decoder) can follow, and costs little: the encoder's ring
/// buffer grows with the input, not the window.
fn lgwin(dictionary_len: usize, body: usize) -> u32 {
    let span = dictionary_len.saturating_add(body);
    (18..DCB_MAX_WINDOW_LOG)
        .find(|&log| span <= (1usize << log) - 16)
        .unwrap_or(DCB_MAX_WINDOW_LOG)
}

/// The body size assumed for a stream of unknown size: 1 MiB beyond the dictionary.
const UNKNOWN_BODY: usize = 1 << 20;

/// A pooled C brotli encoder's memory: between streams, the blocks of the last one, for
/// the next at the same quality (a C encoder cannot be reset; its memory can be reused).
#[derive(Debug)]
pub(crate) struct DcbCompressor(Encoder);

impl PooledState for DcbCompressor {
    const KIND: Kind = crate::kinds::PoolKind::DcbCompressors.kind();

    fn reset(&mut self) -> bool {
        // Destroys the stream's encoder (its blocks back in the arena) and its hold on the
        // dictionary.
        self.0.end();
        self.0.trim(MAX_KEPT);
        self.0.blocks().live() == 0
    }
}

fn encode_error(failure: Failure) -> EncodeError {
    EncodeError::new(format!("brotli: {}", failure.describe()))
}

/// A pooled encoder with a stream open on it: `level`'s quality, the window for the
/// dictionary and `size_hint` (brotli's hint too), the dictionary attached.
fn new_state(
    dictionary: &Dictionary,
    level: CompressionLevel,
    pool: &CodecPool,
    size_hint: Option<usize>,
) -> Result<Pooled<DcbCompressor>, EncodeError> {
    let prepared = dictionary.brotli().get()?;
    let quality = quality(level);
    let mut state = pool.take(quality, || DcbCompressor(Encoder::new(MAX_KEPT)));
    let params = Params {
        quality: u32::from(quality.get()),
        lgwin: lgwin(dictionary.len(), size_hint.unwrap_or(UNKNOWN_BODY)),
        size_hint,
    };
    match state.0.start(params, Some(prepared)) {
        Ok(()) => Ok(state),
        Err(failure) => {
            state.discard();
            Err(encode_error(failure))
        }
    }
}

/// `dcb`'s codec: a pooled C brotli encoder with the dictionary attached.
#[derive(Debug)]
pub(crate) struct DcbCore;

impl DictCodec for DcbCore {
    type State = Pooled<DcbCompressor>;
    const MAGIC: &'static [u8] = &DCB_MAGIC;
    const RELEASES_WHEN_IDLE: bool = false;

    fn redraw(&self) -> Result<Self::State, EncodeError> {
        // Never called (`RELEASES_WHEN_IDLE` is false): a brotli stream cannot restart.
        Err(EncodeError::new("a dcb stream cannot restart"))
    }

    /// The encoder sized by the body's size, when known.
    fn headed(start: Start<'_>) -> Result<Headed<Self>, EncodeError> {
        let state = new_state(start.dictionary, start.level, start.pool, start.size)?;
        Ok(Headed::new(DcbCore, state, start.dictionary.hash()))
    }

    fn reserve(input: usize) -> usize {
        36 + input / 4 + 64
    }

    const PADS_AFTER_END: bool = false;

    fn pad(len: usize, out: &mut BytesMut) {
        crate::padding::metadata_blocks(len, out);
    }
}

impl Stream for Pooled<DcbCompressor> {
    fn run(&mut self, op: Op, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        // BROTLI_OPERATION_FLUSH: everything so far decodable.
        let op = op.pick(Operation::Process, Operation::Flush, Operation::Finish);
        self.0.compress(op, input, out).map_err(encode_error)
    }

    fn discard(self) {
        // The encoder and its arena are freed, never shelved.
        Pooled::discard(self);
    }
}

/// A streaming `dcb` encoder. Output is appended to the caller's buffer; the header goes
/// out with the first call that writes.
///
/// Its C brotli encoder runs on memory from the pool's `dcb` shelf, with the dictionary's
/// prepared form attached.
pub(crate) type DcbEncoder = Driving<Headed<DcbCore>>;
