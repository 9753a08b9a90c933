//! `dcz` (RFC 9842 section 5): zstd against a dictionary the client holds, as raw content,
//! behind a 40-byte header.

mod decoder;
mod encoder;
mod shelf;

pub use decoder::{DczDecoder, decode_dcz};
pub(crate) use encoder::Prepared;
pub use encoder::{DczEncoder, dcz_window_limit, encode_dcz};
