//! Without dictionary transport (cargo features `dcz` and `dcb` off): the names the layers
//! use, as types with no values, so that their dictionary paths compile to nothing.

use http::HeaderMap;

use crate::ContentCoding;
pub(crate) use crate::codec::dictionary::Dictionary;
use crate::negotiate::AcceptEncoding;

#[path = "dictionary/client_off.rs"]
mod client;

pub(crate) use client::{Candidate, ClientDictionaryStore};

/// The request header naming the client's dictionary (RFC 9842 section 2.2).
pub(crate) const AVAILABLE_DICTIONARY: &str = "available-dictionary";
/// The request header carrying the dictionary's `id` (RFC 9842 section 2.3).
pub(crate) const DICTIONARY_ID: &str = "dictionary-id";

/// No store can exist.
#[derive(Clone, Debug)]
pub(crate) enum DictionaryStore {}

impl DictionaryStore {
    pub(crate) fn for_request(&self, _: &HeaderMap) -> Option<Dictionary> {
        match *self {}
    }
}

/// The readability gate: nothing to read without dictionaries.
pub(crate) fn gate(_: &HeaderMap, _: &HeaderMap) -> Readability {
    Readability
}

/// What [`gate`] decided.
pub(crate) struct Readability;

impl Readability {
    pub(crate) fn is_allowed(&self) -> bool {
        false
    }
}

/// No dictionary coding is ever selected.
pub(crate) fn select_parsed(
    _: &AcceptEncoding,
    _: &HeaderMap,
    _: &HeaderMap,
    store: &DictionaryStore,
    _: &[ContentCoding],
) -> Option<(ContentCoding, Dictionary)> {
    match *store {}
}
