//! Where learned dictionaries persist: a small blocking interface over blobs by name, so
//! that every instance of a service serves and recognises the same dictionaries.
//!
//! The learner calls it from its own thread (never a runtime worker), a few times per
//! polling interval: one [`list`](DictionaryStorage::list), then a
//! [`get`](DictionaryStorage::get) per dictionary it has not seen.

use std::fmt;
use std::io;

/// Blobs by name, shared by a fleet: a local directory ([`DirStorage`]) or, with the
/// `object-store` feature, any `object_store` backend ([`ObjectStorage`]: S3, GCS, Azure,
/// the local filesystem).
///
/// Names are relative paths of `[A-Za-z0-9._-]` segments joined by `/` (never empty, never
/// `.` or `..`); implementations refuse others with [`io::ErrorKind::InvalidInput`].
pub trait DictionaryStorage: Send + Sync + fmt::Debug + 'static {
    /// Writes `bytes` under `name`, atomically: a reader (in this process or another) sees
    /// the whole blob or none of it. Replaces what was there.
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()>;

    /// The blob under `name`; `None` if there is none. A blob longer than `max_len` is an
    /// [`io::ErrorKind::InvalidData`] error (nothing past the bound is read into memory).
    fn get(&self, name: &str, max_len: usize) -> io::Result<Option<Vec<u8>>>;

    /// The names of the blobs under `prefix` (`"routes/abc/"` lists that folder's blobs,
    /// recursively), in no particular order. A prefix that names nothing gives an empty list.
    fn list(&self, prefix: &str) -> io::Result<Vec<String>>;

    /// Removes the blob under `name`; removing one that is not there is not an error.
    fn delete(&self, name: &str) -> io::Result<()>;
}
