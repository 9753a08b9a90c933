//! Not API: what the fuzz targets reach below the public surface. `cargo fuzz` builds with
//! `--cfg fuzzing`; no other build has this module, so nothing here is a promise.

#[cfg(dictionary)]
pub use dictionary_headers::*;

/// The WebSocket read side's frame parser and inflater.
#[cfg(feature = "websocket")]
pub use crate::websocket::fuzzing::inbound_frames;

#[cfg(dictionary)]
mod dictionary_headers {
    use http::{HeaderMap, HeaderValue};

    use crate::ContentCoding;
    use crate::dictionary::{Dictionary, DictionaryStore, UseAsDictionary};

    /// The hash an `Available-Dictionary` header names, if it is well formed.
    pub fn available_dictionary(headers: &HeaderMap) -> Option<[u8; 32]> {
        crate::headers::available_dictionary(headers)
    }

    /// The `Use-As-Dictionary` value for `metadata`, if it can be written.
    pub fn use_as_dictionary_value(metadata: &UseAsDictionary) -> Option<HeaderValue> {
        metadata.to_header_value().ok()
    }

    /// Whether RFC 9842's readability gate lets dictionary compression answer `request`.
    pub fn readable(request: &HeaderMap, response: &HeaderMap) -> bool {
        crate::dictionary::gate(request, response).is_allowed()
    }

    /// The dictionary coding and dictionary the compression layer would choose.
    pub fn select(
        request: &HeaderMap,
        response: &HeaderMap,
        store: &DictionaryStore,
        codings: &[ContentCoding],
    ) -> Option<(ContentCoding, Dictionary)> {
        crate::dictionary::select(request, response, store, codings)
    }
}
