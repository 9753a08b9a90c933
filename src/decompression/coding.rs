//! Parsing `Content-Encoding` and the settings shared by the decompression layers.

use http::header::{CONTENT_ENCODING, HeaderMap, HeaderValue};

use super::limits::DecompressionLimits;
use std::sync::OnceLock;

use crate::codec::{FORMATS, Format};
use crate::dictionary::DictCoding;
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

    /// Whether a dictionary coding is decoded: compiled in, and the coding underneath
    /// (zstd for `dcz`, br for `dcb`) enabled.
    pub(crate) fn allows_dictionary(self, coding: DictCoding) -> bool {
        match coding {
            #[cfg(feature = "zstd")]
            DictCoding::Dcz => self.allows(Format::Zstd),
            #[cfg(feature = "br")]
            DictCoding::Dcb => self.allows(Format::Br),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The `Accept-Encoding` value listing the enabled codings (zstd, br, gzip, deflate
    /// order), then, `with_dictionaries`, `dcz` and `dcb` where allowed; `None` if it lists
    /// nothing. Built once per combination for the process.
    pub(crate) fn header_value(self, with_dictionaries: bool) -> Option<HeaderValue> {
        const DICT_CODINGS: [DictCoding; 2] = [DictCoding::Dcz, DictCoding::Dcb];
        static VALUES: OnceLock<Vec<Option<HeaderValue>>> = OnceLock::new();
        let values = VALUES.get_or_init(|| {
            (0..2usize << Format::ALL.len())
                .map(|mask| {
                    let mut accept = Accept {
                        enabled: [false; FORMATS],
                    };
                    let mut tokens = Vec::new();
                    for (bit, format) in Format::ALL.iter().enumerate() {
                        if mask & (1 << bit) != 0 {
                            accept.set(*format, true);
                            tokens.push(format.as_str());
                        }
                    }
                    if mask >> Format::ALL.len() != 0 {
                        tokens.extend(
                            DICT_CODINGS
                                .iter()
                                .filter(|c| accept.allows_dictionary(**c))
                                .map(|c| c.as_str()),
                        );
                    }
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
        values[mask | usize::from(with_dictionaries) << Format::ALL.len()].clone()
    }
}

/// One content coding of a message: a plain one, or a dictionary coding (RFC 9842) that
/// needs the dictionary the request offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coding {
    Plain(Format),
    Dictionary(DictCoding),
}

/// A non-empty list of codings, in the order they were applied (the header's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chain {
    codings: [Coding; MAX_CODINGS],
    len: usize,
}

impl Chain {
    /// The codings in the order they must be decoded: the last applied comes off first.
    pub(crate) fn decode_order(&self) -> impl Iterator<Item = Coding> + '_ {
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
/// empty list elements are ignored. `dcz` and `dcb` are read only `with_dictionaries`
/// (a client that keeps dictionaries); otherwise they are unsupported codings.
pub(crate) fn parse(headers: &HeaderMap, accept: Accept, with_dictionaries: bool) -> Codings {
    let mut codings = [Coding::Plain(Format::Gzip); MAX_CODINGS];
    let mut count = 0;
    for value in headers.get_all(CONTENT_ENCODING) {
        let Ok(value) = value.to_str() else {
            return Codings::Unsupported;
        };
        for token in value.split(',').map(str::trim) {
            if token.is_empty() || token.eq_ignore_ascii_case("identity") {
                continue;
            }
            let coding = match Format::from_token(token) {
                Some(format) if accept.allows(format) => Coding::Plain(format),
                Some(_) => return Codings::Unsupported,
                None => match DictCoding::from_token(token) {
                    Some(dict) if with_dictionaries && accept.allows_dictionary(dict) => {
                        Coding::Dictionary(dict)
                    }
                    _ => return Codings::Unsupported,
                },
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
        parse(&headers, accept, false)
    }

    fn order(codings: Codings) -> Vec<Format> {
        match codings {
            Codings::Decode(chain) => chain
                .decode_order()
                .map(|coding| match coding {
                    Coding::Plain(format) => format,
                    Coding::Dictionary(dict) => panic!("unexpected {dict:?}"),
                })
                .collect(),
            other => panic!("expected codings, got {other:?}"),
        }
    }

    #[test]
    fn tokens() {
        let all = Accept::default();
        assert_eq!(parse(&HeaderMap::new(), all, false), Codings::Identity);
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
            order(parse(&headers, Accept::default(), false)),
            [Format::Gzip, Format::Deflate]
        );
    }

    #[test]
    fn dictionary_codings_only_where_dictionaries_are_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("DCZ"));
        assert_eq!(
            parse(&headers, Accept::default(), false),
            Codings::Unsupported
        );
        #[cfg(feature = "zstd")]
        {
            let Codings::Decode(chain) = parse(&headers, Accept::default(), true) else {
                panic!("dcz is decoded with dictionaries");
            };
            assert_eq!(
                chain.decode_order().collect::<Vec<_>>(),
                [Coding::Dictionary(DictCoding::Dcz)]
            );
            let mut no_zstd = Accept::default();
            no_zstd.set(Format::Zstd, false);
            assert_eq!(parse(&headers, no_zstd, true), Codings::Unsupported);
        }
        #[cfg(not(feature = "zstd"))]
        assert_eq!(
            parse(&headers, Accept::default(), true),
            Codings::Unsupported
        );
    }

    #[test]
    fn accept_value() {
        let mut accept = Accept::default();
        for format in Format::ALL {
            accept.set(*format, false);
        }
        assert!(accept.header_value(false).is_none());
        assert!(accept.header_value(true).is_none());
        accept.set(Format::Deflate, true);
        accept.set(Format::Gzip, true);
        assert_eq!(accept.header_value(false).unwrap(), "gzip, deflate");
        // No dictionary coding without its coding underneath.
        assert_eq!(accept.header_value(true).unwrap(), "gzip, deflate");
        #[cfg(all(feature = "zstd", feature = "br"))]
        {
            assert_eq!(
                Accept::default().header_value(false).unwrap(),
                "zstd, br, gzip, deflate"
            );
            assert_eq!(
                Accept::default().header_value(true).unwrap(),
                "zstd, br, gzip, deflate, dcz, dcb"
            );
        }
    }
}
