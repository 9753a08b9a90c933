//! The readability gate of RFC 9842 section 7 ("Security Considerations", "Reading across
//! origins"): compress with a dictionary only where the requesting context can read both the
//! dictionary and the response, so a dictionary cannot be used to learn the size of
//! another origin's data.

use http::HeaderMap;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, ORIGIN};

use crate::headers::SEC_FETCH_SITE;

/// Why [`gate`] allowed or refused dictionary compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Readability {
    /// `Sec-Fetch-Site: same-origin`.
    SameOrigin,
    /// No `Sec-Fetch-Mode`: not a browser fetch with Fetch Metadata (RFC 9842 says the
    /// server SHOULD then allow it).
    NoFetchMode,
    /// `Sec-Fetch-Mode: navigate` or `same-origin`.
    NavigateOrSameOriginMode,
    /// `Sec-Fetch-Mode: cors`, and the response's `Access-Control-Allow-Origin` is `*` or
    /// the request's `Origin`.
    CorsAllowed,
    /// `Sec-Fetch-Mode: cors` without an `Origin`, or a response the origin may not read.
    CorsRefused,
    /// Any other mode (`no-cors`, `websocket`, ...), or a malformed header.
    OpaqueMode,
}

impl Readability {
    /// Whether dictionary compression may be used.
    pub(crate) fn is_allowed(self) -> bool {
        matches!(
            self,
            Readability::SameOrigin
                | Readability::NoFetchMode
                | Readability::NavigateOrSameOriginMode
                | Readability::CorsAllowed
        )
    }
}

/// Decides whether a response to `request` may be compressed with a dictionary, from the
/// request's headers and the response's: see [`Readability`] for the rows.
///
/// Each header must appear at most once; a repeated one is treated as malformed (refused,
/// except a repeated `Sec-Fetch-Site`, which then simply does not say `same-origin`).
pub(crate) fn gate(request: &HeaderMap, response: &HeaderMap) -> Readability {
    if single(request, SEC_FETCH_SITE.as_str()).is_some_and(|site| site == b"same-origin") {
        return Readability::SameOrigin;
    }
    let mut modes = request.get_all(crate::headers::SEC_FETCH_MODE).iter();
    let Some(mode) = modes.next() else {
        return Readability::NoFetchMode;
    };
    if modes.next().is_some() {
        return Readability::OpaqueMode;
    }
    match mode.as_bytes().trim_ascii() {
        b"navigate" | b"same-origin" => Readability::NavigateOrSameOriginMode,
        b"cors" => {
            let origin = single(request, ORIGIN.as_str());
            let allowed = single(response, ACCESS_CONTROL_ALLOW_ORIGIN.as_str());
            match (origin, allowed) {
                (Some(_), Some(b"*")) => Readability::CorsAllowed,
                (Some(origin), Some(allowed)) if origin == allowed => Readability::CorsAllowed,
                _ => Readability::CorsRefused,
            }
        }
        _ => Readability::OpaqueMode,
    }
}

/// The value of a header that appears exactly once, trimmed.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a [u8]> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    Some(value.as_bytes().trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Readability::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    /// Request headers, response headers, and what the gate says.
    type Row = (
        &'static [(&'static str, &'static str)],
        &'static [(&'static str, &'static str)],
        Readability,
    );

    #[test]
    fn every_row_of_the_gate() {
        const O: &str = "https://a.example";
        #[rustfmt::skip]
        let table: &[Row] = &[
            // Sec-Fetch-Site: same-origin wins whatever the mode.
            (&[("sec-fetch-site", "same-origin")], &[], SameOrigin),
            (&[("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "no-cors")], &[], SameOrigin),
            (&[("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "cors")], &[], SameOrigin),
            // No mode: allowed, whatever the site says.
            (&[], &[], NoFetchMode),
            (&[("sec-fetch-site", "cross-site")], &[], NoFetchMode),
            (&[("sec-fetch-site", "same-site")], &[], NoFetchMode),
            // navigate and same-origin modes.
            (&[("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "navigate")], &[], NavigateOrSameOriginMode),
            (&[("sec-fetch-mode", "same-origin")], &[], NavigateOrSameOriginMode),
            (&[("sec-fetch-site", "none"), ("sec-fetch-mode", "navigate")], &[], NavigateOrSameOriginMode),
            // cors: needs Origin and a matching Access-Control-Allow-Origin.
            (&[("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "cors"), ("origin", O)], &[("access-control-allow-origin", "*")], CorsAllowed),
            (&[("sec-fetch-mode", "cors"), ("origin", O)], &[("access-control-allow-origin", O)], CorsAllowed),
            (&[("sec-fetch-mode", "cors"), ("origin", O)], &[("access-control-allow-origin", "https://b.example")], CorsRefused),
            (&[("sec-fetch-mode", "cors"), ("origin", O)], &[], CorsRefused),
            (&[("sec-fetch-mode", "cors")], &[("access-control-allow-origin", "*")], CorsRefused),
            (&[("sec-fetch-mode", "cors")], &[], CorsRefused),
            (&[("sec-fetch-mode", "cors"), ("origin", O)], &[("access-control-allow-origin", "*"), ("access-control-allow-origin", O)], CorsRefused),
            (&[("sec-fetch-mode", "cors"), ("origin", O)], &[("access-control-allow-origin", "https://A.example")], CorsRefused),
            // Anything else.
            (&[("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "no-cors")], &[("access-control-allow-origin", "*")], OpaqueMode),
            (&[("sec-fetch-mode", "websocket")], &[], OpaqueMode),
            (&[("sec-fetch-mode", "")], &[], OpaqueMode),
            (&[("sec-fetch-mode", "CORS"), ("origin", O)], &[("access-control-allow-origin", "*")], OpaqueMode),
            (&[("sec-fetch-mode", "navigate"), ("sec-fetch-mode", "navigate")], &[], OpaqueMode),
            // A repeated or different site is not same-origin.
            (&[("sec-fetch-site", "same-origin"), ("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "no-cors")], &[], OpaqueMode),
            (&[("sec-fetch-site", "same-site"), ("sec-fetch-mode", "no-cors")], &[], OpaqueMode),
        ];
        for (request, response, expected) in table {
            let got = gate(&headers(request), &headers(response));
            assert_eq!(got, *expected, "request {request:?} response {response:?}");
        }
    }

    #[test]
    fn allowed_rows() {
        for (reason, allowed) in [
            (SameOrigin, true),
            (NoFetchMode, true),
            (NavigateOrSameOriginMode, true),
            (CorsAllowed, true),
            (CorsRefused, false),
            (OpaqueMode, false),
        ] {
            assert_eq!(reason.is_allowed(), allowed, "{reason:?}");
        }
    }
}
