//! The learner through its layer: what it refuses, what it builds and serves, rotation,
//! sharing through a storage, and responses during a build.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, LINK};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use tower::{Layer, Service, ServiceExt, service_fn};

use crate::dictionary::learn::body::LearnBody;
use crate::dictionary::learn::storage::DictionaryStorage;
use crate::dictionary::learn::*;

mod anonymity;
mod attacks;
mod stats;
use crate::headers::{AVAILABLE_DICTIONARY, USE_AS_DICTIONARY};

/// Deterministic API JSON: `n` records from `start`, in one of two shapes.
pub(super) fn items(start: u64, n: u64, schema: u8) -> String {
    let mut out = String::from("[\n");
    for i in start..start + n {
        let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20;
        let record = match schema {
            0 => format!(
                "  {{\n    \"id\": {i},\n    \"name\": \"item-{}\",\n    \"price_cents\": {},\n    \"url\": \"https://shop.example.com/items/{i}\",\n    \"in_stock\": {}\n  }}",
                h % 100_000,
                h % 9_999,
                h % 3 == 0
            ),
            _ => format!(
                "  {{\n    \"sku\": \"SKU-{:08x}\",\n    \"title\": {{ \"en\": \"Product {}\", \"fr\": \"Produit {}\" }},\n    \"offers\": [ {{ \"seller\": \"s{}\", \"amount\": \"{}.{:02}\", \"currency\": \"EUR\" }} ],\n    \"updated_at\": \"2026-11-{:02}T10:{:02}:00Z\"\n  }}",
                h,
                h % 777,
                h % 777,
                h % 50,
                h % 500,
                h % 100,
                1 + h % 28,
                h % 60
            ),
        };
        out.push_str(&record);
        out.push_str(if i + 1 < start + n { ",\n" } else { "\n" });
    }
    out.push(']');
    out
}

/// The handler: `/api/items?start=S&schema=K` answers items; a few paths answer what the
/// exclusion tests need.
pub(super) async fn handler(
    req: Request<Full<Bytes>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let query = req.uri().query().unwrap_or("");
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let mut body = items(
        param("start"),
        1 + param("start") % 6,
        param("schema") as u8,
    );
    let mut res = Response::builder();
    match req.uri().path() {
        "/api/items/set-cookie" => res = res.header("set-cookie", "s=1"),
        "/api/items/private" => res = res.header("cache-control", "private, max-age=60"),
        "/api/items/no-store" => res = res.header("cache-control", "no-store"),
        "/api/items/missing" => res = res.status(StatusCode::NOT_FOUND),
        "/api/items/secret" => {}
        _ => return Ok(res.body(Full::new(body.into())).unwrap()),
    }
    body.push_str("SECRET-4f2a");
    Ok(res.body(Full::new(body.into())).unwrap())
}

/// The learner's layer over a handler, as the tests call it.
pub(super) trait Learning:
    Service<Request<Full<Bytes>>, Response = Response<LearnBody<Full<Bytes>>>, Error = Infallible>
    + Clone
{
}

impl<S> Learning for S where
    S: Service<
            Request<Full<Bytes>>,
            Response = Response<LearnBody<Full<Bytes>>>,
            Error = Infallible,
        > + Clone
{
}

pub(super) fn route() -> LearnedRoute {
    LearnedRoute::new("/api/items*")
        .sample_rate(1.0)
        .max_samples_per_second(f64::INFINITY)
        .min_samples(60)
}

pub(super) async fn get(svc: &mut impl Learning, req: Request<Full<Bytes>>) -> Response<Bytes> {
    let res = svc.clone().oneshot(req).await.unwrap();
    let (parts, body) = res.into_parts();
    Response::from_parts(parts, body.collect().await.unwrap().to_bytes())
}

/// A request from one of `CLIENTS` clients, in turn (their peer addresses, as a hyper
/// server would insert them).
pub(super) fn request(uri: &str) -> Request<Full<Bytes>> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let client = NEXT.fetch_add(1, Ordering::Relaxed) % CLIENTS;
    from(client, uri)
}

/// Distinct clients the tests' requests come from.
pub(super) const CLIENTS: u64 = 20;

/// A request from client `client` (below 156: at 10.0.1.100 + `client`, all addresses of
/// the same length, none a prefix of another).
pub(super) fn from(client: u64, uri: &str) -> Request<Full<Bytes>> {
    let mut req = Request::builder().uri(uri).body(Full::default()).unwrap();
    let ip = std::net::Ipv4Addr::from(0x0a00_0164 + client as u32);
    req.extensions_mut()
        .insert(std::net::SocketAddr::from((ip, 40_000 + client as u16)));
    req
}

/// A request as a browser sends it (`Sec-Fetch-Mode`): one told about dictionaries.
fn browser(uri: &str) -> Request<Full<Bytes>> {
    let mut req = request(uri);
    req.headers_mut()
        .insert("sec-fetch-mode", http::HeaderValue::from_static("cors"));
    req
}

/// Waits (a bounded time) until the learner's stats pass `done`.
pub(super) fn wait_for(learner: &Learner, what: &str, done: impl Fn(&LearnedRouteStats) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let stats = learner.stats().remove(0);
        if done(&stats) {
            return;
        }
        assert!(Instant::now() < deadline, "waited for {what}: {stats:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

async fn feed(svc: &mut impl Learning, from: u64, count: u64, schema: u8) {
    for start in from..from + count {
        get(
            svc,
            request(&format!("/api/items?start={start}&schema={schema}")),
        )
        .await;
    }
}

#[tokio::test]
async fn no_excluded_response_reaches_a_dictionary() {
    let learner = Learner::builder()
        .route(route())
        .filter(|req, _| !req.uri.path().ends_with("/secret"))
        .build()
        .unwrap();
    let mut svc = learner.layer().layer(service_fn(handler));
    let excluded = [
        (request("/api/items/set-cookie"), Refusal::SetCookie),
        (request("/api/items/private"), Refusal::Private),
        (request("/api/items/no-store"), Refusal::NoStore),
        (request("/api/items/missing"), Refusal::Status),
        (request("/api/items/secret"), Refusal::Filter),
    ];
    let with_headers = |name, value| {
        let mut req = request("/api/items/secret");
        req.headers_mut()
            .insert(name, http::HeaderValue::from_static(value));
        req
    };
    let mut post = request("/api/items/secret");
    *post.method_mut() = http::Method::POST;
    let excluded = excluded.into_iter().chain([
        (
            with_headers(http::header::AUTHORIZATION, "Bearer t"),
            Refusal::Authorization,
        ),
        (with_headers(http::header::COOKIE, "s=1"), Refusal::Cookie),
        (post, Refusal::Method),
    ]);
    for (req, reason) in excluded {
        for _ in 0..3 {
            let req = Request::from_parts(req.clone_head(), Full::default());
            let res = get(&mut svc, req).await;
            assert!(!res.body().is_empty());
        }
        assert_eq!(learner.stats()[0].refused(reason), 3, "{reason:?}");
    }
    assert_eq!(learner.stats()[0].taken, 0);
    feed(&mut svc, 1000, 60, 0).await;
    wait_for(&learner, "a dictionary", |s| s.current.is_some());
    let stats = learner.stats().remove(0);
    assert_eq!(stats.taken, 60);
    assert_eq!(stats.refusals().map(|(_, n)| n).sum::<u64>(), 24);
    let hash = stats.current.unwrap().hash;
    let dictionary = learner.store().get(&hash).unwrap();
    let bytes = dictionary.bytes();
    assert!(
        !bytes.windows(6).any(|w| w == b"SECRET"),
        "an excluded response reached the dictionary"
    );
}

/// `Request` is not `Clone`; the tests resend the same head.
trait CloneHead {
    fn clone_head(&self) -> http::request::Parts;
}

impl CloneHead for Request<Full<Bytes>> {
    fn clone_head(&self) -> http::request::Parts {
        let (mut parts, ()) = Request::new(()).into_parts();
        parts.method = self.method().clone();
        parts.uri = self.uri().clone();
        parts.headers = self.headers().clone();
        if let Some(&peer) = self.extensions().get::<std::net::SocketAddr>() {
            parts.extensions.insert(peer);
        }
        parts
    }
}

#[tokio::test]
async fn a_learned_dictionary_is_announced_served_and_used() {
    let learner = Learner::builder().route(route()).build().unwrap();
    let mut svc = learner.layer().layer(service_fn(handler));
    let res = get(&mut svc, browser("/api/items?start=1")).await;
    assert!(res.headers().get(LINK).is_none(), "nothing to announce yet");
    feed(&mut svc, 0, 60, 0).await;
    wait_for(&learner, "a dictionary", |s| s.current.is_some());
    let current = learner.stats().remove(0).current.unwrap();
    assert_eq!(current.version, 1);
    assert!(current.built_savings.unwrap() > 0.0);
    let res = get(&mut svc, browser("/api/items?start=5000")).await;
    let link = res.headers()[LINK].to_str().unwrap().to_owned();
    // A client that is no browser and names no dictionary is not told.
    let api_client = get(&mut svc, request("/api/items?start=5000")).await;
    assert!(api_client.headers().get(LINK).is_none());
    // One naming another dictionary (it speaks RFC 9842) is.
    let mut other = request("/api/items?start=5000");
    let unknown = crate::headers::available_dictionary_value(&[9; 32]);
    other.headers_mut().insert(AVAILABLE_DICTIONARY, unknown);
    assert!(get(&mut svc, other).await.headers().get(LINK).is_some());
    assert_eq!(
        link,
        format!("<{}>; rel=\"compression-dictionary\"", current.url)
    );
    assert!(current.url.starts_with("/.well-known/dictionaries/"));
    // A request that names it already is not told again.
    let mut holder = browser("/api/items?start=5000");
    let dictionary = learner.store().get(&current.hash).unwrap();
    holder
        .headers_mut()
        .insert(AVAILABLE_DICTIONARY, dictionary.available_dictionary());
    assert!(get(&mut svc, holder).await.headers().get(LINK).is_none());

    let served = get(&mut svc, request(&current.url)).await;
    assert_eq!(served.status(), 200);
    assert_eq!(
        served.headers()[USE_AS_DICTIONARY],
        r#"match="/api/items*", id="v1""#
    );
    let dictionary = learner.store().get(&current.hash).unwrap();
    assert_eq!(served.body(), dictionary.bytes());
    let unknown = format!("/.well-known/dictionaries/{}", "0".repeat(64));
    assert!(
        get(&mut svc, request(&unknown))
            .await
            .body()
            .starts_with(b"["),
        "an unknown hash falls through"
    );

    // Through the compression layer: a request naming it gets dcz at the level chosen.
    let mut app = crate::compression::CompressionLayer::new()
        .dictionaries(learner.store())
        .layer(svc.clone());
    let req = Request::builder()
        .uri("/api/items?start=777")
        .header("accept-encoding", "zstd, dcz")
        .header(AVAILABLE_DICTIONARY, dictionary.available_dictionary())
        .body(Full::default())
        .unwrap();
    let res = app.call(req).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "dcz");
    let wire = res.into_body().collect().await.unwrap().to_bytes();
    let plain = crate::codec::OneShot::new(crate::ContentCoding::Dcz)
        .dictionary(&dictionary)
        .decode(&wire, 1 << 20)
        .unwrap();
    assert_eq!(&plain[..], items(777, 1 + 777 % 6, 0).as_bytes());
}

#[tokio::test]
async fn a_changed_schema_rotates_and_old_dictionaries_stay_usable() {
    let learner = Learner::builder()
        .route(route())
        .check_every(20)
        .keep(2)
        .build()
        .unwrap();
    let mut svc = learner.layer().layer(service_fn(handler));
    feed(&mut svc, 0, 60, 0).await;
    wait_for(&learner, "v1", |s| {
        s.current.as_ref().is_some_and(|c| c.version == 1)
    });
    let v1 = learner.stats()[0].current.clone().unwrap();
    // The same schema: checks pass, no rotation.
    feed(&mut svc, 100, 60, 0).await;
    wait_for(&learner, "a check", |s| {
        s.current.as_ref().is_some_and(|c| c.savings.is_some())
    });
    assert_eq!(learner.stats()[0].builds, 1);
    // Another schema: savings fall, the next dictionary is built from fresh samples.
    feed(&mut svc, 200, 200, 1).await;
    wait_for(&learner, "v2", |s| {
        s.current.as_ref().is_some_and(|c| c.version == 2)
    });
    let stats = learner.stats().remove(0);
    assert_eq!((stats.builds, stats.held, stats.retired), (2, 2, 0));
    assert!(learner.store().get(&v1.hash).is_some(), "v1 stays usable");
    let served = get(&mut svc, request(&v1.url)).await;
    assert_eq!(served.status(), 200);
    // A third schema change retires v1 (two kept).
    feed(&mut svc, 400, 200, 0).await;
    wait_for(&learner, "v3", |s| {
        s.current.as_ref().is_some_and(|c| c.version == 3)
    });
    let stats = learner.stats().remove(0);
    assert_eq!((stats.held, stats.retired), (2, 1));
    assert!(learner.store().get(&v1.hash).is_none(), "v1 retired");
    let gone = get(&mut svc, request(&v1.url)).await;
    assert!(
        gone.headers().get(USE_AS_DICTIONARY).is_none(),
        "v1 no longer served"
    );
}

/// Blobs in memory, shared by clones: a fleet's storage in one process.
#[derive(Clone, Debug, Default)]
pub(super) struct MemStorage(Arc<Mutex<HashMap<String, Vec<u8>>>>);

impl DictionaryStorage for MemStorage {
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.0.lock().unwrap().insert(name.into(), bytes.to_vec());
        Ok(())
    }
    fn get(&self, name: &str, max_len: usize) -> io::Result<Option<Vec<u8>>> {
        let blobs = self.0.lock().unwrap();
        match blobs.get(name) {
            Some(b) if b.len() > max_len => Err(io::ErrorKind::InvalidData.into()),
            other => Ok(other.cloned()),
        }
    }
    fn list(&self, prefix: &str) -> io::Result<Vec<String>> {
        Ok(self
            .0
            .lock()
            .unwrap()
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect())
    }
    fn delete(&self, name: &str) -> io::Result<()> {
        self.0.lock().unwrap().remove(name);
        Ok(())
    }
}

/// Two instances, each with its own handle on one storage (`open` makes a handle): what one
/// learns, the other loads, serves and announces; a blob whose bytes do not match its name
/// is never used.
async fn fleet<S: DictionaryStorage>(open: impl Fn() -> S) {
    let storage = open();
    let instance = || {
        Learner::builder()
            .route(route())
            .storage(open())
            .poll_interval(Duration::from_millis(20))
            .build()
            .unwrap()
    };
    let (a, b) = (instance(), instance());
    let mut svc_a = a.layer().layer(service_fn(handler));
    let mut svc_b = b.layer().layer(service_fn(handler));
    feed(&mut svc_a, 0, 60, 0).await;
    wait_for(&a, "a's dictionary", |s| s.current.is_some());
    let built = a.stats()[0].current.clone().unwrap();
    assert_eq!(storage.list("").unwrap().len(), 1, "written once");
    wait_for(&b, "b to load it", |s| s.loaded == 1);
    let loaded = b.stats().remove(0);
    assert_eq!(loaded.current.as_ref().map(|c| c.hash), Some(built.hash));
    assert_eq!(loaded.builds, 0);
    assert!(b.store().get(&built.hash).is_some());
    let served = get(&mut svc_b, request(&built.url)).await;
    assert_eq!(served.body(), a.store().get(&built.hash).unwrap().bytes());
    let res = get(&mut svc_b, browser("/api/items?start=3")).await;
    assert!(res.headers()[LINK].to_str().unwrap().contains(&built.url));
    // A blob whose bytes do not match the hash in its name is never used.
    let names = storage.list("").unwrap();
    let key = names[0].split('/').next().unwrap().to_owned();
    let forged = crate::dictionary::learn::names::StoredName {
        version: 9,
        dcz_level: 3,
        dcb_quality: 0,
        hash: [7; 32],
    };
    storage.put(&forged.to_name(&key), b"junk").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let stats = b.stats().remove(0);
    assert_eq!((stats.loaded, stats.current.unwrap().version), (1, 1));
}

#[tokio::test]
async fn instances_sharing_a_storage_use_each_others_dictionaries() {
    let blobs = MemStorage::default();
    fleet(|| blobs.clone()).await;
}

#[tokio::test]
async fn instances_sharing_a_directory_use_each_others_dictionaries() {
    let dir = std::env::temp_dir().join(format!("tower-gzip-learn-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    fleet(|| crate::dictionary::learn::storage::DirStorage::new(&dir).unwrap()).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "object-store")]
#[tokio::test]
async fn instances_sharing_an_object_store_use_each_others_dictionaries() {
    use object_store::local::LocalFileSystem;
    let dir = std::env::temp_dir().join(format!("tower-gzip-learn-objects-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    fleet(|| {
        let store = Arc::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
        crate::dictionary::learn::storage::ObjectStorage::new(store, "dictionaries").unwrap()
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn responses_keep_flowing_on_a_current_thread_runtime_during_a_build() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Many large samples: a build that takes a while.
    let learner = Learner::builder()
        .route(
            LearnedRoute::new("/api/items*")
                .sample_rate(1.0)
                .min_samples(400)
                .max_sample_len(1 << 20),
        )
        .build()
        .unwrap();
    let big = |req: Request<Full<Bytes>>| async move {
        let start: u64 = req
            .uri()
            .query()
            .and_then(|q| q.strip_prefix("start="))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(items(
            start * 40,
            40,
            0,
        )))))
    };
    let svc = learner.layer().layer(service_fn(big));
    let during = runtime.block_on(async {
        for start in 0..400 {
            let res = svc
                .clone()
                .oneshot(request(&format!("/api/items?start={start}")))
                .await
                .unwrap();
            res.into_body().collect().await.unwrap();
        }
        // The 400th sample starts a build on the learner's thread; the runtime's one thread
        // keeps answering meanwhile.
        let mut during = 0;
        loop {
            let phase = learner.stats()[0].phase;
            let res = svc
                .clone()
                .oneshot(request("/api/items?start=9999"))
                .await
                .unwrap();
            res.into_body().collect().await.unwrap();
            match phase {
                LearnPhase::Building => during += 1,
                LearnPhase::Serving => return during,
                LearnPhase::Gathering => tokio::task::yield_now().await,
            }
        }
    });
    assert!(
        during > 0,
        "no response was answered while the dictionary was being built"
    );
    assert_eq!(learner.stats()[0].builds, 1);
}

#[tokio::test]
async fn long_and_unfinished_bodies_are_not_kept() {
    let learner = Learner::builder()
        .route(route().max_sample_len(100))
        .build()
        .unwrap();
    let mut svc = learner.layer().layer(service_fn(handler));
    // Known to be too long: refused at the head.
    get(&mut svc, request("/api/items?start=5")).await;
    assert_eq!(learner.stats()[0].refused(Refusal::TooLarge), 1);
    // Streamed past the bound: refused once it grows past it.
    let stream = |_: Request<Full<Bytes>>| async {
        let frames = (0..4)
            .map(|_| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(vec![b'x'; 40]))));
        let body = http_body_util::StreamBody::new(futures_util::stream::iter(frames));
        Ok::<_, Infallible>(Response::new(body))
    };
    let streamed = learner.layer().layer(service_fn(stream));
    let res = streamed
        .clone()
        .oneshot(request("/api/items"))
        .await
        .unwrap();
    assert_eq!(
        res.into_body().collect().await.unwrap().to_bytes().len(),
        160,
        "passed through whole"
    );
    assert_eq!(learner.stats()[0].refused(Refusal::TooLarge), 2);
    // Dropped after its first frame: incomplete.
    let res = streamed.oneshot(request("/api/items")).await.unwrap();
    let mut body = res.into_body();
    body.frame().await.unwrap().unwrap();
    drop(body);
    let stats = learner.stats().remove(0);
    assert_eq!((stats.refused(Refusal::Incomplete), stats.taken), (1, 0));
}

#[tokio::test]
async fn samples_per_second_are_capped_after_a_first_burst() {
    let capped = LearnedRoute::new("/api/items*")
        .sample_rate(1.0)
        .min_samples(30)
        .max_samples_per_second(0.5);
    let learner = Learner::builder().route(capped).build().unwrap();
    let mut svc = learner.layer().layer(service_fn(handler));
    feed(&mut svc, 0, 80, 0).await;
    wait_for(&learner, "the burst", |s| s.taken >= 30);
    std::thread::sleep(Duration::from_millis(50));
    // The burst (min_samples), then half a sample a second: none more in the test's time.
    assert_eq!(learner.stats()[0].taken, 30);
}
