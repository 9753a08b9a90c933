//! [`ObjectStorage`]: blobs in any `object_store` backend.

use std::error::Error;
use std::future::Future;
use std::io;
use std::sync::Arc;

use futures_util::StreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use tokio::runtime::{Builder, Handle, Runtime};

use super::{DictionaryStorage, check_name, split_prefix, too_long};

/// Blobs in an [`object_store`] backend: S3, GCS or Azure Blob Storage (built with that
/// crate's `aws`, `gcp` or `azure` feature, in the application's own dependency on it), or its
/// `LocalFileSystem`.
///
/// The blob `routes/abc/dict` is the object `{prefix}/routes/abc/dict`. A write is one PUT,
/// which object stores apply whole. The calls block: each runs on a small runtime the storage
/// owns, driven by the calling thread, or, when that thread is inside a tokio runtime (where
/// blocking on another would panic), by a short-lived thread of its own while the caller waits.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use object_store::local::LocalFileSystem;
/// use tower_gzip::dictionary::learn::{DictionaryStorage, ObjectStorage};
///
/// let dir = std::env::temp_dir().join(format!("tower-gzip-doc-object-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let store = Arc::new(LocalFileSystem::new_with_prefix(&dir)?);
/// let storage = ObjectStorage::new(store, "dictionaries")?;
/// storage.put("routes/api/dict", b"{\"user\":{\"id\":")?;
/// let bytes = storage.get("routes/api/dict", 64 << 10)?;
/// assert_eq!(bytes.as_deref(), Some(&b"{\"user\":{\"id\":"[..]));
/// assert_eq!(storage.list("routes/")?, ["routes/api/dict"]);
/// assert!(dir.join("dictionaries/routes/api/dict").is_file());
/// storage.delete("routes/api/dict")?;
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct ObjectStorage {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    runtime: OwnRuntime,
}

impl ObjectStorage {
    /// Storage under `prefix` in `store`: a blob name as [`DictionaryStorage`] describes
    /// (a trailing `/` is allowed), or empty for the root.
    ///
    /// Fails if the prefix is not such a name, or the storage's runtime cannot be built.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> io::Result<Self> {
        let prefix = prefix.strip_suffix('/').unwrap_or(prefix);
        let prefix = if prefix.is_empty() {
            Path::default()
        } else {
            join(&Path::default(), prefix)?
        };
        let runtime = Builder::new_current_thread()
            .enable_all()
            .thread_name("tower-gzip-storage")
            .build()?;
        Ok(Self {
            store,
            prefix,
            runtime: OwnRuntime(Some(runtime)),
        })
    }

    /// Runs `task` to completion on the storage's runtime.
    fn run<T: Send>(&self, task: impl Future<Output = io::Result<T>> + Send) -> io::Result<T> {
        let runtime = self.runtime.0.as_ref().expect("taken only on drop");
        if Handle::try_current().is_err() {
            return runtime.block_on(task);
        }
        // Inside a runtime, block_on panics: drive ours from a thread outside it.
        std::thread::scope(|scope| {
            let driver = scope.spawn(|| runtime.block_on(task));
            driver
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// The blob's name under the prefix, if `location` is one (a foreign object, or one whose
    /// path is not a valid name, is not).
    fn name_of(&self, location: &Path) -> Option<String> {
        let parts = location.prefix_match(&self.prefix)?;
        let name = parts
            .map(|part| part.as_ref().to_owned())
            .collect::<Vec<_>>()
            .join("/");
        check_name(&name).ok().map(|()| name)
    }
}

impl DictionaryStorage for ObjectStorage {
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let location = join(&self.prefix, name)?;
        let payload = PutPayload::from(bytes.to_vec());
        self.run(async { Ok(self.store.put(&location, payload).await.map(drop)?) })
    }

    fn get(&self, name: &str, max_len: usize) -> io::Result<Option<Vec<u8>>> {
        let location = join(&self.prefix, name)?;
        self.run(async {
            let found = match self.store.get(&location).await {
                Err(e) if is_absent(&e) => return Ok(None),
                found => found?,
            };
            // The size first, so an oversized blob is never fetched; the count below holds
            // even if the backend's body outgrows the size it announced.
            if found.meta.size > max_len as u64 {
                return Err(too_long(name, max_len));
            }
            let mut bytes = Vec::with_capacity(found.meta.size as usize);
            let mut chunks = found.into_stream();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk?;
                if bytes.len() + chunk.len() > max_len {
                    return Err(too_long(name, max_len));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(Some(bytes))
        })
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<String>> {
        let (folder, _) = split_prefix(prefix)?;
        let scope = if folder.is_empty() {
            self.prefix.clone()
        } else {
            join(&self.prefix, folder)?
        };
        let scope = (!scope.as_ref().is_empty()).then_some(scope);
        self.run(async {
            let mut objects = self.store.list(scope.as_ref());
            let mut names = Vec::new();
            while let Some(object) = objects.next().await {
                let name = self.name_of(&object?.location);
                names.extend(name.filter(|name| name.starts_with(prefix)));
            }
            Ok(names)
        })
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        let location = join(&self.prefix, name)?;
        self.run(async {
            match self.store.delete(&location).await {
                Err(e) if is_absent(&e) => Ok(()),
                deleted => Ok(deleted?),
            }
        })
    }
}

/// `base/name`, once the name is checked (its segments then need no escaping).
fn join(base: &Path, name: &str) -> io::Result<Path> {
    check_name(name)?;
    Ok(name.split('/').fold(base.clone(), Path::join))
}

/// Whether `e` means no blob is there: not found or, from a filesystem backend, a folder
/// where the blob would be or a blob where a folder would be (no such conflict in a bucket).
fn is_absent(e: &object_store::Error) -> bool {
    let mut source: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(e) = source {
        let folder_conflict = e.downcast_ref::<io::Error>().is_some_and(|e| {
            matches!(
                e.kind(),
                io::ErrorKind::NotADirectory | io::ErrorKind::IsADirectory
            )
        });
        if folder_conflict || matches!(e.downcast_ref(), Some(object_store::Error::NotFound { .. }))
        {
            return true;
        }
        source = e.source();
    }
    false
}

/// The storage's runtime, shut down without waiting when dropped: dropping a runtime inside
/// another's task would panic, and every call has finished by then anyway.
#[derive(Debug)]
struct OwnRuntime(Option<Runtime>);

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}
