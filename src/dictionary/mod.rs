//! Compression Dictionary Transport (RFC 9842): `dcz` and `dcb`, on servers and clients.
//!
//! A response served with `Use-As-Dictionary` becomes a dictionary in the browser; later
//! requests that match it offer `dcb, dcz` in `Accept-Encoding` and name it by SHA-256 in
//! `Available-Dictionary`. A server that has that dictionary, and whose response passes the
//! readability [`gate`], may answer with a body compressed against it: often a fraction of
//! the plain zstd or brotli size for API responses and new versions of static assets.
//!
//! - [`Dictionary`]: bytes, hash, `Use-As-Dictionary` metadata and the zstd state prepared
//!   once (raw-content `CDict`s per level, a `DDict`).
//! - [`available_dictionary`], [`UseAsDictionary::parse`]: the two headers, total parsers.
//! - [`gate`]: RFC 9842's readability rule, over request and response headers.
//! - [`select`]: the coding and dictionary for one response (`Accept-Encoding`,
//!   `Available-Dictionary`, the gate), or none.
//! - [`DictionaryStore`], [`ResponseStore`]: dictionaries (and remembered responses) by
//!   hash, bounded in bytes, least recently used out first.
//! - [`DczEncoder`], [`encode_dcz`], [`DczDecoder`], [`decode_dcz`]; the `dcb` equivalents.
//! - [`train`]: a dictionary from sample bodies, with zstd's trainer.
//! - [`ClientDictionaryStore`]: the client side, for
//!   [`DecompressionLayer::dictionaries`](crate::decompression::DecompressionLayer::dictionaries):
//!   dictionaries learned from `Use-As-Dictionary` responses, per origin, offered on requests
//!   their `match` pattern covers; [`linked_dictionaries`] reads a page's `Link` to one.
//!
//! # What it buys
//!
//! On small API JSON, `dcz` sends ~0.7x of plain zstd's bytes at zstd's speed, `dcb` ~0.64x
//! of br's at 4-6x br's time (BENCHMARKS.md, "What dictionaries buy"): list `dcz` first in
//! the codings given to [`select`], which breaks q-value ties by that order.
//!
//! # Checked against other implementations
//!
//! `src/dictionary/tests/interop.rs` (each skipped, with a note, where the tool is
//! missing): Python's `zstandard` with `DICT_TYPE_RAWCONTENT` decodes `dcz` payloads (one
//! shot and streamed with flushes) and makes frames the `dcz` decoder reads; Google's C
//! brotli 1.2 (in Python's `brotli` package), driven as Chromium drives it
//! (`BrotliDecoderAttachDictionary`, raw), decodes `dcb` payloads at qualities 5, 9
//! (streamed) and 11, and encodes with a prepared raw dictionary for the `dcb` decoder. Every case uses a trained dictionary and a body
//! that repeats the dictionary's first bytes (zstd's magic and header), which only a
//! raw-content reading can match.
//!
//! # Example
//!
//! ```
//! use bytes::BytesMut;
//! use tower_gzip::{CodecPool, CompressionLevel};
//! use tower_gzip::dictionary::{Dictionary, UseAsDictionary, decode_dcz, encode_dcz};
//!
//! let dictionary = Dictionary::new(
//!     &br#"{"user":{"id":0,"name":"","email":"@example.com"}}"#[..],
//!     UseAsDictionary::new("/api/users/*"),
//! )
//! .unwrap();
//! let body = br#"{"user":{"id":7,"name":"Ada","email":"ada@example.com"}}"#;
//! let pool = CodecPool::global();
//! let mut wire = BytesMut::new();
//! encode_dcz(&dictionary, CompressionLevel::Default, body, pool, &mut wire).unwrap();
//! assert_eq!(&wire[..4], &[0x5e, 0x2a, 0x4d, 0x18]);
//! assert_eq!(&wire[8..40], &dictionary.hash());
//! let plain = decode_dcz(&dictionary, &wire, pool, 1 << 20).unwrap();
//! assert_eq!(&plain[..], &body[..]);
//! ```

use bytes::BytesMut;

use crate::ContentCoding;

mod client;
#[cfg(feature = "dcb")]
mod dcb;
#[cfg(feature = "dcb")]
mod dcb_decoder;
#[cfg(feature = "dcz")]
mod dcz;
#[cfg(feature = "dcz")]
mod dcz_decoder;
mod dict;
#[cfg(any(feature = "dcz", feature = "dcb"))]
mod dict_decoder;
#[cfg(any(feature = "dcz", feature = "dcb"))]
mod dict_encoder;
mod error;
// Without a codec only the magic bytes and `peek` are used.
#[cfg_attr(not(any(feature = "dcz", feature = "dcb")), allow(dead_code))]
mod frame;
mod gate;
mod headers;
mod select;
mod serve;
#[cfg(feature = "dcz")]
mod shelf;
mod store;
#[cfg(all(test, feature = "dcz", feature = "dcb"))]
mod tests;
#[cfg(feature = "dcz")]
mod train;

pub(crate) use client::Candidate;
pub use client::{
    ClientDictionaryStats, ClientDictionaryStore, ClientDictionaryStoreBuilder, linked_dictionaries,
};
#[cfg(feature = "dcb")]
pub use dcb::{DCB_MAX_WINDOW_LOG, DcbEncoder, encode_dcb};
#[cfg(feature = "dcb")]
pub use dcb_decoder::{DcbDecoder, decode_dcb};
#[cfg(feature = "dcz")]
pub use dcz::{DczEncoder, dcz_window_limit, encode_dcz};
#[cfg(feature = "dcz")]
pub use dcz_decoder::{DczDecoder, decode_dcz};
pub use dict::Dictionary;
pub use error::{DictDecodeError, DictionaryError};
#[cfg(test)]
pub(crate) use frame::{DCB_MAGIC, DCZ_MAGIC};

pub use gate::{Readability, gate};
pub use headers::{
    AVAILABLE_DICTIONARY, DICTIONARY_ID, MAX_ID_LEN, USE_AS_DICTIONARY, UseAsDictionary,
    available_dictionary, available_dictionary_value, parse_available_dictionary,
};
pub(crate) use select::select_parsed;
pub use select::{VARY, select};
pub use serve::{
    DictionaryService, RememberFuture, Remembered, UseAsDictionaryLayer, UseAsDictionaryService,
    link_header,
};
pub use store::{DictionaryStore, ResponseStore};
#[cfg(feature = "dcz")]
pub use train::train;

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

/// Drives a decoder over a whole body: `step(input, out, budget)` returns the input consumed
/// and whether output is pending. Fails once the output passes `max_len`.
#[cfg_attr(not(any(feature = "dcz", feature = "dcb")), allow(dead_code))]
fn decode_loop(
    body: &[u8],
    max_len: usize,
    mut step: impl FnMut(&[u8], &mut BytesMut, usize) -> Result<(usize, bool), DictDecodeError>,
) -> Result<BytesMut, DictDecodeError> {
    let mut out = BytesMut::new();
    let mut input = body;
    loop {
        // One byte over the limit tells a body at the limit from one past it.
        let budget = max_len.saturating_add(1) - out.len();
        let before = out.len();
        let (consumed, more) = step(input, &mut out, budget)?;
        if out.len() > max_len {
            return Err(DictDecodeError::OutputTooLarge { limit: max_len });
        }
        input = &input[consumed..];
        // A call with room that neither took input nor wrote output cannot go on: the
        // decoder's `finish` tells a truncated body from a complete one.
        let stalled = consumed == 0 && out.len() == before;
        if (input.is_empty() && !more) || stalled {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod mod_tests {
    use super::*;

    #[test]
    fn coding_tokens_and_peek() {
        assert_eq!(ContentCoding::Dcz.as_str(), "dcz");
        assert_eq!(ContentCoding::Dcb.as_str(), "dcb");
        assert_eq!(ContentCoding::from_token(" DCZ "), Some(ContentCoding::Dcz));
        assert_eq!(ContentCoding::from_token("dcb"), Some(ContentCoding::Dcb));
        let mut body = DCB_MAGIC.to_vec();
        body.extend_from_slice(&[3; 32]);
        assert_eq!(peek(&body), Some((ContentCoding::Dcb, [3; 32])));
        let mut body = DCZ_MAGIC.to_vec();
        body.extend_from_slice(&[4; 32]);
        body.push(0);
        assert_eq!(peek(&body), Some((ContentCoding::Dcz, [4; 32])));
        assert_eq!(peek(&body[..20]), None);
        assert_eq!(peek(b""), None);
    }
}
