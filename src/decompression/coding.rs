//! Parsing `Content-Encoding` and the settings shared by the decompression layers.

use http::header::{CONTENT_ENCODING, HeaderMap, HeaderValue};

use super::limits::DecompressionLimits;
use std::sync::OnceLock;

use crate::codec::{FORMATS, Format};
use crate::pool::CodecPool;

/// The most content codings one message may stack (`Content-Encoding: gzip, gzip, deflate`).
///
/// Longer chains are refused: each coding costs a decoder, and unbounded chains were the
/// subject of urllib3 CVE-2025-66418 and undici CVE-2026-22036.
pub const MAX_CODINGS: usize = 3;

/// Which codings a layer decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Accept {
    enabled: [bool; FORMATS],
}

impl Default for Accept {
    fn default() -> Self {
        let mut enabled = [false; FORMATS];
        for format in Format::ALL {
            enabled[format.index()] = true;
        }
        Accept { enabled }
    }
}

impl Accept {
    pub(crate) fn allows(self, format: Format) -> bool {
        self.enabled[format.index()]
    }

    pub(crate) fn set(&mut self, format: Format, on: bool) {
        self.enabled[format.index()] = on;
    }

    /// The `Accept-Encoding` value listing the enabled codings (zstd, br, gzip, deflate
    /// order), or `None` if none is. Built once per combination for the process.
    pub(crate) fn header_value(self) -> Option<HeaderValue> {
        static VALUES: OnceLock<Vec<Option<HeaderValue>>> = OnceLock::new();
        let values = VALUES.get_or_init(|| {
            (0..1usize << Format::ALL.len())
                .map(|mask| {
                    let tokens: Vec<&str> = Format::ALL
                        .iter()
                        .enumerate()
                        .filter(|(bit, _)| mask & (1 << bit) != 0)
                        .map(|(_, format)| format.as_str())
                        .collect();
                    (!tokens.is_empty()).then(|| {
                        HeaderValue::from_str(&tokens.join(", ")).expect("tokens are ASCII")
                    })
                })
                .collect()
        });
        let mask = Format::ALL
            .iter()
            .enumerate()
            .filter(|(_, format)| self.allows(**format))
            .fold(0, |mask, (bit, _)| mask | 1 << bit);
        values[mask].clone()
    }
}

/// A non-empty list of codings, in the order they were applied (the header's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chain {
    formats: [Format; MAX_CODINGS],
    len: usize,
}

impl Chain {
    /// The codings in the order they must be decoded: the last applied comes off first.
    pub(crate) fn decode_order(&self) -> impl Iterator<Item = Format> + '_ {
        self.formats[..self.len].iter().rev().copied()
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
/// empty list elements are ignored.
pub(crate) fn parse(headers: &HeaderMap, accept: Accept) -> Codings {
    let mut formats = [Format::Gzip; MAX_CODINGS];
    let mut count = 0;
    for value in headers.get_all(CONTENT_ENCODING) {
        let Ok(value) = value.to_str() else {
            return Codings::Unsupported;
        };
        for token in value.split(',').map(str::trim) {
            if token.is_empty() || token.eq_ignore_ascii_case("identity") {
                continue;
            }
            match Format::from_token(token) {
                Some(format) if accept.allows(format) => {
                    if let Some(slot) = formats.get_mut(count) {
                        *slot = format;
                    }
                    count += 1;
                }
                _ => return Codings::Unsupported,
            }
        }
    }
    match count {
        0 => Codings::Identity,
        len if len <= MAX_CODINGS => Codings::Decode(Chain { formats, len }),
        _ => Codings::TooMany,
    }
}

/// What both decompression layers are configured with.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) accept: Accept,
    pub(crate) limits: DecompressionLimits,
    pub(crate) pool: CodecPool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            accept: Accept::default(),
            limits: DecompressionLimits::default(),
            pool: CodecPool::global().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_one(value: &str, accept: Accept) -> Codings {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, HeaderValue::from_str(value).unwrap());
        parse(&headers, accept)
    }

    fn order(codings: Codings) -> Vec<Format> {
        match codings {
            Codings::Decode(chain) => chain.decode_order().collect(),
            other => panic!("expected codings, got {other:?}"),
        }
    }

    #[test]
    fn tokens() {
        let all = Accept::default();
        assert_eq!(parse(&HeaderMap::new(), all), Codings::Identity);
        assert_eq!(parse_one("identity", all), Codings::Identity);
        assert_eq!(parse_one(" , IDENTITY ,", all), Codings::Identity);
        assert_eq!(order(parse_one("GZip", all)), [Format::Gzip]);
        assert_eq!(order(parse_one("x-gzip", all)), [Format::Gzip]);
        assert_eq!(
            order(parse_one("gzip, deflate", all)),
            [Format::Deflate, Format::Gzip]
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
        let mut no_deflate = Accept::default();
        no_deflate.set(Format::Deflate, false);
        assert_eq!(parse_one("deflate", no_deflate), Codings::Unsupported);
    }

    #[test]
    fn several_lines() {
        let mut headers = HeaderMap::new();
        headers.append(CONTENT_ENCODING, HeaderValue::from_static("deflate"));
        headers.append(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        assert_eq!(
            order(parse(&headers, Accept::default())),
            [Format::Gzip, Format::Deflate]
        );
    }

    #[test]
    fn accept_value() {
        let mut accept = Accept::default();
        for format in Format::ALL {
            accept.set(*format, false);
        }
        assert!(accept.header_value().is_none());
        accept.set(Format::Deflate, true);
        accept.set(Format::Gzip, true);
        assert_eq!(accept.header_value().unwrap(), "gzip, deflate");
        #[cfg(all(feature = "zstd", feature = "br"))]
        assert_eq!(
            Accept::default().header_value().unwrap(),
            "zstd, br, gzip, deflate"
        );
    }
}
