//! `GET /metrics`: the compression layer's metrics in Prometheus text format, through the
//! `metrics` facade and `metrics-exporter-prometheus` (see `tower_gzip::telemetry`).

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tower_gzip::CodecPool;
use tower_gzip::telemetry::{self, RATIO_BUCKETS, SECONDS_BUCKETS};

use crate::AppState;

/// Installs the Prometheus recorder as the process's `metrics` recorder, with buckets for
/// the layer's histograms (without them the exporter renders summaries). Called before the
/// layer serves: it registers its handles with the recorder installed at its first response.
pub fn install() -> Result<PrometheusHandle, Box<dyn std::error::Error>> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full("tower_gzip_compression_seconds".into()),
            SECONDS_BUCKETS,
        )?
        .set_buckets_for_metric(
            Matcher::Full("tower_gzip_compression_ratio".into()),
            RATIO_BUCKETS,
        )?
        .install_recorder()?;
    Ok(handle)
}

/// The pool's gauges are a snapshot taken at the scrape; the layer's counters and histograms
/// are published as responses go.
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    telemetry::publish_pool(CodecPool::global());
    if let Some((cache, _)) = &state.cache {
        telemetry::publish_cache(cache);
    }
    let content_type = "text/plain; version=0.0.4; charset=utf-8";
    (
        [(header::CONTENT_TYPE, content_type)],
        state.metrics.render(),
    )
}
