//! [`ClientDictionaryStore`]: the dictionaries a client has learned, per origin, bounded
//! in bytes and entries, least recently used out first.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Uri};
use sfv::{ItemSerializer, StringRef};

use super::pattern::{MatchPattern, Origin, request_url};
use super::{Offer, freshness};
use crate::dictionary::Dictionary;
use crate::headers::{USE_AS_DICTIONARY, UseAsDictionary};

/// Where "now" comes from: `Instant::now` unless a test moves time by hand.
type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// The dictionaries a client has learned from `Use-As-Dictionary` responses (RFC 9842),
/// kept per origin, to offer on later requests that match them.
///
/// Give one to [`DecompressionLayer::dictionaries`](crate::decompression::DecompressionLayer::dictionaries);
/// clones share one store, so several clients (or layers) can learn into and offer from the
/// same dictionaries. It is bounded in total bytes, in entries, in entries per origin (so one
/// origin cannot push every other out) and in bytes per dictionary; the least recently used
/// go first. A dictionary is kept only while the response that carried it is fresh
/// (`Cache-Control: max-age`, or `Expires`), and never past [`max_age`](ClientDictionaryStoreBuilder::max_age).
///
/// ```
/// use std::time::Duration;
/// use tower_gzip::client::ClientDictionaryStore;
///
/// let store = ClientDictionaryStore::builder()
///     .max_bytes(8 << 20)
///     .max_entry_bytes(1 << 20)
///     .max_age(Duration::from_secs(3600))
///     .build();
/// assert_eq!(store.stats().entries, 0);
/// ```
#[derive(Clone)]
pub struct ClientDictionaryStore {
    shared: Arc<Shared>,
}

struct Shared {
    limits: Limits,
    clock: Clock,
    state: Mutex<State>,
}

#[derive(Clone, Copy, Debug)]
struct Limits {
    max_bytes: usize,
    max_entries: usize,
    max_entries_per_origin: usize,
    max_entry_bytes: usize,
    max_age: Duration,
}

/// Builds a [`ClientDictionaryStore`] with limits other than the defaults.
#[derive(Clone)]
pub struct ClientDictionaryStoreBuilder {
    limits: Limits,
    clock: Option<Clock>,
}

impl fmt::Debug for ClientDictionaryStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientDictionaryStoreBuilder")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for ClientDictionaryStoreBuilder {
    fn default() -> Self {
        ClientDictionaryStoreBuilder {
            limits: Limits {
                max_bytes: 32 << 20,
                max_entries: 256,
                max_entries_per_origin: 32,
                max_entry_bytes: 8 << 20,
                max_age: Duration::from_secs(30 * 24 * 3600),
            },
            clock: None,
        }
    }
}

impl ClientDictionaryStoreBuilder {
    /// The bound on all dictionaries' bytes together. Default: 32 MiB.
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_bytes = bytes;
        self
    }

    /// The bound on how many dictionaries are kept. Default: 256.
    pub fn max_entries(mut self, entries: usize) -> Self {
        self.limits.max_entries = entries;
        self
    }

    /// The bound on how many dictionaries one origin may have; its least recently used goes
    /// first. Default: 32.
    pub fn max_entries_per_origin(mut self, entries: usize) -> Self {
        self.limits.max_entries_per_origin = entries;
        self
    }

    /// The largest dictionary kept: a longer response is not kept, and is not buffered past
    /// this size while it streams. Default: 8 MiB (capped by [`max_bytes`](Self::max_bytes)).
    pub fn max_entry_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_entry_bytes = bytes;
        self
    }

    /// The longest a dictionary is kept, whatever its freshness lifetime says. Default: 30
    /// days.
    pub fn max_age(mut self, age: Duration) -> Self {
        self.limits.max_age = age;
        self
    }

    /// Reads the time from `now` instead of [`Instant::now`], for tests that move time by
    /// hand (for example `|| tokio::time::Instant::now().into_std()` under a paused clock).
    pub fn clock(mut self, now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        self.clock = Some(Arc::new(now));
        self
    }

    /// The store.
    pub fn build(self) -> ClientDictionaryStore {
        let mut limits = self.limits;
        limits.max_entry_bytes = limits.max_entry_bytes.min(limits.max_bytes);
        ClientDictionaryStore {
            shared: Arc::new(Shared {
                limits,
                clock: self.clock.unwrap_or_else(|| Arc::new(Instant::now)),
                state: Mutex::new(State::default()),
            }),
        }
    }
}

/// What the store holds now, and what it has done since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientDictionaryStats {
    /// Dictionaries held now (expired ones included until they are next looked at).
    pub entries: usize,
    /// Their bytes.
    pub bytes: usize,
    /// Requests that offered a dictionary (`Available-Dictionary` sent).
    pub offered: u64,
    /// Dictionaries stored (a new one, or one replacing the same `match` and `match-dest`).
    pub stored: u64,
    /// Complete dictionary responses not stored: empty, or over the entry or store bound.
    pub not_stored: u64,
    /// Dictionaries dropped to make room (bytes, entries or the per-origin bound).
    pub evicted: u64,
    /// Dictionaries dropped because they were no longer fresh.
    pub expired: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<u64, Entry>,
    by_origin: HashMap<Origin, Vec<u64>>,
    /// Last use (a tick) to entry id: the least recently used is the first key.
    lru: BTreeMap<u64, u64>,
    tick: u64,
    next_id: u64,
    bytes: usize,
    stats: ClientDictionaryStats,
}

struct Entry {
    origin: Origin,
    pattern: MatchPattern,
    metadata: UseAsDictionary,
    dictionary: Dictionary,
    /// `Dictionary-ID`, ready to send.
    id: Option<HeaderValue>,
    /// When it was stored (a tick): the most recent wins a tie.
    fetched: u64,
    used: u64,
    expires: Instant,
}

/// A response that may become a dictionary once its body has been read in full.
#[derive(Debug)]
pub(crate) struct Candidate {
    origin: Origin,
    pattern: MatchPattern,
    metadata: UseAsDictionary,
    expires: Instant,
}

impl Default for ClientDictionaryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientDictionaryStore {
    /// A store with the default limits: 32 MiB, 256 dictionaries, 32 per origin, 8 MiB per
    /// dictionary, kept at most 30 days.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder for other limits.
    pub fn builder() -> ClientDictionaryStoreBuilder {
        ClientDictionaryStoreBuilder::default()
    }

    /// Whether it holds a dictionary with this SHA-256.
    pub fn contains(&self, hash: &[u8; 32]) -> bool {
        self.lock()
            .entries
            .values()
            .any(|e| &e.dictionary.hash() == hash)
    }

    /// Drops every dictionary.
    pub fn clear(&self) {
        let mut state = self.lock();
        let stats = state.stats;
        *state = State {
            stats,
            ..State::default()
        };
    }

    /// What it holds now, and the counters so far.
    pub fn stats(&self) -> ClientDictionaryStats {
        let state = self.lock();
        ClientDictionaryStats {
            entries: state.entries.len(),
            bytes: state.bytes,
            ..state.stats
        }
    }

    /// Counts a dictionary response that was too large to keep.
    pub(crate) fn refuse(&self) {
        self.lock().stats.not_stored += 1;
    }

    /// The largest body that may become a dictionary.
    pub(crate) fn max_entry_bytes(&self) -> usize {
        self.shared.limits.max_entry_bytes
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.shared.state)
    }

    fn now(&self) -> Instant {
        (self.shared.clock)()
    }

    /// Whether a response to a `GET` of `uri` may become a dictionary: it has a valid
    /// `Use-As-Dictionary` whose `match` stays on `uri`'s origin, and a freshness lifetime.
    /// (The caller checks the method and the status.)
    pub(crate) fn candidate(&self, uri: &Uri, headers: &HeaderMap) -> Option<Candidate> {
        let mut values = headers.get_all(USE_AS_DICTIONARY).iter();
        let value = values.next()?;
        if values.next().is_some() {
            return None;
        }
        let metadata = UseAsDictionary::parse(value.as_bytes())?;
        let lifetime = freshness::lifetime(headers, SystemTime::now())?;
        let origin = Origin::of(uri)?;
        let pattern = MatchPattern::new(metadata.match_pattern(), &request_url(uri)?)?;
        let expires = self.now() + lifetime.min(self.shared.limits.max_age);
        Some(Candidate {
            origin,
            pattern,
            metadata,
            expires,
        })
    }

    /// Stores `body` as the dictionary `candidate` announced. Returns whether it was kept.
    pub(crate) fn learn(&self, candidate: Candidate, body: Bytes) -> bool {
        let limits = self.shared.limits;
        let dictionary = (body.len() <= limits.max_entry_bytes)
            .then(|| Dictionary::new(body, candidate.metadata.clone()).ok())
            .flatten();
        let mut state = self.lock();
        let room = limits.max_entries > 0 && limits.max_entries_per_origin > 0;
        let Some(dictionary) = dictionary.filter(|_| room) else {
            state.stats.not_stored += 1;
            return false;
        };
        state.remove_same_match(&candidate);
        state.evict_from_origin(&candidate.origin, limits.max_entries_per_origin);
        state.evict_for(dictionary.len(), &limits);
        state.insert(candidate, dictionary);
        true
    }

    /// The dictionary to offer on a request to `uri` for the fetch destination `dest`
    /// (empty when unknown): of the fresh dictionaries of its origin whose `match` it
    /// matches (and whose `match-dest`, when not empty, lists `dest`), one whose `match-dest`
    /// lists `dest`, then the longest `match`, then the most recently stored.
    pub(crate) fn offer(&self, uri: &Uri, dest: &str) -> Option<Offer> {
        let origin = Origin::of(uri)?;
        let now = self.now();
        let mut state = self.lock();
        let ids = state.by_origin.get(&origin)?;
        let url = request_url(uri)?;
        let mut best: Option<((bool, usize, u64), u64)> = None;
        // Allocates only when a dictionary has expired.
        let mut expired = Vec::new();
        for &id in ids {
            let entry = &state.entries[&id];
            if entry.expires <= now {
                expired.push(id);
                continue;
            }
            let dests = entry.metadata.match_dest();
            if !dests.is_empty() && !dests.iter().any(|d| d == dest) {
                continue;
            }
            if !entry.pattern.matches(&url) {
                continue;
            }
            let rank = (!dests.is_empty(), entry.pattern.len(), entry.fetched);
            if best.is_none_or(|(top, _)| rank > top) {
                best = Some((rank, id));
            }
        }
        for id in expired {
            state.remove(id);
            state.stats.expired += 1;
        }
        let (_, id) = best?;
        let now = state.bump();
        let entry = state.entries.get_mut(&id)?;
        let used = std::mem::replace(&mut entry.used, now);
        let offer = Offer {
            dictionary: entry.dictionary.clone(),
            id: entry.id.clone(),
        };
        state.lru.remove(&used);
        state.lru.insert(now, id);
        state.stats.offered += 1;
        Some(offer)
    }
}

#[cfg(test)]
impl ClientDictionaryStore {
    /// Panics unless the indexes agree: bytes counted, one LRU slot and one origin slot per
    /// entry, at most `per_origin` entries per origin.
    pub(super) fn check_invariants(&self, per_origin: usize) {
        let state = self.lock();
        let counted: usize = state.entries.values().map(|e| e.dictionary.len()).sum();
        assert_eq!(counted, state.bytes);
        assert_eq!(state.lru.len(), state.entries.len());
        let indexed: usize = state.by_origin.values().map(Vec::len).sum();
        assert_eq!(indexed, state.entries.len());
        assert!(state.by_origin.values().all(|ids| ids.len() <= per_origin));
        for (tick, id) in &state.lru {
            assert_eq!(state.entries[id].used, *tick);
        }
    }
}

impl State {
    fn bump(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    fn remove(&mut self, id: u64) {
        let Some(entry) = self.entries.remove(&id) else {
            return;
        };
        self.lru.remove(&entry.used);
        self.bytes -= entry.dictionary.len();
        if let Some(ids) = self.by_origin.get_mut(&entry.origin) {
            ids.retain(|other| *other != id);
            if ids.is_empty() {
                self.by_origin.remove(&entry.origin);
            }
        }
    }

    fn evict(&mut self, id: u64) {
        self.remove(id);
        self.stats.evicted += 1;
    }

    /// Drops the dictionary of `candidate`'s origin with the same `match` and `match-dest`:
    /// the new one replaces it.
    fn remove_same_match(&mut self, candidate: &Candidate) {
        let same = self.by_origin.get(&candidate.origin).and_then(|ids| {
            ids.iter().copied().find(|id| {
                let old = &self.entries[id].metadata;
                old.match_pattern() == candidate.metadata.match_pattern()
                    && old.match_dest() == candidate.metadata.match_dest()
            })
        });
        if let Some(id) = same {
            self.remove(id);
        }
    }

    /// Evicts `origin`'s least recently used until it has room for one more.
    fn evict_from_origin(&mut self, origin: &Origin, max_entries_per_origin: usize) {
        while self.by_origin.get(origin).map_or(0, Vec::len) >= max_entries_per_origin {
            let oldest = self.by_origin[origin]
                .iter()
                .copied()
                .min_by_key(|id| self.entries[id].used);
            match oldest {
                Some(id) => self.evict(id),
                None => break,
            }
        }
    }

    /// Evicts the least recently used of any origin until `len` more bytes and one more
    /// entry fit.
    fn evict_for(&mut self, len: usize, limits: &Limits) {
        while self.bytes + len > limits.max_bytes || self.entries.len() >= limits.max_entries {
            let Some((_, &id)) = self.lru.first_key_value() else {
                break;
            };
            self.evict(id);
        }
    }

    /// Adds `dictionary` as the most recently used entry.
    fn insert(&mut self, candidate: Candidate, dictionary: Dictionary) {
        let id = self.next_id;
        self.next_id += 1;
        let now = self.bump();
        self.bytes += dictionary.len();
        self.lru.insert(now, id);
        self.by_origin
            .entry(candidate.origin.clone())
            .or_default()
            .push(id);
        self.entries.insert(
            id,
            Entry {
                id: candidate.metadata.id().and_then(dictionary_id),
                origin: candidate.origin,
                pattern: candidate.pattern,
                metadata: candidate.metadata,
                dictionary,
                fetched: now,
                used: now,
                expires: candidate.expires,
            },
        );
        self.stats.stored += 1;
    }
}

/// `Dictionary-ID` is an SF string (RFC 9842 section 2.3).
fn dictionary_id(id: &str) -> Option<HeaderValue> {
    let value = ItemSerializer::new()
        .bare_item(StringRef::from_str(id).ok()?)
        .finish();
    HeaderValue::from_str(&value).ok()
}

impl fmt::Debug for ClientDictionaryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("ClientDictionaryStore")
            .field("len", &state.entries.len())
            .field("bytes", &state.bytes)
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}
