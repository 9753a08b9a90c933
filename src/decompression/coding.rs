//! Parsing `Content-Encoding` and the settings shared by the decompression layers.

use http::header::{CONTENT_ENCODING, HeaderMap, HeaderValue};

use super::limits::DecompressionLimits;
use std::sync::OnceLock;

use crate::pool::CodecPool;
use crate::{CODINGS, CodingSet, ContentCoding};

/// The most content codings one message may stack (`Content-Encoding: gzip, gzip, deflate`).
///
/// Longer chains are refused: each coding costs a decoder, and unbounded chains were the
/// subject of urllib3 CVE-2025-66418 and undici CVE-2026-22036.
pub(crate) const MAX_CODINGS: usize = 3;

/// The codings a layer decoding `accept` reads: those, and `with_dictionaries` each
/// dictionary coding whose coding underneath (zstd for `dcz`, br for `dcb`) is among them.
pub(crate) fn decodable(accept: CodingSet, with_dictionaries: bool) -> CodingSet {
    let mut set = accept;
    for coding in ContentCoding::DICTIONARY {
        set.set(*coding, with_dictionaries && accept.contains(coding.base()));
    }
    set
}

/// The `Accept-Encoding` value listing `codings` in [`ContentCoding::ALL`]'s order; `None`
/// if it lists nothing. Built once per set for the process.
pub(crate) fn accept_encoding(codings: CodingSet) -> Option<HeaderValue> {
    const SETS: usize = 1 << CODINGS;
    static VALUES: OnceLock<Vec<Option<HeaderValue>>> = OnceLock::new();
    let values = VALUES.get_or_init(|| {
        (0..SETS)
            .map(|bits| {
                let tokens: Vec<&str> = CodingSet::from_bits(bits)
                    .iter()
                    .map(ContentCoding::as_str)
                    .collect();
                (!tokens.is_empty())
                    .then(|| HeaderValue::from_str(&tokens.join(", ")).expect("tokens are ASCII"))
            })
            .collect()
    });
    values[codings.bits()].clone()
}

/// A non-empty list of codings, in the order they were applied (the header's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chain {
    codings: [ContentCoding; MAX_CODINGS],
    len: usize,
}

impl Chain {
    /// The codings in the order they must be decoded: the last applied comes off first.
    pub(crate) fn decode_order(&self) -> impl Iterator<Item = ContentCoding> + '_ {
        self.codings[..self.len].iter().rev().copied()
    }
}

/// What a message's `Content-Encoding` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Codings {
    /// No header, or only `identity`.
    Identity,
    /// Codings we decode.
    Decode(Chain),
    /// A coding that is unknown, disabled or unreadable.
    Unsupported,
    /// Supported codings, but more than [`MAX_CODINGS`].
    TooMany,
}

/// Reads every `Content-Encoding` field line (several lines are one comma-separated list,
/// RFC 9110 section 5.3). Tokens are case-insensitive; `x-gzip` is gzip; `identity` and
/// empty list elements are ignored; a coding outside `decodable` is unsupported.
pub(crate) fn parse(headers: &HeaderMap, decodable: CodingSet) -> Codings {
    let mut codings = [ContentCoding::Gzip; MAX_CODINGS];
    let mut count = 0;
    for value in headers.get_all(CONTENT_ENCODING) {
        let Ok(value) = value.to_str() else {
            return Codings::Unsupported;
        };
        for token in value.split(',').map(str::trim) {
            if token.is_empty() || token.eq_ignore_ascii_case("identity") {
                continue;
            }
            let coding = match ContentCoding::from_token(token) {
                Some(coding) if decodable.contains(coding) => coding,
                _ => return Codings::Unsupported,
            };
            if let Some(slot) = codings.get_mut(count) {
                *slot = coding;
            }
            count += 1;
        }
    }
    match count {
        0 => Codings::Identity,
        len if len <= MAX_CODINGS => Codings::Decode(Chain { codings, len }),
        _ => Codings::TooMany,
    }
}

/// What both decompression layers are configured with.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// The codings decoded (and, on a client, accepted).
    pub(crate) accept: CodingSet,
    pub(crate) limits: DecompressionLimits,
    pub(crate) pool: CodecPool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            accept: CodingSet::plain(),
            limits: DecompressionLimits::default(),
            pool: CodecPool::global().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_one(value: &str, accept: CodingSet) -> Codings {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, HeaderValue::from_str(value).unwrap());
        parse(&headers, accept)
    }

    fn order(codings: Codings) -> Vec<ContentCoding> {
        match codings {
            Codings::Decode(chain) => chain.decode_order().collect(),
            other => panic!("expected codings, got {other:?}"),
        }
    }

    #[test]
    fn tokens() {
        let all = CodingSet::plain();
        assert_eq!(parse(&HeaderMap::new(), all), Codings::Identity);
        assert_eq!(parse_one("identity", all), Codings::Identity);
        assert_eq!(parse_one(" , IDENTITY ,", all), Codings::Identity);
        assert_eq!(order(parse_one("GZip", all)), [ContentCoding::Gzip]);
        assert_eq!(order(parse_one("x-gzip", all)), [ContentCoding::Gzip]);
        assert_eq!(
            order(parse_one("gzip, deflate", all)),
            [ContentCoding::Deflate, ContentCoding::Gzip]
        );
        assert_eq!(parse_one("compress", all), Codings::Unsupported);
        assert_eq!(parse_one("gzip, compress", all), Codings::Unsupported);
        assert!(matches!(
            parse_one("gzip,gzip,gzip", all),
            Codings::Decode(_)
        ));
        assert_eq!(parse_one("gzip, gzip, gzip, gzip", all), Codings::TooMany);
        assert_eq!(
            parse_one("gzip, gzip, gzip, lzw", all),
            Codings::Unsupported
        );
        let mut no_deflate = CodingSet::plain();
        no_deflate.set(ContentCoding::Deflate, false);
        assert_eq!(parse_one("deflate", no_deflate), Codings::Unsupported);
    }

    #[test]
    fn several_lines() {
        let mut headers = HeaderMap::new();
        headers.append(CONTENT_ENCODING, HeaderValue::from_static("deflate"));
        headers.append(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        assert_eq!(
            order(parse(&headers, CodingSet::plain())),
            [ContentCoding::Gzip, ContentCoding::Deflate]
        );
    }

    #[test]
    #[cfg(feature = "dcz")]
    fn dictionary_codings_only_where_dictionaries_are_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("DCZ"));
        let plain = CodingSet::plain();
        assert_eq!(
            parse(&headers, decodable(plain, false)),
            Codings::Unsupported
        );
        let chain = order(parse(&headers, decodable(plain, true)));
        assert_eq!(chain, [ContentCoding::Dcz]);
        let mut no_zstd = plain;
        no_zstd.set(ContentCoding::Zstd, false);
        assert_eq!(
            parse(&headers, decodable(no_zstd, true)),
            Codings::Unsupported
        );
    }

    #[test]
    fn accept_value() {
        let mut accept = CodingSet::EMPTY;
        assert!(accept_encoding(decodable(accept, false)).is_none());
        assert!(accept_encoding(decodable(accept, true)).is_none());
        accept.set(ContentCoding::Deflate, true);
        accept.set(ContentCoding::Gzip, true);
        assert_eq!(accept_encoding(accept).unwrap(), "gzip, deflate");
        // No dictionary coding without its coding underneath.
        assert_eq!(
            accept_encoding(decodable(accept, true)).unwrap(),
            "gzip, deflate"
        );
        #[cfg(all(feature = "dcz", feature = "dcb"))]
        {
            let plain = CodingSet::plain();
            assert_eq!(
                accept_encoding(decodable(plain, false)).unwrap(),
                "zstd, br, gzip, deflate"
            );
            assert_eq!(
                accept_encoding(decodable(plain, true)).unwrap(),
                "zstd, br, gzip, deflate, dcz, dcb"
            );
        }
    }
}
