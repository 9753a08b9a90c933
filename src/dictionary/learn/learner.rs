//! [`Learner`]: the handle the layer, the application and the learner's thread share.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use http::{HeaderMap, Method, Response};
use http_body_util::Full;
use tower_service::Service;

use super::client::Clients;
use super::config::LearnerBuilder;
use super::layer::LearnLayer;
use super::shared::{RouteShared, Shared};
use super::stats::LearnedRouteStats;
use super::worker::{self, Taken};
use super::{LearnError, Refusal};
use crate::dictionary::DictionaryStore;

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
    samples: SyncSender<Taken>,
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
    /// assert_eq!(learner.stats()[0].pattern, "/api/items*");
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
            .map(RouteShared::new)
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
            clients: Clients::new(config.client.clone()),
            credentials: config.credentials.clone(),
            warned_unknown: AtomicBool::new(false),
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

    /// What it did, route by route, in the order the routes were added.
    pub fn stats(&self) -> Vec<LearnedRouteStats> {
        self.inner
            .shared
            .routes
            .iter()
            .map(|r| r.counters.stats(r.pattern.as_str()))
            .collect()
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
    pub(crate) fn send(&self, route: usize, client: u64, body: Bytes) {
        let counters = &self.shared().routes[route].counters;
        match self.inner.samples.try_send((route, client, body)) {
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
        let hash = crate::hex::parse_sha256(hex)?;
        let mut service = crate::sync::recover(self.shared().served.read())
            .get(&hash)?
            .clone();
        let mut request = http::Request::new(());
        *request.method_mut() = method.clone();
        *request.headers_mut() = headers.clone();
        let Ok(response) = service.call(request).into_inner();
        Some(response)
    }
}

impl fmt::Debug for Learner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Learner")
            .field("routes", &self.stats().len())
            .field("url_prefix", &self.shared().url_prefix)
            .field("store", &self.shared().store)
            .finish_non_exhaustive()
    }
}
