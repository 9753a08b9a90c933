//! The client side of Compression Dictionary Transport (RFC 9842): learning dictionaries
//! from responses and offering them on later requests.
//!
//! [`DecompressionLayer::dictionaries`](crate::decompression::DecompressionLayer::dictionaries)
//! turns it on with a [`ClientDictionaryStore`]. Then, as Chromium does:
//!
//! - a `2xx` response to a `GET` with `Use-As-Dictionary` (a `match` URL pattern on the same
//!   origin) and a freshness lifetime is stored once its body has been read in full and
//!   decoded;
//! - a later request whose URL matches a fresh dictionary of its origin offers `dcz` and
//!   `dcb` in `Accept-Encoding` and names the dictionary in `Available-Dictionary` (and
//!   `Dictionary-ID`); a request that matches none goes out exactly as without the store;
//! - a `dcz` or `dcb` response is decoded with the offered dictionary, after checking that
//!   the hash in its header names it.

// Without `dictionary-client` the decompression layer's dictionary path still compiles:
// [`Offer`] is shared, and the store is the seam (see the end of this file).

#[cfg(dictionary_client)]
mod freshness;
#[cfg(dictionary_client)]
mod link;
#[cfg(dictionary_client)]
mod pattern;
#[cfg(dictionary_client)]
mod store;
#[cfg(all(test, dictionary_client))]
mod tests;

use http::HeaderValue;

use crate::dictionary::Dictionary;
#[cfg(dictionary_client)]
pub use link::linked_dictionaries;
#[cfg(dictionary_client)]
pub(crate) use store::Candidate;
#[cfg(dictionary_client)]
pub use store::{ClientDictionaryStats, ClientDictionaryStore, ClientDictionaryStoreBuilder};

/// The dictionary to offer on a request, with its `Dictionary-ID` value.
#[derive(Clone, Debug)]
pub(crate) struct Offer {
    pub(crate) dictionary: Dictionary,
    pub(crate) id: Option<HeaderValue>,
}

/// The seam: without `dictionary-client` no store can exist, so the decompression layer's
/// dictionary path ends where it asks for one.
#[cfg(not(dictionary_client))]
#[derive(Clone, Debug)]
pub(crate) enum ClientDictionaryStore {}

/// No response can become a dictionary.
#[cfg(not(dictionary_client))]
#[derive(Debug)]
pub(crate) enum Candidate {}

#[cfg(not(dictionary_client))]
impl ClientDictionaryStore {
    pub(crate) fn refuse(&self) {
        match *self {}
    }

    pub(crate) fn max_entry_bytes(&self) -> usize {
        match *self {}
    }

    pub(crate) fn candidate(&self, _: &http::Uri, _: &http::HeaderMap) -> Option<Candidate> {
        match *self {}
    }

    pub(crate) fn learn(&self, candidate: Candidate, _: bytes::Bytes) -> bool {
        match candidate {}
    }

    pub(crate) fn offer(&self, _: &http::Uri, _: &str) -> Option<Offer> {
        match *self {}
    }
}
