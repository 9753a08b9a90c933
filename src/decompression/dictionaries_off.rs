//! Without the client side of dictionary transport (cargo feature `dictionary-client` off, or
//! no dictionary coding): the names the client layers use, as types with no values, so that
//! their dictionary paths compile to nothing.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Uri};

use crate::codec::Dictionary;

/// No client store can exist.
#[derive(Clone, Debug)]
pub(crate) enum ClientDictionaryStore {}

/// No response can become a dictionary.
#[derive(Debug)]
pub(crate) enum Candidate {}

/// What a store offers on a request (never, here).
pub(crate) struct Offer {
    pub(crate) dictionary: Dictionary,
    pub(crate) id: Option<HeaderValue>,
}

impl ClientDictionaryStore {
    pub(crate) fn refuse(&self) {
        match *self {}
    }

    pub(crate) fn max_entry_bytes(&self) -> usize {
        match *self {}
    }

    pub(crate) fn candidate(&self, _: &Uri, _: &HeaderMap) -> Option<Candidate> {
        match *self {}
    }

    pub(crate) fn learn(&self, candidate: Candidate, _: Bytes) -> bool {
        match candidate {}
    }

    pub(crate) fn offer(&self, _: &Uri, _: &str) -> Option<Offer> {
        match *self {}
    }
}
