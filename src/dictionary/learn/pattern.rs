//! The routes a learner samples: a path pattern where `*` stands for any run of characters,
//! the subset of URL Pattern syntax that means the same to this crate and to a browser
//! reading it as `Use-As-Dictionary`'s `match`.

use super::LearnError;
use crate::dictionary::scope::glob;

/// A path pattern: literal text and `*` wildcards, matched against a request's path (the
/// query is not part of it, as a URL Pattern's pathname is not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathPattern {
    pattern: String,
}

/// URL Pattern syntax this crate does not read: named groups, regexes, groups, escapes,
/// modifiers and a search or hash part. Refused so that the learner never samples other
/// paths than the browser will offer the dictionary on.
const RESERVED: &[char] = &[':', '(', ')', '{', '}', '\\', '?', '+', '#'];

impl PathPattern {
    pub(crate) fn new(pattern: &str) -> Result<Self, LearnError> {
        if !pattern.starts_with('/') {
            return Err(LearnError::Pattern(format!(
                "{pattern:?}: a route pattern is a path and starts with `/`"
            )));
        }
        if let Some(c) = pattern.chars().find(|c| RESERVED.contains(c)) {
            return Err(LearnError::Pattern(format!(
                "{pattern:?}: `{c}` is URL Pattern syntax a learned route does not take (only `*`)"
            )));
        }
        Ok(PathPattern {
            pattern: pattern.to_owned(),
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether `path` matches: each `*` takes any run of characters (the shortest that
    /// lets the rest match, with backtracking to the last `*` only, so linear in practice).
    pub(crate) fn matches(&self, path: &str) -> bool {
        glob(self.pattern.as_bytes(), path.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_any_run() {
        let items = PathPattern::new("/api/items*").unwrap();
        assert!(items.matches("/api/items"));
        assert!(items.matches("/api/items/7"));
        assert!(!items.matches("/api/item"));
        assert!(!items.matches("/api/users"));
        let mid = PathPattern::new("/assets/app-*.js").unwrap();
        assert!(mid.matches("/assets/app-1.2.js"));
        assert!(mid.matches("/assets/app-.js.js"));
        assert!(!mid.matches("/assets/app-1.css"));
        let exact = PathPattern::new("/a").unwrap();
        assert!(exact.matches("/a") && !exact.matches("/ab"));
        assert!(PathPattern::new("/**").unwrap().matches("/x/y"));
    }

    #[test]
    fn other_url_pattern_syntax_is_refused() {
        for bad in [
            "api/*",
            "/users/:id",
            "/a(b)",
            "/a{b}",
            "/a?b=1",
            "/a+",
            "/a\\*",
            "",
        ] {
            assert!(PathPattern::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn worst_case_stays_small() {
        let pattern = PathPattern::new(&format!("/{}b", "*a".repeat(50))).unwrap();
        let text = format!("/{}", "a".repeat(5000));
        assert!(!pattern.matches(&text));
    }
}
