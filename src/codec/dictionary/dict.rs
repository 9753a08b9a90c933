//! [`Dictionary`]: a dictionary's bytes, its SHA-256, its `Use-As-Dictionary` metadata and
//! the codec state prepared from it once for every response.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http::HeaderValue;
use sha2::{Digest, Sha256};

use super::MAX_DICTIONARY_LEN;
use super::error::DictionaryError;
use crate::headers::{UseAsDictionary, available_dictionary_value};

/// A compression dictionary (RFC 9842): its bytes, their SHA-256 (computed once), the
/// `Use-As-Dictionary` metadata it is served with, and the codec state prepared from it.
///
/// Cloning is cheap (an [`Arc`]); every clone shares the prepared state, which is freed with
/// the last clone (an encoder still running keeps what it uses). zstd's digested
/// dictionaries (`CDict`, one per compression level) are made the first time a level is used
/// and kept; its decoding dictionary (`DDict`) likewise. Both treat the bytes as *raw
/// content*, even bytes that start with zstd's dictionary magic, as RFC 9842 and Chromium
/// require. `dcb`'s brotli prepared dictionary (a hash table over the bytes, one for every
/// quality) is made at the first `dcb` body and kept.
///
/// # Example
///
/// ```
/// use tower_gzip::dictionary::UseAsDictionary;
/// use tower_gzip::dictionary::Dictionary;
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
    inner: Arc<Inner>,
    /// The levels it was chosen for (`dcz`'s, then `dcb`'s), if any: see
    /// [`with_level`](Dictionary::with_level).
    levels: [Option<i32>; 2],
}

struct Inner {
    bytes: Bytes,
    hash: [u8; 32],
    metadata: Option<UseAsDictionary>,
    use_as_dictionary: Option<HeaderValue>,
    available_dictionary: HeaderValue,
    prepared: super::Prepared,
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
        let bytes = bytes.into();
        check_len(bytes.len() as u64)?;
        let metadata = metadata.into();
        let use_as_dictionary = match &metadata {
            Some(metadata) => Some(metadata.to_header_value()?),
            None => None,
        };
        let hash: [u8; 32] = Sha256::digest(&bytes).into();
        Ok(Dictionary {
            inner: Arc::new(Inner {
                available_dictionary: available_dictionary_value(&hash),
                prepared: super::Prepared::new(&bytes),
                bytes,
                hash,
                metadata,
                use_as_dictionary,
            }),
            levels: [None; 2],
        })
    }

    /// Reads a dictionary saved with [`save`](Dictionary::save) (or any file of its bytes),
    /// with its metadata given again.
    pub fn load(
        path: impl AsRef<Path>,
        metadata: impl Into<Option<UseAsDictionary>>,
    ) -> Result<Dictionary, DictionaryError> {
        let path = path.as_ref();
        // Check the size before reading: a wrong path must not read gigabytes.
        check_len(std::fs::metadata(path)?.len())?;
        Dictionary::new(std::fs::read(path)?, metadata)
    }

    /// Writes the dictionary's bytes to `path` (the metadata is not saved: pass it again to
    /// [`load`](Dictionary::load)).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), DictionaryError> {
        std::fs::write(path, &self.inner.bytes)?;
        Ok(())
    }

    /// The SHA-256 of the dictionary's bytes: what `Available-Dictionary` names and what
    /// `dcz`/`dcb` bodies carry after their magic.
    pub fn hash(&self) -> [u8; 32] {
        self.inner.hash
    }

    /// The dictionary's length in bytes (never zero): `bytes().len()`.
    pub(crate) fn len(&self) -> usize {
        self.inner.bytes.len()
    }

    /// The dictionary's bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.inner.bytes
    }

    /// Compress against this dictionary at `level` for `coding` (`dcz` or `dcb`; others are
    /// ignored) wherever the layer's level for that coding is [`CompressionLevel::Default`]:
    /// the level [`DictionaryBuilder`](crate::dictionary::DictionaryBuilder) chose it for.
    /// A level set on the layer (`level(..)`, `quality(..)`, a level chooser) wins.
    ///
    /// [`CompressionLevel::Default`]: crate::CompressionLevel::Default
    #[cfg(feature = "dcz")] // the learner's
    pub(crate) fn with_level(mut self, coding: crate::ContentCoding, level: i32) -> Self {
        if let Some(slot) = level_slot(coding) {
            self.levels[slot] = Some(level);
        }
        self
    }

    /// The level chosen for `coding` with this dictionary by the learner, if any.
    pub(crate) fn level(&self, coding: crate::ContentCoding) -> Option<i32> {
        level_slot(coding).and_then(|slot| self.levels[slot])
    }

    /// The metadata it is served with, if any.
    pub fn metadata(&self) -> Option<&UseAsDictionary> {
        self.inner.metadata.as_ref()
    }

    /// The `Use-As-Dictionary` header value to serve the dictionary with (the metadata,
    /// written once).
    pub(crate) fn use_as_dictionary(&self) -> Option<HeaderValue> {
        self.inner.use_as_dictionary.clone()
    }

    /// The `Available-Dictionary` value a client sends for this dictionary: `:<base64>:`.
    pub fn available_dictionary(&self) -> HeaderValue {
        self.inner.available_dictionary.clone()
    }

    /// The memory held by the codec tables prepared so far, on top of
    /// the bytes: zstd's (one digested dictionary per compression level used)
    /// and brotli's (one for `dcb`, whatever the quality): zstd's grows with the level,
    /// brotli's is 256 KiB of hash heads plus up to 4 bytes per dictionary byte. Many times
    /// the dictionary's size in all (BENCHMARKS.md, "Dictionaries", has the sizes).
    pub fn prepared_size(&self) -> usize {
        self.inner.prepared.size()
    }

    /// The zstd state prepared from the dictionary.
    #[cfg(feature = "dcz")]
    pub(crate) fn zstd(&self) -> &crate::codec::dcz::Prepared {
        &self.inner.prepared.zstd
    }

    /// The brotli state prepared from the dictionary.
    #[cfg(feature = "dcb")]
    pub(crate) fn brotli(&self) -> &crate::codec::dcb::Prepared {
        &self.inner.prepared.brotli
    }

    /// Whether both are the same dictionary (same bytes).
    pub(crate) fn same_as(&self, other: &Dictionary) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner) || self.inner.hash == other.inner.hash
    }
}

fn level_slot(coding: crate::ContentCoding) -> Option<usize> {
    match coding {
        crate::ContentCoding::Dcz => Some(0),
        crate::ContentCoding::Dcb => Some(1),
        _ => None,
    }
}

fn check_len(len: u64) -> Result<(), DictionaryError> {
    if len == 0 {
        Err(DictionaryError::Empty)
    } else if len > MAX_DICTIONARY_LEN as u64 {
        Err(DictionaryError::TooLarge { len })
    } else {
        Ok(())
    }
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("len", &self.len())
            .field("hash", &crate::hex::encode(&self.inner.hash))
            .field("metadata", &self.inner.metadata)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Dictionary {
    fn eq(&self, other: &Self) -> bool {
        self.same_as(other)
    }
}

impl Eq for Dictionary {}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> UseAsDictionary {
        UseAsDictionary::new("/*")
    }

    #[test]
    fn hash_is_sha256_of_the_bytes() {
        let dictionary = Dictionary::new(&b"abc"[..], meta()).unwrap();
        // FIPS 180-2 test vector.
        assert_eq!(
            crate::hex::encode(&dictionary.hash()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(dictionary.len(), 3);
        assert!(!dictionary.bytes().is_empty());
        assert_eq!(
            dictionary.available_dictionary().to_str().unwrap(),
            ":ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:"
        );
    }

    #[test]
    fn empty_and_oversized_dictionaries_are_refused() {
        assert!(matches!(
            Dictionary::new(Bytes::new(), meta()),
            Err(DictionaryError::Empty)
        ));
        assert!(matches!(
            check_len(MAX_DICTIONARY_LEN as u64 + 1),
            Err(DictionaryError::TooLarge { len }) if len == MAX_DICTIONARY_LEN as u64 + 1
        ));
        assert!(check_len(MAX_DICTIONARY_LEN as u64).is_ok());
    }

    #[test]
    fn clones_share_one_state() {
        let a = Dictionary::new(vec![7u8; 100], meta()).unwrap();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.inner, &b.inner));
        assert_eq!(a, b);
        let c = Dictionary::new(vec![7u8; 100], UseAsDictionary::new("/other")).unwrap();
        assert_eq!(a, c, "equal bytes are the same dictionary");
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
    fn save_and_load_round_trip() {
        let dir = std::env::temp_dir().join(format!("tower-gzip-dict-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("d.bin");
        let dictionary = Dictionary::new(vec![1u8, 2, 3, 4, 5], meta()).unwrap();
        dictionary.save(&path).unwrap();
        let loaded = Dictionary::load(&path, meta()).unwrap();
        assert_eq!(loaded.hash(), dictionary.hash());
        assert_eq!(loaded.bytes(), dictionary.bytes());
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(
            Dictionary::load(&path, meta()),
            Err(DictionaryError::Empty)
        ));
        assert!(matches!(
            Dictionary::load(dir.join("missing"), meta()),
            Err(DictionaryError::Io(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
