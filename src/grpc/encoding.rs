//! `grpc-encoding` and `grpc-accept-encoding` (the gRPC "Compression" document): the header
//! names, which codings gRPC messages may use here, reading a peer's headers and choosing.

use http::header::HeaderName;
use http::{HeaderMap, HeaderValue};

use crate::ContentCoding;

/// `grpc-encoding`: the coding of the messages flagged compressed.
pub(crate) const GRPC_ENCODING: HeaderName = HeaderName::from_static("grpc-encoding");
/// `grpc-accept-encoding`: the codings a peer decodes, comma-separated.
pub(crate) const GRPC_ACCEPT_ENCODING: HeaderName = HeaderName::from_static("grpc-accept-encoding");
/// `grpc-status`: the call's status code.
pub(crate) const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");
/// `grpc-message`: the status's message, percent-encoded.
pub(crate) const GRPC_MESSAGE: HeaderName = HeaderName::from_static("grpc-message");

/// The codings gRPC messages may use with this build: gzip, deflate (zlib) and, with its
/// feature, zstd. Other content codings are not gRPC message encodings.
pub(crate) fn is_grpc_coding(coding: ContentCoding) -> bool {
    matches!(
        coding,
        ContentCoding::Gzip | ContentCoding::Deflate | ContentCoding::Zstd
    ) && coding.is_compiled()
}

/// What a `grpc-encoding` header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MessageEncoding {
    /// No header, or `identity`: no message may be flagged compressed.
    Identity,
    /// A coding this side decodes.
    Coding(ContentCoding),
    /// A coding this side does not decode.
    Unknown,
}

impl MessageEncoding {
    /// Reads `grpc-encoding` from `headers`: a coding of `decoded`, identity, or unknown.
    pub(crate) fn of(headers: &HeaderMap, decoded: &[ContentCoding]) -> Self {
        let Some(value) = headers.get(GRPC_ENCODING) else {
            return MessageEncoding::Identity;
        };
        let token = value.as_bytes().trim_ascii();
        if token.eq_ignore_ascii_case(b"identity") {
            return MessageEncoding::Identity;
        }
        match ContentCoding::from_token_bytes(token) {
            Some(coding) if decoded.contains(&coding) && token != b"x-gzip" => {
                MessageEncoding::Coding(coding)
            }
            _ => MessageEncoding::Unknown,
        }
    }
}

/// The first coding of `preferred` that the peer's `grpc-accept-encoding` lists (every
/// value of the header; tokens compared case-insensitively).
pub(crate) fn choose(headers: &HeaderMap, preferred: &[ContentCoding]) -> Option<ContentCoding> {
    let accepted = || {
        headers
            .get_all(GRPC_ACCEPT_ENCODING)
            .iter()
            .flat_map(|value| value.as_bytes().split(|&b| b == b','))
            .map(<[u8]>::trim_ascii)
    };
    preferred.iter().copied().find(|coding| {
        accepted().any(|token| token.eq_ignore_ascii_case(coding.as_str().as_bytes()))
    })
}

/// The `grpc-accept-encoding` value listing `codings` (then `identity`, which every peer
/// decodes).
pub(crate) fn accept_value(codings: &[ContentCoding]) -> HeaderValue {
    let mut list = String::new();
    for coding in codings {
        list.push_str(coding.as_str());
        list.push(',');
    }
    list.push_str("identity");
    HeaderValue::from_str(&list).unwrap_or(HeaderValue::from_static("identity"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: HeaderName, value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn grpc_encoding_is_read() {
        let decoded = [ContentCoding::Gzip, ContentCoding::Deflate];
        let of = |value| MessageEncoding::of(&headers(GRPC_ENCODING, value), &decoded);
        assert_eq!(of("identity"), MessageEncoding::Identity);
        assert_eq!(of("GZIP"), MessageEncoding::Coding(ContentCoding::Gzip));
        assert_eq!(
            of("deflate"),
            MessageEncoding::Coding(ContentCoding::Deflate)
        );
        assert_eq!(of("br"), MessageEncoding::Unknown);
        assert_eq!(of("snappy"), MessageEncoding::Unknown);
        assert_eq!(of("zstd"), MessageEncoding::Unknown);
        assert_eq!(
            MessageEncoding::of(&HeaderMap::new(), &decoded),
            MessageEncoding::Identity
        );
    }

    #[test]
    fn the_first_preferred_coding_accepted_wins() {
        let accept = headers(GRPC_ACCEPT_ENCODING, "identity, deflate,gzip");
        let preferred = [ContentCoding::Gzip, ContentCoding::Deflate];
        assert_eq!(choose(&accept, &preferred), Some(ContentCoding::Gzip));
        assert_eq!(
            choose(&accept, &preferred[1..]),
            Some(ContentCoding::Deflate)
        );
        assert_eq!(choose(&HeaderMap::new(), &preferred), None);
        assert_eq!(accept_value(&preferred), "gzip,deflate,identity");
    }
}
