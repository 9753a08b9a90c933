//! [`Dictionary`]: a dictionary's bytes, its SHA-256 and the codec state prepared from it
//! once for every body compressed against it.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::MAX_DICTIONARY_LEN;
use super::error::DictionaryError;

/// A compression dictionary (RFC 9842): its bytes, their SHA-256 (computed once) and the
/// codec state prepared from it. What it is served with over HTTP (`Use-As-Dictionary`) is
/// the layers' (`tower_gzip::dictionary::Dictionary`).
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
/// use tower_gzip_codecs::Dictionary;
///
/// let dictionary = Dictionary::new(&b"{\"id\":0,\"name\":\"\",\"tags\":[]}"[..]).unwrap();
/// assert_eq!(dictionary.bytes().len(), 28);
/// let again = Dictionary::new(dictionary.bytes().clone()).unwrap();
/// assert_eq!(again.hash(), dictionary.hash());
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
    prepared: super::Prepared,
}

impl Dictionary {
    /// A dictionary of `bytes`. Refuses an empty dictionary and one over 128 MiB.
    pub fn new(bytes: impl Into<Bytes>) -> Result<Dictionary, DictionaryError> {
        let bytes = bytes.into();
        check_len(bytes.len() as u64)?;
        let hash: [u8; 32] = Sha256::digest(&bytes).into();
        Ok(Dictionary {
            inner: Arc::new(Inner {
                prepared: super::Prepared::new(&bytes),
                bytes,
                hash,
            }),
            levels: [None; 2],
        })
    }

    /// Reads a dictionary saved with [`save`](Dictionary::save) (or any file of its bytes).
    pub fn load(path: impl AsRef<Path>) -> Result<Dictionary, DictionaryError> {
        let path = path.as_ref();
        // Check the size before reading: a wrong path must not read gigabytes.
        check_len(std::fs::metadata(path)?.len())?;
        Dictionary::new(std::fs::read(path)?)
    }

    /// Writes the dictionary's bytes to `path`.
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
    #[allow(clippy::len_without_is_empty)] // never empty
    pub fn len(&self) -> usize {
        self.inner.bytes.len()
    }

    /// The dictionary's bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.inner.bytes
    }

    /// Compress against this dictionary at `level` for `coding` (`dcz` or `dcb`; others are
    /// ignored) wherever the layer's level for that coding is [`CompressionLevel::Default`]:
    /// the level a dictionary builder or learner chose it for. A level set by the caller
    /// (`CompressionLevel::Precise`, a layer's `level(..)`) wins.
    ///
    /// [`CompressionLevel::Default`]: crate::CompressionLevel::Default
    pub fn with_level(mut self, coding: crate::ContentCoding, level: i32) -> Self {
        if let Some(slot) = level_slot(coding) {
            self.levels[slot] = Some(level);
        }
        self
    }

    /// The level chosen for `coding` with this dictionary (see
    /// [`with_level`](Dictionary::with_level)), if any.
    pub fn level(&self, coding: crate::ContentCoding) -> Option<i32> {
        level_slot(coding).and_then(|slot| self.levels[slot])
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
    pub(crate) fn zstd(&self) -> &crate::dcz::Prepared {
        &self.inner.prepared.zstd
    }

    /// The brotli state prepared from the dictionary.
    #[cfg(feature = "dcb")]
    pub(crate) fn brotli(&self) -> &crate::dcb::Prepared {
        &self.inner.prepared.brotli
    }

    /// Whether both are the same dictionary (same bytes).
    pub fn same_as(&self, other: &Dictionary) -> bool {
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

    #[test]
    fn hash_is_sha256_of_the_bytes() {
        let dictionary = Dictionary::new(&b"abc"[..]).unwrap();
        // FIPS 180-2 test vector.
        assert_eq!(
            crate::hex::encode(&dictionary.hash()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(dictionary.len(), 3);
        assert!(!dictionary.bytes().is_empty());
    }

    #[test]
    fn empty_and_oversized_dictionaries_are_refused() {
        assert!(matches!(
            Dictionary::new(Bytes::new()),
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
        let a = Dictionary::new(vec![7u8; 100]).unwrap();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.inner, &b.inner));
        assert_eq!(a, b);
        let c = Dictionary::new(vec![7u8; 100]).unwrap();
        assert!(!Arc::ptr_eq(&a.inner, &c.inner));
        assert_eq!(a, c, "equal bytes are the same dictionary");
    }

    #[test]
    fn save_and_load_round_trip() {
        let dir = std::env::temp_dir().join(format!("tower-gzip-dict-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("d.bin");
        let dictionary = Dictionary::new(vec![1u8, 2, 3, 4, 5]).unwrap();
        dictionary.save(&path).unwrap();
        let loaded = Dictionary::load(&path).unwrap();
        assert_eq!(loaded.hash(), dictionary.hash());
        assert_eq!(loaded.bytes(), dictionary.bytes());
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(
            Dictionary::load(&path),
            Err(DictionaryError::Empty)
        ));
        assert!(matches!(
            Dictionary::load(dir.join("missing")),
            Err(DictionaryError::Io(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
