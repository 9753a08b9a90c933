//! `Link: <...>; rel="compression-dictionary"` (RFC 8288; RFC 9842 section 3): how a page
//! announces a dictionary for the client to fetch ahead of need.

use http::HeaderMap;
use http::header::LINK;

/// The targets of a response's `Link` headers whose `rel` includes
/// `compression-dictionary`, as written (usually a path: resolve it against the response's
/// URL), in header order. Malformed link values are skipped.
///
/// A browser fetches these at idle time; a client that wants the dictionary fetches it
/// (through a [`DecompressionLayer`](crate::decompression::DecompressionLayer) with a
/// [`ClientDictionaryStore`](super::ClientDictionaryStore), which learns it).
///
/// ```
/// use http::HeaderMap;
/// use tower_gzip::client::linked_dictionaries;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("link", r#"</style.css>; rel=preload, </dictionary>; rel="compression-dictionary""#.parse().unwrap());
/// assert_eq!(linked_dictionaries(&headers), ["/dictionary"]);
/// ```
pub fn linked_dictionaries(headers: &HeaderMap) -> Vec<String> {
    let mut found = Vec::new();
    for value in headers.get_all(LINK) {
        let Ok(value) = value.to_str() else { continue };
        let mut rest = value;
        while let Some(open) = rest.find('<') {
            let Some(close) = rest[open..].find('>').map(|i| open + i) else {
                break;
            };
            let target = &rest[open + 1..close];
            let params_end = params_end(&rest[close + 1..]) + close + 1;
            if has_dictionary_rel(&rest[close + 1..params_end]) {
                found.push(target.trim().to_owned());
            }
            rest = &rest[params_end..];
        }
    }
    found
}

/// Where a link value's parameters end: the first comma outside a quoted string.
fn params_end(params: &str) -> usize {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in params.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => return i,
            _ => {}
        }
    }
    params.len()
}

fn has_dictionary_rel(params: &str) -> bool {
    params.split(';').any(|param| {
        let Some((name, value)) = param.split_once('=') else {
            return false;
        };
        name.trim().eq_ignore_ascii_case("rel")
            && value
                .trim()
                .trim_matches('"')
                .split_ascii_whitespace()
                .any(|rel| rel.eq_ignore_ascii_case("compression-dictionary"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(values: &[&str]) -> Vec<String> {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(LINK, v.parse().unwrap());
        }
        linked_dictionaries(&headers)
    }

    #[test]
    fn finds_dictionary_links_only() {
        assert_eq!(links(&[r#"</d1>; rel="compression-dictionary""#]), ["/d1"]);
        assert_eq!(
            links(&[
                r#"</a,b>; rel=preload; title="x, y", </d2>; REL="prefetch compression-dictionary""#,
                "</d3>;rel=compression-dictionary",
            ]),
            ["/d2", "/d3"]
        );
        assert!(
            links(&[
                "</x>; rel=preload",
                "garbage",
                "<unclosed; rel=compression-dictionary"
            ])
            .is_empty()
        );
        assert!(links(&[]).is_empty());
    }
}
