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
//! - [`encode_dcz`], [`decode_dcz`] and the `dcb` equivalents for bodies known in full;
//!   [`Encoder::with_dictionary`](crate::codec::Encoder::with_dictionary) and
//!   [`Decoder::with_dictionary`](crate::codec::Decoder::with_dictionary) stream.
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
//! `src/codec/dictionary/tests/interop.rs` (each skipped, with a note, where the tool is
//! missing): Python's `zstandard` with `DICT_TYPE_RAWCONTENT` decodes `dcz` payloads (one
//! shot and streamed with flushes) and makes frames the `dcz` decoder reads; Google's C
//! brotli 1.2 (in Python's `brotli` package), driven as Chromium drives it
//! (`BrotliDecoderAttachDictionary`, raw), decodes `dcb` payloads at qualities 5, 9
//! (streamed) and 11, and encodes with a prepared raw dictionary for the `dcb` decoder. Every
//! case uses a trained dictionary and a body that repeats the dictionary's first bytes (zstd's magic and header), which only a
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

#[cfg(feature = "dcz")]
mod build;
#[cfg_attr(not(dictionary_client), path = "client_off.rs")]
mod client;
mod gate;
mod select;
mod serve;
mod store;
#[cfg(feature = "dcz")]
mod train;

#[cfg(feature = "dcb")]
pub use crate::codec::dcb::{decode_dcb, encode_dcb};
#[cfg(feature = "dcz")]
pub use crate::codec::dcz::{decode_dcz, encode_dcz};
pub use crate::codec::dictionary::{
    AVAILABLE_DICTIONARY, DICTIONARY_ID, DictDecodeError, Dictionary, DictionaryError,
    MAX_DICTIONARY_LEN, MAX_ID_LEN, USE_AS_DICTIONARY, UseAsDictionary, available_dictionary, peek,
};
#[cfg(feature = "dcz")]
pub use build::{BuiltDictionary, CandidateReport, DictionaryBuilder, DictionaryKind};
pub(crate) use client::Candidate;
#[cfg(not(dictionary_client))]
pub(crate) use client::ClientDictionaryStore;
#[cfg(dictionary_client)]
pub use client::{
    ClientDictionaryStats, ClientDictionaryStore, ClientDictionaryStoreBuilder, linked_dictionaries,
};
pub use gate::{Readability, gate};
pub(crate) use select::select_parsed;
pub use select::{VARY, select};
pub use serve::{
    DictionaryService, RememberFuture, Remembered, UseAsDictionaryLayer, UseAsDictionaryService,
    link_header,
};
pub use store::{DictionaryStore, ResponseStore};
#[cfg(feature = "dcz")]
pub use train::train;
