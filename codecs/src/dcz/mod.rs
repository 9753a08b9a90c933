//! `dcz` (RFC 9842 section 5): zstd against a dictionary the client holds, as raw content,
//! behind a 40-byte header.

mod decoder;
mod encoder;
mod prepared;
mod shelf;

pub(crate) use decoder::DczDecoder;
pub(crate) use decoder::DczDecoder as Decoder;
pub(crate) use encoder::DczCore as Core;
pub(crate) use encoder::DczEncoder;
pub(crate) use encoder::DczEncoder as Encoder;
#[cfg(all(test, feature = "dcb"))]
pub(crate) use encoder::dcz_window_limit;
pub(crate) use prepared::Prepared;

use super::DecodeError;
use super::dictionary::Dictionary;
use crate::pool::CodecPool;

super::dictionary::dictionary_entry_points!(Core, DczEncoder);

/// A streaming `dcz` decoder against `dictionary`.
pub(crate) fn decoder(
    dictionary: &Dictionary,
    pool: &CodecPool,
) -> Result<DczDecoder, DecodeError> {
    DczDecoder::new(dictionary, pool).map_err(DecodeError::from)
}
