//! The streaming codecs under the layers, usable alone: [`Encoder`], [`Decoder`] and
//! [`OneShot`] over every [`ContentCoding`](crate::ContentCoding), their state drawn from a
//! [`CodecPool`](crate::CodecPool). They live in the `tower-gzip-codecs` crate (its docs
//! have the details and an example); this module is where a `tower-gzip` user names them.
//!
//! # Example
//!
//! ```
//! use bytes::BytesMut;
//! use tower_gzip::codec::{Decoder, Encoder};
//! use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};
//!
//! let pool = CodecPool::global();
//! let mut encoder = Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Default, None, pool).unwrap();
//! let mut wire = BytesMut::new();
//! encoder.encode(b"hello, world", &mut wire).unwrap();
//! encoder.finish(&mut wire).unwrap();
//!
//! let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, pool).unwrap();
//! let mut plain = BytesMut::new();
//! let consumed = decoder.decode(&wire, &mut plain, 64 * 1024).unwrap();
//! assert_eq!(consumed, wire.len());
//! decoder.finish().unwrap();
//! assert_eq!(&plain[..], b"hello, world");
//! ```

pub use tower_gzip_codecs::{
    DecodeError, DecodeErrorKind, Decoder, Dictionary, EncodeError, Encoder, Levels, OneShot,
};
#[cfg(dictionary)]
pub use tower_gzip_codecs::{DictionaryError, MAX_DICTIONARY_LEN};
