//! `dcb` (RFC 9842 section 4): brotli against a dictionary the client holds, as a raw
//! prefix, behind a 36-byte header; encoded with Google's C brotli and a dictionary prepared
//! once.

mod decoder;
mod encoder;
mod prepared;

pub(crate) use decoder::DcbDecoder;
pub(crate) use decoder::DcbDecoder as Decoder;
pub(crate) use encoder::DcbEncoder;
pub(crate) use encoder::DcbEncoder as Encoder;
#[cfg(all(test, both_dictionary_codings))]
pub(crate) use encoder::encode_dcb;
pub(crate) use encoder::encode_dcb as one_shot;
pub(crate) use prepared::Prepared;

use super::dictionary::Dictionary;
use super::{CompressionLevel, DecodeError, EncodeError};
use crate::pool::CodecPool;

/// A streaming `dcb` encoder against `dictionary`.
pub(crate) fn encoder(
    dictionary: &Dictionary,
    level: CompressionLevel,
    pool: &CodecPool,
) -> Result<DcbEncoder, EncodeError> {
    DcbEncoder::new(dictionary, level, pool)
}

/// A streaming `dcb` decoder against `dictionary` (brotli's decoder has no pooled state).
pub(crate) fn decoder(dictionary: &Dictionary, _: &CodecPool) -> Result<DcbDecoder, DecodeError> {
    Ok(DcbDecoder::new(dictionary))
}
