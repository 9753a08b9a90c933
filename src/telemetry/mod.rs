//! What the compression layer tells about its work: `tracing` events per response, and with
//! the `metrics` cargo feature, counters, gauges and histograms through the [`metrics`
//! facade](https://docs.rs/metrics) under the names below. The table of every event field
//! and metric, with examples, is `docs/telemetry.md` in the repository.
//!
//! # Events
//!
//! Every response through a [`CompressionLayer`](crate::compression::CompressionLayer) makes
//! one event at `DEBUG` level with the target `tower_gzip::compression` (`RUST_LOG=tower_gzip::compression=debug`):
//!
//! - `compressed`, with `coding`, `level`, `bytes_in`, `bytes_out`, `elapsed_us` (time spent
//!   compressing), `streamed` and `complete` (`false` for a stream that failed or was dropped
//!   before its end). A body known in full reports when it is compressed; a stream when it
//!   ends.
//! - `not compressed`, with `reason`: a [`crate::compression::SkipReason`]'s
//!   name (its `Display`).
//!
//! A request that names a dictionary (RFC 9842) adds a `dictionary` event with its
//! `outcome` (`hit`, `unknown`, `refused`, `not_offered`), and an encoder that fails on a body
//! known in full adds `encoder failed`, with the `coding`, the `error` and the `fallback`.
//!
//! The fields are values, not text: with no subscriber interested in the target at `DEBUG`,
//! an event costs a check of a cached flag, and compression time is not measured at all
//! (unless the `metrics` feature is on).
//!
//! # Metrics
//!
//! The layer publishes its counters and histograms as each response is decided and as its
//! body ends, through handles it registers once with the recorder installed then: at
//! `CompressionLayer::publish_metrics` (which also publishes its levels, and makes every
//! series show at zero from the start), or else at its first response. So install the
//! recorder (such as `metrics-exporter-prometheus`) first. The pool's gauges are a snapshot
//! the application publishes when it is scraped, with `publish_pool`: a `/metrics` handler
//! calls it before rendering, so the hot path pays nothing for them and the values are
//! exact at the scrape (`publish_cache` likewise for a cache). The load governor sets the
//! level gauges as it moves levels. (These, and `describe`, come with the feature.)
//!
//! The histograms are plain observations; an exporter that needs buckets can use
//! [`SECONDS_BUCKETS`] and [`RATIO_BUCKETS`].
//!
//! The metric names, their labels and what each counts are listed in the telemetry guide
//! (`docs/telemetry.md`, shipped in `guide`).
//!
//! ```
//! # #[cfg(feature = "metrics")] {
//! use tower_gzip::CodecPool;
//! use tower_gzip::telemetry;
//!
//! // In the application's `/metrics` handler, before rendering:
//! telemetry::publish_pool(CodecPool::global());
//! # }
//! ```

#[cfg(feature = "metrics")]
mod handles;
pub(crate) mod outcome;
#[cfg(feature = "metrics")]
mod publish;

#[cfg(feature = "metrics")]
pub use publish::{publish_cache, publish_pool};
#[cfg(feature = "metrics")]
pub(crate) use {handles::Handles, publish::publish_level};

pub(crate) use outcome::{DictionaryOutcome, ResponseTally, SkipReason};

/// The `tracing` target of the compression layer's events.
pub(crate) const TARGET: &str = "tower_gzip::compression";

/// Bucket bounds for `tower_gzip_compression_seconds`, from 10 µs (a small body known in full) to 10 s (a long
/// stream's total).
pub const SECONDS_BUCKETS: &[f64] = &[
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 1.0, 2.5, 10.0,
];

/// Bucket bounds for `tower_gzip_compression_ratio`: the smaller, the better; above 1, encoding grew the body.
pub const RATIO_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
];
