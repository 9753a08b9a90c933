//! Origins and `match` patterns for learned dictionaries (RFC 9842 section 2.1.1): a
//! WHATWG URL Pattern, resolved against the dictionary's own URL, same origin, no regexp
//! groups. Matching uses the `urlpattern` crate, the implementation Deno ships.

use http::Uri;
use url::Url;
#[cfg(test)]
use urlpattern::UrlPatternMatchInput;
use urlpattern::{UrlPattern, UrlPatternInit, UrlPatternOptions};

/// Where a request goes: scheme, host and port. Dictionaries are kept and offered per
/// origin, never across.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Origin {
    scheme: Box<str>,
    host: Box<str>,
    port: u16,
}

impl Origin {
    /// The origin of an absolute `http` or `https` URI; `None` for a relative one (a request
    /// in origin form names no scheme, so its origin is unknown) or another scheme.
    pub(crate) fn of(uri: &Uri) -> Option<Origin> {
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let host = uri.host().filter(|h| !h.is_empty())?.to_ascii_lowercase();
        Some(Origin {
            scheme: scheme.into(),
            host: host.into(),
            port: uri.port_u16().unwrap_or(default_port),
        })
    }
}

/// A request URL, parsed once for every pattern it is tested against.
pub(crate) fn request_url(uri: &Uri) -> Option<Url> {
    Url::parse(&uri.to_string()).ok()
}

/// A `match` pattern compiled against the URL of the response that carried it.
#[derive(Debug)]
pub(crate) struct MatchPattern {
    pattern: UrlPattern,
    /// The length of the `match` string: longer wins when several dictionaries match.
    len: usize,
}

impl MatchPattern {
    /// Compiles `pattern` with `base` (the dictionary's URL) as its base URL. `None` for a
    /// pattern that does not parse, has a regexp group, or reaches another origin (a
    /// different scheme, host or port, or a wildcard in any of them).
    pub(crate) fn new(pattern: &str, base: &Url) -> Option<MatchPattern> {
        // The pattern is a server's text; a parser bug must cost the dictionary, not the
        // client (the closure holds no state that a panic could leave half-written).
        let compile = || {
            let init = UrlPatternInit::parse_constructor_string::<regex::Regex>(
                pattern,
                Some(base.clone()),
            )
            .ok()?;
            UrlPattern::<regex::Regex>::parse(init, UrlPatternOptions::default()).ok()
        };
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(compile)).ok()??;
        if compiled.has_regexp_groups() {
            return None;
        }
        let port = base.port().map(|p| p.to_string()).unwrap_or_default();
        let same_origin = compiled.protocol() == base.scheme()
            && Some(compiled.hostname()) == base.host_str()
            && compiled.port() == port;
        same_origin.then_some(MatchPattern {
            pattern: compiled,
            len: pattern.len(),
        })
    }

    /// Whether `url`, a URL of the pattern's own origin, matches. The origin's components
    /// (scheme, host, port) are not tested again: the store keeps dictionaries per origin and
    /// the pattern was checked to name its own. The others are tested with the pattern's
    /// component matchers directly: `UrlPattern::test` builds a full match result, group maps
    /// included, which costs more than the match.
    pub(crate) fn matches(&self, url: &Url) -> bool {
        let p = &self.pattern;
        let matched = |component: &urlpattern::component::Component<regex::Regex>, input: &str| {
            component.matcher.matches(input).is_some()
        };
        matched(&p.pathname, url.path())
            && matched(&p.search, url.query().unwrap_or(""))
            && matched(&p.hash, url.fragment().unwrap_or(""))
            && matched(&p.username, url.username())
            && matched(&p.password, url.password().unwrap_or(""))
    }

    /// [`matches`](Self::matches) through `UrlPattern::test`, all components: the reference
    /// the shortcut is checked against.
    #[cfg(test)]
    fn matches_fully(&self, url: &Url) -> bool {
        self.pattern
            .test(UrlPatternMatchInput::Url(url.clone()))
            .unwrap_or(false)
    }

    /// The length of the `match` string.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn origins() {
        let a = Origin::of(&"http://Example.com/x".parse().unwrap()).unwrap();
        let b = Origin::of(&"http://example.com:80/y?z".parse().unwrap()).unwrap();
        assert_eq!(a, b);
        let c = Origin::of(&"https://example.com/x".parse().unwrap()).unwrap();
        assert_ne!(a, c);
        let d = Origin::of(&"http://example.com:8080/x".parse().unwrap()).unwrap();
        assert_ne!(a, d);
        assert_eq!(Origin::of(&"/relative".parse().unwrap()), None);
        assert_eq!(Origin::of(&"ftp://example.com/x".parse().unwrap()), None);
    }

    #[test]
    fn relative_patterns_match_paths_of_their_origin() {
        let base = url("http://127.0.0.1:3000/dictionary");
        let p = MatchPattern::new("/api/items*", &base).unwrap();
        assert!(p.matches(&url("http://127.0.0.1:3000/api/items?n=5&start=3")));
        assert!(p.matches(&url("http://127.0.0.1:3000/api/items")));
        assert!(!p.matches(&url("http://127.0.0.1:3000/api/other")));
        // Another port is another origin (which the store never asks `matches` about).
        assert!(!p.matches_fully(&url("http://127.0.0.1:3001/api/items")));
        assert_eq!(p.len(), "/api/items*".len());
        let js = MatchPattern::new("/assets/app-v*.js", &base).unwrap();
        assert!(js.matches(&url("http://127.0.0.1:3000/assets/app-v2.js")));
        assert!(!js.matches(&url("http://127.0.0.1:3000/assets/app-v2.css")));
    }

    #[test]
    fn the_shortcut_agrees_with_the_full_match() {
        let base = url("https://example.com/dict");
        let patterns = [
            "/api/*",
            "/api/items*",
            "/api/items?*",
            "/api/items\\?n=5*",
            "/assets/app-v*.js",
            "/a/:name/c",
            "/a/*/c#frag",
            "https://example.com/x/*",
            "/*",
            "/exact",
            "/caf%C3%A9/*",
        ];
        let urls = [
            "https://example.com/api/items?n=5&start=3",
            "https://example.com/api/items",
            "https://example.com/api/other?x",
            "https://example.com/assets/app-v2.js",
            "https://example.com/assets/app-v2.js?cache=1",
            "https://example.com/a/b/c",
            "https://example.com/a/b/c#frag",
            "https://example.com/a/b/d/c",
            "https://example.com/x/y",
            "https://example.com/exact",
            "https://example.com/exact?q",
            "https://user:pw@example.com/api/items",
            "https://example.com/caf%C3%A9/menu",
            "https://example.com/café/menu",
        ];
        for pattern in patterns {
            let p = MatchPattern::new(pattern, &base).unwrap_or_else(|| panic!("{pattern}"));
            for u in urls {
                let u = url(u);
                assert_eq!(p.matches(&u), p.matches_fully(&u), "{pattern} {u}");
            }
        }
    }

    #[test]
    fn patterns_reaching_other_origins_or_with_groups_are_refused() {
        let base = url("https://example.com/d");
        for bad in [
            "https://other.com/*",
            "http://example.com/*",
            "https://example.com:8443/*",
            "https://*.example.com/*",
            "*://example.com/*",
            "/api/(\\d+)",
            "/api/:id(\\d+)",
        ] {
            assert!(MatchPattern::new(bad, &base).is_none(), "{bad}");
        }
        // The same origin spelled out is fine.
        assert!(MatchPattern::new("https://example.com/api/*", &base).is_some());
    }
}
