//! The dictionary value and what `dcz` and `dcb` share (RFC 9842): the body header (magic
//! and the dictionary's SHA-256), one encoder driver and one decoder driver over each
//! coding's stream, and their typed errors.
//!
//! HTTP policy (which request gets which dictionary, the stores, serving) is the layers'
//! (`tower_gzip::dictionary`); this module knows bytes only.

mod decoder;
mod dict;
mod encoder;
pub(crate) mod error;
pub(crate) mod frame;
mod prepared;
#[cfg(all(test, both_dictionary_codings))]
pub(crate) mod tests;
#[cfg(feature = "dcz")]
mod train;

pub(crate) use decoder::{Headed as HeadedDecoder, dict_decoder};
pub use dict::Dictionary;
#[cfg(all(test, both_dictionary_codings))]
pub(crate) use encoder::encode_all;
pub(crate) use encoder::{
    DictCodec, Headed as HeadedEncoder, Op, Start, Stream, encode_padded, streaming,
};
pub use error::DictionaryError;
pub(crate) use prepared::Prepared;
#[cfg(feature = "dcz")]
pub use train::train;

/// The entry points the codec list calls (see `codec::families`) for a dictionary coding
/// whose [`DictCodec`] is `$core` and streaming encoder type `$encoder`: the streaming
/// encoder and the one-shot call, both against a dictionary.
macro_rules! dictionary_entry_points {
    ($core:ty, $encoder:ty) => {
        pub(crate) fn encoder(
            dictionary: &$crate::dictionary::Dictionary,
            level: $crate::CompressionLevel,
            pool: &$crate::CodecPool,
        ) -> Result<$encoder, $crate::EncodeError> {
            $crate::dictionary::streaming::<$core>(dictionary, level, pool)
        }

        pub(crate) fn one_shot(
            dictionary: &$crate::dictionary::Dictionary,
            level: $crate::CompressionLevel,
            input: &[u8],
            padding: usize,
            pool: &$crate::CodecPool,
            out: &mut ::bytes::BytesMut,
        ) -> Result<(), $crate::EncodeError> {
            $crate::dictionary::encode_padded::<$core>(dictionary, level, input, padding, pool, out)
        }
    };
}
pub(crate) use dictionary_entry_points;

use crate::ContentCoding;

/// The largest dictionary this crate accepts: 128 MiB, the largest window a `dcz` client
/// must support (RFC 9842 section 5).
pub const MAX_DICTIONARY_LEN: usize = 128 << 20;

/// The dictionary coding and the dictionary hash a body's header names, when it starts with a
/// complete `dcz` or `dcb` header (a client can pick the dictionary this way).
pub fn peek(body: &[u8]) -> Option<(ContentCoding, [u8; 32])> {
    frame::HEADERS
        .iter()
        .find_map(|(coding, magic)| frame::peek_hash(magic, body).map(|hash| (*coding, hash)))
}

#[cfg(all(test, both_dictionary_codings))]
mod mod_tests {
    use super::*;

    #[test]
    fn coding_tokens_and_peek() {
        assert_eq!(ContentCoding::Dcz.as_str(), "dcz");
        assert_eq!(ContentCoding::Dcb.as_str(), "dcb");
        assert_eq!(ContentCoding::from_token(" DCZ "), Some(ContentCoding::Dcz));
        assert_eq!(ContentCoding::from_token("dcb"), Some(ContentCoding::Dcb));
        let mut body = frame::DCB_MAGIC.to_vec();
        body.extend_from_slice(&[3; 32]);
        assert_eq!(peek(&body), Some((ContentCoding::Dcb, [3; 32])));
        let mut body = frame::DCZ_MAGIC.to_vec();
        body.extend_from_slice(&[4; 32]);
        body.push(0);
        assert_eq!(peek(&body), Some((ContentCoding::Dcz, [4; 32])));
        assert_eq!(peek(&body[..20]), None);
        assert_eq!(peek(b""), None);
    }
}
