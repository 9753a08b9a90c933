//! The state the request path and the learner's thread share: the routes (pattern, sample
//! budget, counters, announcement), the store and the dictionaries served; and what the
//! thread reads besides a route's own learning.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue};
use sha2::{Digest, Sha256};

use super::LearnError;
use super::anonymity::Anonymity;
use super::client::Clients;
use super::config::{Filter, LearnedRoute, LearnerBuilder};
use super::pattern::PathPattern;
use super::stats::RouteCounters;
use super::storage::DictionaryStorage;
use crate::dictionary::{DictionaryService, DictionaryStore};
use crate::headers::{AVAILABLE_DICTIONARY, SEC_FETCH_MODE, UseAsDictionary};
use crate::sync::{lock, recover};

/// What the request path and the learner's thread both read.
pub(crate) struct Shared {
    pub(crate) routes: Vec<RouteShared>,
    pub(crate) store: DictionaryStore,
    pub(crate) url_prefix: String,
    pub(crate) filter: Option<Filter>,
    /// Who requests come from, as keyed hashes.
    pub(crate) clients: Clients,
    /// Query parameters that refuse a sample, lowercase.
    pub(crate) credentials: Vec<String>,
    /// Whether the warning that no client is known was logged (once per learner).
    pub(crate) warned_unknown: AtomicBool,
    pub(crate) served: RwLock<HashMap<[u8; 32], DictionaryService>>,
}

/// One route, as the request path sees it.
pub(crate) struct RouteShared {
    pub(crate) config: LearnedRoute,
    pub(crate) pattern: PathPattern,
    /// The route's folder in the storage: a hash of its pattern, safe as a name.
    pub(crate) key: String,
    considered: AtomicU64,
    /// The per-second cap on samples.
    budget: Mutex<Bucket>,
    pub(crate) counters: RouteCounters,
    /// `Link` to the current dictionary, once there is one, and the `Available-Dictionary`
    /// of a request that holds it already (which needs no announcement).
    pub(crate) link: RwLock<Option<Announcement>>,
}

impl RouteShared {
    pub(crate) fn new(config: &LearnedRoute) -> Result<Self, LearnError> {
        let pattern = PathPattern::new(&config.pattern)?;
        UseAsDictionary::new(pattern.as_str())
            .to_header_value()
            .map_err(|e| LearnError::Pattern(format!("{:?}: {e}", config.pattern)))?;
        let digest = Sha256::digest(pattern.as_str().as_bytes());
        Ok(RouteShared {
            key: crate::hex::encode(&digest[..8]),
            config: config.clone(),
            pattern,
            considered: AtomicU64::new(0),
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
        let held = request.get(AVAILABLE_DICTIONARY);
        // Only a browser (Fetch Metadata) or a client holding another dictionary can act on
        // the announcement; other API clients would pay its bytes on every response. Decided
        // before the lock: most API clients are neither, and pay no more than this.
        if !(held.is_some() || request.contains_key(SEC_FETCH_MODE)) {
            return None;
        }
        let announcement = recover(self.link.read());
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

/// What the learner's thread was configured with.
pub(crate) struct ThreadSettings {
    pub(crate) storage: Option<Arc<dyn DictionaryStorage>>,
    pub(crate) poll_interval: Duration,
    pub(crate) margin: f64,
    pub(crate) check_every: usize,
    pub(crate) keep: usize,
    pub(crate) max_age: Duration,
    pub(crate) anonymity: Anonymity,
}

impl ThreadSettings {
    pub(crate) fn new(config: LearnerBuilder) -> Self {
        ThreadSettings {
            storage: config.storage,
            poll_interval: config.poll_interval,
            margin: config.margin,
            check_every: config.check_every,
            keep: config.keep,
            max_age: config.max_age,
            anonymity: config.anonymity,
        }
    }
}

/// What a route's learning reads besides itself.
pub(crate) struct Context<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) settings: &'a ThreadSettings,
}

impl Context<'_> {
    pub(crate) fn route(&self, index: usize) -> &RouteShared {
        &self.shared.routes[index]
    }
}
