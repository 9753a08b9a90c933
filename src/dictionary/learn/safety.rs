//! Which responses may become dictionary material. A dictionary is readable by every client
//! that receives it, so only a response that is the same for everyone may go into one: a
//! `GET` answered `2xx`, with no credentials on the request, no cookie set by the response,
//! and nothing in `Cache-Control` saying it is private.

use http::header::{AUTHORIZATION, CONTENT_ENCODING, COOKIE, SET_COOKIE};
use http::{HeaderMap, Method, StatusCode, request};

use crate::headers::{CacheControl, varies_beyond_coding};

/// The query parameters that carry a credential, by default (names compared without case,
/// percent-decoded): OAuth 2.0 bearer tokens (RFC 6750 section 2.3: `access_token`) and
/// their kin, API keys, signed URLs (S3's presigned `X-Amz-*`, `sig`, `signature`),
/// passwords and session ids. A response to a URL naming one may be that holder's alone.
/// Replace the list with
/// [`LearnerBuilder::credential_query_params`](super::LearnerBuilder::credential_query_params).
pub const CREDENTIAL_QUERY_PARAMS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "auth",
    "api_key",
    "apikey",
    "api-key",
    "key",
    "client_secret",
    "secret",
    "code",
    "sig",
    "signature",
    "password",
    "passwd",
    "session",
    "sessionid",
    "session_id",
    "jwt",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
];

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
    /// The response's `Vary` names a request header beyond `Accept-Encoding` and
    /// `Available-Dictionary` (or is `*`): it may differ from client to client.
    Vary,
    /// The query names a credential parameter (`access_token`, ...; see
    /// [`CREDENTIAL_QUERY_PARAMS`]).
    QueryCredential,
    /// Nothing says which client the request came from (see [`ClientId`](super::ClientId)):
    /// the learner cannot count it towards the clients a dictionary's content needs.
    UnknownClient,
}

impl Refusal {
    /// Every reason, in the order [`LearnedRouteStats::refused`] counts them.
    ///
    /// [`LearnedRouteStats::refused`]: super::LearnedRouteStats::refused
    pub(crate) const ALL: [Refusal; 15] = [
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
        Refusal::Vary,
        Refusal::QueryCredential,
        Refusal::UnknownClient,
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
            Refusal::Vary => "vary",
            Refusal::QueryCredential => "query-credential",
            Refusal::UnknownClient => "unknown-client",
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

/// What the request alone rules out; `credentials` are lowercase query parameter names.
pub(crate) fn request_refusal(req: &request::Parts, credentials: &[String]) -> Option<Refusal> {
    if req.method != Method::GET {
        Some(Refusal::Method)
    } else if req.headers.contains_key(AUTHORIZATION) {
        Some(Refusal::Authorization)
    } else if req.headers.contains_key(COOKIE) {
        Some(Refusal::Cookie)
    } else if req
        .uri
        .query()
        .is_some_and(|q| names_credential(q, credentials))
    {
        Some(Refusal::QueryCredential)
    } else {
        None
    }
}

/// Whether a parameter of `query` is named (percent-decoded, without case) in `credentials`.
fn names_credential(query: &str, credentials: &[String]) -> bool {
    query.split(['&', ';']).any(|pair| {
        let name = pair.split('=').next().unwrap_or_default();
        let name = percent_decode(name.as_bytes());
        credentials
            .iter()
            .any(|c| c.as_bytes().eq_ignore_ascii_case(&name))
    })
}

/// `%XX` escapes decoded and `+` as a space; a malformed escape is kept as it is.
fn percent_decode(s: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match (
            s[i],
            s.get(i + 1).copied().and_then(hex),
            s.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b'+', ..) => {
                out.push(b' ');
                i += 1;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
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
    if varies_beyond_coding(headers) {
        return Some(Refusal::Vary);
    }
    let cache = CacheControl::of(headers);
    if cache.private {
        Some(Refusal::Private)
    } else if cache.no_store {
        Some(Refusal::NoStore)
    } else {
        None
    }
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

    fn refusal(method: Method, uri: &str, headers: HeaderMap) -> Option<Refusal> {
        let (mut parts, ()) = http::Request::new(()).into_parts();
        (parts.method, parts.uri, parts.headers) = (method, uri.parse().unwrap(), headers);
        let credentials: Vec<String> = CREDENTIAL_QUERY_PARAMS
            .iter()
            .map(|c| c.to_string())
            .collect();
        request_refusal(&parts, &credentials)
    }

    #[test]
    fn requests_with_credentials_or_other_methods_are_refused() {
        let none = HeaderMap::new;
        assert_eq!(refusal(Method::GET, "/a", none()), None);
        assert_eq!(refusal(Method::POST, "/a", none()), Some(Refusal::Method));
        assert_eq!(refusal(Method::HEAD, "/a", none()), Some(Refusal::Method));
        let auth = headers(&[("authorization", "Bearer x")]);
        assert_eq!(
            refusal(Method::GET, "/a", auth),
            Some(Refusal::Authorization)
        );
        let cookie = headers(&[("cookie", "a=b")]);
        assert_eq!(refusal(Method::GET, "/a", cookie), Some(Refusal::Cookie));
    }

    #[test]
    fn credentials_in_the_query_are_refused_by_name() {
        let refused = [
            "/a?access_token=x",
            "/a?page=2&Access_Token=x",
            "/a?x=1;api_key",
            "/a?access%5Ftoken=x",
            "/a?%61pikey=1",
            "/a?X-Amz-Signature=ab&X-Amz-Credential=c",
            "/a?sig=1",
        ];
        for uri in refused {
            let got = refusal(Method::GET, uri, HeaderMap::new());
            assert_eq!(got, Some(Refusal::QueryCredential), "{uri}");
        }
        // Names only: a value that looks like a name, or a name containing one, passes.
        for uri in [
            "/a?q=token",
            "/a?tokens=1",
            "/a?monkey=1",
            "/a?%zz=1&%",
            "/a?=",
        ] {
            assert_eq!(refusal(Method::GET, uri, HeaderMap::new()), None, "{uri}");
        }
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
            ("vary", "X-Api-Key", Refusal::Vary),
            ("vary", "accept-encoding, *", Refusal::Vary),
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
        let public = headers(&[
            ("cache-control", "public, max-age=60, no-cache"),
            ("vary", "Accept-Encoding, Available-Dictionary"),
        ]);
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
