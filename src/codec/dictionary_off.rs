//! Without `dcz` and `dcb`: a dictionary type with no values.

/// No dictionary can exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dictionary {}

impl Dictionary {
    pub(crate) fn available_dictionary(&self) -> http::HeaderValue {
        match *self {}
    }

    pub(crate) fn level(&self, _: crate::ContentCoding) -> Option<i32> {
        match *self {}
    }
}
