//! [`Dictionary`]: a dictionary as HTTP serves it, the codec crate's dictionary (bytes, hash,
//! prepared state) with the `Use-As-Dictionary` metadata it is announced with and the header
//! values written once from both.

use std::fmt;
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http::HeaderValue;

use crate::codec::{self, DictionaryError};
use crate::headers::{InvalidMetadata, UseAsDictionary, available_dictionary_value};

/// A compression dictionary (RFC 9842) as a server serves it or a client offers it: its
/// bytes, their SHA-256 and the codec state prepared from them (the codec crate's
/// [`codec::Dictionary`], which this derefs to), with the `Use-As-Dictionary` metadata it is
/// served with.
///
/// Cloning is cheap; every clone shares the prepared state.
///
/// # Example
///
/// ```
/// use tower_gzip::dictionary::{Dictionary, UseAsDictionary};
///
/// let dictionary = Dictionary::new(
///     &b"{\"id\":0,\"name\":\"\",\"tags\":[]}"[..],
///     UseAsDictionary::new("/api/*").with_id("api-v1"),
/// )
/// .unwrap();
/// assert_eq!(dictionary.bytes().len(), 28);
/// assert_eq!(dictionary.metadata().unwrap().id(), Some("api-v1"));
///
/// // Offline (a deploy pipeline, a test): no HTTP metadata.
/// let offline = Dictionary::new(dictionary.bytes().clone(), None).unwrap();
/// assert_eq!(offline.hash(), dictionary.hash());
/// ```
#[derive(Clone)]
pub struct Dictionary {
    codec: codec::Dictionary,
    headers: Arc<Headers>,
}

/// What HTTP adds to the bytes, written once.
struct Headers {
    metadata: Option<UseAsDictionary>,
    use_as_dictionary: Option<HeaderValue>,
    available_dictionary: HeaderValue,
}

impl Dictionary {
    /// A dictionary of `bytes`, served with `metadata` (its `match` pattern, and optionally
    /// `match-dest` and `id`), or `None` for a dictionary used without HTTP (compressing
    /// and decompressing offline, or one a client already has); such a dictionary is served
    /// without `Use-As-Dictionary`, so browsers do not keep it.
    ///
    /// Refuses an empty dictionary, one over 128 MiB, and metadata that
    /// cannot be written as a `Use-As-Dictionary` header (see [`UseAsDictionary`]).
    pub fn new(
        bytes: impl Into<Bytes>,
        metadata: impl Into<Option<UseAsDictionary>>,
    ) -> Result<Dictionary, DictionaryError> {
        // The metadata first: a bad `match` must not cost a digest of the bytes.
        let headers = Headers::of(metadata.into())?;
        Ok(Dictionary::served(codec::Dictionary::new(bytes)?, headers))
    }

    /// Reads a dictionary saved with [`save`](codec::Dictionary::save) (or any file of its
    /// bytes), with its metadata given again.
    pub fn load(
        path: impl AsRef<Path>,
        metadata: impl Into<Option<UseAsDictionary>>,
    ) -> Result<Dictionary, DictionaryError> {
        let headers = Headers::of(metadata.into())?;
        Ok(Dictionary::served(codec::Dictionary::load(path)?, headers))
    }

    fn served(codec: codec::Dictionary, headers: impl FnOnce([u8; 32]) -> Headers) -> Self {
        let headers = Arc::new(headers(codec.hash()));
        Dictionary { codec, headers }
    }

    /// The metadata it is served with, if any.
    pub fn metadata(&self) -> Option<&UseAsDictionary> {
        self.headers.metadata.as_ref()
    }

    /// The `Available-Dictionary` value a client sends for this dictionary: `:<base64>:`.
    pub fn available_dictionary(&self) -> HeaderValue {
        self.headers.available_dictionary.clone()
    }

    /// The `Use-As-Dictionary` header value to serve the dictionary with.
    pub(crate) fn use_as_dictionary(&self) -> Option<HeaderValue> {
        self.headers.use_as_dictionary.clone()
    }

    /// The codec crate's dictionary: what [`Encoder`](crate::codec::Encoder),
    /// [`Decoder`](crate::codec::Decoder) and [`OneShot`](crate::codec::OneShot) take.
    pub fn codec(&self) -> &codec::Dictionary {
        &self.codec
    }

    /// This dictionary, compressing at `level` for `coding` where the layer's level is the
    /// default (see [`codec::Dictionary::with_level`]).
    #[cfg(feature = "learn")]
    pub(crate) fn with_level(mut self, coding: crate::ContentCoding, level: i32) -> Self {
        self.codec = self.codec.with_level(coding, level);
        self
    }
}

impl Headers {
    /// The headers of a dictionary served with `metadata`, once its hash is known; refuses
    /// metadata that cannot be a header.
    fn of(
        metadata: Option<UseAsDictionary>,
    ) -> Result<impl FnOnce([u8; 32]) -> Headers, DictionaryError> {
        let use_as_dictionary = match &metadata {
            Some(metadata) => Some(metadata.to_header_value().map_err(invalid)?),
            None => None,
        };
        Ok(move |hash: [u8; 32]| Headers {
            metadata,
            use_as_dictionary,
            available_dictionary: available_dictionary_value(&hash),
        })
    }
}

fn invalid(e: InvalidMetadata) -> DictionaryError {
    DictionaryError::InvalidMetadata(e.0)
}

impl Deref for Dictionary {
    type Target = codec::Dictionary;

    fn deref(&self) -> &codec::Dictionary {
        &self.codec
    }
}

impl AsRef<codec::Dictionary> for Dictionary {
    fn as_ref(&self) -> &codec::Dictionary {
        &self.codec
    }
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("len", &self.codec.len())
            .field("hash", &crate::hex::encode(&self.codec.hash()))
            .field("metadata", &self.headers.metadata)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Dictionary {
    /// The same bytes, whatever the metadata.
    fn eq(&self, other: &Self) -> bool {
        self.codec == other.codec
    }
}

impl Eq for Dictionary {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_dictionary_is_the_hash_in_base64() {
        let dictionary = Dictionary::new(&b"abc"[..], UseAsDictionary::new("/*")).unwrap();
        assert_eq!(
            dictionary.available_dictionary().to_str().unwrap(),
            ":ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:"
        );
    }

    #[test]
    fn header_value_has_every_member_set() {
        let metadata = UseAsDictionary::new("/js/app.*.js")
            .with_match_dest(["script", "style"])
            .with_id("bundle \"7\"");
        let dictionary = Dictionary::new(&b"xyz"[..], metadata).unwrap();
        assert_eq!(
            dictionary.use_as_dictionary().unwrap().to_str().unwrap(),
            r#"match="/js/app.*.js", match-dest=("script" "style"), id="bundle \"7\"""#
        );
    }

    #[test]
    fn metadata_that_cannot_be_a_header_is_refused() {
        let bad = UseAsDictionary::new("/caf\u{e9}/*");
        assert!(matches!(
            Dictionary::new(&b"xyz"[..], bad),
            Err(DictionaryError::InvalidMetadata(_))
        ));
    }

    #[test]
    fn equal_bytes_are_one_dictionary_whatever_the_metadata() {
        let a = Dictionary::new(vec![7u8; 100], UseAsDictionary::new("/a/*")).unwrap();
        let b = Dictionary::new(vec![7u8; 100], UseAsDictionary::new("/b/*")).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.use_as_dictionary(), b.use_as_dictionary());
    }
}
