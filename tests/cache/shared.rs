//! The attacks on a cache shared by every client, played through the layer with `by_etag`
//! on: an application that sends one strong `ETag` for bodies that differ by client (a bug,
//! two virtual hosts, a reflected `Host`) must still give each client its own body. Each
//! attack files an entry with an attacker's requests, then asks as the victim; a control
//! shows the same steps do hit when the responses are the same for everyone.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, ETAG, HOST, HeaderName};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::cache::VariantCache;
use tower_gzip::compression::CompressionLayer;
use tower_gzip_support::bodies::StutterBody;
use tower_gzip_support::decode;

/// What the application answers: a status, headers and a body, streamed or known in full.
struct Answer {
    status: StatusCode,
    headers: Vec<(&'static str, String)>,
    body: Bytes,
    streamed: bool,
}

/// A body of about 40 KB that names `who` on every line.
fn body_for(who: &str) -> Bytes {
    let lines = (0..800).map(|i| format!("{{\"line\":{i},\"for\":\"{who}\"}}\n"));
    Bytes::from(lines.collect::<String>())
}

/// A streamed `200` of the body for `who`, under one strong `ETag` whoever asks, with
/// `headers`.
fn streamed(who: &str, headers: &[(&'static str, &str)]) -> Answer {
    let mut all = vec![("etag", "\"v1\"".to_owned())];
    all.extend(headers.iter().map(|(n, v)| (*n, v.to_string())));
    Answer {
        status: StatusCode::OK,
        headers: all,
        body: body_for(who),
        streamed: true,
    }
}

/// The request header `name`'s value, or "".
fn header<'a>(req: &'a Request<()>, name: &str) -> &'a str {
    let value = req.headers().get(name).map(HeaderValue::to_str);
    value.and_then(Result::ok).unwrap_or_default()
}

type Handler = Arc<dyn Fn(&Request<()>) -> Answer + Send + Sync>;

/// The application behind the layer, with its cache.
struct App {
    cache: VariantCache,
    layer: CompressionLayer,
    handler: Handler,
}

impl App {
    fn new(handler: impl Fn(&Request<()>) -> Answer + Send + Sync + 'static) -> App {
        App::with_cache(VariantCache::builder().by_etag(true).build(), handler)
    }

    fn with_cache(
        cache: VariantCache,
        handler: impl Fn(&Request<()>) -> Answer + Send + Sync + 'static,
    ) -> App {
        let layer = CompressionLayer::new().cache(cache.clone());
        let handler = Arc::new(handler);
        App {
            cache,
            layer,
            handler,
        }
    }

    /// What the client of `req` receives, decoded.
    async fn get(&self, req: Request<()>) -> Bytes {
        let handler = self.handler.clone();
        let service = self.layer.layer(service_fn(move |req: Request<()>| {
            let answer = handler(&req);
            let mut res = match answer.streamed {
                true => {
                    let chunks = answer.body.chunks(8 * 1024).map(Bytes::copy_from_slice);
                    Response::new(StutterBody::data(chunks.collect::<Vec<_>>()).boxed())
                }
                false => Response::new(Full::new(answer.body).map_err(|e| match e {}).boxed()),
            };
            *res.status_mut() = answer.status;
            for (name, value) in answer.headers {
                let value = HeaderValue::from_str(&value).unwrap();
                res.headers_mut()
                    .append(HeaderName::from_static(name), value);
            }
            async move { Ok::<_, Infallible>(res) }
        }));
        let res = service.oneshot(req).await.unwrap();
        let coding = res.headers().get(CONTENT_ENCODING).cloned();
        let wire = res.into_body().collect().await.unwrap().to_bytes();
        let coding = coding.map(|c| c.to_str().unwrap().to_owned());
        Bytes::from(decode::decode(coding.as_deref(), &wire))
    }

    /// The attack: `attacker`'s request twice (seen, then filed), then `victim`'s; what
    /// the victim receives, checked to be what the application answered it.
    async fn attack(&self, attacker: fn() -> Request<()>, victim: fn() -> Request<()>) -> u64 {
        for _ in 0..2 {
            let req = attacker();
            let own = (self.handler)(&req).body;
            assert_eq!(self.get(req).await, own, "the attacker's own body");
        }
        let req = victim();
        let own = (self.handler)(&req).body;
        let got = self.get(req).await;
        assert!(got == own, "the victim got another client's body");
        self.cache.stats().hits
    }
}

/// A GET of /app.js at `host` accepting gzip.
fn get(host: &str) -> http::request::Builder {
    Request::get("/app.js")
        .header(HOST, host)
        .header(ACCEPT_ENCODING, "gzip")
}

/// A request at `host` carrying `name: value`.
fn with(host: &str, name: &'static str, value: &'static str) -> Request<()> {
    get(host).header(name, value).body(()).unwrap()
}

fn mallory() -> Request<()> {
    with("shop.example", "x-user", "mallory")
}

fn alice() -> Request<()> {
    with("shop.example", "x-user", "alice")
}

fn mallory_token() -> Request<()> {
    with("api.example", "authorization", "Bearer mallory")
}

fn alice_token() -> Request<()> {
    with("api.example", "authorization", "Bearer alice")
}

#[tokio::test]
async fn the_same_steps_hit_when_the_response_is_everyones() {
    let app = App::new(|_| streamed("everyone", &[]));
    let req = || get("shop.example").body(()).unwrap();
    assert_eq!(app.attack(req, req).await, 1, "the control must hit");
}

#[tokio::test]
async fn two_virtual_hosts_under_one_etag_each_get_their_own() {
    let app = App::new(|req| streamed(header(req, "host"), &[]));
    let hits = app
        .attack(
            || get("tenant-b.example").body(()).unwrap(),
            || get("tenant-a.example").body(()).unwrap(),
        )
        .await;
    assert_eq!(hits, 0);
}

#[tokio::test]
async fn a_forged_host_does_not_poison_the_next_client() {
    // The application writes links from `Host` (a reset link, a canonical URL).
    let app = App::new(|req| streamed(&format!("https://{}/reset", header(req, "host")), &[]));
    let hits = app
        .attack(
            || get("attacker.example").body(()).unwrap(),
            || get("bank.example").body(()).unwrap(),
        )
        .await;
    assert_eq!(hits, 0);
}

#[tokio::test]
async fn a_response_varying_on_another_header_is_never_cached_by_validator() {
    let app = App::new(|req| {
        let language = header(req, "accept-language");
        streamed(language, &[("vary", "Accept-Language")])
    });
    let hits = app
        .attack(
            || with("shop.example", "accept-language", "fr"),
            || with("shop.example", "accept-language", "en"),
        )
        .await;
    assert_eq!((hits, app.cache.stats().admitted), (0, 0));
}

/// The attack on a response that depends on `X-User`, marked `headers` by the application.
async fn per_user(headers: &'static [(&'static str, &'static str)]) -> (u64, u64) {
    let app = App::new(move |req| streamed(header(req, "x-user"), headers));
    let hits = app.attack(mallory, alice).await;
    (hits, app.cache.stats().admitted)
}

#[tokio::test]
async fn private_no_store_and_cookie_setting_responses_are_never_cached_by_validator() {
    assert_eq!(per_user(&[("cache-control", "private")]).await, (0, 0));
    assert_eq!(
        per_user(&[("cache-control", "max-age=60, no-store")]).await,
        (0, 0)
    );
    assert_eq!(
        per_user(&[("set-cookie", "session=1; Secure")]).await,
        (0, 0)
    );
    assert_eq!(per_user(&[("cache-control", "max-age=0")]).await, (0, 0));
}

#[tokio::test]
async fn an_authorized_response_is_shared_only_when_it_says_so() {
    let app = App::new(|req| streamed(header(req, "authorization"), &[("vary", "Authorization")]));
    let hits = app.attack(mallory_token, alice_token).await;
    assert_eq!((hits, app.cache.stats().admitted), (0, 0));
    // Without `Vary`, still refused: `Authorization` alone rules a response private.
    let app = App::new(|req| streamed(header(req, "authorization"), &[]));
    let hits = app.attack(mallory_token, alice_token).await;
    assert_eq!((hits, app.cache.stats().admitted), (0, 0));
}

#[tokio::test]
async fn a_request_that_forbids_storing_files_nothing() {
    let app = App::new(|_| streamed("everyone", &[]));
    let no_store = || {
        let req = get("shop.example").header("cache-control", "no-store");
        req.body(()).unwrap()
    };
    for _ in 0..3 {
        app.get(no_store()).await;
    }
    assert_eq!(app.cache.stats().admitted, 0);
}

#[tokio::test]
async fn only_200_responses_are_cached_by_validator() {
    let app = App::new(|req| {
        let mut answer = streamed(header(req, "x-user"), &[]);
        answer.status = StatusCode::NON_AUTHORITATIVE_INFORMATION;
        answer
    });
    let hits = app.attack(mallory, alice).await;
    assert_eq!((hits, app.cache.stats().admitted), (0, 0));
}

#[tokio::test]
async fn bodies_known_in_full_are_keyed_by_their_bytes_not_their_etag() {
    let app = App::new(|req| Answer {
        streamed: false,
        ..streamed(header(req, "x-user"), &[])
    });
    let hits = app.attack(mallory, alice).await;
    assert_eq!(hits, 0);
    // The same body known in full is served from the cache by its bytes (seen once by
    // now, filed at the next request, then hit).
    for _ in 0..2 {
        let again = get("shop.example").header("x-user", "alice");
        assert_eq!(app.get(again.body(()).unwrap()).await, body_for("alice"));
    }
    assert_eq!(app.cache.stats().hits, 1);
}

#[tokio::test]
async fn an_entry_cached_by_validator_expires() {
    // The body changes behind an unchanged ETag (a deploy that forgot to change it).
    let version = Arc::new(AtomicU64::new(1));
    let current = version.clone();
    let cache = VariantCache::builder()
        .by_etag(true)
        .etag_max_age(Duration::from_millis(300))
        .build();
    let app = App::with_cache(cache, move |_| {
        streamed(&format!("v{}", current.load(Ordering::Relaxed)), &[])
    });
    let req = || get("shop.example").body(()).unwrap();
    assert_eq!(app.attack(req, req).await, 1);
    version.store(2, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(app.get(req()).await, body_for("v2"));
    // The response's own `max-age` is shorter still.
    let version = Arc::new(AtomicU64::new(1));
    let current = version.clone();
    let app = App::new(move |_| {
        let who = format!("v{}", current.load(Ordering::Relaxed));
        streamed(&who, &[("cache-control", "public, max-age=1")])
    });
    assert_eq!(app.attack(req, req).await, 1);
    version.store(2, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(app.get(req()).await, body_for("v2"));
}

/// Two tenants' `config.js`, 4,000 bytes each, with the same modification time (a
/// reproducible build, one container image): `ServeDir` gives them the same strong `ETag`.
#[tokio::test]
async fn serve_dir_per_virtual_host_with_equal_mtimes_keeps_tenants_apart() {
    use tower_http::services::ServeDir;
    let root = std::env::temp_dir().join(format!("tower-gzip-vhosts-{}", std::process::id()));
    let mtime = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for tenant in ["a", "b"] {
        let dir = root.join(tenant);
        std::fs::create_dir_all(&dir).unwrap();
        let line = format!("window.config = {{ tenant: \"{tenant}\", key: \"{tenant}-123\" }};\n");
        let body = line.repeat(4000 / line.len() + 1)[..4000].to_owned();
        let path = dir.join("config.js");
        std::fs::write(&path, body).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    }
    let (a, b) = (ServeDir::new(root.join("a")), ServeDir::new(root.join("b")));
    let cache = VariantCache::builder().by_etag(true).min_size(0).build();
    let layer = CompressionLayer::new().cache(cache.clone());
    let service = layer.layer(service_fn(move |req: Request<()>| {
        let site = if header(&req, "host") == "a.example" {
            a.clone()
        } else {
            b.clone()
        };
        async move { Ok::<_, Infallible>(site.oneshot(req).await.unwrap()) }
    }));
    let fetch = |host: &'static str| {
        let service = service.clone();
        async move {
            let req = Request::get("/config.js")
                .header(HOST, host)
                .header(ACCEPT_ENCODING, "br");
            let res = service.oneshot(req.body(()).unwrap()).await.unwrap();
            let etag = res.headers()[ETAG].clone();
            let coding = res.headers().get(CONTENT_ENCODING).cloned();
            let wire = res.into_body().collect().await.unwrap().to_bytes();
            let coding = coding.map(|c| c.to_str().unwrap().to_owned());
            (etag, decode::decode(coding.as_deref(), &wire))
        }
    };
    let (etag_b, _) = fetch("b.example").await;
    fetch("b.example").await;
    let (etag_a, body_a) = fetch("a.example").await;
    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(etag_a, etag_b, "ServeDir gives both files one ETag");
    assert!(String::from_utf8(body_a).unwrap().contains("tenant: \"a\""));
}
