//! What a message's headers say about sharing its content with other clients: the
//! `Cache-Control` directives a shared cache obeys (RFC 9111 section 5.2) and whether `Vary`
//! names anything beyond the content codings this crate varies on itself.

use http::header::{ACCEPT_ENCODING, CACHE_CONTROL, HeaderMap, VARY};

use super::{AVAILABLE_DICTIONARY, list, trim};

/// The `Cache-Control` directives that decide whether content may be shared, of a request
/// or a response (several field lines are one list; names are case-insensitive).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CacheControl {
    /// `private` (with or without field names: either way, not for a shared cache).
    pub(crate) private: bool,
    /// `no-store`.
    pub(crate) no_store: bool,
    /// `public`.
    pub(crate) public: bool,
    /// `must-revalidate`.
    pub(crate) must_revalidate: bool,
    /// `max-age`, in seconds (the first valid one).
    pub(crate) max_age: Option<u64>,
    /// `s-maxage`, in seconds (the first valid one).
    pub(crate) s_maxage: Option<u64>,
}

impl CacheControl {
    /// The directives of `headers`' `Cache-Control` lines.
    pub(crate) fn of(headers: &HeaderMap) -> CacheControl {
        let mut seen = CacheControl::default();
        for directive in list(headers, CACHE_CONTROL) {
            let mut parts = directive.splitn(2, |&b| b == b'=');
            let name = trim(parts.next().unwrap_or_default());
            let argument = parts.next().map(|value| seconds(trim(value)));
            let is = |known: &[u8]| name.eq_ignore_ascii_case(known);
            if is(b"private") {
                seen.private = true;
            } else if is(b"no-store") {
                seen.no_store = true;
            } else if is(b"public") {
                seen.public = true;
            } else if is(b"must-revalidate") {
                seen.must_revalidate = true;
            } else if is(b"max-age") {
                // An invalid value makes the response stale (RFC 9111 section 4.2.1): zero.
                seen.max_age = seen.max_age.or(Some(argument.flatten().unwrap_or(0)));
            } else if is(b"s-maxage") {
                seen.s_maxage = seen.s_maxage.or(Some(argument.flatten().unwrap_or(0)));
            }
        }
        seen
    }

    /// How long a shared cache may keep the content fresh, when the directives say:
    /// `s-maxage` first, then `max-age` (RFC 9111 section 4.2.1).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn shared_lifetime(&self) -> Option<u64> {
        self.s_maxage.or(self.max_age)
    }
}

/// A delta-seconds value (RFC 9111 section 1.2.2), quoted or not; too large saturates.
fn seconds(value: &[u8]) -> Option<u64> {
    let value = value
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(value);
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(value.iter().fold(0u64, |n, &d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    }))
}

/// Whether the response's `Vary` names a request header other than `Accept-Encoding` and
/// `Available-Dictionary`, or is `*`: its content then depends on something of the request
/// this crate does not key on, and may be one client's alone.
pub(crate) fn varies_beyond_coding(headers: &HeaderMap) -> bool {
    list(headers, VARY).any(|name| {
        !name.eq_ignore_ascii_case(ACCEPT_ENCODING.as_str().as_bytes())
            && !name.eq_ignore_ascii_case(AVAILABLE_DICTIONARY.as_str().as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn directives_are_read_across_lines_and_cases() {
        let h = headers(&[
            ("cache-control", "Public, max-age=60"),
            (
                "cache-control",
                "S-MAXAGE=\"30\", must-revalidate, private=\"x\"",
            ),
        ]);
        let cc = CacheControl::of(&h);
        assert!(cc.public && cc.private && cc.must_revalidate && !cc.no_store);
        assert_eq!((cc.max_age, cc.s_maxage), (Some(60), Some(30)));
        assert_eq!(cc.shared_lifetime(), Some(30));
        assert_eq!(CacheControl::of(&HeaderMap::new()), CacheControl::default());
    }

    #[test]
    fn an_invalid_age_is_stale_and_a_huge_one_saturates() {
        let bad = CacheControl::of(&headers(&[("cache-control", "max-age=soon")]));
        assert_eq!(bad.shared_lifetime(), Some(0));
        let huge = CacheControl::of(&headers(&[(
            "cache-control",
            "max-age=99999999999999999999999",
        )]));
        assert_eq!(huge.max_age, Some(u64::MAX));
        let first = CacheControl::of(&headers(&[("cache-control", "max-age=5, max-age=500")]));
        assert_eq!(first.max_age, Some(5));
    }

    #[test]
    fn vary_beyond_the_codings_is_told() {
        assert!(!varies_beyond_coding(&HeaderMap::new()));
        let codings = headers(&[("vary", "Accept-Encoding, available-dictionary")]);
        assert!(!varies_beyond_coding(&codings));
        for other in [
            "*",
            "X-Api-Key",
            "accept-encoding, Accept-Language",
            "Cookie",
        ] {
            let mut h = codings.clone();
            h.append(VARY, HeaderValue::from_static(other));
            assert!(varies_beyond_coding(&h), "{other}");
        }
    }
}
