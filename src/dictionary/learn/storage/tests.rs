//! The behaviour every storage owes its trait, checked once and run against each backend.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::{DictionaryStorage, DirStorage};

const MAX: usize = 16 << 20;

/// A fresh directory for one test, removed when it ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let name = format!("tower-gzip-storage-{test}-{}-{n}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        let _ = fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// What each backend's tests call: the behaviour, against a storage over `blobs`, the
/// directory its blobs land in.
mod behaviour {
    use super::*;

    pub(super) fn round_trip(s: &dyn DictionaryStorage) {
        assert_eq!(s.get("dict", MAX).unwrap(), None);
        s.put("dict", b"first").unwrap();
        assert_eq!(s.get("dict", MAX).unwrap().unwrap(), b"first");
        s.put("dict", b"second, longer").unwrap();
        assert_eq!(s.get("dict", MAX).unwrap().unwrap(), b"second, longer");
        s.put("empty", b"").unwrap();
        assert_eq!(s.get("empty", 0).unwrap().unwrap(), b"");
        s.put("routes/api/v1.dict", &[0, 255, 10, 13]).unwrap();
        assert_eq!(
            s.get("routes/api/v1.dict", 4).unwrap().unwrap(),
            [0, 255, 10, 13]
        );
        // A folder is not a blob.
        assert_eq!(s.get("routes", MAX).unwrap(), None);
        assert_eq!(s.get("routes/api", MAX).unwrap(), None);
        assert_eq!(s.get("dict/below-a-blob", MAX).unwrap(), None);
    }

    pub(super) fn list_recursive_with_prefix(s: &dyn DictionaryStorage) {
        assert_eq!(s.list("").unwrap(), Vec::<String>::new());
        for name in [
            "top",
            "routes/a/1",
            "routes/a/2",
            "routes/ab/3",
            "routes/b/deep/er/4",
        ] {
            s.put(name, name.as_bytes()).unwrap();
        }
        let all = [
            "routes/a/1",
            "routes/a/2",
            "routes/ab/3",
            "routes/b/deep/er/4",
            "top",
        ];
        assert_eq!(sorted(s.list("").unwrap()), all);
        assert_eq!(sorted(s.list("routes/").unwrap()), all[..4]);
        assert_eq!(sorted(s.list("routes").unwrap()), all[..4]);
        assert_eq!(
            sorted(s.list("routes/a/").unwrap()),
            ["routes/a/1", "routes/a/2"]
        );
        assert_eq!(sorted(s.list("routes/a").unwrap()), all[..3]);
        assert_eq!(s.list("routes/b/deep/").unwrap(), ["routes/b/deep/er/4"]);
        assert_eq!(s.list("t").unwrap(), ["top"]);
        assert_eq!(s.list("top").unwrap(), ["top"]);
        for nothing in ["nothing/", "nothing", "routes/c", "routes/a/1/", "top/"] {
            assert_eq!(s.list(nothing).unwrap(), Vec::<String>::new(), "{nothing}");
        }
    }

    pub(super) fn delete(s: &dyn DictionaryStorage) {
        s.delete("missing").unwrap();
        s.delete("missing/folder/dict").unwrap();
        s.put("routes/dict", b"x").unwrap();
        s.delete("routes").unwrap();
        s.delete("routes/dict/below").unwrap();
        assert_eq!(s.get("routes/dict", MAX).unwrap().unwrap(), b"x");
        s.delete("routes/dict").unwrap();
        assert_eq!(s.get("routes/dict", MAX).unwrap(), None);
        assert_eq!(s.list("").unwrap(), Vec::<String>::new());
        s.delete("routes/dict").unwrap();
    }

    pub(super) fn invalid_names_refused(s: &dyn DictionaryStorage) {
        let invalid = [
            "", "/", "/abs", "a/", "a//b", ".", "..", "../up", "a/../b", "a/./b", "a b", "a\\b",
            "C:", "é", "a\0", "~", "a#1", "*", "a?b", "%2E",
        ];
        let refused = |result: io::Result<()>, what: &str| {
            let e = result.expect_err(what);
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{what}: {e}");
        };
        for name in invalid {
            refused(s.put(name, b"x"), &format!("put {name:?}"));
            refused(s.get(name, MAX).map(drop), &format!("get {name:?}"));
            refused(s.delete(name), &format!("delete {name:?}"));
        }
        for prefix in [
            "/", "/abs", "../", "a//", "./", "a/../", "a b", "x/é", "a/#",
        ] {
            refused(s.list(prefix).map(drop), &format!("list {prefix:?}"));
        }
        assert_eq!(
            s.list("").unwrap(),
            Vec::<String>::new(),
            "nothing was written"
        );
        for name in ["..a", ".hidden", "a.b-c_d", "A/9/...x", "-"] {
            s.put(name, name.as_bytes()).unwrap();
            assert_eq!(s.get(name, MAX).unwrap().unwrap(), name.as_bytes());
        }
        // A prefix is the start of a name: `..` is the start of `..a`, not a way up.
        assert_eq!(s.list("..").unwrap(), ["..a"]);
    }

    pub(super) fn max_len_enforced(s: &dyn DictionaryStorage) {
        s.put("dict", &[7; 100]).unwrap();
        assert_eq!(s.get("dict", 100).unwrap().unwrap(), [7; 100]);
        assert_eq!(s.get("dict", usize::MAX).unwrap().unwrap(), [7; 100]);
        for max_len in [99, 1, 0] {
            let e = s.get("dict", max_len).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{max_len}: {e}");
        }
    }

    /// Stray files in the blobs' directory (a crashed write's temporary file, a name no blob
    /// can have) are never listed, and listing ignores them whatever the prefix.
    pub(super) fn strays_never_listed(s: &dyn DictionaryStorage, blobs: &Path) {
        s.put("routes/dict", b"x").unwrap();
        for stray in [
            ".tmp~1~2~00ff",
            "routes/.tmp~3~4~abcd",
            "routes/dict#1",
            "bad name",
        ] {
            fs::write(blobs.join(stray), b"half a dictio").unwrap();
        }
        assert_eq!(s.list("").unwrap(), ["routes/dict"]);
        assert_eq!(s.list("routes/").unwrap(), ["routes/dict"]);
        assert_eq!(s.list(".").unwrap(), Vec::<String>::new());
    }

    /// Writers replace one big blob over and over while readers read and list it: every read
    /// is one whole version, never a mix nor a truncation, and nothing else is ever listed.
    pub(super) fn atomic_under_concurrency(s: &dyn DictionaryStorage) {
        let versions: Vec<Vec<u8>> = (0..4u8).map(|i| version(i, 1 << 20)).collect();
        s.put("routes/big", &versions[0]).unwrap();
        let done = AtomicBool::new(false);
        let reads = AtomicU32::new(0);
        std::thread::scope(|scope| {
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        while !done.load(Ordering::Relaxed) || reads.load(Ordering::Relaxed) < 4 {
                            let read = s.get("routes/big", MAX).unwrap().expect("never missing");
                            assert!(versions.contains(&read), "a mixed or short read");
                            assert_eq!(s.list("").unwrap(), ["routes/big"]);
                            reads.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            let writers: Vec<_> = versions
                .iter()
                .map(|bytes| {
                    scope.spawn(|| (0..10).for_each(|_| s.put("routes/big", bytes).unwrap()))
                })
                .collect();
            writers
                .into_iter()
                .for_each(|writer| writer.join().unwrap());
            done.store(true, Ordering::Relaxed);
            readers
                .into_iter()
                .for_each(|reader| reader.join().unwrap());
        });
        assert_eq!(s.list("").unwrap(), ["routes/big"]);
    }

    /// A version of its own length and bytes, so a mix of two or a short read shows.
    fn version(i: u8, len: usize) -> Vec<u8> {
        (0..len + usize::from(i) * 4099)
            .map(|n| (n % 251) as u8 ^ i.wrapping_mul(61))
            .collect()
    }

    /// Two instances over the same place (two processes of a fleet) see each other's writes.
    pub(super) fn shared(a: &dyn DictionaryStorage, b: &dyn DictionaryStorage) {
        a.put("routes/dict", b"from a").unwrap();
        assert_eq!(b.get("routes/dict", MAX).unwrap().unwrap(), b"from a");
        assert_eq!(b.list("routes/").unwrap(), ["routes/dict"]);
        b.put("routes/dict", b"from b").unwrap();
        assert_eq!(a.get("routes/dict", MAX).unwrap().unwrap(), b"from b");
        a.delete("routes/dict").unwrap();
        assert_eq!(b.get("routes/dict", MAX).unwrap(), None);
        assert_eq!(b.list("").unwrap(), Vec::<String>::new());
    }
}

/// The behaviour tests for one backend: `$open` makes a storage over a scratch directory
/// and says where in it the blobs land.
macro_rules! behaviour_tests {
    ($backend:ident, $open:expr) => {
        mod $backend {
            use super::*;

            fn open(dir: &Path) -> (Box<dyn DictionaryStorage>, PathBuf) {
                $open(dir)
            }

            fn check(test: &str, run: impl FnOnce(&dyn DictionaryStorage, &Path)) {
                let dir = Scratch::new(&format!("{}-{test}", stringify!($backend)));
                let (storage, blobs) = open(&dir.0);
                run(&*storage, &blobs);
            }

            #[test]
            fn round_trip() {
                check("round_trip", |s, _| behaviour::round_trip(s));
            }

            #[test]
            fn list_recursive_with_prefix() {
                check("list", |s, _| behaviour::list_recursive_with_prefix(s));
            }

            #[test]
            fn delete_missing_is_ok() {
                check("delete", |s, _| behaviour::delete(s));
            }

            #[test]
            fn invalid_names_refused() {
                check("invalid", |s, _| behaviour::invalid_names_refused(s));
            }

            #[test]
            fn max_len_enforced() {
                check("max_len", |s, _| behaviour::max_len_enforced(s));
            }

            #[test]
            fn strays_never_listed() {
                check("strays", behaviour::strays_never_listed);
            }

            #[test]
            fn atomic_under_concurrency() {
                check("atomic", |s, _| behaviour::atomic_under_concurrency(s));
            }

            #[test]
            fn two_instances_share_writes() {
                let dir = Scratch::new(concat!(stringify!($backend), "-shared"));
                let (a, _) = open(&dir.0);
                let (b, _) = open(&dir.0);
                behaviour::shared(&*a, &*b);
            }
        }
    };
}

behaviour_tests!(dir_storage, |dir: &Path| {
    let storage = DirStorage::new(dir).unwrap();
    (
        Box::new(storage) as Box<dyn DictionaryStorage>,
        dir.to_owned(),
    )
});

#[cfg(feature = "object-store")]
behaviour_tests!(object_storage, |dir: &Path| {
    let storage = object::open(dir, "learned/dicts");
    (
        Box::new(storage) as Box<dyn DictionaryStorage>,
        dir.join("learned/dicts"),
    )
});

#[test]
fn dir_new_creates_the_directory_and_leaves_no_temporary_file() {
    let scratch = Scratch::new("dir-new");
    let root = scratch.0.join("nested/deeper");
    let storage = DirStorage::new(&root).unwrap();
    assert!(root.is_dir());
    assert_eq!(storage.root, root);
    for i in 0..20u8 {
        storage.put("routes/dict", &[i; 1000]).unwrap();
    }
    let files = |dir: &Path| -> Vec<String> {
        let entries = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name());
        entries.map(|name| name.into_string().unwrap()).collect()
    };
    assert_eq!(files(&root), ["routes"]);
    assert_eq!(files(&root.join("routes")), ["dict"]);
}

#[test]
fn dir_new_fails_on_a_file() {
    let scratch = Scratch::new("dir-file");
    fs::create_dir_all(&scratch.0).unwrap();
    let file = scratch.0.join("file");
    fs::write(&file, b"x").unwrap();
    assert!(DirStorage::new(&file).is_err());
}

#[cfg(feature = "object-store")]
mod object {
    use std::sync::Arc;

    use object_store::local::LocalFileSystem;

    use super::*;
    use crate::dictionary::learn::storage::ObjectStorage;

    pub(super) fn open(dir: &Path, prefix: &str) -> ObjectStorage {
        fs::create_dir_all(dir).unwrap();
        let store = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
        ObjectStorage::new(store, prefix).unwrap()
    }

    #[test]
    fn prefix_scopes_names() {
        let dir = Scratch::new("object-prefix");
        let root = open(&dir.0, "");
        let under = open(&dir.0, "learned/");
        root.put("other/dict", b"other").unwrap();
        under.put("routes/dict", b"mine").unwrap();
        assert_eq!(under.list("").unwrap(), ["routes/dict"]);
        assert_eq!(
            root.get("learned/routes/dict", MAX).unwrap().unwrap(),
            b"mine"
        );
        assert_eq!(
            sorted(root.list("").unwrap()),
            ["learned/routes/dict", "other/dict"]
        );
        assert_eq!(under.get("other/dict", MAX).unwrap(), None);
        let store = Arc::new(LocalFileSystem::new_with_prefix(&dir.0).unwrap());
        let refused = ObjectStorage::new(store, "../up").unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::InvalidInput);
    }

    /// Called from a runtime's worker (as a careless caller might), the storage blocks that
    /// worker but does not panic, and it may be dropped there too.
    #[tokio::test]
    async fn works_inside_a_current_thread_runtime() {
        inside_a_runtime("object-current-thread");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn works_inside_a_multi_thread_runtime() {
        inside_a_runtime("object-multi-thread");
    }

    fn inside_a_runtime(test: &str) {
        let dir = Scratch::new(test);
        let storage = open(&dir.0, "learned");
        storage.put("routes/dict", b"inside").unwrap();
        assert_eq!(storage.get("routes/dict", MAX).unwrap().unwrap(), b"inside");
        assert_eq!(storage.list("routes/").unwrap(), ["routes/dict"]);
        storage.delete("routes/dict").unwrap();
        assert_eq!(storage.get("routes/dict", MAX).unwrap(), None);
        drop(storage);
    }
}
