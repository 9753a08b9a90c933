//! [`Learner`]: the handle the layer, the application and the learner's thread share.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response};
use http_body_util::Full;
use sha2::{Digest, Sha256};
use tower_service::Service;

use super::config::{Filter, LearnedRoute, LearnerBuilder};
use super::layer::LearnLayer;
use super::pattern::PathPattern;
use super::stats::{LearnerStats, RouteCounters};
use super::{LearnError, Refusal, worker};
use crate::dictionary::{DictionaryService, DictionaryStore};
use crate::sync::lock;

/// `Available-Dictionary`: looked up on every request to a route.
const HELD: HeaderName = crate::headers::AVAILABLE_DICTIONARY;

/// Samples queued for the learner's thread at most; past it samples are dropped
/// ([`Refusal::Busy`]) rather than held while it builds.
const QUEUE: usize = 256;

/// Learns dictionaries from the responses a service sends, publishes them and keeps them
/// current. See the [module docs](super) for what it does and why it is safe.
///
/// Cloning is cheap: clones share one learner. Its thread stops when the last clone (and
/// every layer and body made from it) is dropped.
#[derive(Clone)]
pub struct Learner {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    samples: SyncSender<(usize, Bytes)>,
}

/// What the request path and the learner's thread both read.
pub(crate) struct Shared {
    pub(crate) routes: Vec<RouteShared>,
    pub(crate) store: DictionaryStore,
    pub(crate) url_prefix: String,
    pub(crate) filter: Option<Filter>,
    pub(crate) served: RwLock<HashMap<[u8; 32], DictionaryService>>,
}

/// One route, as the request path sees it.
pub(crate) struct RouteShared {
    pub(crate) config: LearnedRoute,
    pub(crate) pattern: PathPattern,
    /// The route's folder in the storage: a hash of its pattern, safe as a name.
    pub(crate) key: String,
    considered: AtomicU64,
    /// `LearnerBuilder::announce_to_every_client`.
    announce_to_all: bool,
    /// The per-second cap on samples.
    budget: Mutex<Bucket>,
    pub(crate) counters: RouteCounters,
    /// `Link` to the current dictionary, once there is one, and the `Available-Dictionary`
    /// of a request that holds it already (which needs no announcement).
    pub(crate) link: RwLock<Option<Announcement>>,
}

impl Learner {
    /// A learner to configure: its routes, storage and rotation.
    ///
    /// ```
    /// use tower_gzip::dictionary::learn::{LearnedRoute, Learner};
    ///
    /// let learner = Learner::builder()
    ///     .route(LearnedRoute::new("/api/items*"))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(learner.stats().routes[0].pattern, "/api/items*");
    /// ```
    pub fn builder() -> LearnerBuilder {
        LearnerBuilder::default()
    }

    pub(crate) fn start(config: LearnerBuilder) -> Result<Learner, LearnError> {
        if config.routes.is_empty() {
            return Err(LearnError::Config(
                "a learner needs at least one route".into(),
            ));
        }
        if !config.url_prefix.starts_with('/')
            || crate::dictionary::link_header(&config.url_prefix).is_none()
        {
            return Err(LearnError::Config(format!(
                "url prefix {:?}: a path starting with `/`",
                config.url_prefix
            )));
        }
        let routes = config
            .routes
            .iter()
            .map(|route| RouteShared::new(route, config.announce_to_all))
            .collect::<Result<Vec<_>, _>>()?;
        let store = config.store.clone().unwrap_or_else(|| {
            let per_route: usize = config.routes.iter().map(|r| r.max_dictionary_size).sum();
            DictionaryStore::new(per_route * (config.keep + 1))
        });
        let shared = Arc::new(Shared {
            routes,
            store,
            url_prefix: config.url_prefix.clone(),
            filter: config.filter.clone(),
            served: RwLock::new(HashMap::new()),
        });
        let (samples, queue) = sync_channel(QUEUE);
        worker::spawn(Arc::clone(&shared), queue, config)?;
        Ok(Learner {
            inner: Arc::new(Inner { shared, samples }),
        })
    }

    /// The layer that samples the routes' responses, announces their dictionaries (`Link`)
    /// and serves them. Place it inside the compression layer, so that it reads the bodies
    /// as the handler made them.
    pub fn layer(&self) -> LearnLayer {
        LearnLayer::new(self.clone())
    }

    /// The store the learned dictionaries are in: give it to the compression layer
    /// ([`CompressionLayer::dictionaries`](crate::compression::CompressionLayer::dictionaries)).
    pub fn store(&self) -> DictionaryStore {
        self.inner.shared.store.clone()
    }

    /// What it did, route by route.
    pub fn stats(&self) -> LearnerStats {
        LearnerStats {
            routes: self
                .inner
                .shared
                .routes
                .iter()
                .map(|r| r.counters.stats(r.pattern.as_str()))
                .collect(),
        }
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// The route `path` belongs to, the first that matches.
    pub(crate) fn route_for(&self, path: &str) -> Option<usize> {
        self.shared()
            .routes
            .iter()
            .position(|r| r.pattern.matches(path))
    }

    /// Hands a finished sample to the learner's thread (or drops it when the queue is full).
    pub(crate) fn send(&self, route: usize, body: Bytes) {
        let counters = &self.shared().routes[route].counters;
        match self.inner.samples.try_send((route, body)) {
            Ok(()) => counters.taken(),
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                counters.refused(Refusal::Busy);
            }
        }
    }

    /// The answer to a request for a learned dictionary, if `path` names one.
    pub(crate) fn serve(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
    ) -> Option<Response<Full<Bytes>>> {
        let hex = path.strip_prefix(&self.shared().url_prefix)?;
        let hash = parse_hex(hex)?;
        let mut service = crate::sync::read(&self.shared().served).get(&hash)?.clone();
        let mut request = http::Request::new(());
        *request.method_mut() = method.clone();
        *request.headers_mut() = headers.clone();
        let Ok(response) = service.call(request).into_inner();
        Some(response)
    }
}

impl RouteShared {
    pub(crate) fn new(config: &LearnedRoute, announce_to_all: bool) -> Result<Self, LearnError> {
        let pattern = PathPattern::new(&config.pattern)?;
        crate::headers::UseAsDictionary::new(pattern.as_str())
            .to_header_value()
            .map_err(|e| LearnError::Pattern(format!("{:?}: {e}", config.pattern)))?;
        let digest = Sha256::digest(pattern.as_str().as_bytes());
        Ok(RouteShared {
            key: crate::codec::dictionary::hex(&digest[..8]),
            config: config.clone(),
            pattern,
            considered: AtomicU64::new(0),
            announce_to_all,
            budget: Mutex::new(Bucket::full(config)),
            counters: RouteCounters::default(),
            link: RwLock::new(None),
        })
    }

    /// Whether this response is one the sample rate takes: every `1/rate`-th, counted.
    pub(crate) fn consider(&self) -> bool {
        let rate = self.config.sample_rate;
        if rate <= 0.0 {
            return false;
        }
        let n = self.considered.fetch_add(1, Ordering::Relaxed) as f64;
        ((n + 1.0) * rate).floor() > (n * rate).floor() && lock(&self.budget).take()
    }

    /// The `Link` for a response to a request with these headers: none when the request
    /// names the current dictionary already.
    pub(crate) fn link(&self, request: &HeaderMap) -> Option<HeaderValue> {
        let held = request.get(HELD);
        // Decided before the lock: most API clients are neither, and pay no more than this.
        if !(self.announce_to_all
            || held.is_some()
            || request.contains_key(crate::headers::SEC_FETCH_MODE))
        {
            return None;
        }
        let announcement = crate::sync::read(&self.link);
        let current = announcement.as_ref()?;
        (held != Some(&current.held)).then(|| current.link.clone())
    }
}

/// A token bucket: `per_second` samples a second, up to `burst` at once.
struct Bucket {
    tokens: f64,
    burst: f64,
    per_second: f64,
    last: Instant,
}

impl Bucket {
    fn full(config: &LearnedRoute) -> Self {
        let burst = (config.min_samples as f64).max(config.per_second);
        Bucket {
            tokens: burst,
            burst,
            per_second: config.per_second,
            last: Instant::now(),
        }
    }

    /// Whether a sample may be taken now (and if so, counts it).
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let elapsed = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }
}

/// How a route announces its current dictionary.
pub(crate) struct Announcement {
    pub(crate) link: HeaderValue,
    pub(crate) held: HeaderValue,
}

/// A SHA-256 written as 64 hex digits (either case).
pub(crate) fn parse_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl fmt::Debug for Learner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Learner")
            .field("routes", &self.stats().routes.len())
            .field("url_prefix", &self.shared().url_prefix)
            .field("store", &self.shared().store)
            .finish_non_exhaustive()
    }
}
