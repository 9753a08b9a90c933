//! When to compress a response.
//!
//! A [`Predicate`] looks at a response's head (and its body's size hint) and says whether it
//! is worth compressing. The names mirror `tower_http::compression::predicate`, so existing
//! predicates port over unchanged.
//!
//! ```
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use tower_gzip::compression::predicate::{DefaultPredicate, NotForContentType, Predicate, SizeAbove};
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
///
/// It never applies the `min_size` floor, even around [`DefaultPredicate`]: the negation
/// picks what the inner predicate turns down, and a floor meant for what it picks would
/// say nothing about that.
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
/// [`RequestCompressionLayer::compress_when`](crate::client::RequestCompressionLayer::compress_when).
/// It says yes to every response.
///
/// ```
/// use tower_gzip::client::RequestCompressionLayer;
/// use tower_gzip::compression::predicate::{DefaultPredicate, Predicate, RequestFn};
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
/// 256 B) are not compressed
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
mod tests;
