//! [`DictionaryStore`]: the dictionaries a server offers, keyed by SHA-256 and bounded in
//! bytes, least recently used out first.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use http::HeaderMap;

use super::Dictionary;
use crate::headers::available_dictionary;
use crate::sync::lock;

/// What an entry counts against the byte bound.
trait Weighed: Clone {
    fn weight(&self) -> usize;
}

impl Weighed for Dictionary {
    fn weight(&self) -> usize {
        self.len()
    }
}

/// A map by hash with a byte bound and LRU order: `order` maps each entry's last use (a
/// counter) to its hash, so the oldest is the first key.
struct Lru<V> {
    entries: HashMap<[u8; 32], (V, u64)>,
    order: BTreeMap<u64, [u8; 32]>,
    clock: u64,
    bytes: usize,
    max_bytes: usize,
}

impl<V: Weighed> Lru<V> {
    fn new(max_bytes: usize) -> Self {
        Lru {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            clock: 0,
            bytes: 0,
            max_bytes,
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Inserts (or replaces) `value`, evicting the least recently used entries until it
    /// fits. Refuses (returns `false`) a value larger than the whole bound.
    fn insert(&mut self, hash: [u8; 32], value: V) -> bool {
        let weight = value.weight();
        if weight > self.max_bytes {
            return false;
        }
        self.remove(&hash);
        while self.bytes + weight > self.max_bytes {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((old, _)) = self.entries.remove(&oldest) {
                self.bytes -= old.weight();
            }
        }
        let now = self.tick();
        self.order.insert(now, hash);
        self.entries.insert(hash, (value, now));
        self.bytes += weight;
        true
    }

    /// The entry, marked as just used.
    fn get(&mut self, hash: &[u8; 32]) -> Option<V> {
        let now = self.tick();
        let (value, used) = self.entries.get_mut(hash)?;
        self.order.remove(used);
        *used = now;
        self.order.insert(now, *hash);
        Some(value.clone())
    }

    fn remove(&mut self, hash: &[u8; 32]) -> Option<V> {
        let (value, used) = self.entries.remove(hash)?;
        self.order.remove(&used);
        self.bytes -= value.weight();
        Some(value)
    }
}

/// What both stores offer over their shared `Lru`, written once: `$name` holds an
/// `inner: Arc<Mutex<Lru<$value>>>` of `$plural`.
macro_rules! lru_store {
    ($name:ident, $value:ty, $one:literal, $plural:literal) => {
        impl $name {
            #[doc = concat!("An empty store holding at most `max_bytes` of ", $plural, ".")]
            pub fn new(max_bytes: usize) -> Self {
                $name {
                    inner: Arc::new(Mutex::new(Lru::new(max_bytes))),
                }
            }

            #[doc = concat!("The ", $one, " with this SHA-256, marked as just used.")]
            pub fn get(&self, hash: &[u8; 32]) -> Option<$value> {
                lock(&self.inner).get(hash)
            }

            #[doc = concat!("Removes the ", $one, " with this hash, returning it.")]
            pub fn remove(&self, hash: &[u8; 32]) -> Option<$value> {
                lock(&self.inner).remove(hash)
            }

            #[doc = concat!("How many ", $plural, " it holds.")]
            pub fn len(&self) -> usize {
                lock(&self.inner).entries.len()
            }

            /// Whether it holds none.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            #[doc = concat!("The bytes of the ", $plural, " it holds (at most the bound it was made with).")]
            pub fn bytes(&self) -> usize {
                lock(&self.inner).bytes
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let lru = lock(&self.inner);
                f.debug_struct(stringify!($name))
                    .field("len", &lru.entries.len())
                    .field("bytes", &lru.bytes)
                    .field("max_bytes", &lru.max_bytes)
                    .finish()
            }
        }
    };
}

/// The dictionaries a server offers, by hash, bounded in total dictionary bytes; the least
/// recently used go first when a new one would pass the bound.
///
/// Cloning is cheap: clones share one store, so a deploy can [`insert`](Self::insert) a new
/// dictionary while requests [`get`](Self::get) from it. The bound counts the dictionaries'
/// bytes; the zstd tables each prepares on first use come on top, many times a dictionary's
/// size (see [`codec::Dictionary::prepared_size`](crate::codec::Dictionary::prepared_size)).
///
/// ```
/// use tower_gzip::dictionary::UseAsDictionary;
/// use tower_gzip::dictionary::{Dictionary, DictionaryStore};
///
/// let store = DictionaryStore::new(1 << 20);
/// let dictionary = Dictionary::new(vec![b'x'; 1000], UseAsDictionary::new("/*")).unwrap();
/// assert!(store.insert(dictionary.clone()));
/// assert_eq!(store.get(&dictionary.hash()), Some(dictionary));
/// ```
#[derive(Clone)]
pub struct DictionaryStore {
    inner: Arc<Mutex<Lru<Dictionary>>>,
}

impl DictionaryStore {
    /// Adds `dictionary` (or marks it used, if present), evicting the least recently used
    /// ones until it fits. Returns `false`, storing nothing, for a dictionary larger than
    /// the whole bound.
    pub fn insert(&self, dictionary: Dictionary) -> bool {
        lock(&self.inner).insert(dictionary.hash(), dictionary)
    }

    /// The dictionary a request names in `Available-Dictionary`, if this store has it.
    pub(crate) fn for_request(&self, request: &HeaderMap) -> Option<Dictionary> {
        self.get(&available_dictionary(request)?)
    }
}

lru_store!(DictionaryStore, Dictionary, "dictionary", "dictionaries");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::UseAsDictionary;

    fn dictionary(seed: u32, len: usize) -> Dictionary {
        let mut bytes = seed.to_le_bytes().to_vec();
        bytes.resize(len.max(4), b'.');
        Dictionary::new(bytes, UseAsDictionary::new("/*")).unwrap()
    }

    #[test]
    fn least_recently_used_goes_first() {
        let store = DictionaryStore::new(300);
        let (a, b, c) = (dictionary(1, 100), dictionary(2, 100), dictionary(3, 100));
        assert!(store.insert(a.clone()) && store.insert(b.clone()) && store.insert(c.clone()));
        assert_eq!(store.bytes(), 300);
        // Touch a: b is now the oldest.
        assert!(store.get(&a.hash()).is_some());
        assert!(store.insert(dictionary(4, 100)));
        assert!(store.get(&b.hash()).is_none());
        assert!(store.get(&a.hash()).is_some() && store.get(&c.hash()).is_some());
        assert_eq!(store.len(), 3);
        // Too large for the whole bound: refused, nothing evicted.
        assert!(!store.insert(dictionary(5, 301)));
        assert_eq!(store.len(), 3);
        assert_eq!(store.remove(&a.hash()), Some(a.clone()));
        assert_eq!(store.remove(&a.hash()), None);
        assert_eq!(store.bytes(), 200);
        // Re-inserting the same dictionary does not count it twice.
        assert!(store.insert(c.clone()) && store.insert(c));
        assert_eq!(store.bytes(), 200);
    }

    #[test]
    fn byte_bound_holds_under_churn() {
        let max = 10_000;
        let store = DictionaryStore::new(max);
        // A deterministic xorshift drives inserts, gets and removes of varied sizes.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut hashes = Vec::new();
        for round in 0..5_000u32 {
            let r = next();
            let len = 1 + (r % 4_000) as usize;
            match r % 5 {
                0 | 1 => {
                    let d = dictionary(round, len);
                    hashes.push(d.hash());
                    assert!(store.insert(d));
                }
                2 | 3 if !hashes.is_empty() => {
                    let hash = hashes[(r >> 8) as usize % hashes.len()];
                    let _ = store.get(&hash);
                }
                _ if !hashes.is_empty() => {
                    let hash = hashes[(r >> 8) as usize % hashes.len()];
                    let _ = store.remove(&hash);
                }
                _ => {}
            }
            assert!(
                store.bytes() <= max,
                "round {round}: {} bytes",
                store.bytes()
            );
            let lru = lock(&store.inner);
            let counted: usize = lru.entries.values().map(|(d, _)| d.len()).sum();
            assert_eq!(counted, lru.bytes);
            assert_eq!(lru.entries.len(), lru.order.len());
        }
    }

    #[test]
    fn store_is_shared_between_clones_and_threads() {
        let store = DictionaryStore::new(1 << 20);
        let d = dictionary(9, 64);
        let clone = store.clone();
        let hash = d.hash();
        std::thread::spawn(move || assert!(clone.insert(d)))
            .join()
            .unwrap();
        assert!(store.get(&hash).is_some());
        let mut request = HeaderMap::new();
        request.insert(
            crate::headers::AVAILABLE_DICTIONARY,
            crate::headers::available_dictionary_value(&hash),
        );
        assert_eq!(store.for_request(&request).map(|d| d.hash()), Some(hash));
        assert!(!store.is_empty());
    }
}
