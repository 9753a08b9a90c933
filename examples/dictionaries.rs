//! A dictionary learned from traffic (RFC 9842 `dcz`): the learner samples a route's
//! responses, builds its dictionary on its own thread and serves it; a client holding it
//! gets `dcz`, decoded here with the codec crate's one-shot decoder.
//!
//! `cargo run --example dictionaries`

use axum::{
    Router,
    body::{Body, to_bytes},
    extract::{ConnectInfo, Path},
    http::Request,
    routing::get,
};
use std::{net::SocketAddr, time::Duration};
use tower::{ServiceBuilder, ServiceExt};
use tower_gzip::dictionary::learn::{ClientId, LearnedRoute, Learner};
use tower_gzip::{ContentCoding, codec::OneShot, compression::CompressionLayer};

fn item(id: u32) -> String {
    let tags = r#""tags":["kitchen","garden","outdoor"],"shipping":{"days":3,"free":true}"#;
    let about = "A durable product for everyday use, shipped in recyclable packaging";
    format!(
        r#"{{"id":{id},"name":"item {id}","price":{{"eur":{}}},{tags},"about":"{about}"}}"#,
        id % 90
    )
}

#[tokio::main]
async fn main() {
    let learner = Learner::builder()
        .route(LearnedRoute::new("/api/items/*"))
        .client(|req| {
            req.extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| ClientId::from(c.0))
        })
        .build()
        .unwrap();
    let app: Router = Router::new()
        .route(
            "/api/items/{id}",
            get(|Path(id): Path<u32>| async move { item(id) }),
        )
        .layer(
            ServiceBuilder::new() // one `layer` call: axum boxes a route's service per call
                .layer(
                    CompressionLayer::new()
                        .min_size(64)
                        .dictionaries(learner.store()),
                )
                .layer(learner.layer()), // samples, serves and announces the dictionaries
        );
    // Served with `into_make_service_with_connect_info::<SocketAddr>()`, a request carries
    // its peer; here 1,000 requests from 20 peers stand in for the traffic.
    let get = |id: u32, peer: u8| {
        let mut req = Request::get(format!("/api/items/{id}"))
            .body(Body::empty())
            .unwrap();
        req.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([10, 0, 0, peer], 1))));
        req
    };
    for id in 0..1000 {
        let res = app.clone().oneshot(get(id, id as u8 % 20)).await.unwrap();
        to_bytes(res.into_body(), 1 << 20).await.unwrap();
    }
    let current = loop {
        match learner.stats()[0].current.clone() {
            Some(current) => break current, // built on the learner's own thread
            None => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    // A client holding it (a browser fetches it from the `Link` it was sent) gets `dcz`.
    let dictionary = learner.store().get(&current.hash).unwrap();
    let mut req = get(5000, 1);
    req.headers_mut()
        .insert("accept-encoding", "dcz, zstd".parse().unwrap());
    req.headers_mut()
        .insert("available-dictionary", dictionary.available_dictionary());
    let res = app.oneshot(req).await.unwrap();
    assert_eq!(res.headers()["content-encoding"], "dcz");
    let wire = to_bytes(res.into_body(), 1 << 20).await.unwrap();
    let body = OneShot::new(ContentCoding::Dcz)
        .dictionary(&dictionary)
        .decode(&wire, 1 << 20);
    assert_eq!(body.unwrap(), item(5000).as_bytes());
    println!("{} B of JSON in {} B of dcz", item(5000).len(), wire.len());
}
