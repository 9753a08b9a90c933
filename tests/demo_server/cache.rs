//! The demo's cache: on by default, sized by `--cache`, off with `--no-cache`; repeated API
//! answers and `ServeDir` files (by `ETag`) served from it, each decoding to the identity
//! bytes.

use std::time::{Duration, Instant};

use serde_json::Value;
use tower_gzip_support::decode::decode;

use super::{Server, get};

/// `/stats`' `cache` once `done` holds of it (or after 60 s: the caller's asserts say what
/// was missing).
async fn cache_until(server: &Server, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stats: Value =
            serde_json::from_slice(&get(&server.url("/stats"), "identity").await.body).unwrap();
        let cache = stats["cache"].clone();
        if done(&cache) || Instant::now() > deadline {
            return cache;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Requests `path` in `coding` `times` times; every answer is so encoded and decodes to the
/// identity bytes.
async fn repeat(server: &Server, path: &str, coding: &str, times: usize) {
    let plain = get(&server.url(path), "identity").await.body;
    for _ in 0..times {
        let reply = get(&server.url(path), coding).await;
        assert_eq!(reply.encoding(), Some(coding), "{path}");
        assert!(
            decode(reply.encoding(), &reply.body) == plain,
            "{path} in {coding}"
        );
    }
}

#[tokio::test]
async fn repeated_answers_and_static_files_come_from_the_cache() {
    let server = Server::start(&[]);
    let api = "/api/items?n=1000&start=0";
    for coding in ["gzip", "br", "zstd"] {
        repeat(&server, api, coding, 3).await;
    }
    // Large bodies are filed by the background worker: wait for all three, then hit them.
    let cache = cache_until(&server, |c| c["admitted"].as_u64() >= Some(3)).await;
    assert!(cache["admitted"].as_u64() >= Some(3), "{cache}");
    for coding in ["gzip", "br", "zstd"] {
        repeat(&server, api, coding, 2).await;
    }
    let cache = cache_until(&server, |c| c["hits"].as_u64() >= Some(6)).await;
    assert!(cache["hits"].as_u64() >= Some(6), "{cache}");
    // A ServeDir file: by its ETag while it streams (seen, recorded, then served), or by
    // its bytes when a request finds it read in full (then seen, filed, served): which one
    // depends on how fast the file is read (a body read in full over 64 KiB is filed by
    // the background worker), so ask until two answers come from the cache (at most 60 s).
    let hits = cache["hits"].as_u64().unwrap();
    let mut cache = cache;
    let deadline = Instant::now() + Duration::from_secs(60);
    while cache["hits"].as_u64() < Some(hits + 2) && Instant::now() < deadline {
        repeat(&server, "/static/catalogue.json", "br", 1).await;
        tokio::time::sleep(Duration::from_millis(250)).await;
        cache = cache_until(&server, |_| true).await;
    }
    assert!(cache["hits"].as_u64() >= Some(hits + 2), "{cache}");
    let reply = get(&server.url("/static/catalogue.json"), "br").await;
    let etag = reply.headers["etag"].to_str().unwrap();
    assert!(
        etag.starts_with("W/\""),
        "an encoded answer's ETag is weak: {etag}"
    );
    assert!(cache["bytes"].as_u64() > Some(0), "{cache}");
    assert_eq!(cache["budget"], 64 << 20);
}

#[tokio::test]
async fn cache_flags_size_it_or_turn_it_off() {
    let sized = Server::start(&["--cache", "1MiB"]);
    let cache = cache_until(&sized, |_| true).await;
    assert_eq!(cache["budget"], 1 << 20);
    drop(sized);
    let off = Server::start(&["--no-cache"]);
    repeat(&off, "/api/items?n=100", "gzip", 3).await;
    assert!(cache_until(&off, |_| true).await.is_null());
}

/// An IPv4 address of this machine other than loopback, if it has one (a UDP socket
/// "connected" to a documentation address sends nothing but learns the outward interface).
fn outward_ip() -> Option<std::net::Ipv4Addr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    match socket.local_addr().ok()?.ip() {
        std::net::IpAddr::V4(ip) if !ip.is_loopback() && !ip.is_unspecified() => Some(ip),
        _ => None,
    }
}

/// The cache's counts would tell a client whether a body was compressed for someone else:
/// only a loopback client (the person running the demo) sees them.
#[tokio::test]
async fn cache_counts_are_shown_to_loopback_clients_only() {
    let Some(ip) = outward_ip() else {
        eprintln!("skipped: this machine has no address but loopback");
        return;
    };
    let server = Server::start(&[]);
    repeat(&server, "/api/items?n=1000&start=0", "gzip", 3).await;
    let local = cache_until(&server, |c| c["misses"].as_u64() >= Some(1)).await;
    assert!(local["misses"].as_u64() >= Some(1), "{local}");
    // From the machine's outward address: a peer the demo does not see as loopback.
    let (_, body) = server.request_from(Some(ip), "GET", "/stats", &[]);
    let stats: Value = serde_json::from_slice(&body).expect("/stats is JSON");
    let remote = stats["cache"].clone();
    assert!(
        remote.get("hits").is_none() && remote.get("entries").is_none(),
        "{remote}"
    );
    assert!(remote["hidden"].is_string(), "{remote}");
    assert_eq!(remote["budget"], 64 << 20);
}
