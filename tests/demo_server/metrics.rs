//! `GET /metrics`: Prometheus text that a strict parser accepts, whose counters move with
//! the requests the demo serves.

use std::time::{Duration, Instant};

use http::{StatusCode, header};

use super::prometheus::{Exposition, Kind, parse};
use super::{Reply, Server, get};

// The public metric names, written out: a rename breaks dashboards.
const BYTES_IN: &str = "tower_gzip_bytes_in_total";
const BYTES_OUT: &str = "tower_gzip_bytes_out_total";
const LEVEL: &str = "tower_gzip_level";
const POOL_IDLE: &str = "tower_gzip_pool_idle";
const POOL_IN_USE: &str = "tower_gzip_pool_in_use";
const RATIO: &str = "tower_gzip_compression_ratio";
const RESPONSES: &str = "tower_gzip_responses_total";
const SECONDS: &str = "tower_gzip_compression_seconds";
const SKIPPED: &str = "tower_gzip_skipped_total";

/// `/metrics`, parsed; `accept` is the scrape's `Accept-Encoding` (Prometheus sends gzip).
async fn scrape(server: &Server, accept: &str) -> (Reply, Exposition) {
    let reply = get(&server.url("/metrics"), accept).await;
    assert_eq!(reply.status, StatusCode::OK);
    let text = String::from_utf8(reply.decoded()).expect("UTF-8");
    let parsed = parse(&text).unwrap_or_else(|why| panic!("{why}\n{text}"));
    (reply, parsed)
}

/// Scrapes until `done` holds (bytes are counted when the server drops each body, which can
/// be just after the client has it all), or 5 s have passed.
async fn scrape_until(server: &Server, done: impl Fn(&Exposition) -> bool) -> Exposition {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, m) = scrape(server, "identity").await;
        if done(&m) || Instant::now() > deadline {
            return m;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The first scrape, before anything else was served: well formed, described, the levels
/// in force.
async fn first_scrape(server: &Server) -> (Reply, Exposition) {
    let (reply, m) = scrape(server, "gzip").await;
    let content_type = reply.headers[header::CONTENT_TYPE].to_str().unwrap();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    assert_eq!(m.kind(RESPONSES), Some(Kind::Counter));
    assert_eq!(m.kind(POOL_IN_USE), Some(Kind::Gauge));
    assert_eq!(
        m.kind(SECONDS),
        Some(Kind::Histogram),
        "buckets set by the demo"
    );
    assert_eq!(m.value(LEVEL, &[("coding", "gzip")]), Some(6.0));
    assert!(m.families[RESPONSES].help.is_some(), "described");
    (reply, m)
}

/// Three gzip responses, one too small, an image and one for identity: the bytes of the
/// gzip ones, decoded.
async fn some_requests(server: &Server) -> usize {
    let mut sent = 0;
    for n in [50, 500, 2000] {
        let reply = get(&server.url(&format!("/api/items?n={n}")), "gzip").await;
        assert_eq!(reply.encoding(), Some("gzip"));
        sent += reply.decoded().len();
    }
    assert_eq!(
        get(&server.url("/api/items?n=1"), "gzip").await.encoding(),
        None
    );
    assert_eq!(
        get(&server.url("/image.png"), "gzip").await.encoding(),
        None
    );
    assert_eq!(
        get(&server.url("/api/items?n=500"), "identity")
            .await
            .encoding(),
        None
    );
    sent
}

#[tokio::test]
async fn metrics_are_prometheus_text_and_follow_the_requests() {
    let server = Server::start(&[]);
    let (reply, before) = first_scrape(&server).await;
    let gzip = [("coding", "gzip")];
    let count = |m: &Exposition, name: &str, labels: &[(&str, &str)]| m.value_or_zero(name, labels);
    let skipped = |m: &Exposition, reason: &str| count(m, SKIPPED, &[("reason", reason)]);
    let timed = |m: &Exposition| count(m, &format!("{SECONDS}_count"), &gzip);
    // The first scrape is counted after it rendered: gzip, its own bytes.
    assert_eq!(reply.encoding(), Some("gzip"));
    let sent = reply.decoded().len() + some_requests(&server).await;
    let bytes_in = count(&before, BYTES_IN, &gzip) + sent as f64;

    let after = scrape_until(&server, |m| count(m, BYTES_IN, &gzip) >= bytes_in).await;
    assert_eq!(
        count(&after, RESPONSES, &gzip),
        count(&before, RESPONSES, &gzip) + 4.0
    );
    assert_eq!(count(&after, BYTES_IN, &gzip), bytes_in);
    assert!(count(&after, BYTES_OUT, &gzip) > count(&before, BYTES_OUT, &gzip));
    assert_eq!(timed(&after), timed(&before) + 4.0);
    assert!(count(&after, &format!("{RATIO}_count"), &gzip) >= 4.0);
    assert_eq!(skipped(&after, "size"), skipped(&before, "size") + 1.0);
    assert_eq!(skipped(&after, "type"), skipped(&before, "type") + 1.0);
    // And the scrapes that asked for identity before the last.
    assert!(skipped(&after, "identity") >= skipped(&before, "identity") + 1.0);
    // The pool's gauges are taken at the scrape: nothing is mid-stream now.
    let compressors = [("kind", "deflate_compressors")];
    assert_eq!(after.value(POOL_IN_USE, &compressors), Some(0.0));
    assert!(
        after.value(POOL_IDLE, &compressors).unwrap() >= 1.0,
        "a stream's state went back"
    );
}
