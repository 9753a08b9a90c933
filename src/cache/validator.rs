//! Streamed responses cached by their validator, as a shared cache must (RFC 9111): under
//! the request's scheme, authority, path and query and the response's strong `ETag`, only
//! when nothing says the response is one client's, and never past a bounded age.
//!
//! The rules, each one a way the entry could reach a client it was not for:
//! - the request names its authority (`Host` or `:authority`): virtual hosts share paths;
//! - the request allows storing (no `Cache-Control: no-store`, RFC 9111 section 5.2.1.5);
//!   with `Authorization`, the response says it may be shared (`public`, `s-maxage` or
//!   `must-revalidate`, section 3.5);
//! - the response is a `200` with a strong `ETag`, not `private` or `no-store`
//!   (sections 5.2.2.5, 5.2.2.7), sets no cookie, and varies on nothing but the content
//!   codings (`Vary: *` never; any other header the cache would have to key on, and a
//!   forgotten one would leak, so none);
//! - the entry lives at most the cache's `etag_max_age`, and never past the response's own
//!   freshness (`s-maxage`, `max-age`, or `Expires` against `Date`, less `Age`).

use std::time::{Duration, SystemTime};

use http::header::{AGE, AUTHORIZATION, DATE, ETAG, EXPIRES, HOST, HeaderValue, SET_COOKIE};
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderMap, Request, StatusCode};

use crate::headers::{CacheControl, varies_beyond_coding};

/// What a validator entry needs of the request, taken when the request is seen: where it
/// was sent and whether it lets a shared cache store the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequestScope {
    scheme: Option<Scheme>,
    authority: Authority,
    path: PathAndQuery,
    /// The request carries `Authorization`.
    credentials: bool,
}

impl RequestScope {
    /// The scope of `req`; `None` when no answer to it may be stored by validator: it names
    /// no authority or path, or says `no-store`.
    pub(crate) fn of<B>(req: &Request<B>) -> Option<RequestScope> {
        let uri = req.uri();
        let headers = req.headers();
        // An absolute URI's authority wins over `Host` (RFC 9112 section 3.2.2).
        let authority = match uri.authority() {
            Some(authority) => authority.clone(),
            None => Authority::try_from(headers.get(HOST)?.as_bytes()).ok()?,
        };
        if CacheControl::of(headers).no_store {
            return None;
        }
        Some(RequestScope {
            scheme: uri.scheme().cloned(),
            authority,
            path: uri.path_and_query()?.clone(),
            credentials: headers.contains_key(AUTHORIZATION),
        })
    }
}

/// What a streamed response is cached under when the application vouches for it, and how
/// long the entry may serve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Validator {
    scope: RequestScope,
    etag: HeaderValue,
    /// How long a filed entry may serve, from when it is filed.
    pub(crate) lifetime: Duration,
}

impl Validator {
    /// The validator of a response to a request in `scope`, if a shared cache may keep it:
    /// see the [module docs](self). `max_age` bounds the entry's life.
    pub(crate) fn of(
        scope: &RequestScope,
        status: StatusCode,
        headers: &HeaderMap,
        max_age: Duration,
    ) -> Option<Validator> {
        let etag = headers.get(ETAG)?;
        // A strong entity tag is a quoted string; `W/` marks a weak one (RFC 9110 8.8.3).
        let strong = etag.as_bytes().first() == Some(&b'"');
        if !strong || status != StatusCode::OK || !shareable(scope, headers) {
            return None;
        }
        let lifetime = freshness(headers).map_or(max_age, |fresh| fresh.min(max_age));
        (!lifetime.is_zero()).then(|| Validator {
            scope: scope.clone(),
            etag: etag.clone(),
            lifetime,
        })
    }

    /// The bytes the doorkeeper remembers it by, and the key hashes: each part
    /// length-prefixed, so no two validators give the same bytes.
    pub(crate) fn identity(&self) -> Vec<u8> {
        let scope = &self.scope;
        let scheme = scope.scheme.as_ref().map_or("", Scheme::as_str);
        let parts = [
            scheme.as_bytes(),
            scope.authority.as_str().as_bytes(),
            scope.path.as_str().as_bytes(),
            self.etag.as_bytes(),
        ];
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.len() + 8).sum());
        for part in parts {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(part);
        }
        out
    }
}

/// Whether nothing in the exchange says the response is one client's.
fn shareable(scope: &RequestScope, headers: &HeaderMap) -> bool {
    let cc = CacheControl::of(headers);
    let vouched = cc.public || cc.s_maxage.is_some() || cc.must_revalidate;
    !(cc.private
        || cc.no_store
        || headers.contains_key(SET_COOKIE)
        || varies_beyond_coding(headers)
        || (scope.credentials && !vouched))
}

/// How much longer the response says it is fresh, when it says (RFC 9111 section 4.2):
/// `s-maxage`, else `max-age`, else `Expires` less `Date` (an `Expires` that cannot be read
/// is stale), each less the response's `Age`.
fn freshness(headers: &HeaderMap) -> Option<Duration> {
    let cc = CacheControl::of(headers);
    let lifetime = match cc.shared_lifetime() {
        Some(seconds) => Duration::from_secs(seconds),
        None => {
            let expires = headers.get(EXPIRES)?;
            let date = |value: &HeaderValue| httpdate::parse_http_date(value.to_str().ok()?).ok();
            let now = headers
                .get(DATE)
                .and_then(date)
                .unwrap_or_else(SystemTime::now);
            let expires = date(expires).unwrap_or(SystemTime::UNIX_EPOCH);
            expires.duration_since(now).unwrap_or_default()
        }
    };
    let age = headers
        .get(AGE)
        .and_then(|age| age.to_str().ok()?.trim().parse::<u64>().ok())
        .map_or(Duration::ZERO, Duration::from_secs);
    Some(lifetime.saturating_sub(age))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    fn scope(host: &str, extra: &[(&'static str, &'static str)]) -> RequestScope {
        let mut req = Request::get("/app.js?v=1").header(HOST, host);
        for (name, value) in extra {
            req = req.header(*name, *value);
        }
        RequestScope::of(&req.body(()).unwrap()).unwrap()
    }

    fn response(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(ETAG, HeaderValue::from_static("\"v1\""));
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    fn validator(
        scope: &RequestScope,
        pairs: &[(&'static str, &'static str)],
    ) -> Option<Validator> {
        Validator::of(scope, StatusCode::OK, &response(pairs), HOUR)
    }

    #[test]
    fn the_authority_and_scheme_are_part_of_the_identity() {
        let a = validator(&scope("a.example", &[]), &[]).unwrap();
        let b = validator(&scope("b.example", &[]), &[]).unwrap();
        assert_ne!(a.identity(), b.identity());
        let h2 = Request::get("https://a.example/app.js?v=1")
            .body(())
            .unwrap();
        let h2 = validator(&RequestScope::of(&h2).unwrap(), &[]).unwrap();
        assert_ne!(a.identity(), h2.identity());
        assert_eq!(
            a.identity(),
            validator(&scope("a.example", &[]), &[]).unwrap().identity()
        );
    }

    #[test]
    fn requests_without_an_authority_or_that_forbid_storing_have_no_scope() {
        assert_eq!(
            RequestScope::of(&Request::get("/x").body(()).unwrap()),
            None
        );
        let no_store = Request::get("/x")
            .header(HOST, "a.example")
            .header("cache-control", "no-store")
            .body(())
            .unwrap();
        assert_eq!(RequestScope::of(&no_store), None);
    }

    #[test]
    fn private_responses_are_never_validators() {
        let plain = scope("a.example", &[]);
        for refused in [
            ("cache-control", "private"),
            ("cache-control", "public, no-store"),
            ("set-cookie", "id=1"),
            ("vary", "Accept-Language"),
            ("vary", "*"),
            ("cache-control", "max-age=0"),
        ] {
            assert_eq!(validator(&plain, &[refused]), None, "{refused:?}");
        }
        assert!(validator(&plain, &[("vary", "accept-encoding, available-dictionary")]).is_some());
        let weak = [("etag", "W/\"v1\"")];
        let mut headers = response(&[]);
        headers.insert(ETAG, HeaderValue::from_static(weak[0].1));
        assert_eq!(Validator::of(&plain, StatusCode::OK, &headers, HOUR), None);
        let created = Validator::of(&plain, StatusCode::CREATED, &response(&[]), HOUR);
        assert_eq!(created, None);
    }

    #[test]
    fn authorized_requests_need_the_response_to_allow_sharing() {
        let authorized = scope("a.example", &[("authorization", "Bearer t")]);
        assert_eq!(validator(&authorized, &[]), None);
        for allowed in ["public", "s-maxage=60", "must-revalidate"] {
            assert!(
                validator(&authorized, &[("cache-control", allowed)]).is_some(),
                "{allowed}"
            );
        }
    }

    #[test]
    fn the_lifetime_is_the_shortest_of_the_bound_and_the_responses_own() {
        let plain = scope("a.example", &[]);
        assert_eq!(validator(&plain, &[]).unwrap().lifetime, HOUR);
        let short = validator(&plain, &[("cache-control", "max-age=60, s-maxage=30")]);
        assert_eq!(short.unwrap().lifetime, Duration::from_secs(30));
        let long = validator(&plain, &[("cache-control", "max-age=86400")]);
        assert_eq!(long.unwrap().lifetime, HOUR);
        let aged = validator(&plain, &[("cache-control", "max-age=60"), ("age", "50")]);
        assert_eq!(aged.unwrap().lifetime, Duration::from_secs(10));
        let expires = [
            ("date", "Mon, 07 Dec 2026 10:00:00 GMT"),
            ("expires", "Mon, 07 Dec 2026 10:02:00 GMT"),
        ];
        assert_eq!(
            validator(&plain, &expires).unwrap().lifetime,
            Duration::from_secs(120)
        );
        assert_eq!(validator(&plain, &[("expires", "0")]), None);
    }
}
