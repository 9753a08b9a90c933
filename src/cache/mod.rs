//! Compress once, serve many: a cache of compressed representations, by content.
//!
//! Given to a [`CompressionLayer`](crate::compression::CompressionLayer) with
//! [`cache`](crate::compression::CompressionLayer::cache), a [`VariantCache`] remembers what
//! the layer compressed and serves it again for the price of a hash and a `Bytes` handle.
//! Entries hit again are recompressed in the background at their coding's densest web-safe
//! level (br 11, zstd 19, gzip and deflate 9) and replaced when that is smaller.
//!
//! ```
//! use tower_gzip::cache::VariantCache;
//! use tower_gzip::compression::CompressionLayer;
//!
//! let cache = VariantCache::builder().budget(64 * 1024 * 1024).build(); // 64 MiB of compressed bytes
//! let api = CompressionLayer::new().cache(cache.clone());
//! let assets = CompressionLayer::new().cache(cache.clone()); // one cache, several layers
//! # let _ = (api, assets);
//! assert_eq!(cache.stats().hits, 0);
//! ```
//!
//! # What is cached, and what never is
//!
//! - Cached: response bodies known in full (a `Full`, a `String`, one frame with its exact
//!   size) of [`min_size`](VariantCacheBuilder::min_size) bytes and up to 8 MiB, the second
//!   time the same bytes are compressed with the same coding, level and dictionary. The key is BLAKE3 in keyed mode
//!   over the identity body, with a key drawn at random per process, plus the coding, the
//!   level and the dictionary's hash: no crafted body can be served another's bytes. Bodies
//!   up to 64 KiB are filed as the request compressed them; larger ones stream as usual
//!   and the background worker files them at the smaller of the densest level and the
//!   layer's own (the densest is not always the smallest): no entry is ever larger than
//!   what the layer sends uncached.
//! - With [`by_etag`](VariantCacheBuilder::by_etag) (off by default): streamed responses
//!   (bodies not complete when read ahead: a `ServeDir` file, a proxied asset) with a
//!   strong `ETag`, under the request's scheme, authority, path and query, the `ETag`, the
//!   coding, the level and the dictionary, recorded as they stream and filed only once
//!   complete. Only what RFC 9111 lets a shared cache store is kept this way (nothing
//!   `private`, `no-store`, setting a cookie, varying on other request headers, answering
//!   `Authorization` without `public`), and for at most
//!   [`etag_max_age`](VariantCacheBuilder::etag_max_age). The `ETag` is the application's
//!   promise that at that URL on that authority, the bytes behind it do not change.
//! - Never cached: bodies of unknown size without a strong `ETag` (or without `by_etag`),
//!   responses the predicate or the RFC rules leave alone (`Cache-Control: no-transform`,
//!   206, HEAD, already encoded), bodies and entries over their bounds, streams that fail,
//!   are dropped half-way or end with trailers, and every response with BREACH jitter on
//!   (the padding is per response).
//!
//! # Bounds
//!
//! The budget counts each entry's compressed bytes plus a fixed overhead per entry (its key,
//! map slot, queue place and allocation). A body is admitted the second time it is seen: a
//! body seen once costs a fingerprint of a few sampled bytes and one atomic swap, never a
//! full hash nor a copy, so a flood of unique responses leaves the hot entries in place.
//! A body the application serves as the same `Bytes` again (a static asset, a response it
//! keeps) is pinned after two hits from one address: a clone of its `Bytes` keeps that
//! memory from being freed or written, so the next request finds it by address and length,
//! without a hash. Pins hold at most an eighth of the budget, besides it
//! ([`CacheStats::pinned`]).
//!
//! Eviction is S3-FIFO: new entries wait in a small queue; those hit meanwhile move to the
//! main queue, where each hit buys a second chance.

mod doorkeeper;
mod key;
mod pins;
mod recompress;
mod record;
mod store;
#[cfg(test)]
mod tests;
mod validator;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use self::doorkeeper::Doorkeeper;
pub(crate) use self::key::Variant;
use self::key::{Key, process_key, validator_key};
use self::pins::Pins;
use self::recompress::{Job, JobKind, Pressure, Recompressor};
pub(crate) use self::record::Recorder;
pub(crate) use self::store::Stage;
use self::store::{ENTRY_OVERHEAD, Store};
pub(crate) use self::validator::{RequestScope, Validator};
use crate::CodecPool;
use crate::dictionary::Dictionary;

/// Bodies smaller than this skip the cache by default: hashing and filing them costs about
/// what compressing them does.
pub(crate) const DEFAULT_MIN_SIZE: usize = 2 * 1024;

/// Identity bodies over this size skip the cache by default.
pub(crate) const DEFAULT_MAX_BODY: usize = 8 * 1024 * 1024;

/// The longest a validator entry serves by default: a wrong or reused `ETag` misleads the
/// cache for at most this long.
pub(crate) const DEFAULT_ETAG_MAX_AGE: Duration = Duration::from_secs(300);

/// Shards of the entry table: concurrent lookups rarely meet on one lock.
const SHARDS: usize = 8;

/// A cache of compressed representations, shared by the layers it is given to (clones share
/// it). See the [module docs](self).
#[derive(Clone, Debug)]
pub struct VariantCache {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    secret: [u8; 32],
    /// With [`VariantCacheBuilder::by_etag`]: the validators' keys and their entries' age.
    by_etag: Option<ByEtag>,
    min_size: usize,
    max_body: usize,
    /// Bodies served again as the same `Bytes`, found without a hash.
    pins: Pins,
    shared: Arc<Shared>,
    recompressor: Option<Recompressor>,
}

/// How streamed responses are cached by validator.
#[derive(Debug)]
struct ByEtag {
    /// The secret of the validators' keys.
    secret: [u8; 32],
    /// The longest a validator entry serves.
    max_age: Duration,
}

/// What the request path and the background worker both reach.
#[derive(Debug)]
pub(crate) struct Shared {
    store: Store,
    doorkeeper: Doorkeeper,
    max_entry: u64,
    /// The largest identity body looked up (and decoded, for validator entries).
    max_body: usize,
    counts: Counts,
}

impl Shared {
    /// Files `compressed` under `fill` (copied, so the entry holds exactly its bytes and
    /// not the buffer they were written into), within the entry bound.
    fn file(&self, fill: Fill, compressed: &[u8], stage: Stage) {
        if compressed.len() as u64 + ENTRY_OVERHEAD > self.max_entry {
            self.counts.too_large_add();
            return;
        }
        let bytes = Bytes::copy_from_slice(compressed);
        let filed = self.store.insert(
            fill.key,
            (fill.print, fill.expires()),
            bytes,
            stage,
            |print| {
                self.doorkeeper.evicted(print);
                self.counts.evicted.fetch_add(1, Ordering::Relaxed);
            },
        );
        if filed {
            self.doorkeeper.filed(fill.print);
            self.counts.admitted.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[derive(Debug, Default)]
struct Counts {
    hits: AtomicU64,
    misses: AtomicU64,
    unseen: AtomicU64,
    too_large: AtomicU64,
    admitted: AtomicU64,
    evicted: AtomicU64,
    hashed: AtomicU64,
}

impl Counts {
    fn too_large_add(&self) {
        self.too_large.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a [`VariantCache`] has done, since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Responses served from the cache.
    pub hits: u64,
    /// Lookups of bodies seen before that found no entry (they are then filed).
    pub misses: u64,
    /// Bodies not admitted: seen for the first time, or over the entry bound.
    pub refused: u64,
    /// Entries filed.
    pub admitted: u64,
    /// Entries evicted to stay within the budget.
    pub evicted: u64,
    /// Identity bodies hashed to find their key: each a pass over the whole body (a body
    /// pinned from a previous response is found without one).
    pub hashed: u64,
    /// Entries held now.
    pub entries: u64,
    /// Bytes held now, as the budget counts them (sizes plus overhead per entry).
    pub bytes: u64,
    /// Entries recompressed at their coding's densest level (or filed at it: bodies too
    /// large to compress on the request path).
    pub recompressed: u64,
    /// Bytes those recompressions took off the entries.
    pub recompress_saved: u64,
    /// Recompressions given up (under CPU pressure, or on an encoding error); the entry is
    /// queued again at a later hit.
    pub recompress_dropped: u64,
    /// Bytes of identity bodies kept alive so that one served again as the same `Bytes`
    /// is found by its address, without a hash (at most an eighth of the budget, besides
    /// it).
    pub pinned: u64,
}

impl VariantCache {
    /// A cache of at most `budget` bytes, with the defaults.
    #[cfg(test)]
    pub(crate) fn new(budget: u64) -> VariantCache {
        VariantCache::builder().budget(budget).build()
    }

    /// A builder, to set the bounds and the background recompression.
    pub fn builder() -> VariantCacheBuilder {
        VariantCacheBuilder::default()
    }

    /// Counts of what the cache has done, and what it holds.
    pub fn stats(&self) -> CacheStats {
        let counts = &self.inner.shared.counts;
        let (entries, bytes) = self.inner.shared.store.held();
        let worker = self.inner.recompressor.as_ref().map(|r| &r.counts);
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        CacheStats {
            hits: read(&counts.hits),
            misses: read(&counts.misses),
            refused: read(&counts.unseen) + read(&counts.too_large),
            admitted: read(&counts.admitted),
            evicted: read(&counts.evicted),
            hashed: read(&counts.hashed),
            entries,
            bytes,
            recompressed: worker.map_or(0, |w| read(&w.done)),
            recompress_saved: worker.map_or(0, |w| read(&w.saved)),
            recompress_dropped: worker.map_or(0, |w| read(&w.dropped)),
            pinned: self.inner.pins.held(),
        }
    }

    /// Whether streamed responses with a strong `ETag` are cached by it.
    pub(crate) fn by_etag(&self) -> bool {
        self.inner.by_etag.is_some()
    }

    /// The validator of a response to a request in `scope`, when this cache keys streamed
    /// responses by validator and a shared cache may keep this one.
    pub(crate) fn validator(
        &self,
        scope: &RequestScope,
        status: http::StatusCode,
        headers: &http::HeaderMap,
    ) -> Option<Validator> {
        let max_age = self.inner.by_etag.as_ref()?.max_age;
        Validator::of(scope, status, headers, max_age)
    }

    /// Whether a body of `len` bytes is one the cache looks at.
    pub(crate) fn wants(&self, len: u64) -> bool {
        len >= self.inner.min_size as u64 && len <= self.inner.max_body as u64
    }

    /// The largest identity body the layer reads ahead in full for the cache.
    pub(crate) fn max_body(&self) -> usize {
        self.inner.max_body
    }

    /// Hands a missed body too large to compress on the request path to the background
    /// worker, which files it at its coding's densest level (dropped when the worker is
    /// off or busy: a later miss hands it again).
    pub(crate) fn fill_later(&self, fill: Fill, body: Bytes, dictionary: Option<Dictionary>) {
        let inner = &*self.inner;
        let Some(recompressor) = &inner.recompressor else {
            return;
        };
        let job = Job {
            key: fill.key,
            body: Some(body),
            dictionary,
            kind: JobKind::File(fill.print),
        };
        recompressor.submit(job, &inner.shared);
    }

    /// Looks `body` up under `variant`. A hit is the entry's bytes (and may queue the entry
    /// for recompression, with `dictionary` for `dcz`/`dcb`); a miss carries the key to
    /// [`record`](Self::record) for filing once the body is compressed; an unseen body carries nothing.
    pub(crate) fn lookup(
        &self,
        body: &Bytes,
        variant: Variant,
        dictionary: Option<&Dictionary>,
    ) -> Lookup {
        let inner = &*self.inner;
        let pinned = inner.pins.find(body);
        let key = || match pinned {
            Some(digest) => Key::from_digest(digest, variant),
            None => {
                inner.shared.counts.hashed.fetch_add(1, Ordering::Relaxed);
                Key::new(&inner.secret, body, variant)
            }
        };
        let body = Identity {
            bytes: body,
            pinned: pinned.is_some(),
        };
        self.find(body.bytes, key, (Some(body), None), dictionary)
    }

    /// Looks up a streamed response by its request path and strong `ETag` (see
    /// [`VariantCacheBuilder::by_etag`]); `None` when the cache does not do that.
    pub(crate) fn lookup_validated(
        &self,
        validator: &Validator,
        variant: Variant,
        dictionary: Option<&Dictionary>,
    ) -> Option<Lookup> {
        let inner = &*self.inner;
        let secret = &inner.by_etag.as_ref()?.secret;
        let identity = validator.identity();
        let key = || Key::validated(secret, &identity, variant);
        let lifetime = Some(validator.lifetime);
        Some(self.find(&identity, key, (None, lifetime), dictionary))
    }

    /// The lookup both kinds of keys share: `sighting` is what the doorkeeper remembers,
    /// `key` the full hash (taken only for what it may have seen), `body` the identity
    /// bytes the worker recompresses from (without them it decodes the entry's), pinned
    /// when it is hit twice from one address; `lifetime` how long a validator entry filed
    /// on a miss may serve.
    fn find(
        &self,
        sighting: &[u8],
        key: impl FnOnce() -> Key,
        (body, lifetime): (Option<Identity<'_>>, Option<Duration>),
        dictionary: Option<&Dictionary>,
    ) -> Lookup {
        let inner = &*self.inner;
        let shared = &*inner.shared;
        let sight = shared.doorkeeper.check(sighting);
        let unseen = || {
            shared.counts.unseen.fetch_add(1, Ordering::Relaxed);
            Lookup::Unseen
        };
        if !sight.seen && !sight.filed {
            return unseen();
        }
        let key = key();
        let address = body.map(|body| pins::address(body.bytes));
        let Some(found) = shared
            .store
            .get(&key, inner.recompressor.is_some(), address)
        else {
            if !sight.seen {
                return unseen();
            }
            shared.counts.misses.fetch_add(1, Ordering::Relaxed);
            let print = sight.print;
            return Lookup::Miss(Fill {
                key,
                print,
                lifetime,
            });
        };
        shared.counts.hits.fetch_add(1, Ordering::Relaxed);
        if let Some(body) = body.filter(|body| found.again && !body.pinned) {
            inner.pins.pin(body.bytes, key.digest());
        }
        if found.recompress {
            let body = body.map(|body| body.bytes.clone());
            self.queue(key, body, dictionary.cloned());
        }
        Lookup::Hit(found.bytes)
    }

    fn queue(&self, key: Key, body: Option<Bytes>, dictionary: Option<Dictionary>) {
        let inner = &*self.inner;
        let Some(recompressor) = &inner.recompressor else {
            return;
        };
        let job = Job {
            key,
            body,
            dictionary,
            kind: JobKind::Recompress,
        };
        if !recompressor.submit(job, &inner.shared) {
            inner.shared.store.unqueue(&key);
        }
    }

    /// Records a missed streamed response as it is compressed, to file it once complete.
    pub(crate) fn record(&self, fill: Fill) -> Recorder {
        Recorder::new(self.clone(), fill, self.inner.shared.max_entry)
    }
}

/// What [`VariantCache::lookup`] found.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// The first sight of this body: compress it, file nothing.
    Unseen,
    /// Seen before, not filed: compress it and file it with the `Fill`.
    Miss(Fill),
    /// The compressed bytes, to send as they are.
    Hit(Bytes),
}

/// An identity body being looked up, and whether it was found among the pins.
#[derive(Clone, Copy)]
struct Identity<'a> {
    bytes: &'a Bytes,
    pinned: bool,
}

/// What a missed body is filed under (hashed once, at the lookup).
#[derive(Debug)]
pub(crate) struct Fill {
    pub(crate) key: Key,
    pub(crate) print: u64,
    /// How long a validator entry may serve once filed (`None`: a content entry).
    pub(crate) lifetime: Option<Duration>,
}

impl Fill {
    /// When the entry filed now stops serving.
    fn expires(&self) -> Option<Instant> {
        self.lifetime.map(|lifetime| Instant::now() + lifetime)
    }
}

/// Builds a [`VariantCache`].
#[derive(Clone)]
pub struct VariantCacheBuilder {
    budget: u64,
    min_size: usize,
    max_body: usize,
    max_entry: Option<u64>,
    recompress_share: Option<f64>,
    pool: CodecPool,
    pressure: Option<Pressure>,
    by_etag: bool,
    etag_max_age: Duration,
}

impl std::fmt::Debug for VariantCacheBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VariantCacheBuilder")
            .field("budget", &self.budget)
            .field("min_size", &self.min_size)
            .field("max_entry", &self.max_entry)
            .field("recompress_share", &self.recompress_share)
            .field("by_etag", &self.by_etag)
            .field("etag_max_age", &self.etag_max_age)
            .finish_non_exhaustive()
    }
}

impl Default for VariantCacheBuilder {
    fn default() -> Self {
        VariantCacheBuilder {
            budget: 64 * 1024 * 1024,
            min_size: DEFAULT_MIN_SIZE,
            max_body: DEFAULT_MAX_BODY,
            max_entry: None,
            recompress_share: Some(0.25),
            pool: CodecPool::global().clone(),
            pressure: None,
            by_etag: false,
            etag_max_age: DEFAULT_ETAG_MAX_AGE,
        }
    }
}

impl VariantCacheBuilder {
    /// The bytes the entries may hold in all, sizes plus overhead (default 64 MiB).
    pub fn budget(mut self, bytes: u64) -> Self {
        self.budget = bytes;
        self
    }

    /// Bodies under this many bytes skip the cache (default 2 KiB: hashing and filing them
    /// costs about what compressing them does).
    pub fn min_size(mut self, bytes: usize) -> Self {
        self.min_size = bytes;
        self
    }

    /// The largest entry, in compressed bytes plus overhead (default: an eighth of the
    /// budget, and never more than one shard of it).
    #[cfg(test)]
    pub(crate) fn max_entry(mut self, bytes: u64) -> Self {
        self.max_entry = Some(bytes);
        self
    }

    /// The share of one core the background recompression may use (default 0.25);
    /// `None` turns it off.
    pub fn recompress(mut self, share_of_a_core: Option<f64>) -> Self {
        self.recompress_share = share_of_a_core;
        self
    }

    /// The pool the recompressions draw their codecs from (default
    /// [`CodecPool::global`]).
    pub fn pool(mut self, pool: &CodecPool) -> Self {
        self.pool = pool.clone();
        self
    }

    /// Pauses the background work while `pressed` answers true, such as a load
    /// governor's [`under_pressure`](crate::compression::Governor::under_pressure):
    ///
    /// ```
    /// use tower_gzip::cache::VariantCache;
    /// use tower_gzip::compression::{CompressionLayer, Governor};
    ///
    /// let governor = Governor::new();
    /// let pressure = governor.clone();
    /// let cache = VariantCache::builder()
    ///     .pause_when(move || pressure.under_pressure())
    ///     .build();
    /// let layer = CompressionLayer::new().adaptive(governor).cache(cache);
    /// # let _ = layer;
    /// ```
    pub fn pause_when(mut self, pressed: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.pressure = Some(Arc::new(pressed));
        self
    }

    /// Also caches streamed responses (a file from `ServeDir`, a proxied asset) that carry
    /// a strong `ETag` (default off). A body known in full never takes this path: its own
    /// bytes are its key. The compressed stream is recorded as it goes out and filed only
    /// once complete; a later request for the same URL whose response carries the same
    /// `ETag` gets it without its body being read.
    ///
    /// The key is the request's scheme, authority (`Host`), path and query, the `ETag`,
    /// the coding, the level and the dictionary. As a shared cache must (RFC 9111), nothing
    /// is cached by validator for a request without an authority or with
    /// `Cache-Control: no-store`, or with `Authorization` unless the response says
    /// `public`, `s-maxage` or `must-revalidate`; nor for a response other than `200`, or
    /// `private`, `no-store`, setting a cookie, or with a `Vary` naming anything but
    /// `Accept-Encoding` and `Available-Dictionary`. An entry serves at most
    /// [`etag_max_age`](Self::etag_max_age), and never past the response's own freshness.
    ///
    /// What the application promises: at one URL on one authority, a strong `ETag` stands
    /// for exactly one body (RFC 9110 section 8.8.1), whatever else of the request the body
    /// depends on. An application that sends one `ETag` for different bodies (per user, per
    /// language without `Vary`) must leave this off.
    ///
    /// ```
    /// use tower_gzip::cache::VariantCache;
    ///
    /// let cache = VariantCache::builder().by_etag(true).build();
    /// # let _ = cache;
    /// ```
    pub fn by_etag(mut self, on: bool) -> Self {
        self.by_etag = on;
        self
    }

    /// The longest an entry cached by validator serves before the next response is
    /// compressed again (default 5 minutes); a response's own `max-age`, `s-maxage` or
    /// `Expires` shortens it. Bodies cached by content never expire: their key is the
    /// body itself.
    pub fn etag_max_age(mut self, max_age: Duration) -> Self {
        self.etag_max_age = max_age;
        self
    }

    /// The cache.
    pub fn build(self) -> VariantCache {
        let store = Store::new(self.budget, SHARDS);
        let max_entry = self
            .max_entry
            .unwrap_or(self.budget / 8)
            .min(store.shard_budget());
        // About one fingerprint per KiB of budget: room for the bodies that could fit.
        let slots = (self.budget / 1024).clamp(4096, 1 << 20) as usize;
        let recompressor = self
            .recompress_share
            .map(|share| Recompressor::new(share, self.pool.clone(), self.pressure.clone()));
        let secret = process_key();
        VariantCache {
            inner: Arc::new(Inner {
                secret,
                by_etag: self.by_etag.then(|| ByEtag {
                    secret: validator_key(&secret),
                    max_age: self.etag_max_age,
                }),
                min_size: self.min_size,
                max_body: self.max_body,
                pins: Pins::new(self.budget / 8),
                shared: Arc::new(Shared {
                    store,
                    doorkeeper: Doorkeeper::new(slots),
                    max_entry,
                    max_body: self.max_body,
                    counts: Counts::default(),
                }),
                recompressor,
            }),
        }
    }
}
