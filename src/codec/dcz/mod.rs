//! `dcz` (RFC 9842 section 5): zstd against a dictionary the client holds, as raw content,
//! behind a 40-byte header.

mod decoder;
mod encoder;
mod shelf;

pub(crate) use decoder::DczDecoder;
pub use decoder::decode_dcz;
#[cfg(test)]
pub(crate) use encoder::dcz_window_limit;
pub use encoder::encode_dcz;
pub(crate) use encoder::{DczEncoder, Prepared};
