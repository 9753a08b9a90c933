//! The strict parser the metric tests rely on: it reads good text and rejects bad text.

use crate::prometheus::{Kind, parse};

const GOOD: &str = r#"# HELP http_requests_total Requests, with a \\ and a \n in the help.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027 1395066363000
http_requests_total{method="post",code="400"} 3
# TYPE temperature gauge
temperature -3.5e1
# A comment.
# TYPE latency_seconds histogram
latency_seconds_bucket{route="/",le="0.1"} 2
latency_seconds_bucket{route="/",le="1"} 5
latency_seconds_bucket{route="/",le="+Inf"} 6
latency_seconds_sum{route="/"} 7.25
latency_seconds_count{route="/"} 6
# TYPE rpc summary
rpc{quantile="0.5"} 0.01
rpc_sum 1.5
rpc_count 9
escaped{path="a\"b\\c\nd"} NaN
"#;

#[test]
fn reads_a_well_formed_exposition() {
    let text = parse(GOOD).unwrap();
    assert_eq!(text.kind("http_requests_total"), Some(Kind::Counter));
    assert_eq!(text.kind("latency_seconds"), Some(Kind::Histogram));
    assert_eq!(text.kind("escaped"), Some(Kind::Untyped));
    let help = text.families["http_requests_total"].help.as_deref();
    assert_eq!(help, Some("Requests, with a \\ and a \n in the help."));
    assert_eq!(
        text.value("http_requests_total", &[("code", "400")]),
        Some(3.0)
    );
    assert_eq!(text.value("temperature", &[]), Some(-35.0));
    assert_eq!(
        text.value("latency_seconds_count", &[("route", "/")]),
        Some(6.0)
    );
    let sample = &text.families["escaped"].samples[0];
    assert_eq!(sample.labels["path"], "a\"b\\c\nd");
}

#[test]
fn rejects_what_a_scraper_would_reject() {
    let bad = [
        ("a name with a dash", "bad-name 1\n"),
        ("no value", "x{a=\"b\"}\n"),
        ("a bad value", "x 1O\n"),
        ("an unquoted label", "x{a=b} 1\n"),
        ("an unterminated label", "x{a=\"b} 1\n"),
        ("a bad escape", "x{a=\"\\t\"} 1\n"),
        ("a label twice", "x{a=\"1\",a=\"2\"} 1\n"),
        ("an unknown type", "# TYPE x countr\nx 1\n"),
        ("TYPE after samples", "x 1\n# TYPE x counter\n"),
        ("a negative counter", "# TYPE x counter\nx -1\n"),
        ("a repeated sample", "x{a=\"1\"} 1\nx{a=\"1\"} 2\n"),
        ("a family split", "x 1\ny 1\nx{a=\"1\"} 2\n"),
        (
            "buckets going down",
            "# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"+Inf\"} 4\nh_sum 1\nh_count 4\n",
        ),
        (
            "no +Inf bucket",
            "# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_sum 1\nh_count 5\n",
        ),
        (
            "a count that disagrees",
            "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 5\nh_sum 1\nh_count 4\n",
        ),
        ("HELP twice", "# HELP x one\n# HELP x two\nx 1\n"),
        ("trailing fields", "x 1 2 3\n"),
    ];
    for (why, text) in bad {
        assert!(parse(text).is_err(), "accepted {why}: {text:?}");
    }
}
