//! Where learned dictionaries persist: a small blocking interface over blobs by name, so
//! that every instance of a service serves and recognises the same dictionaries.
//!
//! The learner calls it from its own thread (never a runtime worker), a few times per
//! polling interval: one [`list`](DictionaryStorage::list), then a
//! [`get`](DictionaryStorage::get) per dictionary it has not seen.

use std::fmt;
use std::io;

mod dir;
#[cfg(feature = "object-store")]
mod object;
#[cfg(test)]
mod tests;

pub use dir::DirStorage;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use object::ObjectStorage;

/// Blobs by name, shared by a fleet: a local directory ([`DirStorage`]) or, with the
/// `object-store` feature, any `object_store` backend ([`ObjectStorage`]: S3, GCS, Azure,
/// the local filesystem).
///
/// Names are relative paths of `[A-Za-z0-9._-]` segments joined by `/` (never empty, never
/// `.` or `..`); implementations refuse others with [`io::ErrorKind::InvalidInput`].
// Without the feature, the link goes to the docs built with every feature.
#[cfg_attr(
    feature = "object-store",
    doc = "",
    doc = "[`ObjectStorage`]: ObjectStorage"
)]
#[cfg_attr(
    not(feature = "object-store"),
    doc = "",
    doc = "[`ObjectStorage`]: https://docs.rs/tower-gzip/latest/tower_gzip/dictionary/learn/storage/struct.ObjectStorage.html"
)]
pub trait DictionaryStorage: Send + Sync + fmt::Debug + 'static {
    /// Writes `bytes` under `name`, atomically: a reader (in this process or another) sees
    /// the whole blob or none of it. Replaces what was there.
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()>;

    /// The blob under `name`; `None` if there is none. A blob longer than `max_len` is an
    /// [`io::ErrorKind::InvalidData`] error (nothing past the bound is read into memory).
    fn get(&self, name: &str, max_len: usize) -> io::Result<Option<Vec<u8>>>;

    /// The names of the blobs under `prefix` (`"routes/abc/"` lists that folder's blobs,
    /// recursively), in no particular order. A prefix that names nothing gives an empty list.
    ///
    /// The prefix is the start of a name, as text: `""` lists every blob and `"routes/ab"`
    /// lists `routes/abc/x` too. One that no name can start with (`"/x"`, `"a//"`, `"../"`)
    /// is an [`io::ErrorKind::InvalidInput`] error.
    fn list(&self, prefix: &str) -> io::Result<Vec<String>>;

    /// Removes the blob under `name`; removing one that is not there is not an error.
    fn delete(&self, name: &str) -> io::Result<()>;
}

/// Refuses a name that is not `/`-joined segments of `[A-Za-z0-9._-]` (nor `.`, `..`, empty):
/// no absolute path, no way out of the storage's root.
fn check_name(name: &str) -> io::Result<()> {
    if name.split('/').all(is_segment) {
        Ok(())
    } else {
        Err(invalid_name(name))
    }
}

fn is_segment(segment: &str) -> bool {
    !matches!(segment, "" | "." | "..") && segment.bytes().all(is_name_byte)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

fn invalid_name(name: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("invalid dictionary storage name {name:?}: expected a/b/c of [A-Za-z0-9._-]"),
    )
}

/// Splits a `list` prefix into the folder to walk (a valid name, or empty for the root) and
/// the start of a name in it: `"routes/ab"` is `("routes", "ab")`, `"routes/"` `("routes", "")`.
fn split_prefix(prefix: &str) -> io::Result<(&str, &str)> {
    let (folder, start) = prefix.rsplit_once('/').unwrap_or(("", prefix));
    if prefix.contains('/') {
        check_name(folder)?;
    }
    if start.bytes().all(is_name_byte) {
        Ok((folder, start))
    } else {
        Err(invalid_name(prefix))
    }
}

fn too_long(name: &str, max_len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("dictionary storage blob {name:?} is longer than {max_len} bytes"),
    )
}
