//! What a learner is told: the routes it samples ([`LearnedRoute`]) and how it builds,
//! publishes, rotates and shares their dictionaries ([`LearnerBuilder`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::{request, response};

use super::anonymity::Anonymity;
use super::client::{ClientFn, ClientId};
use super::safety::CREDENTIAL_QUERY_PARAMS;
use super::storage::DictionaryStorage;
use super::{LearnError, Learner};
use crate::dictionary::DictionaryStore;

/// A route whose responses may become a dictionary: a `match` pattern (a path where `*`
/// stands for any run of characters, e.g. `/api/items*`), sent as the dictionary's
/// `Use-As-Dictionary` `match`, and how its samples are taken.
///
/// Defaults: one response in 4 considered (`sample_rate(0.25)`), at most 100 samples a
/// second after a first burst of `min_samples` (`max_samples_per_second(100.0)`), at most
/// 1,024 samples and
/// 4 MiB kept (oldest out first), samples up to 256 KiB each, a build once 200 samples are
/// in, dictionaries up to 64 KiB, the builder's default CPU budget.
#[derive(Clone, Debug)]
pub struct LearnedRoute {
    pub(crate) pattern: String,
    pub(crate) sample_rate: f64,
    pub(crate) per_second: f64,
    pub(crate) max_samples: usize,
    pub(crate) max_sample_bytes: usize,
    pub(crate) max_sample_len: usize,
    pub(crate) min_samples: usize,
    pub(crate) max_dictionary_size: usize,
    /// The builder's CPU budgets, `dcz`'s then `dcb`'s.
    pub(crate) cpu_budget: (f64, f64),
}

impl LearnedRoute {
    /// The route of responses whose path matches `pattern` (checked when the learner is
    /// built: it starts with `/` and has no URL Pattern syntax but `*`).
    pub fn new(pattern: impl Into<String>) -> Self {
        LearnedRoute {
            pattern: pattern.into(),
            sample_rate: 0.25,
            per_second: 100.0,
            max_samples: 1024,
            max_sample_bytes: 4 << 20,
            max_sample_len: 256 << 10,
            min_samples: 200,
            max_dictionary_size: 64 << 10,
            cpu_budget: (2.0, 1.3),
        }
    }

    /// The share of responses considered as samples, from 0 (none) to 1 (all): every
    /// `1/rate`-th, counted, not drawn at random.
    pub fn sample_rate(mut self, rate: f64) -> Self {
        self.sample_rate = if rate.is_nan() {
            0.0
        } else {
            rate.clamp(0.0, 1.0)
        };
        self
    }

    /// The most samples taken per second, after a burst of [`min_samples`](Self::min_samples)
    /// (or `per_second`, if larger): the learner's work (copying, checking) then stays the
    /// same whatever the traffic, while the first dictionary still comes within the first
    /// responses. Under load, a share of the traffic alone would take thousands a second for
    /// a learner that keeps a thousand, and cost throughput (BENCHMARKS.md, "Learning under
    /// load").
    #[cfg(test)]
    pub(crate) fn max_samples_per_second(mut self, per_second: f64) -> Self {
        self.per_second = if per_second.is_nan() {
            0.0
        } else {
            per_second.max(0.0)
        };
        self
    }

    /// The longest response taken as a sample; a longer one (by `Content-Length`, or once
    /// its body grows past it) is passed through untouched and not kept.
    #[cfg(test)]
    pub(crate) fn max_sample_len(mut self, bytes: usize) -> Self {
        self.max_sample_len = bytes;
        self
    }

    /// How many fresh samples a build waits for (at least 16: the builder's minimum).
    #[cfg(test)]
    pub(crate) fn min_samples(mut self, count: usize) -> Self {
        self.min_samples = count.max(16);
        self
    }

    /// The CPU the dictionary's levels may cost per response, as the builder's
    /// [`cpu_budget`](crate::dictionary::DictionaryBuilder::cpu_budget) (default 2.0x plain
    /// zstd 3 for `dcz`, 1.3x plain br for `dcb`): a larger budget lets it pick denser
    /// levels, which pays on small responses.
    pub fn cpu_budget(mut self, dcz: f64, dcb: f64) -> Self {
        self.cpu_budget = (dcz, dcb);
        self
    }

    /// The largest dictionary built (default 64 KiB; a client fetches it once, compressed).
    /// Within it, the builder's objective chooses the size: the dictionary as served plus
    /// the responses a client gets with it
    /// ([`responses_per_client`](crate::dictionary::DictionaryBuilder::responses_per_client),
    /// its default).
    pub fn max_dictionary_size(mut self, bytes: usize) -> Self {
        self.max_dictionary_size = bytes;
        self
    }
}

/// Refuses samples beyond the built-in rules: given the request's method, URI, version and
/// headers (no extensions) and the response's head.
pub(crate) type Filter = Arc<dyn Fn(&request::Parts, &response::Parts) -> bool + Send + Sync>;

/// Configures a [`Learner`]; see [`Learner::builder`].
#[derive(Clone)]
pub struct LearnerBuilder {
    pub(crate) routes: Vec<LearnedRoute>,
    pub(crate) filter: Option<Filter>,
    pub(crate) client: Option<ClientFn>,
    pub(crate) anonymity: Anonymity,
    pub(crate) credentials: Vec<String>,
    pub(crate) url_prefix: String,
    pub(crate) storage: Option<Arc<dyn DictionaryStorage>>,
    pub(crate) poll_interval: Duration,
    pub(crate) margin: f64,
    pub(crate) check_every: usize,
    pub(crate) keep: usize,
    pub(crate) store: Option<DictionaryStore>,
    pub(crate) max_age: Duration,
}

impl Default for LearnerBuilder {
    fn default() -> Self {
        LearnerBuilder {
            routes: Vec::new(),
            filter: None,
            client: None,
            anonymity: Anonymity::default(),
            credentials: CREDENTIAL_QUERY_PARAMS
                .iter()
                .map(|c| c.to_string())
                .collect(),
            url_prefix: "/.well-known/dictionaries/".into(),
            storage: None,
            poll_interval: Duration::from_secs(10),
            margin: 0.10,
            check_every: 100,
            keep: 3,
            store: None,
            max_age: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

impl LearnerBuilder {
    /// Learns a dictionary for `route`.
    pub fn route(mut self, route: LearnedRoute) -> Self {
        self.routes.push(route);
        self
    }

    /// A filter that can refuse more samples than the built-in rules do (counted as
    /// [`Refusal::Filter`](super::Refusal::Filter)): return `false` for responses that
    /// must never be read by other clients.
    pub fn filter<F>(mut self, filter: F) -> Self
    where
        F: Fn(&request::Parts, &response::Parts) -> bool + Send + Sync + 'static,
    {
        self.filter = Some(Arc::new(filter));
        self
    }

    /// Reads which client a request came from, for k-anonymity (see
    /// [`anonymity`](Self::anonymity)); when it returns `None`, the learner reads a
    /// [`ClientId`] or a `std::net::SocketAddr` from the request's extensions (a hyper
    /// server inserts the peer's address itself). Requests no client is known for are
    /// refused ([`Refusal::UnknownClient`](super::Refusal::UnknownClient)): with none known,
    /// nothing is published.
    ///
    /// With axum, serve the router with `into_make_service_with_connect_info::<SocketAddr>()`:
    /// every request then carries `ConnectInfo<SocketAddr>` (the TCP peer's address) in its
    /// extensions. Behind a proxy that is the proxy's address: read the client from a header
    /// the proxy sets instead, never from one a client can set.
    ///
    /// ```
    /// use std::net::SocketAddr;
    /// use axum::{Router, extract::ConnectInfo, routing::get};
    /// use tower_gzip::dictionary::learn::{ClientId, LearnedRoute, Learner};
    ///
    /// let learner = Learner::builder()
    ///     .route(LearnedRoute::new("/api/items*"))
    ///     .client(|parts| {
    ///         let ConnectInfo(addr) = parts.extensions.get::<ConnectInfo<SocketAddr>>()?;
    ///         Some(ClientId::from(*addr))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let app: Router = Router::new()
    ///     .route("/api/items", get(|| async { "[]" }))
    ///     .layer(learner.layer());
    /// let make_service = app.into_make_service_with_connect_info::<SocketAddr>();
    /// # let _ = make_service;
    /// // axum::serve(listener, make_service).await
    /// ```
    pub fn client<F>(mut self, read: F) -> Self
    where
        F: Fn(&request::Parts) -> Option<ClientId> + Send + Sync + 'static,
    {
        self.client = Some(Arc::new(read));
        self
    }

    /// What a dictionary's content must have in common across clients (default
    /// [`Anonymity::default`]: runs of 16 bytes or more, each sent to 3 distinct clients or
    /// more). Samples are cut to such runs before any build; until samples from that many
    /// clients are in, nothing is published.
    pub fn anonymity(mut self, anonymity: Anonymity) -> Self {
        self.anonymity = anonymity;
        self
    }

    /// The query parameter names whose presence refuses a request's response as a sample
    /// ([`Refusal::QueryCredential`](super::Refusal::QueryCredential)), replacing
    /// [`CREDENTIAL_QUERY_PARAMS`](super::CREDENTIAL_QUERY_PARAMS); compared without case
    /// after percent-decoding. Extend the default with
    /// `CREDENTIAL_QUERY_PARAMS.iter().copied().chain(["my_token"])`.
    pub fn credential_query_params<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.credentials = names
            .into_iter()
            .map(|n| n.as_ref().to_ascii_lowercase())
            .collect();
        self
    }

    /// Where dictionaries are served: `<prefix><sha-256 in hex>` (default
    /// `/.well-known/dictionaries/`). The learner's layer answers these paths itself.
    pub fn url_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.url_prefix = prefix.into();
        self
    }

    /// Persists dictionaries in `storage` and loads what other instances published there,
    /// every [`poll_interval`](Self::poll_interval). Without it each instance learns alone.
    pub fn storage(mut self, storage: impl DictionaryStorage) -> Self {
        self.storage = Some(Arc::new(storage));
        self
    }

    /// How often the storage is listed for other instances' dictionaries (default 10 s):
    /// one `list` per route and a `get` per dictionary not seen yet.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// How many fresh samples pass between two checks of the current dictionary's savings
    /// (default 100).
    #[cfg(test)]
    pub(crate) fn check_every(mut self, samples: usize) -> Self {
        self.check_every = samples.max(1);
        self
    }

    /// How many dictionaries each route keeps usable (default 3): the current one and the
    /// latest before it, for clients that still hold those. Older ones are retired.
    #[cfg(test)]
    pub(crate) fn keep(mut self, count: usize) -> Self {
        self.keep = count.max(1);
        self
    }

    /// The store the dictionaries go into (default: a new one sized for every route's kept
    /// dictionaries). Give the same store to the compression layer.
    pub fn store(mut self, store: DictionaryStore) -> Self {
        self.store = Some(store);
        self
    }

    /// How long browsers keep a dictionary (default 30 days; `Cache-Control: max-age`).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Checks the routes and starts the learner's thread (named `tower-gzip-learner`),
    /// which builds and loads dictionaries off the request path.
    pub fn build(self) -> Result<Learner, LearnError> {
        Learner::start(self)
    }
}

impl fmt::Debug for LearnerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LearnerBuilder")
            .field("routes", &self.routes)
            .field("filter", &self.filter.is_some())
            .field("client", &self.client.is_some())
            .field("anonymity", &self.anonymity)
            .field("credentials", &self.credentials)
            .field("url_prefix", &self.url_prefix)
            .field("storage", &self.storage)
            .field("poll_interval", &self.poll_interval)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}
