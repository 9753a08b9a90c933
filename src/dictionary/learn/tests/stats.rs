//! What a learner's stats say in words: a build that cannot succeed says why, refusals are
//! named, the hash is hex.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};

use super::wait_for;
use crate::dictionary::learn::*;

/// A route that answers one fixed body: nothing to learn from, as the README once showed.
#[tokio::test]
async fn a_build_that_cannot_succeed_says_why_in_the_stats() {
    let route = LearnedRoute::new("/api/items*")
        .sample_rate(1.0)
        .max_samples_per_second(f64::INFINITY)
        .min_samples(20);
    let learner = Learner::builder().route(route).build().unwrap();
    let fixed = service_fn(|_: Request<Full<Bytes>>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
            br#"[{"id":1,"name":"widget"}]"#,
        ))))
    });
    let svc = learner.layer().layer(fixed);
    for i in 0..40 {
        let res = svc
            .clone()
            .oneshot(super::from(i % 4, "/api/items"))
            .await
            .unwrap();
        res.into_body().collect().await.unwrap();
    }
    let post = Request::post("/api/items").body(Full::default()).unwrap();
    svc.clone()
        .oneshot(post)
        .await
        .unwrap()
        .into_body()
        .collect()
        .await
        .unwrap();
    wait_for(&learner, "a failed build", |s| s.failed_builds > 0);
    let stats = learner.stats().remove(0);
    let why = stats.last_failure.clone().expect("the failure, in words");
    assert!(why.contains("distinct"), "{why}");
    let shown = format!("{stats:?}");
    assert!(shown.contains("\"method\": 1"), "{shown}");
    assert!(shown.contains(&why), "{shown}");
}
