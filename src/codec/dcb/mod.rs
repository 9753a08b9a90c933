//! `dcb` (RFC 9842 section 4): brotli against a dictionary the client holds, as a prefix,
//! behind a 36-byte header.

mod decoder;
mod encoder;

pub use decoder::{DcbDecoder, decode_dcb};
pub use encoder::{DCB_MAX_WINDOW_LOG, DcbEncoder, encode_dcb};
