//! Dictionaries learned from the responses a service sends: sampled safely, built off the
//! request path, published and rotated without a restart, and shared by every instance.
//!
//! Nobody runs a training pipeline for API responses, and schemas drift. A [`Learner`] takes
//! samples of the routes it is told about, builds each route's dictionary with
//! [`DictionaryBuilder`](super::DictionaryBuilder) on its own thread once enough are in,
//! serves it at a URL naming its hash, and announces it with `Link: <url>;
//! rel="compression-dictionary"` on the route's responses (to browsers and clients naming an
//! older dictionary, that do not name it already: other API clients could not use it, and
//! the header costs bytes on every response); browsers fetch it, keep it (its
//! `Use-As-Dictionary` `match` is the route's pattern, its `id` a version) and name it on
//! later requests, which the compression layer then answers with `dcz` or `dcb`.
//!
//! # What may become a dictionary
//!
//! A dictionary is readable by every client that receives it, for as long as it keeps it
//! (30 days by default): whatever a sample holds, any client can read, and whoever can put
//! a string in many responses puts it in everyone's dictionary. Two rules keep a client's
//! own data out.
//!
//! **What a sample may be.** A response is a sample only if nothing says it is one client's:
//! a `GET` answered `2xx`, no `Authorization` or `Cookie` on the request and no credential
//! in its query ([`CREDENTIAL_QUERY_PARAMS`], e.g. RFC 6750's `access_token`; see
//! [`LearnerBuilder::credential_query_params`]), no `Set-Cookie` on the response, no `Vary`
//! naming a request header beyond `Accept-Encoding` and `Available-Dictionary` (a response
//! that varies on `X-Api-Key` is that key's), not `Cache-Control: private` or `no-store`,
//! not encoded already; a [filter](LearnerBuilder::filter) can refuse more. Only the routes
//! named are sampled, at the rate set, and every refusal is counted by its [`Refusal`].
//!
//! **What a dictionary may hold (k-anonymity).** Headers do not tell everything: a body can
//! carry the caller's address, a user name, a token. So every sample is kept with its
//! client (a [`ClientId`] or the peer's IP address, as a keyed hash), and before any build
//! the samples are cut to the runs that responses to several distinct clients held
//! ([`Anonymity`]: by default every byte a builder sees lies in a run of at least 16 bytes
//! that responses to at least 3 distinct clients held). Trained or raw, a dictionary is made
//! of those runs only. A value only one or two clients were sent never gets in, however
//! often they were sent it; a planted string needs 3 clients (addresses) to get in. Runs
//! side by side can still spell a short value whose every 16-byte piece other clients got
//! too (see [`Anonymity`]).
//!
//! Where no client is known, a response is refused ([`Refusal::UnknownClient`]): nothing is
//! published, a warning is logged once, and [`LearnedRouteStats::pending`] says why, as it
//! says how many distinct clients the samples come from and how many are needed.
//!
//! # What it costs a response
//!
//! A path match, a counter and two header lookups (is the client a browser, does it name a
//! dictionary: the ones announced to). A response taken as a sample keeps `Bytes` handles
//! to its frames as they pass (no copy, no delay: nothing is read ahead for it) and, when it
//! ends under the size bound, is handed to the learner's thread through a bounded queue
//! (dropped if the queue is full). Builds, checks and storage run on that thread, never on a
//! runtime worker.
//!
//! # Rotation and fleets
//!
//! Every `check_every` fresh samples (ones the dictionary never saw), the learner measures
//! what the current dictionary saves against plain zstd 3; when that falls more than the
//! margin below what it saved when built (the schema changed), it builds the next. The last
//! few stay usable for clients still holding them, then are retired, oldest first. With a
//! [storage](LearnerBuilder::storage) ([`DirStorage`], or `object_store` backends
//! with the `object-store` feature), each instance writes what it builds and loads what the
//! others built, polling at a bounded rate, so a request naming any published dictionary
//! gets dictionary compression on any instance; all agree on the newest (by version, then
//! hash).
//!
//! On S3 (or GCS, Azure: `object_store`'s `gcp`, `azure` features), every instance of the
//! fleet with the same bucket and prefix, polling every 10 s (this crate's `object-store`
//! feature, and `object_store` with its `aws` feature in the application's dependencies):
//!
//! ```ignore
//! use std::sync::Arc;
//! use object_store::aws::AmazonS3Builder;
//! use tower_gzip::dictionary::learn::{LearnedRoute, Learner, ObjectStorage};
//!
//! // Credentials and region from the environment (AWS_ACCESS_KEY_ID, AWS_REGION, ...).
//! let s3 = AmazonS3Builder::from_env().with_bucket_name("my-service-assets").build()?;
//! let learner = Learner::builder()
//!     .route(LearnedRoute::new("/api/items*"))
//!     .storage(ObjectStorage::new(Arc::new(s3), "compression-dictionaries")?)
//!     .build()?;
//! ```
//!
//! # Example
//!
//! ```
//! use axum::{Router, routing::get};
//! use tower::ServiceBuilder;
//! use tower_gzip::compression::CompressionLayer;
//! use tower_gzip::dictionary::learn::{LearnedRoute, Learner, DirStorage};
//!
//! let dir = std::env::temp_dir().join("tower-gzip-doc-learned");
//! let learner = Learner::builder()
//!     .route(LearnedRoute::new("/api/items*").sample_rate(0.5))
//!     .storage(DirStorage::new(&dir).unwrap())
//!     .build()
//!     .unwrap();
//! let app: Router = Router::new()
//!     .route("/api/items", get(|| async { r#"{"items":[]}"# }))
//!     // One `layer` call: axum clones and boxes a route's service per request and call.
//!     .layer(
//!         ServiceBuilder::new()
//!             .layer(CompressionLayer::new().dictionaries(learner.store()))
//!             .layer(learner.layer()),
//!     );
//! ```

mod anonymity;
mod body;
#[cfg(test)]
mod churn;
mod client;
mod config;
mod layer;
mod learner;
mod names;
mod pattern;
mod publish;
mod route;
mod safety;
mod samples;
mod service;
mod shared;
mod stats;
mod storage;
#[cfg(test)]
mod tests;
mod worker;

use std::fmt;

pub use anonymity::Anonymity;
pub use client::ClientId;
pub use config::{LearnedRoute, LearnerBuilder};
pub use layer::LearnLayer;
pub use learner::Learner;
pub use safety::{CREDENTIAL_QUERY_PARAMS, Refusal};
pub use stats::{CurrentDictionary, LearnPhase, LearnedRouteStats};
// The storage trait and its backends (`ObjectStorage` with the `object-store` feature).
pub use storage::*;

/// Why a learner could not be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum LearnError {
    /// A route's pattern is not a path pattern this crate reads (see [`LearnedRoute::new`]).
    Pattern(String),
    /// Another setting is wrong (no routes, a URL prefix that is not a path).
    Config(String),
    /// The learner's thread could not be started.
    Io(std::io::Error),
}

impl fmt::Display for LearnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LearnError::Pattern(why) | LearnError::Config(why) => f.write_str(why),
            LearnError::Io(e) => write!(f, "learner thread: {e}"),
        }
    }
}

impl std::error::Error for LearnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LearnError::Io(e) => Some(e),
            _ => None,
        }
    }
}
