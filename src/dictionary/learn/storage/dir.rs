//! [`DirStorage`]: blobs as files under a local directory.

use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{DictionaryStorage, check_name, is_segment, split_prefix, too_long};

/// Blobs as files under a local directory: the default, and what a fleet shares through a
/// common volume.
///
/// The blob `routes/abc/dict` is the file `routes/abc/dict` under the directory. A write goes
/// to a temporary file in the target's folder, is synced, then renamed over the target, so a
/// reader in any process sees a whole blob, the old one or the new. Temporary names carry a
/// `~`, which no blob name can: [`list`](DictionaryStorage::list) never returns them (nor any
/// file whose name is not a valid blob name), and one left by a crash is safe to delete.
/// Deleting a blob leaves its folders, empty or not.
///
/// # Example
///
/// ```
/// use tower_gzip::dictionary::learn::{DictionaryStorage, DirStorage};
///
/// let dir = std::env::temp_dir().join(format!("tower-gzip-doc-dir-{}", std::process::id()));
/// let storage = DirStorage::new(&dir)?;
/// storage.put("routes/api/dict", b"{\"user\":{\"id\":")?;
/// let bytes = storage.get("routes/api/dict", 64 << 10)?;
/// assert_eq!(bytes.as_deref(), Some(&b"{\"user\":{\"id\":"[..]));
/// assert_eq!(storage.list("routes/")?, ["routes/api/dict"]);
/// storage.delete("routes/api/dict")?;
/// assert_eq!(storage.get("routes/api/dict", 64 << 10)?, None);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct DirStorage {
    pub(super) root: PathBuf,
}

impl DirStorage {
    /// Storage under the directory `path`, created (with its parents) if missing.
    pub fn new(path: impl Into<PathBuf>) -> io::Result<Self> {
        let root = path.into();
        fs::create_dir_all(&root)?;
        Ok(Self { root })
    }

    /// The file of the blob `name`, once the name is checked.
    fn file(&self, name: &str) -> io::Result<PathBuf> {
        check_name(name)?;
        Ok(name
            .split('/')
            .fold(self.root.clone(), |path, segment| path.join(segment)))
    }
}

impl DictionaryStorage for DirStorage {
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let target = self.file(name)?;
        let folder = target.parent().unwrap_or(&self.root);
        fs::create_dir_all(folder)?;
        let (temp, file) = create_temp(folder)?;
        let written = write_synced(file, bytes).and_then(|()| fs::rename(&temp, &target));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written?;
        sync_folder(folder);
        Ok(())
    }

    fn get(&self, name: &str, max_len: usize) -> io::Result<Option<Vec<u8>>> {
        let path = self.file(name)?;
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if is_absent(&e) || path.is_dir() => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Ok(None);
        }
        if meta.len() > max_len as u64 {
            return Err(too_long(name, max_len));
        }
        // Bounded even if another writer (not this type: it renames) grows the file meanwhile.
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        let bound = (max_len as u64).saturating_add(1);
        file.take(bound).read_to_end(&mut bytes)?;
        if bytes.len() > max_len {
            return Err(too_long(name, max_len));
        }
        Ok(Some(bytes))
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<String>> {
        let (folder, _) = split_prefix(prefix)?;
        let mut names = Vec::new();
        let mut folders = vec![folder.to_owned()];
        while let Some(folder) = folders.pop() {
            let path = if folder.is_empty() {
                self.root.clone()
            } else {
                self.file(&folder)?
            };
            let entries = match fs::read_dir(&path) {
                Ok(entries) => entries,
                Err(e) if is_absent(&e) => continue,
                Err(e) => return Err(e),
            };
            for entry in entries {
                let entry = entry?;
                let Some(segment) = entry
                    .file_name()
                    .to_str()
                    .filter(|s| is_segment(s))
                    .map(String::from)
                else {
                    continue;
                };
                let name = if folder.is_empty() {
                    segment
                } else {
                    format!("{folder}/{segment}")
                };
                // Only the first folder holds names outside the prefix; below, all are in it.
                if !name.starts_with(prefix) {
                    continue;
                }
                match entry_kind(&entry)? {
                    Entry::Folder => folders.push(name),
                    Entry::Blob => names.push(name),
                    Entry::Other => {}
                }
            }
        }
        Ok(names)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        let path = self.file(name)?;
        match fs::remove_file(&path) {
            Err(e) if !is_absent(&e) && !path.is_dir() => Err(e),
            _ => Ok(()),
        }
    }
}

/// A new file in `folder` whose name no other writer picks, whatever its thread, process or
/// host (containers sharing a volume may share pids): pid, a counter and a random number, and
/// `create_new` to be sure.
fn create_temp(folder: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut attempts = 0;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let random = RandomState::new().hash_one(n);
        let temp = folder.join(format!(".tmp~{}~{n}~{random:016x}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => attempts += 1,
            opened => return opened.map(|file| (temp, file)),
        }
    }
}

/// Writes and syncs, then closes the file (before the rename, which some systems require).
fn write_synced(mut file: File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes the rename itself durable, where the system allows syncing a folder.
#[cfg(unix)]
fn sync_folder(folder: &Path) {
    if let Ok(folder) = File::open(folder) {
        let _ = folder.sync_all();
    }
}

#[cfg(not(unix))]
fn sync_folder(_: &Path) {}

/// An error that means nothing is there: the file, or a folder on its path, is missing.
fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// What a folder entry is, as the storage reads it.
enum Entry {
    Folder,
    Blob,
    Other,
}

/// What a folder entry is. Links are followed to files only: a linked folder could loop.
fn entry_kind(entry: &fs::DirEntry) -> io::Result<Entry> {
    let kind = entry.file_type()?;
    if kind.is_dir() {
        Ok(Entry::Folder)
    } else if kind.is_file() || (kind.is_symlink() && entry.path().is_file()) {
        Ok(Entry::Blob)
    } else {
        Ok(Entry::Other)
    }
}
