//! Compression Dictionary Transport (RFC 9842): `dcz` and `dcb`, on servers and clients.
//!
//! A response served with `Use-As-Dictionary` becomes a dictionary in the browser; later
//! requests that match it offer `dcb, dcz` in `Accept-Encoding` and name it by SHA-256 in
//! `Available-Dictionary`. A server that has that dictionary, and whose response passes
//! RFC 9842's readability rule (section 7: the requesting context can read both), may
//! answer with a body compressed against it: often a fraction of the plain zstd or brotli
//! size for API responses and new versions of static assets.
//!
//! - [`Dictionary`]: bytes, hash, `Use-As-Dictionary` metadata and the zstd state prepared
//!   once (raw-content `CDict`s per level, a `DDict`).
//! - [`UseAsDictionary`]: the `Use-As-Dictionary` metadata a dictionary is served with.
//! - [`DictionaryStore`]: dictionaries by hash, bounded in bytes, least recently used out
//!   first.
//! - [`UseAsDictionaryLayer`], [`DictionaryService`]: serving dictionaries, and responses
//!   that become them.
//!
//! Two kinds of dictionary, made at two times:
//!
//! - deploy-time (`build/`): [`DictionaryBuilder`] picks, from sample responses, the
//!   dictionary and levels that send the fewest bytes on held-out samples within a CPU
//!   budget; the result ships with the service.
//! - run-time ([`learn`]): a [`Learner`](learn::Learner) samples live responses, builds with
//!   the same builder on its own thread, then publishes, announces and rotates the result.
//!
//! Elsewhere: a body known in full is compressed and decompressed with
//! [`OneShot::dictionary`](crate::codec::OneShot::dictionary), and streamed with
//! [`Encoder::for_coding`](crate::codec::Encoder::for_coding) and
//! [`Decoder::for_coding`](crate::codec::Decoder::for_coding), given the dictionary; the
//! client's store is `client::ClientDictionaryStore` (cargo feature `dictionary-client`).
//!
//! # What it buys
//!
//! On API JSON the dictionary never saw, with the dictionary [`DictionaryBuilder`] chose,
//! `dcz` and `dcb` send well under plain zstd's and br's bytes at about their time
//! (BENCHMARKS.md, "Dictionaries", has the figures).
//! On a q-value tie between `dcz` and `dcb`, the compression layer's order of codings decides.
//!
//! # Checked against other implementations
//!
//! `codecs/src/dictionary/tests/interop.rs` (each skipped, with a note, where the tool is
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
//! use tower_gzip::ContentCoding;
//! use tower_gzip::codec::OneShot;
//! use tower_gzip::dictionary::Dictionary;
//! use tower_gzip::dictionary::UseAsDictionary;
//!
//! let dictionary = Dictionary::new(
//!     &br#"{"user":{"id":0,"name":"","email":"@example.com"}}"#[..],
//!     UseAsDictionary::new("/api/users/*"),
//! )
//! .unwrap();
//! let body = br#"{"user":{"id":7,"name":"Ada","email":"ada@example.com"}}"#;
//! let dcz = OneShot::new(ContentCoding::Dcz).dictionary(&dictionary);
//! let mut wire = BytesMut::new();
//! dcz.encode(body, &mut wire).unwrap();
//! assert_eq!(&wire[..4], &[0x5e, 0x2a, 0x4d, 0x18]);
//! assert_eq!(&wire[8..40], &dictionary.hash());
//! let plain = dcz.decode(&wire, 1 << 20).unwrap();
//! assert_eq!(&plain[..], &body[..]);
//! ```

// Without `dcz` and `dcb` this module is private and holds what the compression layer reads
// on every request: the gate and the selection compile as they are, and the store is the
// seam (see the end of this file).
#![cfg_attr(not(dictionary), allow(dead_code, unreachable_pub, unused_imports))]

#[cfg(feature = "dcz")]
mod build;
#[cfg(feature = "learn")]
pub mod learn;
mod serve;

#[cfg(dictionary)]
pub use crate::codec::DictionaryError;
#[cfg(dictionary)]
pub use crate::headers::UseAsDictionary;
#[cfg(feature = "dcz")]
pub use build::{BuiltDictionary, CandidateReport, DictionaryBuilder, DictionaryKind};
pub(crate) use serve::scope;
#[cfg(fuzzing)]
pub(crate) use serve::select;
#[cfg(dictionary)]
pub use serve::{
    Dictionary, DictionaryService, DictionaryStore, UseAsDictionaryLayer, link_header,
};
pub(crate) use serve::{gate, select_parsed};
#[cfg(dictionary)]
pub use tower_gzip_codecs::peek;

/// Without `dcz` and `dcb` no dictionary exists: the layers' paths that carry one compile as
/// they are and never run.
#[cfg(not(dictionary))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dictionary {}

#[cfg(not(dictionary))]
impl Dictionary {
    pub(crate) fn codec(&self) -> &crate::codec::Dictionary {
        match *self {}
    }

    pub(crate) fn available_dictionary(&self) -> http::HeaderValue {
        match *self {}
    }

    pub(crate) fn level(&self, _: crate::ContentCoding) -> Option<i32> {
        match *self {}
    }

    pub(crate) fn hash(&self) -> [u8; 32] {
        match *self {}
    }
}

/// The seam: without `dcz` and `dcb` no store can exist, so a layer's dictionary path ends
/// where it asks for one.
#[cfg(not(dictionary))]
#[derive(Clone, Debug)]
pub(crate) enum DictionaryStore {}

#[cfg(not(dictionary))]
impl DictionaryStore {
    pub(crate) fn for_request(&self, _: &http::HeaderMap) -> Option<Dictionary> {
        match *self {}
    }
}
