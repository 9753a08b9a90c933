//! Which responses may become dictionary material. A dictionary is readable by every client
//! that receives it, so only a response that is the same for everyone may go into one: a
//! `GET` answered `2xx`, with no credentials on the request, no cookie set by the response,
//! and nothing in `Cache-Control` saying it is private.

use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_ENCODING, COOKIE, SET_COOKIE};
use http::{HeaderMap, Method, StatusCode};

use crate::headers::{list, trim};

/// Why a response of a learned route did not become a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// The request was not a `GET`.
    Method,
    /// The request carried `Authorization`: the response may be that user's.
    Authorization,
    /// The request carried `Cookie`: the response may be that user's.
    Cookie,
    /// The response's status was not `2xx`.
    Status,
    /// The response sets a cookie.
    SetCookie,
    /// `Cache-Control: private`.
    Private,
    /// `Cache-Control: no-store`.
    NoStore,
    /// The response is encoded already (`Content-Encoding`).
    Encoded,
    /// The learner's filter said no.
    Filter,
    /// The body was longer than a sample may be.
    TooLarge,
    /// The body failed or was dropped before its end.
    Incomplete,
    /// The learner's queue was full (it is building): the sample was dropped.
    Busy,
}

impl Refusal {
    /// Every reason, in the order [`LearnedRouteStats::refused`] counts them.
    ///
    /// [`LearnedRouteStats::refused`]: super::LearnedRouteStats::refused
    pub(crate) const ALL: [Refusal; 12] = [
        Refusal::Method,
        Refusal::Authorization,
        Refusal::Cookie,
        Refusal::Status,
        Refusal::SetCookie,
        Refusal::Private,
        Refusal::NoStore,
        Refusal::Encoded,
        Refusal::Filter,
        Refusal::TooLarge,
        Refusal::Incomplete,
        Refusal::Busy,
    ];

    /// A short name for logs and metrics (its `Display`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Refusal::Method => "method",
            Refusal::Authorization => "authorization",
            Refusal::Cookie => "cookie",
            Refusal::Status => "status",
            Refusal::SetCookie => "set-cookie",
            Refusal::Private => "private",
            Refusal::NoStore => "no-store",
            Refusal::Encoded => "encoded",
            Refusal::Filter => "filter",
            Refusal::TooLarge => "too-large",
            Refusal::Incomplete => "incomplete",
            Refusal::Busy => "busy",
        }
    }

    pub(crate) fn index(self) -> usize {
        Refusal::ALL
            .iter()
            .position(|&r| r == self)
            .expect("ALL lists every reason")
    }
}

/// A short name for logs and metrics (`set-cookie`, `no-store`, ...).
impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the request alone rules out.
pub(crate) fn request_refusal(method: &Method, headers: &HeaderMap) -> Option<Refusal> {
    if method != Method::GET {
        Some(Refusal::Method)
    } else if headers.contains_key(AUTHORIZATION) {
        Some(Refusal::Authorization)
    } else if headers.contains_key(COOKIE) {
        Some(Refusal::Cookie)
    } else {
        None
    }
}

/// What the response's head rules out.
pub(crate) fn response_refusal(status: StatusCode, headers: &HeaderMap) -> Option<Refusal> {
    if !status.is_success() {
        return Some(Refusal::Status);
    }
    if headers.contains_key(SET_COOKIE) {
        return Some(Refusal::SetCookie);
    }
    if headers.contains_key(CONTENT_ENCODING) {
        return Some(Refusal::Encoded);
    }
    // A directive's name is what comes before its `=` argument, if any.
    let mut names = list(headers, CACHE_CONTROL)
        .map(|d| trim(d.split(|&b| b == b'=').next().unwrap_or_default()));
    names.find_map(|name| {
        if name.eq_ignore_ascii_case(b"private") {
            Some(Refusal::Private)
        } else if name.eq_ignore_ascii_case(b"no-store") {
            Some(Refusal::NoStore)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, HeaderValue::from_static(value));
        }
        h
    }

    #[test]
    fn requests_with_credentials_or_other_methods_are_refused() {
        let none = HeaderMap::new();
        assert_eq!(request_refusal(&Method::GET, &none), None);
        assert_eq!(request_refusal(&Method::POST, &none), Some(Refusal::Method));
        assert_eq!(request_refusal(&Method::HEAD, &none), Some(Refusal::Method));
        let auth = headers(&[("authorization", "Bearer x")]);
        assert_eq!(
            request_refusal(&Method::GET, &auth),
            Some(Refusal::Authorization)
        );
        let cookie = headers(&[("cookie", "a=b")]);
        assert_eq!(
            request_refusal(&Method::GET, &cookie),
            Some(Refusal::Cookie)
        );
    }

    #[test]
    fn private_responses_are_refused() {
        let ok = StatusCode::OK;
        assert_eq!(response_refusal(ok, &HeaderMap::new()), None);
        assert_eq!(
            response_refusal(StatusCode::NOT_FOUND, &HeaderMap::new()),
            Some(Refusal::Status)
        );
        assert_eq!(
            response_refusal(StatusCode::NOT_MODIFIED, &HeaderMap::new()),
            Some(Refusal::Status)
        );
        let cases = [
            ("set-cookie", "a=b", Refusal::SetCookie),
            ("content-encoding", "gzip", Refusal::Encoded),
            ("cache-control", "max-age=60, Private", Refusal::Private),
            ("cache-control", "private=\"x-user\"", Refusal::Private),
            ("cache-control", "public, no-store", Refusal::NoStore),
        ];
        for (name, value, refusal) in cases {
            assert_eq!(
                response_refusal(ok, &headers(&[(name, value)])),
                Some(refusal),
                "{name}: {value}"
            );
        }
        // A second Cache-Control line counts too; public ones pass.
        let two = headers(&[("cache-control", "public"), ("cache-control", "no-store")]);
        assert_eq!(response_refusal(ok, &two), Some(Refusal::NoStore));
        // Read as bytes: a line that is not UTF-8 elsewhere still says `private`.
        let mut odd = HeaderMap::new();
        odd.insert(
            "cache-control",
            HeaderValue::from_bytes(b"private, x=\xff").unwrap(),
        );
        assert_eq!(response_refusal(ok, &odd), Some(Refusal::Private));
        let public = headers(&[("cache-control", "public, max-age=60, no-cache")]);
        assert_eq!(response_refusal(ok, &public), None);
    }

    #[test]
    fn every_reason_has_a_distinct_name_and_index() {
        for (i, r) in Refusal::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(
                Refusal::ALL
                    .iter()
                    .filter(|o| o.as_str() == r.as_str())
                    .count(),
                1
            );
        }
    }
}
