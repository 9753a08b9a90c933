//! Serving dictionaries: [`DictionaryService`] answers with a stored dictionary and the
//! headers a browser needs to keep it, [`link_header`] announces one, and
//! [`UseAsDictionaryLayer`] turns a route's responses (versioned assets) into dictionaries
//! for their next version.

use std::convert::Infallible;
use std::fmt;
use std::future::{Ready, ready};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, SizeHint};
use http_body_util::Full;
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::{Dictionary, DictionaryStore};
use crate::buf::{PolledFrame, poll_bytes};
use crate::headers::USE_AS_DICTIONARY;
use crate::headers::UseAsDictionary;

/// One year: a dictionary is named by its hash, so its bytes never change under its URL
/// unless the URL itself is retired. Chromium keeps a dictionary only while it is fresh.
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(365 * 24 * 3600);

/// `Link: <url>; rel="compression-dictionary"`: tells a browser to fetch the dictionary at
/// `url` when it is idle (RFC 9842 section 3). Add it to pages whose later requests the
/// dictionary serves. `None` if `url` cannot go in a header (control characters, `>`).
///
/// ```
/// use tower_gzip::dictionary::link_header;
/// assert_eq!(
///     link_header("/dictionary").unwrap(),
///     r#"</dictionary>; rel="compression-dictionary""#
/// );
/// ```
pub fn link_header(url: &str) -> Option<HeaderValue> {
    if url.contains('>') {
        return None;
    }
    HeaderValue::from_str(&format!("<{url}>; rel=\"compression-dictionary\"")).ok()
}

/// A service that answers every `GET` or `HEAD` with one dictionary: its bytes,
/// `Use-As-Dictionary` (its `match`, `match-dest` and `id`), a long
/// `Cache-Control: max-age` (a browser uses a dictionary only while it is fresh), a strong
/// `ETag` made of its hash (a `304` for `If-None-Match`), and a content type. Other methods
/// get `405`.
///
/// Mount it where the dictionary's [`link_header`] points:
///
/// ```
/// use axum::{Router, routing::get_service};
/// use tower_gzip::dictionary::UseAsDictionary;
/// use tower_gzip::dictionary::{Dictionary, DictionaryService};
///
/// let dictionary = Dictionary::new(&b"{\"id\":0,\"name\":\"\"}"[..], UseAsDictionary::new("/api/*")).unwrap();
/// let app: Router = Router::new().route_service("/dictionary", DictionaryService::new(dictionary));
/// ```
#[derive(Clone)]
pub struct DictionaryService {
    dictionary: Dictionary,
    cache_control: HeaderValue,
    content_type: HeaderValue,
    etag: HeaderValue,
}

impl DictionaryService {
    /// Serves `dictionary`, fresh for a year, as `application/octet-stream`.
    pub fn new(dictionary: Dictionary) -> Self {
        let hex: String = dictionary
            .hash()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        DictionaryService {
            etag: HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex is a valid header"),
            dictionary,
            cache_control: max_age_value(DEFAULT_MAX_AGE),
            content_type: HeaderValue::from_static("application/octet-stream"),
        }
    }

    /// How long browsers may keep it (`Cache-Control: public, max-age=...`).
    #[cfg(feature = "learn")]
    pub(crate) fn max_age(mut self, max_age: Duration) -> Self {
        self.cache_control = max_age_value(max_age);
        self
    }

    fn respond(&self, method: &Method, headers: &HeaderMap) -> Response<Full<Bytes>> {
        if method != Method::GET && method != Method::HEAD {
            let mut res = Response::new(Full::new(Bytes::new()));
            *res.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            res.headers_mut()
                .insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return res;
        }
        let fresh = headers
            .get_all(IF_NONE_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|tag| {
                let tag = tag.trim();
                tag == "*" || tag.trim_start_matches("W/") == self.etag
            });
        let body = if fresh || method == Method::HEAD {
            Bytes::new()
        } else {
            self.dictionary.bytes().clone()
        };
        let mut res = Response::new(Full::new(body));
        if fresh {
            *res.status_mut() = StatusCode::NOT_MODIFIED;
        }
        let h = res.headers_mut();
        if let Some(metadata) = self.dictionary.use_as_dictionary() {
            h.insert(USE_AS_DICTIONARY, metadata);
        }
        h.insert(CACHE_CONTROL, self.cache_control.clone());
        h.insert(ETAG, self.etag.clone());
        if !fresh {
            h.insert(CONTENT_TYPE, self.content_type.clone());
        }
        if method == Method::HEAD && !fresh {
            // What a GET would send.
            h.insert(http::header::CONTENT_LENGTH, self.dictionary.len().into());
        }
        res
    }
}

fn max_age_value(max_age: Duration) -> HeaderValue {
    HeaderValue::from_str(&format!("public, max-age={}", max_age.as_secs()))
        .expect("digits are a valid header")
}

impl fmt::Debug for DictionaryService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DictionaryService")
            .field("dictionary", &self.dictionary)
            .field("cache_control", &self.cache_control)
            .finish_non_exhaustive()
    }
}

impl<B> Service<Request<B>> for DictionaryService {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        ready(Ok(self.respond(req.method(), req.headers())))
    }
}

/// Declares a route's responses dictionaries for what `match` covers (versioned assets:
/// `/assets/app-*.js`): each successful `GET` response is marked `Use-As-Dictionary` and,
/// once its body has been read in full (and is at most `max_len` bytes), stored in `store`
/// by its hash, so that a later request for the next version that names this one in
/// `Available-Dictionary` gets a delta from a [`CompressionLayer`] with the same store.
///
/// Place it inside the compression layer (nearer the handler), so that it sees the bytes
/// the browser will hash. The store's byte bound (least recently used out first) bounds
/// what it keeps; each server instance keeps its own, so behind a load balancer a miss on
/// another instance falls back to the usual coding.
///
/// [`CompressionLayer`]: crate::compression::CompressionLayer
#[derive(Clone, Debug)]
pub struct UseAsDictionaryLayer {
    metadata: UseAsDictionary,
    header: HeaderValue,
    store: DictionaryStore,
    max_len: usize,
    cache_control: Option<HeaderValue>,
}

impl UseAsDictionaryLayer {
    /// Marks responses with `metadata` and remembers them in `store`, up to 4 MiB each.
    /// Fails if the metadata cannot be written as a header.
    pub fn new(
        metadata: UseAsDictionary,
        store: DictionaryStore,
    ) -> Result<Self, crate::codec::DictionaryError> {
        let header = metadata
            .to_header_value()
            .map_err(|e| crate::codec::DictionaryError::InvalidMetadata(e.0))?;
        Ok(UseAsDictionaryLayer {
            metadata,
            header,
            store,
            max_len: 4 << 20,
            cache_control: Some(max_age_value(DEFAULT_MAX_AGE)),
        })
    }

    /// The largest response remembered (larger ones are still marked, and then not kept).
    #[cfg(test)]
    pub(crate) fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }
}

impl<S> Layer<S> for UseAsDictionaryLayer {
    type Service = UseAsDictionaryService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        UseAsDictionaryService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`UseAsDictionaryLayer`].
#[derive(Clone, Debug)]
pub struct UseAsDictionaryService<S> {
    inner: S,
    layer: UseAsDictionaryLayer,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for UseAsDictionaryService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Body,
{
    type Response = Response<Remembered<ResBody>>;
    type Error = S::Error;
    type Future = RememberFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let get = req.method() == Method::GET;
        RememberFuture {
            inner: self.inner.call(req),
            layer: get.then(|| self.layer.clone()),
        }
    }
}

pin_project! {
    /// The response future of [`UseAsDictionaryLayer`]'s service.
    pub struct RememberFuture<F> {
        #[pin]
        inner: F,
        layer: Option<UseAsDictionaryLayer>,
    }
}

impl<F, B, E> std::future::Future for RememberFuture<F>
where
    F: std::future::Future<Output = Result<Response<B>, E>>,
    B: Body,
{
    type Output = Result<Response<Remembered<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let res = std::task::ready!(this.inner.poll(cx))?;
        let layer = this.layer.take().filter(|_| res.status() == StatusCode::OK);
        let Some(layer) = layer else {
            return Poll::Ready(Ok(res.map(|inner| Remembered { inner, keep: None })));
        };
        let (mut parts, body) = res.into_parts();
        parts
            .headers
            .insert(USE_AS_DICTIONARY, layer.header.clone());
        if let Some(value) = &layer.cache_control {
            parts
                .headers
                .entry(CACHE_CONTROL)
                .or_insert_with(|| value.clone());
        }
        let fits = body.size_hint().lower() <= layer.max_len as u64;
        let keep = fits.then(|| Keep {
            bytes: BytesMut::new(),
            layer,
        });
        Poll::Ready(Ok(Response::from_parts(
            parts,
            Remembered { inner: body, keep },
        )))
    }
}

struct Keep {
    bytes: BytesMut,
    layer: UseAsDictionaryLayer,
}

pin_project! {
    /// A response body passed through as it is, whose bytes are stored as a dictionary once
    /// it has ended (not if it fails, is dropped early, or grows past the layer's limit).
    pub struct Remembered<B> {
        #[pin]
        inner: B,
        keep: Option<Keep>,
    }
}

impl<B: Body> Body for Remembered<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> PolledFrame<B::Error> {
        let mut this = self.project();
        let frame = match std::task::ready!(poll_bytes(this.inner.as_mut(), cx)) {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                *this.keep = None;
                return Poll::Ready(Some(Err(e)));
            }
            None => {
                if let Some(keep) = this.keep.take() {
                    keep.store();
                }
                return Poll::Ready(None);
            }
        };
        if let (Some(keep), Some(data)) = (this.keep.as_mut(), frame.data_ref()) {
            if keep.bytes.len() + data.len() > keep.layer.max_len {
                *this.keep = None;
            } else {
                keep.bytes.extend_from_slice(data);
            }
        }
        // hyper (and the compression layer) stop polling a body that says it has ended, so
        // its last data frame may be the last poll: store it now.
        if this.inner.is_end_stream() {
            if let Some(keep) = this.keep.take() {
                keep.store();
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Keep {
    fn store(self) {
        if self.bytes.is_empty() {
            return;
        }
        if let Ok(dictionary) = Dictionary::new(self.bytes.freeze(), self.layer.metadata) {
            self.layer.store.insert(dictionary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    fn dictionary() -> Dictionary {
        Dictionary::new(&b"dictionary bytes"[..], UseAsDictionary::new("/api/*")).unwrap()
    }

    #[tokio::test]
    async fn serves_the_dictionary_with_its_headers() {
        let svc = DictionaryService::new(dictionary());
        let res = svc.clone().oneshot(Request::new(())).await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()[USE_AS_DICTIONARY], r#"match="/api/*""#);
        assert_eq!(res.headers()[CACHE_CONTROL], "public, max-age=31536000");
        let etag = res.headers()[ETAG].clone();
        assert_eq!(etag.len(), 66);
        assert_eq!(
            &res.into_body().collect().await.unwrap().to_bytes()[..],
            b"dictionary bytes"
        );
        // Revalidation: 304, no body.
        let req = Request::builder()
            .header(IF_NONE_MATCH, etag)
            .body(())
            .unwrap();
        let res = svc.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), 304);
        assert!(
            res.into_body()
                .collect()
                .await
                .unwrap()
                .to_bytes()
                .is_empty()
        );
        let req = Request::builder().method("POST").body(()).unwrap();
        assert_eq!(svc.oneshot(req).await.unwrap().status(), 405);
        assert!(link_header("/x>y").is_none());
    }

    #[tokio::test]
    async fn responses_become_dictionaries_once_read_in_full() {
        let store = DictionaryStore::new(1 << 20);
        let layer =
            UseAsDictionaryLayer::new(UseAsDictionary::new("/assets/app-*.js"), store.clone())
                .unwrap()
                .max_len(100);
        let svc = layer.layer(tower::service_fn(|req: Request<()>| async move {
            let body = match req.uri().path() {
                "/big" => vec![b'x'; 101],
                _ => b"console.log('v1')".to_vec(),
            };
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(body))))
        }));
        let res = svc.clone().oneshot(Request::new(())).await.unwrap();
        assert_eq!(
            res.headers()[USE_AS_DICTIONARY],
            r#"match="/assets/app-*.js""#
        );
        assert!(store.is_empty(), "not before the body is read");
        // Polled as hyper does: not past a frame after which the body says it has ended.
        let mut body = res.into_body();
        let mut bytes = Vec::new();
        while !body.is_end_stream() {
            let frame = body.frame().await.unwrap().unwrap();
            bytes.extend_from_slice(frame.data_ref().unwrap());
        }
        let hash: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&bytes).into();
        assert!(store.get(&hash).is_some(), "stored by its hash");
        // Over the limit: marked, not kept.
        let big = Request::builder().uri("/big").body(()).unwrap();
        let res = svc.clone().oneshot(big).await.unwrap();
        let _ = res.into_body().collect().await.unwrap();
        assert_eq!(store.len(), 1);
        // Not a GET: left alone.
        let head = Request::builder().method("HEAD").body(()).unwrap();
        let res = svc.oneshot(head).await.unwrap();
        assert!(res.headers().get(USE_AS_DICTIONARY).is_none());
    }
}
