//! `dcb` (RFC 9842 section 4): brotli against a dictionary the client holds, as a raw
//! prefix, behind a 36-byte header; encoded with Google's C brotli and a dictionary prepared
//! once.

mod decoder;
mod encoder;
mod prepared;

pub(crate) use decoder::DcbDecoder;
pub(crate) use decoder::DcbDecoder as Decoder;
pub(crate) use encoder::DcbCore as Core;
pub(crate) use encoder::DcbEncoder;
pub(crate) use encoder::DcbEncoder as Encoder;
pub(crate) use prepared::Prepared;

use super::DecodeError;
use super::dictionary::Dictionary;
use crate::pool::CodecPool;

super::dictionary::dictionary_entry_points!(Core, DcbEncoder);

/// A streaming `dcb` decoder against `dictionary` (brotli's decoder has no pooled state).
pub(crate) fn decoder(dictionary: &Dictionary, _: &CodecPool) -> Result<DcbDecoder, DecodeError> {
    Ok(DcbDecoder::new(dictionary))
}
