//! Without dictionary transport (cargo features `dcz` and `dcb` off): the names the layers
//! use, as types with no values, so that their dictionary paths compile to nothing.

use http::HeaderMap;

use crate::ContentCoding;
pub(crate) use crate::codec::Dictionary;
use crate::negotiate::AcceptEncoding;

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
