//! [`LearnLayer`]: a learner as a tower layer.

use tower_layer::Layer;

use super::Learner;
use super::service::LearnService;

/// Samples a learner's routes, announces their dictionaries and serves them; made by
/// [`Learner::layer`].
///
/// ```
/// use axum::{Router, routing::get};
/// use tower::ServiceBuilder;
/// use tower_gzip::compression::CompressionLayer;
/// use tower_gzip::dictionary::learn::{LearnedRoute, Learner};
///
/// let learner = Learner::builder()
///     .route(LearnedRoute::new("/api/items*"))
///     .build()
///     .unwrap();
/// let app: Router = Router::new()
///     .route("/api/items", get(|| async { r#"{"items":[]}"# }))
///     // Inside the compression layer, in the same `layer` call (axum boxes once a call).
///     .layer(
///         ServiceBuilder::new()
///             .layer(CompressionLayer::new().dictionaries(learner.store()))
///             .layer(learner.layer()),
///     );
/// ```
#[derive(Clone, Debug)]
pub struct LearnLayer {
    learner: Learner,
}

impl LearnLayer {
    pub(crate) fn new(learner: Learner) -> Self {
        LearnLayer { learner }
    }
}

impl<S> Layer<S> for LearnLayer {
    type Service = LearnService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        LearnService::new(inner, self.learner.clone())
    }
}
