//! With the `metrics` feature: what the layer and `telemetry::publish_*` publish, rendered
//! by `metrics-exporter-prometheus` and read back by a strict parser.

use bytes::Bytes;
use http::Response;
use http::header::CONTENT_TYPE;
use http_body_util::Full;
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use tower_gzip::compression::{CompressionLayer, SkipReason};
use tower_gzip::telemetry::{self, RATIO_BUCKETS, SECONDS_BUCKETS};

// The public names: a rename breaks dashboards, so these are written out.
const SECONDS: &str = "tower_gzip_compression_seconds";
const RATIO: &str = "tower_gzip_compression_ratio";
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};

use crate::prometheus::{Exposition, Kind, parse};
use crate::{body, get, respond, text};

/// A recorder with buckets for the layer's histograms, as an application would set it up.
fn recorder() -> (PrometheusRecorder, PrometheusHandle) {
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(SECONDS.into()), SECONDS_BUCKETS)
        .unwrap()
        .set_buckets_for_metric(Matcher::Full(RATIO.into()), RATIO_BUCKETS)
        .unwrap()
        .build_recorder();
    let handle = recorder.handle();
    (recorder, handle)
}

fn scrape(handle: &PrometheusHandle, layer: &CompressionLayer, pool: &CodecPool) -> Exposition {
    telemetry::publish_pool(pool);
    layer.publish_metrics();
    let text = handle.render();
    parse(&text).unwrap_or_else(|why| panic!("{why}\n{text}"))
}

async fn serve(layer: &CompressionLayer, accept: &str, res: Response<Full<Bytes>>) -> usize {
    body(respond(layer, get(Some(accept)), res).await)
        .await
        .len()
}

#[tokio::test]
async fn every_series_shows_from_the_start_with_the_levels() {
    let (recorder, handle) = recorder();
    let _local = metrics::set_default_local_recorder(&recorder);
    let pool = CodecPool::new();
    let layer = CompressionLayer::new()
        .pool(pool.clone())
        .level(ContentCoding::Gzip, CompressionLevel::Precise(4));
    let m = scrape(&handle, &layer, &pool);
    assert_eq!(m.kind("tower_gzip_responses_total"), Some(Kind::Counter));
    assert_eq!(m.kind("tower_gzip_skipped_total"), Some(Kind::Counter));
    assert_eq!(m.kind(SECONDS), Some(Kind::Histogram));
    assert_eq!(m.kind(RATIO), Some(Kind::Histogram));
    assert_eq!(m.kind("tower_gzip_pool_in_use"), Some(Kind::Gauge));
    assert_eq!(m.kind("tower_gzip_level"), Some(Kind::Gauge));
    assert!(
        m.families["tower_gzip_responses_total"].help.is_some(),
        "described"
    );
    for coding in ContentCoding::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(["identity"])
    {
        let labels = [("coding", coding)];
        assert_eq!(
            m.value("tower_gzip_responses_total", &labels),
            Some(0.0),
            "{coding}"
        );
    }
    for reason in SkipReason::ALL {
        let name = reason.to_string();
        let labels = [("reason", name.as_str())];
        assert_eq!(
            m.value("tower_gzip_skipped_total", &labels),
            Some(0.0),
            "{reason:?}"
        );
    }
    assert_eq!(
        m.value("tower_gzip_level", &[("coding", "gzip")]),
        Some(4.0)
    );
    assert_eq!(
        m.value("tower_gzip_level", &[("coding", "deflate")]),
        Some(6.0)
    );
    #[cfg(feature = "zstd")]
    assert_eq!(
        m.value("tower_gzip_level", &[("coding", "zstd")]),
        Some(3.0)
    );
    assert_eq!(
        m.value("tower_gzip_br_streams", &[("state", "active")]),
        Some(0.0)
    );
}

#[tokio::test]
async fn counters_and_histograms_follow_the_responses() {
    let (recorder, handle) = recorder();
    let _local = metrics::set_default_local_recorder(&recorder);
    let pool = CodecPool::new();
    let layer = CompressionLayer::new().pool(pool.clone());
    let full = |n| Response::new(Full::new(text(n)));
    let out = serve(&layer, "gzip", full(4000)).await + serve(&layer, "gzip", full(200_000)).await;
    serve(&layer, "gzip", full(100)).await;
    let mut image = full(4000);
    image
        .headers_mut()
        .insert(CONTENT_TYPE, "image/png".parse().unwrap());
    serve(&layer, "gzip", image).await;

    let m = scrape(&handle, &layer, &pool);
    let gzip = [("coding", "gzip")];
    assert_eq!(m.value("tower_gzip_responses_total", &gzip), Some(2.0));
    assert_eq!(
        m.value("tower_gzip_responses_total", &[("coding", "identity")]),
        Some(2.0)
    );
    assert_eq!(
        m.value("tower_gzip_skipped_total", &[("reason", "size")]),
        Some(1.0)
    );
    assert_eq!(
        m.value("tower_gzip_skipped_total", &[("reason", "type")]),
        Some(1.0)
    );
    assert_eq!(m.value("tower_gzip_bytes_in_total", &gzip), Some(204_000.0));
    assert_eq!(
        m.value("tower_gzip_bytes_out_total", &gzip),
        Some(out as f64)
    );
    assert_eq!(m.value(&format!("{SECONDS}_count"), &gzip), Some(2.0));
    assert_eq!(m.value(&format!("{RATIO}_count"), &gzip), Some(2.0));
    let ratio_sum = m.value(&format!("{RATIO}_sum"), &gzip).unwrap();
    assert!(ratio_sum > 0.0 && ratio_sum < 1.0, "{ratio_sum}");
    let compressors = [("kind", "deflate_compressors")];
    assert_eq!(m.value("tower_gzip_pool_in_use", &compressors), Some(0.0));
    assert_eq!(m.value("tower_gzip_pool_idle", &compressors), Some(1.0));
    assert_eq!(m.value("tower_gzip_pool_parked", &compressors), Some(0.0));
    assert_eq!(
        m.value("tower_gzip_pool_created_total", &compressors),
        Some(1.0)
    );

    // More responses: the counters move by as much.
    serve(&layer, "gzip", full(4000)).await;
    serve(&layer, "identity", full(4000)).await;
    let later = scrape(&handle, &layer, &pool);
    assert_eq!(later.value("tower_gzip_responses_total", &gzip), Some(3.0));
    assert_eq!(
        later.value("tower_gzip_skipped_total", &[("reason", "identity")]),
        Some(1.0)
    );
    assert_eq!(
        later.value("tower_gzip_bytes_in_total", &gzip),
        Some(208_000.0)
    );
    assert_eq!(later.value(&format!("{SECONDS}_count"), &gzip), Some(3.0));
}

#[tokio::test]
async fn the_pool_gauges_show_states_held_now() {
    let (recorder, handle) = recorder();
    let _local = metrics::set_default_local_recorder(&recorder);
    let pool = CodecPool::new();
    let layer = CompressionLayer::new().pool(pool.clone());
    // A stream that has taken a compressor and not finished holds it.
    let res = respond(
        &layer,
        get(Some("gzip")),
        Response::new(Full::new(text(300_000))),
    )
    .await;
    let mut body = res.into_body();
    http_body_util::BodyExt::frame(&mut body)
        .await
        .unwrap()
        .unwrap();
    let m = scrape(&handle, &layer, &pool);
    assert_eq!(
        m.value("tower_gzip_pool_in_use", &[("kind", "deflate_compressors")]),
        Some(1.0)
    );
    drop(body);
    let m = scrape(&handle, &layer, &pool);
    assert_eq!(
        m.value("tower_gzip_pool_in_use", &[("kind", "deflate_compressors")]),
        Some(0.0)
    );
    assert_eq!(
        m.value("tower_gzip_responses_total", &[("coding", "gzip")]),
        Some(1.0)
    );
}
