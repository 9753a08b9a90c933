//! `dcb` (RFC 9842 section 4): brotli against a dictionary the client holds, as a prefix,
//! behind a 36-byte header.

mod decoder;
mod encoder;

pub(crate) use decoder::DcbDecoder;
pub use decoder::decode_dcb;
pub(crate) use encoder::DcbEncoder;
pub use encoder::encode_dcb;
