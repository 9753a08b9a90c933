//! `GET /metrics`: Prometheus text that a strict parser accepts, whose counters move with
//! the requests the demo serves.

use std::time::{Duration, Instant};

use http::{StatusCode, header};
use tower_gzip::telemetry::{
    BYTES_IN, BYTES_OUT, LEVEL, POOL_IDLE, POOL_IN_USE, RATIO, RESPONSES, SECONDS, SKIPPED,
};

use super::prometheus::{Exposition, Kind, parse};
use super::{Reply, Server, get};

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

#[tokio::test]
async fn metrics_are_prometheus_text_and_follow_the_requests() {
    let server = Server::start(&[]);
    let (reply, before) = scrape(&server, "gzip").await;
    let content_type = reply.headers[header::CONTENT_TYPE].to_str().unwrap();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    assert_eq!(before.kind(RESPONSES), Some(Kind::Counter));
    assert_eq!(before.kind(POOL_IN_USE), Some(Kind::Gauge));
    assert_eq!(before.value(LEVEL, &[("coding", "gzip")]), Some(6.0));
    assert!(before.families[RESPONSES].help.is_some(), "described");

    let gzip = [("coding", "gzip")];
    let count = |m: &Exposition, name: &str, labels: &[(&str, &str)]| m.value_or_zero(name, labels);
    let (responses, bytes_in) = (
        count(&before, RESPONSES, &gzip),
        count(&before, BYTES_IN, &gzip),
    );
    let timed = count(&before, &format!("{SECONDS}_count"), &gzip);
    let too_small = count(&before, SKIPPED, &[("reason", "size")]);
    let images = count(&before, SKIPPED, &[("reason", "type")]);
    let identity = count(&before, SKIPPED, &[("reason", "identity")]);
    // The first scrape is counted after it rendered: gzip, its own bytes.
    assert_eq!(reply.encoding(), Some("gzip"));
    let mut sent = reply.decoded().len();
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

    let after = scrape_until(&server, |m| {
        count(m, BYTES_IN, &gzip) >= bytes_in + sent as f64
    })
    .await;
    assert_eq!(count(&after, RESPONSES, &gzip), responses + 4.0);
    assert_eq!(count(&after, BYTES_IN, &gzip), bytes_in + sent as f64);
    assert!(count(&after, BYTES_OUT, &gzip) > count(&before, BYTES_OUT, &gzip));
    assert_eq!(
        count(&after, &format!("{SECONDS}_count"), &gzip),
        timed + 4.0
    );
    assert!(count(&after, &format!("{RATIO}_count"), &gzip) >= 4.0);
    assert_eq!(
        count(&after, SKIPPED, &[("reason", "size")]),
        too_small + 1.0
    );
    assert_eq!(count(&after, SKIPPED, &[("reason", "type")]), images + 1.0);
    // And the scrapes that asked for identity before the last.
    assert!(count(&after, SKIPPED, &[("reason", "identity")]) >= identity + 1.0);
    assert_eq!(
        after.kind(SECONDS),
        Some(Kind::Histogram),
        "buckets set by the demo"
    );
    // The pool's gauges are taken at the scrape: nothing is mid-stream now.
    let compressors = [("kind", "compressors")];
    assert_eq!(after.value(POOL_IN_USE, &compressors), Some(0.0));
    assert!(
        after.value(POOL_IDLE, &compressors).unwrap() >= 1.0,
        "a stream's state went back"
    );
}
