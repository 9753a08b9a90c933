//! What a layer writes on the responses it encodes, or could have: `Vary`, and for an
//! encoded body its `Content-Encoding`, length, ranges and validator.

use http::HeaderName;
use http::header::{
    ACCEPT_ENCODING, ACCEPT_RANGES, CONTENT_ENCODING, CONTENT_LENGTH, ETAG, HeaderMap, HeaderValue,
    VARY,
};

use super::{AVAILABLE_DICTIONARY, list};

/// Adds `Vary: accept-encoding` unless a Vary header already covers it.
pub(crate) fn add_vary(headers: &mut HeaderMap) {
    add_vary_token(headers, ACCEPT_ENCODING);
}

/// `Vary: accept-encoding`, and `available-dictionary` when the layer serves dictionaries:
/// the representation depends on both (RFC 9842 section 6.2).
pub(crate) fn add_varies(headers: &mut HeaderMap, dictionaries: bool) {
    add_vary(headers);
    if dictionaries {
        add_vary_token(headers, AVAILABLE_DICTIONARY);
    }
}

/// Adds `name` to `Vary` unless it (or `*`) is already there.
fn add_vary_token(headers: &mut HeaderMap, name: HeaderName) {
    let token = name.as_str().as_bytes();
    let covered = list(headers, VARY).any(|t| t == b"*" || t.eq_ignore_ascii_case(token));
    if !covered {
        headers.append(VARY, HeaderValue::from(name));
    }
}

/// The headers of a body now encoded with the coding whose token is `token`.
pub(crate) fn set_encoded_headers(headers: &mut HeaderMap, token: &'static str) {
    headers.insert(CONTENT_ENCODING, HeaderValue::from_static(token));
    // The length changes, and byte ranges of the identity body no longer apply.
    headers.remove(CONTENT_LENGTH);
    headers.remove(ACCEPT_RANGES);
    // A strong validator promises byte-identical content; the encoded bytes differ from
    // the identity representation's, so only a weak validator is still true.
    if let Some(etag) = headers.get(ETAG) {
        if !etag.as_bytes().starts_with(b"W/") {
            let mut weak = Vec::with_capacity(etag.len() + 2);
            weak.extend_from_slice(b"W/");
            weak.extend_from_slice(etag.as_bytes());
            if let Ok(weak) = HeaderValue::from_bytes(&weak) {
                headers.insert(ETAG, weak);
            }
        }
    }
}
