//! The `dcz` decoder: the header's hash checked against the dictionary, then zstd frames
//! decoded with the dictionary's raw-content `DDict`, windows bounded by
//! [`dcz_window_limit`].

use bytes::BytesMut;
use zstd_safe::InBuffer;

use super::encoder::dcz_window_limit;
use super::shelf::draw_decompressor;
use crate::dictionary::Dictionary;
use crate::dictionary::error::DictDecodeError;
use crate::dictionary::frame::{DCZ_MAGIC, HeaderReader};
use crate::dictionary::{HeadedDecoder as Headed, dict_decoder};
use crate::ffi::zstd_raw::DecompressContext;
use crate::pool::{CodecPool, Pooled};
use crate::zstd::{FrameContext, Frames, Hint};
use crate::{DecodeError, DecodeErrorKind};

impl FrameContext for Pooled<DecompressContext> {
    const WINDOW_TOO_LARGE: &'static str =
        "the frame needs a window over max(8 MiB, 1.25 x the dictionary)";

    fn decompress(&mut self, input: &mut InBuffer<'_>, out: &mut BytesMut, room: usize) -> Hint {
        let (src, pos) = (input.src, &mut input.pos);
        DecompressContext::decompress(self, src, pos, out, room).map_err(|e| e.code())
    }
}

dict_decoder!(
    /// A streaming `dcz` decoder: checks the header's hash against its dictionary, then
    /// decodes the zstd frames (any number, back to back) with the dictionary's `DDict`,
    /// refusing a window over [`dcz_window_limit`] before allocating it. Output is bounded
    /// per call.
    DczDecoder,
    Frames<Pooled<DecompressContext>>
);

impl DczDecoder {
    /// A decoder for bodies made with `dictionary`, with a context from `pool`.
    pub(crate) fn new(
        dictionary: &Dictionary,
        pool: &CodecPool,
    ) -> Result<DczDecoder, DictDecodeError> {
        let ddict = dictionary.zstd().ddict()?;
        let mut ctx = draw_decompressor(pool);
        let max_window = usize::try_from(dcz_window_limit(dictionary.len())).unwrap_or(usize::MAX);
        if ctx.begin(ddict, max_window).is_err() {
            ctx.discard();
            return Err(DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::CorruptData,
                "zstd refused the dictionary",
            )));
        }
        Ok(DczDecoder(Headed::new(
            HeaderReader::new(&DCZ_MAGIC, dictionary.hash()),
            Frames::new(ctx),
        )))
    }
}
