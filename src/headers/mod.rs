//! The header grammar of dictionary transport (RFC 9842): the names of its headers, the
//! `Use-As-Dictionary` metadata (public as `dictionary::UseAsDictionary`) and the
//! `Available-Dictionary` parser. Both parsers are total: a malformed or hostile value gives
//! `None`, never a panic.
//!
//! Inside the crate it also holds the rules every layer shares: list parsing,
//! `Content-Length`, `no-transform` and "is this media type already compressed"; and what a
//! layer writes on the responses it encodes (`Vary`, `Content-Encoding`, a weakened `ETag`).

#[cfg(dictionary)]
mod dictionary;
#[cfg(dictionary)]
mod sf;

#[cfg(dictionary)]
pub use dictionary::UseAsDictionary;
#[cfg(dictionary)]
pub(crate) use dictionary::available_dictionary_value;
#[cfg(dictionary)]
pub(crate) use dictionary::{InvalidMetadata, available_dictionary};

/// The `Available-Dictionary` request header: the SHA-256 of the dictionary the client has.
pub(crate) const AVAILABLE_DICTIONARY: HeaderName = HeaderName::from_static("available-dictionary");
/// The `Use-As-Dictionary` response header: the response is a dictionary for later requests.
#[cfg(dictionary)]
pub(crate) const USE_AS_DICTIONARY: HeaderName = HeaderName::from_static("use-as-dictionary");
/// The `Dictionary-ID` request header (the `id` of the dictionary the client has).
pub(crate) const DICTIONARY_ID: HeaderName = HeaderName::from_static("dictionary-id");
/// `Sec-Fetch-Mode`, sent by browsers on every request (in secure contexts, `localhost`
/// included): RFC 9842's readability gate and the learner's announcements read it.
pub(crate) const SEC_FETCH_MODE: HeaderName = HeaderName::from_static("sec-fetch-mode");
/// `Sec-Fetch-Site`: whether the request comes from the page's own origin (the gate's first
/// question).
pub(crate) const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

mod response;
mod sharing;

pub(crate) use response::{add_varies, add_vary, set_encoded_headers};
pub(crate) use sharing::{CacheControl, varies_beyond_coding};

use http::HeaderName;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap};
use http_body::Body;

/// The elements of every field line of `name`, split on commas and trimmed, empty ones
/// skipped (RFC 9110 section 5.6.1: several lines are one list).
pub(crate) fn list<'a>(
    headers: &'a HeaderMap,
    name: http::header::HeaderName,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    headers
        .get_all(name)
        .into_iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b','))
        .map(trim)
        .filter(|element| !element.is_empty())
}

/// Whether `Cache-Control` holds `no-transform` (RFC 9111 section 5.2.2.6): intermediaries
/// and this middleware must not change the content coding.
pub(crate) fn has_no_transform(headers: &HeaderMap) -> bool {
    list(headers, CACHE_CONTROL).any(|directive| directive.eq_ignore_ascii_case(b"no-transform"))
}

/// Whether the message's `Content-Type` names an already-compressed media type.
pub(crate) fn is_compressed_content(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .is_some_and(|value| incompressible(media_type(value.as_bytes())))
}

/// Already-compressed media types, lowercase.
pub(crate) const COMPRESSED: &[&[u8]] = &[
    b"application/zip",
    b"application/x-zip-compressed",
    b"application/gzip",
    b"application/x-gzip",
    b"application/zstd",
    b"application/x-zstd",
    b"application/x-brotli",
    b"application/brotli",
    b"application/x-br",
    b"application/x-7z-compressed",
    b"application/x-rar-compressed",
    b"application/vnd.rar",
    b"application/x-bzip",
    b"application/x-bzip2",
    b"application/x-xz",
    b"application/x-lzma",
    b"application/x-lz4",
    b"application/x-compress",
    b"application/x-snappy-framed",
    b"application/java-archive",
    b"application/ogg",
    b"application/font-woff",
    b"font/woff",
    b"font/woff2",
];

/// Whether `media` (a `type/subtype`) is already compressed: images other than SVG, audio,
/// video, archives, fonts, gRPC.
pub(crate) fn incompressible(media: &[u8]) -> bool {
    if starts_with_ci(media, b"image/") {
        return !media.eq_ignore_ascii_case(b"image/svg+xml");
    }
    starts_with_ci(media, b"audio/")
        || starts_with_ci(media, b"video/")
        || media.eq_ignore_ascii_case(b"application/grpc")
        || starts_with_ci(media, b"application/grpc+")
        || ends_with_ci(media, b"+zip")
        || ends_with_ci(media, b"+gzip")
        || COMPRESSED.iter().any(|t| media.eq_ignore_ascii_case(t))
}

/// `type/subtype` of a `Content-Type` value, without parameters or surrounding whitespace.
pub(crate) fn media_type(value: &[u8]) -> &[u8] {
    let end = value.iter().position(|&b| b == b';').unwrap_or(value.len());
    trim(&value[..end])
}

pub(crate) fn starts_with_ci(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

pub(crate) fn ends_with_ci(s: &[u8], suffix: &[u8]) -> bool {
    s.len() >= suffix.len() && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// Strips optional whitespace (SP / HTAB, RFC 9110 section 5.6.3) from both ends.
pub(crate) fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// A message body's size: its exact size hint, else a valid `Content-Length`.
pub(crate) fn body_size<B: Body>(headers: &HeaderMap, body: &B) -> Option<u64> {
    body.size_hint().exact().or_else(|| content_length(headers))
}

/// A `Content-Length` is valid only if every value (across lines and comma lists) is the
/// same run of digits (RFC 9110 section 8.6); anything else is treated as unknown.
pub(crate) fn content_length(headers: &HeaderMap) -> Option<u64> {
    let mut found = None;
    for value in headers.get_all(CONTENT_LENGTH) {
        for part in value.as_bytes().split(|&b| b == b',') {
            let part = trim(part);
            if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let n = part.iter().try_fold(0u64, |n, &d| {
                n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
            })?;
            if found.is_some_and(|f| f != n) {
                return None;
            }
            found = Some(n);
        }
    }
    found
}
