//! How long a response stays fresh (RFC 9111 section 4.2.1): a dictionary is offered only
//! while the response that carried it would be fresh in an HTTP cache.

use std::time::{Duration, SystemTime};

use http::HeaderMap;
use http::header::{AGE, CACHE_CONTROL, DATE, EXPIRES};

/// The freshness lifetime left, from `Cache-Control: max-age` or else `Expires` (against
/// `Date`, or `now` without one), less `Age`. `None` when the response must not be kept:
/// `no-store`, `no-cache` (it would need revalidation, which this store does not do), an
/// invalid or duplicated-and-invalid directive, no explicit lifetime (no heuristics), or
/// nothing left.
pub(crate) fn lifetime(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let mut max_age: Option<u64> = None;
    for value in headers.get_all(CACHE_CONTROL) {
        let value = value.to_str().ok()?;
        for directive in value.split(',').map(str::trim) {
            let (name, arg) = match directive.split_once('=') {
                Some((name, arg)) => (name.trim(), Some(arg.trim().trim_matches('"'))),
                None => (directive, None),
            };
            if name.eq_ignore_ascii_case("no-store") || name.eq_ignore_ascii_case("no-cache") {
                return None;
            }
            if name.eq_ignore_ascii_case("max-age") {
                // An invalid max-age makes the response stale (RFC 9111 section 4.2.1);
                // of several, the shortest holds.
                let seconds: u64 = arg?.parse().ok()?;
                max_age = Some(max_age.map_or(seconds, |m| m.min(seconds)));
            }
        }
    }
    let lifetime = match max_age {
        Some(seconds) => Duration::from_secs(seconds),
        None => {
            let expires = http_date(headers, EXPIRES)?;
            let date = http_date(headers, DATE).unwrap_or(now);
            expires.duration_since(date).ok()?
        }
    };
    let age = headers
        .get(AGE)
        .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
        .map_or(Duration::ZERO, Duration::from_secs);
    lifetime.checked_sub(age).filter(|left| !left.is_zero())
}

fn http_date(headers: &HeaderMap, name: http::HeaderName) -> Option<SystemTime> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    httpdate::parse_http_date(value.to_str().ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    const NOW: &str = "Wed, 02 Dec 2026 12:00:00 GMT";

    fn lifetime_of(pairs: &[(&str, &str)]) -> Option<u64> {
        let now = httpdate::parse_http_date(NOW).unwrap();
        lifetime(&headers(pairs), now).map(|d| d.as_secs())
    }

    #[test]
    fn max_age_wins_over_expires_and_age_is_subtracted() {
        assert_eq!(
            lifetime_of(&[("cache-control", "max-age=3600")]),
            Some(3600)
        );
        assert_eq!(
            lifetime_of(&[("cache-control", "public, MAX-AGE=\"60\"")]),
            Some(60)
        );
        assert_eq!(
            lifetime_of(&[
                ("cache-control", "max-age=100"),
                ("expires", "Thu, 03 Dec 2026 12:00:00 GMT"),
                ("age", "40"),
            ]),
            Some(60)
        );
        assert_eq!(
            lifetime_of(&[("cache-control", "max-age=100"), ("age", "100")]),
            None
        );
        assert_eq!(
            lifetime_of(&[("cache-control", "max-age=100, max-age=10")]),
            Some(10)
        );
    }

    #[test]
    fn expires_counts_from_date_or_now() {
        assert_eq!(
            lifetime_of(&[
                ("expires", "Wed, 02 Dec 2026 13:00:00 GMT"),
                ("date", "Wed, 02 Dec 2026 12:30:00 GMT"),
            ]),
            Some(1800)
        );
        assert_eq!(
            lifetime_of(&[("expires", "Wed, 02 Dec 2026 13:00:00 GMT")]),
            Some(3600)
        );
        // In the past, or not a date ("0" means already expired).
        assert_eq!(
            lifetime_of(&[("expires", "Wed, 02 Dec 2026 11:00:00 GMT")]),
            None
        );
        assert_eq!(lifetime_of(&[("expires", "0")]), None);
    }

    #[test]
    fn responses_that_must_not_be_kept() {
        for pairs in [
            &[][..],
            &[("cache-control", "no-store, max-age=3600")][..],
            &[
                ("cache-control", "max-age=3600"),
                ("cache-control", "no-cache"),
            ][..],
            &[("cache-control", "max-age=0")][..],
            &[("cache-control", "max-age=soon")][..],
            &[("cache-control", "max-age")][..],
            &[("cache-control", "max-age=-1")][..],
            &[("cache-control", "public")][..],
        ] {
            assert_eq!(lifetime_of(pairs), None, "{pairs:?}");
        }
    }
}
