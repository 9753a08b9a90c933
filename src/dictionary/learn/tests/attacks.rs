//! Attacks on what a learned dictionary may hold: a credential in a header the response
//! varies on, in the query, and a value unique to each client that no header rule catches
//! (only k-anonymity stops it); and that responses alike across clients still publish.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use tower::{Layer, service_fn};

use super::{CLIENTS, from, get, items, request, route, wait_for};
use crate::dictionary::learn::*;

/// Whether `needle` is anywhere in the route's current dictionary.
fn dictionary_holds(learner: &Learner, needle: &[u8]) -> bool {
    let current = learner.stats()[0].current.clone().expect("a dictionary");
    let dictionary = learner.store().get(&current.hash).unwrap();
    dictionary
        .bytes()
        .windows(needle.len())
        .any(|w| w == needle)
}

/// Items, with what the request carried (its `X-Api-Key`, its `access_token`) written into
/// every record, as an API echoing its caller's key would.
async fn echo(req: Request<Full<Bytes>>) -> Result<Response<Full<Bytes>>, Infallible> {
    let start: u64 = (req.uri().query().unwrap_or(""))
        .split('&')
        .find_map(|kv| kv.strip_prefix("start=")?.parse().ok())
        .unwrap_or(0);
    let key = req
        .headers()
        .get("x-api-key")
        .map(|v| v.as_bytes().to_vec());
    let token = (req.uri().query().unwrap_or(""))
        .split('&')
        .find_map(|kv| kv.strip_prefix("access_token="))
        .map(|t| t.as_bytes().to_vec());
    let mut body = items(start, 1 + start % 6, 0);
    if let Some(secret) = key.as_ref().or(token.as_ref()) {
        let secret = String::from_utf8_lossy(secret);
        body = body.replace(
            "\"in_stock\"",
            &format!("\"caller\": \"{secret}\", \"in_stock\""),
        );
    }
    let mut res = Response::builder();
    if key.is_some() {
        res = res.header("vary", "Accept-Encoding, X-Api-Key");
    }
    Ok(res.body(Full::new(body.into())).unwrap())
}

/// One team's key, used from five addresses (as many as k-anonymity asks and more), on
/// every other request: only the `Vary` rule keeps it out.
#[tokio::test]
async fn a_key_the_response_varies_on_never_reaches_a_dictionary() {
    let learner = Learner::builder().route(route()).build().unwrap();
    let mut svc = learner.layer().layer(service_fn(echo));
    let key = "team-key-7f3a9c2e41d8b605";
    for start in 0..120u64 {
        let mut req = from(start % 10, &format!("/api/items?start={start}"));
        if start % 2 == 0 {
            req.headers_mut().insert("x-api-key", key.parse().unwrap());
        }
        get(&mut svc, req).await;
    }
    wait_for(&learner, "a dictionary", |s| s.current.is_some());
    assert!(!dictionary_holds(&learner, key.as_bytes()));
    assert_eq!(learner.stats()[0].refused(Refusal::Vary), 60);
}

/// A bearer token in the query (RFC 6750 section 2.3), one user's from several addresses
/// (a phone changing networks): only the query rule keeps it out.
#[tokio::test]
async fn a_token_in_the_query_never_reaches_a_dictionary() {
    let learner = Learner::builder().route(route()).build().unwrap();
    let mut svc = learner.layer().layer(service_fn(echo));
    let token = "mF_9.B5f-4.1JqM";
    for start in 0..120u64 {
        let uri = match start % 2 {
            0 => format!("/api/items?start={start}&access_token={token}"),
            _ => format!("/api/items?start={start}"),
        };
        get(&mut svc, from(start % 10, &uri)).await;
    }
    wait_for(&learner, "a dictionary", |s| s.current.is_some());
    assert!(!dictionary_holds(&learner, token.as_bytes()));
    assert_eq!(learner.stats()[0].refused(Refusal::QueryCredential), 60);
}

/// A request from client `client` at an IPv6 address of its own (past the common
/// `2001:db8:` prefix, 16 hex digits no other client shares).
fn from_v6(client: u64, uri: &str) -> Request<Full<Bytes>> {
    let mut req = from(client, uri);
    let mut groups = [0x2001, 0x0db8, 0, 0, 0, 0, 0, 1];
    let bits = (client + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for (i, group) in groups[2..6].iter_mut().enumerate() {
        *group = 0x1000 | (bits >> (16 * i)) as u16 & 0x0fff;
    }
    let ip = std::net::Ipv6Addr::from(groups);
    req.extensions_mut()
        .insert(std::net::SocketAddr::from((ip, 443)));
    req
}

/// Items with the client's own address in every record: no header says so, and each
/// client's value is its own. Without k-anonymity (one client suffices) it is in the
/// dictionary; with the default, none is. (A short value shared in part, like `10.0.1.117`
/// among `10.0.1.110` to `.119`, can be spelled by common runs side by side: see
/// `Anonymity`.)
#[tokio::test]
async fn a_value_unique_to_each_client_never_reaches_a_dictionary() {
    let address = |client: u64| {
        let req = from_v6(client, "/");
        req.extensions()
            .get::<std::net::SocketAddr>()
            .unwrap()
            .ip()
            .to_string()
    };
    let handler = move |req: Request<Full<Bytes>>| async move {
        let peer = req.extensions().get::<std::net::SocketAddr>().unwrap().ip();
        let start: u64 = req.uri().query().unwrap()["start=".len()..]
            .parse()
            .unwrap();
        let records = items(start, 1 + start % 6, 0);
        let body = records.replace(
            "\"in_stock\"",
            &format!("\"seen_from\": \"{peer}\", \"in_stock\""),
        );
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(body))))
    };
    let leaks = |anonymity: Anonymity| async move {
        let learner = Learner::builder()
            .route(route())
            .anonymity(anonymity)
            .build()
            .unwrap();
        let mut svc = learner.layer().layer(service_fn(handler));
        for start in 0..120u64 {
            let uri = format!("/api/items?start={start}");
            get(&mut svc, from_v6(start % CLIENTS, &uri)).await;
        }
        wait_for(&learner, "a dictionary", |s| s.current.is_some());
        (0..CLIENTS).any(|c| {
            let value = format!("\"{}\"", address(c));
            dictionary_holds(&learner, value.as_bytes())
        })
    };
    assert!(
        leaks(Anonymity::new(1, 1)).await,
        "the attack needs k-anonymity to fail"
    );
    assert!(!leaks(Anonymity::default()).await);
}

/// Responses alike across 20 clients, at the default rates: a dictionary within 2,000.
#[tokio::test]
async fn responses_alike_across_clients_publish_within_two_thousand() {
    let learner = Learner::builder()
        .route(LearnedRoute::new("/api/items*"))
        .build()
        .unwrap();
    let mut svc = learner.layer().layer(service_fn(super::handler));
    for start in 0..2000u64 {
        get(&mut svc, request(&format!("/api/items?start={start}"))).await;
        if start % 100 == 99 && learner.stats()[0].current.is_some() {
            break;
        }
    }
    wait_for(&learner, "a dictionary", |s| {
        s.current.is_some() || s.failed_builds > 0
    });
    let stats = learner.stats().remove(0);
    assert!(stats.current.is_some(), "{stats:?}");
    assert!(stats.clients >= 3 && stats.pending.is_none(), "{stats:?}");
}

/// Without a client identity on requests nothing is taken, and the stats say why.
#[tokio::test]
async fn without_client_identities_nothing_is_published_and_the_stats_say_why() {
    let learner = Learner::builder().route(route()).build().unwrap();
    let mut svc = learner.layer().layer(service_fn(super::handler));
    for start in 0..80 {
        let uri = format!("/api/items?start={start}");
        get(&mut svc, Request::get(uri).body(Full::default()).unwrap()).await;
    }
    let stats = learner.stats().remove(0);
    assert_eq!(
        (stats.taken, stats.refused(Refusal::UnknownClient)),
        (0, 80)
    );
    assert!(stats.pending.unwrap().contains("no client is known"));
    // One client, however many samples: still nothing, and why.
    for start in 0..80 {
        get(&mut svc, from(7, &format!("/api/items?start={start}"))).await;
    }
    wait_for(&learner, "the samples", |s| s.samples == 80);
    let stats = learner.stats().remove(0);
    assert!(stats.current.is_none());
    assert_eq!((stats.clients, stats.clients_needed), (1, 3));
    let why = stats.pending.unwrap();
    assert!(why.contains("1 distinct clients, 3 needed"), "{why}");
}
