//! When to compress a response.
//!
//! A [`Predicate`] looks at a response's head (and its body's size hint) and says whether it
//! is worth compressing. The names mirror `tower_http::compression::predicate`, so existing
//! predicates port over unchanged.
//!
//! ```
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use tower_gzip::predicate::{DefaultPredicate, NotForContentType, Predicate, SizeAbove};
//!
//! let predicate = DefaultPredicate::new()
//!     .and(SizeAbove::new(256))
//!     .and(NotForContentType::new("application/x-custom"));
//!
//! let page = http::Response::builder()
//!     .header("content-type", "text/html; charset=utf-8")
//!     .body(Full::new(Bytes::from(vec![b'a'; 1024])))
//!     .unwrap();
//! assert!(predicate.should_compress(&page));
//!
//! let tiny = http::Response::new(String::from("hi"));
//! assert!(!predicate.should_compress(&tiny));
//!
//! let photo = http::Response::builder()
//!     .header("content-type", "image/jpeg")
//!     .body(Full::new(Bytes::from(vec![0u8; 1024])))
//!     .unwrap();
//! assert!(!predicate.should_compress(&photo));
//! ```
//!
//! Predicates only express preference. The compression service applies its hard rules
//! before asking (one list, in the [compression module
//! docs](crate::compression#what-gets-compressed)), and the `min_size` floor applies to
//! bodies of known size only under [`DefaultPredicate`] (see [`Predicate::applies_min_size`]).

use http::header::CONTENT_TYPE;

use crate::headers::{body_size, is_compressed_content, starts_with_ci, trim};
use http::{Extensions, HeaderMap, Method, Request, Response, StatusCode, Uri, Version};
use http_body::Body;
use std::fmt;
use std::sync::Arc;

/// Decides whether a response should be compressed.
pub trait Predicate: Clone {
    /// Should this response be compressed?
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool;

    /// Whether the layer's `min_size` floor applies to bodies of known size under this
    /// predicate. Only [`DefaultPredicate`] says yes (and combinations that include it):
    /// any other predicate decides alone, as in tower-http.
    fn applies_min_size(&self) -> bool {
        false
    }

    /// Should this request be compressed? Asked by
    /// [`RequestCompression`](crate::client::RequestCompression). The predicates of this
    /// module answer it from the request's headers and body size as they answer for
    /// responses; closures over a response's parts say yes (see [`RequestFn`] for
    /// request-side closures).
    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        let _ = request;
        true
    }

    /// Compress only if both `self` and `other` agree.
    fn and<Other: Predicate>(self, other: Other) -> And<Self, Other>
    where
        Self: Sized,
    {
        And {
            lhs: self,
            rhs: other,
        }
    }

    /// Compress if either `self` or `other` agrees.
    fn or<Other: Predicate>(self, other: Other) -> Or<Self, Other>
    where
        Self: Sized,
    {
        Or {
            lhs: self,
            rhs: other,
        }
    }

    /// Compress exactly when `self` would not.
    fn not(self) -> Not<Self>
    where
        Self: Sized,
    {
        Not { inner: self }
    }
}

impl<F> Predicate for F
where
    F: Fn(StatusCode, Version, &HeaderMap, &Extensions) -> bool + Clone,
{
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        self(
            response.status(),
            response.version(),
            response.headers(),
            response.extensions(),
        )
    }
}

/// `None` always compresses, so a predicate can be switched off without changing types.
impl<T: Predicate> Predicate for Option<T> {
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        self.as_ref().is_none_or(|p| p.should_compress(response))
    }

    fn applies_min_size(&self) -> bool {
        self.as_ref().is_some_and(Predicate::applies_min_size)
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        self.as_ref()
            .is_none_or(|p| p.should_compress_request(request))
    }
}

/// Both predicates must agree. Created with [`Predicate::and`].
#[derive(Clone, Copy, Debug, Default)]
pub struct And<L, R> {
    lhs: L,
    rhs: R,
}

impl<L: Predicate, R: Predicate> Predicate for And<L, R> {
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        self.lhs.should_compress(response) && self.rhs.should_compress(response)
    }

    fn applies_min_size(&self) -> bool {
        self.lhs.applies_min_size() || self.rhs.applies_min_size()
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        self.lhs.should_compress_request(request) && self.rhs.should_compress_request(request)
    }
}

/// Either predicate may agree. Created with [`Predicate::or`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Or<L, R> {
    lhs: L,
    rhs: R,
}

impl<L: Predicate, R: Predicate> Predicate for Or<L, R> {
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        self.lhs.should_compress(response) || self.rhs.should_compress(response)
    }

    fn applies_min_size(&self) -> bool {
        self.lhs.applies_min_size() && self.rhs.applies_min_size()
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        self.lhs.should_compress_request(request) || self.rhs.should_compress_request(request)
    }
}

/// The negation of a predicate. Created with [`Predicate::not`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Not<P> {
    inner: P,
}

impl<P: Predicate> Predicate for Not<P> {
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        !self.inner.should_compress(response)
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        !self.inner.should_compress_request(request)
    }
}

/// Compresses responses of at least a minimum size, and those whose size is unknown.
///
/// The size is the body's exact [`Body::size_hint`], else a valid `Content-Length`.
#[derive(Clone, Copy, Debug)]
pub struct SizeAbove(u64);

impl SizeAbove {
    /// Compress when the size is unknown or at least `min_size_bytes`.
    pub const fn new(min_size_bytes: u64) -> Self {
        Self(min_size_bytes)
    }
}

/// 32 bytes, like tower-http: below that the gzip framing alone outweighs any gain.
impl Default for SizeAbove {
    fn default() -> Self {
        Self(32)
    }
}

impl Predicate for SizeAbove {
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        body_size(response.headers(), response.body()).is_none_or(|size| size >= self.0)
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        body_size(request.headers(), request.body()).is_none_or(|size| size >= self.0)
    }
}

/// Refuses compression for responses whose `Content-Type` starts with a given prefix
/// (compared case-insensitively).
#[derive(Clone, Debug)]
pub struct NotForContentType {
    content_type: Str,
    exception: Option<Str>,
}

impl NotForContentType {
    /// Not gRPC (it has its own message compression), but gRPC-Web is compressed.
    pub const GRPC: Self = Self {
        content_type: Str::Static("application/grpc"),
        exception: Some(Str::Static("application/grpc-web")),
    };

    /// Not images (already compressed), except SVG, which is text.
    pub const IMAGES: Self = Self {
        content_type: Str::Static("image/"),
        exception: Some(Str::Static("image/svg+xml")),
    };

    /// Not Server-Sent Events. Only for tower-http parity: this crate flushes per event,
    /// so [`DefaultPredicate`] does compress SSE.
    pub const SSE: Self = Self::const_new("text/event-stream");

    /// Refuses content types starting with `content_type`.
    pub fn new(content_type: &str) -> Self {
        Self {
            content_type: Str::Shared(content_type.into()),
            exception: None,
        }
    }

    /// Like [`new`](Self::new), usable in constants.
    pub const fn const_new(content_type: &'static str) -> Self {
        Self {
            content_type: Str::Static(content_type),
            exception: None,
        }
    }
}

impl Predicate for NotForContentType {
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        self.allows(response.headers())
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        self.allows(request.headers())
    }
}

impl NotForContentType {
    fn allows(&self, headers: &HeaderMap) -> bool {
        let Some(value) = headers.get(CONTENT_TYPE) else {
            return true;
        };
        let value = trim(value.as_bytes());
        if let Some(except) = &self.exception {
            if starts_with_ci(value, except.as_str().as_bytes()) {
                return true;
            }
        }
        !starts_with_ci(value, self.content_type.as_str().as_bytes())
    }
}

#[derive(Clone)]
enum Str {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Str {
    fn as_str(&self) -> &str {
        match self {
            Str::Static(s) => s,
            Str::Shared(s) => s,
        }
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

/// A request-side predicate from a closure over the request's method, URI and headers, for
/// [`RequestCompression::compress_when`](crate::client::RequestCompression::compress_when).
/// It says yes to every response.
///
/// ```
/// use tower_gzip::client::RequestCompressionLayer;
/// use tower_gzip::predicate::{DefaultPredicate, Predicate, RequestFn};
///
/// let layer = RequestCompressionLayer::new().compress_when(
///     DefaultPredicate::new().and(RequestFn::new(|_, uri: &http::Uri, _| uri.path().starts_with("/api/"))),
/// );
/// # let _ = layer;
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RequestFn<F>(F);

impl<F> RequestFn<F>
where
    F: Fn(&Method, &Uri, &HeaderMap) -> bool + Clone,
{
    /// Wraps `f`.
    pub fn new(f: F) -> Self {
        RequestFn(f)
    }
}

impl<F> Predicate for RequestFn<F>
where
    F: Fn(&Method, &Uri, &HeaderMap) -> bool + Clone,
{
    fn should_compress<B: Body>(&self, _: &Response<B>) -> bool {
        true
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        (self.0)(request.method(), request.uri(), request.headers())
    }
}

/// The default predicate: compress everything except content that does not shrink or
/// must not be touched. Skipped, by media type (parameters and case ignored):
///
/// - `image/*` except `image/svg+xml`, `audio/*`, `video/*`: already compressed formats
///   (SVG is XML text and compresses well).
/// - `application/grpc` and `application/grpc+*`: gRPC compresses per message and
///   signals it in its own headers. `application/grpc-web*` *is* compressed: it goes
///   through browsers and ordinary HTTP compression.
/// - Archives and compressed formats (zip, gzip, zstd, brotli, 7z, rar, bzip2, xz, lzma,
///   lz4, compress, snappy, jar, ogg, WOFF fonts, and any `+zip` / `+gzip` type):
///   compressing them again costs CPU for no gain.
///
/// Unlike tower-http, `text/event-stream` is compressed: this crate flushes the encoder
/// after every event, so events are not delayed.
///
/// Bodies of known size under the layer's `min_size` (default
/// [`DEFAULT_MIN_SIZE`](crate::compression::DEFAULT_MIN_SIZE), 256 B) are not compressed
/// either: the floor is a layer setting so that `min_size(n)` changes it, and so that a body
/// of unknown size can be read ahead and measured instead of guessed.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultPredicate {
    _priv: (),
}

impl DefaultPredicate {
    /// The default predicate.
    pub const fn new() -> Self {
        Self { _priv: () }
    }
}

impl Predicate for DefaultPredicate {
    fn should_compress<B: Body>(&self, response: &Response<B>) -> bool {
        !is_compressed_content(response.headers())
    }

    fn should_compress_request<B: Body>(&self, request: &Request<B>) -> bool {
        !is_compressed_content(request.headers())
    }

    fn applies_min_size(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::COMPRESSED;
    use bytes::Bytes;
    use http::header::CONTENT_LENGTH;
    use http_body::{Frame, SizeHint};
    use http_body_util::Full;
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A body whose size is not known in advance.
    struct Unknown;

    impl Body for Unknown {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready(None)
        }

        fn size_hint(&self) -> SizeHint {
            SizeHint::new()
        }
    }

    fn typed(content_type: &str) -> Response<Full<Bytes>> {
        Response::builder()
            .header(CONTENT_TYPE, content_type)
            .body(Full::new(Bytes::from(vec![b'a'; 1024])))
            .unwrap()
    }

    fn default_compresses(content_type: &str) -> bool {
        DefaultPredicate::new().should_compress(&typed(content_type))
    }

    #[test]
    fn default_compresses_text_and_unknown() {
        for ct in [
            "text/html",
            "text/html; charset=utf-8",
            "TEXT/Plain;Charset=UTF-8",
            "application/json",
            "application/javascript",
            "application/octet-stream",
            "application/x-tar",
            "application/wasm",
            "font/ttf",
            "",
        ] {
            assert!(default_compresses(ct), "{ct:?}");
        }
        let untyped = Response::new(Full::new(Bytes::from_static(b"x")));
        assert!(DefaultPredicate::new().should_compress(&untyped));
    }

    #[test]
    fn default_skips_media() {
        for ct in [
            "image/png",
            "image/jpeg",
            "IMAGE/WebP",
            "image/avif; q=1",
            "audio/mpeg",
            "Audio/Ogg",
            "video/mp4",
            "video/webm; codecs=\"vp8, vorbis\"",
        ] {
            assert!(!default_compresses(ct), "{ct:?}");
        }
    }

    #[test]
    fn default_compresses_svg() {
        assert!(default_compresses("image/svg+xml"));
        assert!(default_compresses("Image/SVG+XML; charset=utf-8"));
        assert!(default_compresses(" image/svg+xml ;charset=utf-8"));
    }

    #[test]
    fn default_grpc_but_not_grpc_web() {
        for ct in [
            "application/grpc",
            "application/grpc+proto",
            "Application/GRPC+json",
        ] {
            assert!(!default_compresses(ct), "{ct:?}");
        }
        assert!(!default_compresses("application/grpc; charset=utf-8"));
        for ct in [
            "application/grpc-web",
            "application/grpc-web+proto",
            "application/grpc-web-text",
            "APPLICATION/GRPC-WEB-TEXT+proto",
        ] {
            assert!(default_compresses(ct), "{ct:?}");
        }
    }

    #[test]
    fn default_skips_compressed_formats() {
        for ct in COMPRESSED {
            let ct = std::str::from_utf8(ct).unwrap();
            assert!(!default_compresses(ct), "{ct:?}");
            assert!(!default_compresses(&ct.to_ascii_uppercase()), "{ct:?}");
            assert!(!default_compresses(&format!("{ct}; name=x")), "{ct:?}");
        }
        assert!(!default_compresses("application/epub+zip"));
        assert!(!default_compresses("application/tlsrpt+GZIP"));
        // Only the media type is compared: parameters and prefixes don't match.
        assert!(default_compresses("application/zip-listing"));
        assert!(default_compresses("text/plain; note=application/zip"));
    }

    #[test]
    fn default_compresses_sse() {
        assert!(default_compresses("text/event-stream"));
        assert!(default_compresses("text/event-stream; charset=utf-8"));
    }

    #[test]
    fn default_ignores_size() {
        let tiny = Response::builder()
            .header(CONTENT_TYPE, "text/plain")
            .body(String::new())
            .unwrap();
        assert!(DefaultPredicate::default().should_compress(&tiny));
    }

    #[test]
    fn default_non_utf8_content_type() {
        let response = Response::builder()
            .header(
                CONTENT_TYPE,
                http::HeaderValue::from_bytes(b"image/\xff").unwrap(),
            )
            .body(Unknown)
            .unwrap();
        assert!(!DefaultPredicate::new().should_compress(&response));
    }

    #[test]
    fn not_for_content_type() {
        let p = NotForContentType::new("application/x-custom");
        assert!(!p.should_compress(&typed("application/x-custom")));
        assert!(!p.should_compress(&typed("Application/X-Custom; v=1")));
        assert!(!p.should_compress(&typed("application/x-custom-2")));
        assert!(p.should_compress(&typed("application/json")));
        assert!(p.should_compress(&Response::new(Unknown)));

        let p = NotForContentType::const_new("TEXT/");
        assert!(!p.should_compress(&typed("text/html")));
    }

    #[test]
    fn not_for_content_type_constants() {
        let grpc = NotForContentType::GRPC;
        assert!(!grpc.should_compress(&typed("application/grpc")));
        assert!(!grpc.should_compress(&typed("application/grpc+proto")));
        assert!(grpc.should_compress(&typed("application/grpc-web+proto")));

        let images = NotForContentType::IMAGES;
        assert!(!images.should_compress(&typed("image/png")));
        assert!(!images.should_compress(&typed("Image/PNG")));
        assert!(images.should_compress(&typed("image/svg+xml; charset=utf-8")));
        assert!(images.should_compress(&typed("text/html")));

        let sse = NotForContentType::SSE;
        assert!(!sse.should_compress(&typed("text/event-stream")));
        assert!(sse.should_compress(&typed("text/plain")));
        assert!(format!("{sse:?}").contains("text/event-stream"));
    }

    #[test]
    fn size_above_exact_hint() {
        let p = SizeAbove::new(4);
        assert!(!p.should_compress(&Response::new(String::from("abc"))));
        assert!(p.should_compress(&Response::new(String::from("abcd"))));
        assert!(p.should_compress(&Response::new(Full::new(Bytes::from_static(b"abcde")))));
        // The exact hint wins over a disagreeing header.
        let r = Response::builder()
            .header(CONTENT_LENGTH, "1000")
            .body(String::from("ab"))
            .unwrap();
        assert!(!p.should_compress(&r));
        assert!(!SizeAbove::default().should_compress(&Response::new(String::from("x"))));
    }

    fn unknown_with_length(values: &[&str]) -> Response<Unknown> {
        let mut r = Response::new(Unknown);
        for v in values {
            r.headers_mut().append(CONTENT_LENGTH, v.parse().unwrap());
        }
        r
    }

    #[test]
    fn size_above_content_length() {
        let p = SizeAbove::new(100);
        assert!(!p.should_compress(&unknown_with_length(&["99"])));
        assert!(p.should_compress(&unknown_with_length(&["100"])));
        assert!(!p.should_compress(&unknown_with_length(&["5, 5"])));
        assert!(!p.should_compress(&unknown_with_length(&["5", "5"])));
    }

    #[test]
    fn size_above_unknown_size_compresses() {
        let p = SizeAbove::new(100);
        assert!(p.should_compress(&Response::new(Unknown)));
        // Invalid or conflicting lengths count as unknown.
        for bad in [&["abc"][..], &["+5"], &["-1"], &["5", "6"], &["5,"], &[""]] {
            assert!(p.should_compress(&unknown_with_length(bad)), "{bad:?}");
        }
        assert!(p.should_compress(&unknown_with_length(&["99999999999999999999999"])));
    }

    fn rbody_size<B: Body>(response: &Response<B>) -> Option<u64> {
        body_size(response.headers(), response.body())
    }

    #[test]
    fn body_size_sources() {
        assert_eq!(rbody_size(&Response::new(String::from("abc"))), Some(3));
        assert_eq!(rbody_size(&unknown_with_length(&["42"])), Some(42));
        assert_eq!(rbody_size(&unknown_with_length(&[" 42 , 42"])), Some(42));
        assert_eq!(rbody_size(&Response::new(Unknown)), None);
        assert_eq!(rbody_size(&unknown_with_length(&["4 2"])), None);
    }

    #[test]
    fn composition() {
        let yes = |_: StatusCode, _: Version, _: &HeaderMap, _: &Extensions| true;
        let no = |_: StatusCode, _: Version, _: &HeaderMap, _: &Extensions| false;
        let r = Response::new(String::from("body"));
        assert!(yes.and(yes).should_compress(&r));
        assert!(!yes.and(no).should_compress(&r));
        assert!(!no.and(yes).should_compress(&r));
        assert!(yes.or(no).should_compress(&r));
        assert!(no.or(yes).should_compress(&r));
        assert!(!no.or(no).should_compress(&r));
        assert!(no.not().should_compress(&r));
        assert!(!yes.not().should_compress(&r));
        assert!(no.not().not().not().should_compress(&r));

        let p = DefaultPredicate::new()
            .and(SizeAbove::new(256))
            .and(NotForContentType::new("application/x-custom"));
        assert!(p.should_compress(&typed("text/html")));
        assert!(!p.should_compress(&typed("application/x-custom")));
        assert!(!p.should_compress(&typed("image/png")));
        let images_only = NotForContentType::IMAGES.not();
        assert!(images_only.should_compress(&typed("image/png")));
        assert!(!images_only.should_compress(&typed("text/html")));
    }

    #[test]
    fn closures_see_the_response_head() {
        let only_ok = |status: StatusCode, _: Version, _: &HeaderMap, _: &Extensions| {
            status == StatusCode::OK
        };
        let mut r = Response::new(String::new());
        assert!(only_ok.should_compress(&r));
        *r.status_mut() = StatusCode::NOT_FOUND;
        assert!(!only_ok.should_compress(&r));

        #[derive(Clone)]
        struct Skip;
        let no_skip = |_: StatusCode, _: Version, _: &HeaderMap, ext: &Extensions| {
            ext.get::<Skip>().is_none()
        };
        r.extensions_mut().insert(Skip);
        assert!(!no_skip.should_compress(&r));

        let h2_only = |_: StatusCode, v: Version, h: &HeaderMap, _: &Extensions| {
            v == Version::HTTP_2 && !h.contains_key("x-raw")
        };
        *r.version_mut() = Version::HTTP_2;
        assert!(h2_only.should_compress(&r));
    }

    #[test]
    fn option_none_always_compresses() {
        let none: Option<SizeAbove> = None;
        let some = Some(SizeAbove::new(100));
        let small = Response::new(String::from("x"));
        assert!(none.should_compress(&small));
        assert!(!some.should_compress(&small));
        // `Option::and` is inherent and would shadow the trait method here.
        assert!(Predicate::and(none, some).not().should_compress(&small));
    }
}
