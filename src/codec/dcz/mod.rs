//! `dcz` (RFC 9842 section 5): zstd against a dictionary the client holds, as raw content,
//! behind a 40-byte header.

mod decoder;
mod encoder;
mod prepared;
mod shelf;

pub(crate) use decoder::DczDecoder;
pub(crate) use decoder::DczDecoder as Decoder;
pub(crate) use encoder::DczEncoder;
pub(crate) use encoder::DczEncoder as Encoder;
#[cfg(all(test, feature = "dcb"))]
pub(crate) use encoder::dcz_window_limit;
#[cfg(all(test, both_dictionary_codings))]
pub(crate) use encoder::encode_dcz;
pub(crate) use encoder::encode_dcz as one_shot;
pub(crate) use prepared::Prepared;

use super::dictionary::Dictionary;
use super::{CompressionLevel, DecodeError, EncodeError};
use crate::pool::CodecPool;

/// A streaming `dcz` encoder against `dictionary`.
pub(crate) fn encoder(
    dictionary: &Dictionary,
    level: CompressionLevel,
    pool: &CodecPool,
) -> Result<DczEncoder, EncodeError> {
    DczEncoder::new(dictionary, level, pool)
}

/// A streaming `dcz` decoder against `dictionary`.
pub(crate) fn decoder(
    dictionary: &Dictionary,
    pool: &CodecPool,
) -> Result<DczDecoder, DecodeError> {
    DczDecoder::new(dictionary, pool).map_err(DecodeError::from)
}
