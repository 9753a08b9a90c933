//! Which requests a dictionary may be used for: those its `Use-As-Dictionary` `match`
//! covers (RFC 9842 section 2.2). A browser offers a dictionary only on such requests; a
//! client naming it elsewhere gets no dictionary coding.
//!
//! Read here is the part of URL Pattern syntax servers use: a path (absolute, or in an
//! absolute URL of the request's host) where `*` stands for any run of characters, matched
//! against the request's path (the query is not part of a pathname pattern). A pattern
//! this cannot read for sure (a relative one, whose base is the dictionary's own URL, or
//! one with groups, regular expressions or modifiers) covers nothing: the dictionary is
//! then never applied, rather than applied where the browser would not have offered it.

use http::HeaderMap;
use http::header::HOST;

use super::Dictionary;

/// URL Pattern syntax beyond `*` in a pathname.
const UNREAD: &[char] = &[':', '(', ')', '{', '}', '\\', '?', '+', '#'];

/// Whether `dictionary` may be used for a request for `path` with `headers`: it has no
/// `match` (a dictionary the application placed itself), or its `match` covers the path.
#[cfg(dictionary)]
pub(crate) fn dictionary_covers(dictionary: &Dictionary, headers: &HeaderMap, path: &str) -> bool {
    let host = headers.get(HOST).and_then(|host| host.to_str().ok());
    let metadata = dictionary.metadata();
    metadata.is_none_or(|metadata| covers(metadata.match_pattern(), host, path))
}

/// Without the dictionary codings no dictionary is ever chosen.
#[cfg(not(dictionary))]
pub(crate) fn dictionary_covers(_: &Dictionary, _: &HeaderMap, _: &str) -> bool {
    false
}

/// Whether a dictionary whose `match` is `pattern` covers a request for `path` sent to
/// `host` (its `Host`, if known).
pub(crate) fn covers(pattern: &str, host: Option<&str>, path: &str) -> bool {
    let pathname = match pattern.split_once("://") {
        Some((_, rest)) => {
            let (authority, pathname) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let same_host = host.is_some_and(|host| authority.eq_ignore_ascii_case(host));
            if !same_host {
                return false;
            }
            pathname
        }
        None => pattern,
    };
    pathname.starts_with('/')
        && !pathname.contains(UNREAD)
        && glob(pathname.as_bytes(), path.as_bytes())
}

/// Wildcard matching with one backtrack point (the last `*` seen): every failure after a
/// star retries one character further, so the work is at most pattern x path.
pub(crate) fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_pattern_covers_the_paths_it_matches() {
        assert!(covers("/api/*", None, "/api/items"));
        assert!(!covers("/api/*", None, "/account/settings"));
        assert!(covers("/assets/app-*.js", None, "/assets/app-2.js"));
        assert!(!covers("/assets/app-*.js", None, "/assets/app-2.css"));
        assert!(covers("/*", None, "/anything/at/all"));
    }

    #[test]
    fn an_absolute_pattern_covers_its_own_host_only() {
        let pattern = "https://shop.example/api/*";
        assert!(covers(pattern, Some("shop.example"), "/api/items"));
        assert!(covers(pattern, Some("SHOP.example"), "/api/items"));
        assert!(!covers(pattern, Some("other.example"), "/api/items"));
        assert!(!covers(pattern, None, "/api/items"));
        assert!(!covers(pattern, Some("shop.example"), "/admin"));
    }

    #[test]
    fn a_pattern_that_cannot_be_read_for_sure_covers_nothing() {
        for pattern in ["app*.js", "/user/:id(\\d+)", "/a{b}?", "*", ""] {
            assert!(!covers(pattern, None, "/user/7"), "{pattern}");
        }
    }
}
