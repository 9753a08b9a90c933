//! Parsing `Content-Encoding` and the settings shared by the decompression layers.

use http::header::{CONTENT_ENCODING, HeaderMap, HeaderValue};

use super::limits::DecompressionLimits;
use std::sync::OnceLock;

use crate::codec::{FORMATS, Format, FormatSet};
use crate::dictionary::DictCoding;
use crate::pool::CodecPool;

/// The most content codings one message may stack (`Content-Encoding: gzip, gzip, deflate`).
///
/// Longer chains are refused: each coding costs a decoder, and unbounded chains were the
/// subject of urllib3 CVE-2025-66418 and undici CVE-2026-22036.
pub const MAX_CODINGS: usize = 3;

/// Whether a layer decoding `formats` decodes a dictionary coding: compiled in, and the
/// coding underneath (zstd for `dcz`, br for `dcb`) in the set.
#[cfg_attr(not(any(feature = "zstd", feature = "br")), allow(unused_variables))]
pub(crate) fn decodes_dictionary(formats: FormatSet, coding: DictCoding) -> bool {
    match coding {
        #[cfg(feature = "zstd")]
        DictCoding::Dcz => formats.contains(Format::Zstd),
        #[cfg(feature = "br")]
        DictCoding::Dcb => formats.contains(Format::Br),
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

/// The `Accept-Encoding` value listing `formats` (zstd, br, gzip, deflate order), then,
/// `with_dictionaries`, `dcz` and `dcb` where decoded; `None` if it lists nothing. Built once
/// per combination for the process.
pub(crate) fn accept_encoding(formats: FormatSet, with_dictionaries: bool) -> Option<HeaderValue> {
    const DICT_CODINGS: [DictCoding; 2] = [DictCoding::Dcz, DictCoding::Dcb];
    const SETS: usize = 1 << FORMATS;
    static VALUES: OnceLock<Vec<Option<HeaderValue>>> = OnceLock::new();
    let values = VALUES.get_or_init(|| {
        let mut values = vec![None; 2 * SETS];
        for set in (0..SETS).map(|bits| {
            let mut set = FormatSet::EMPTY;
            for format in Format::ALL.iter().filter(|f| bits & 1 << f.index() != 0) {
                set.set(*format, true);
            }
            set
        }) {
            let plain: Vec<&str> = set.iter().map(Format::as_str).collect();
            let dict = DICT_CODINGS
                .iter()
                .filter(|c| decodes_dictionary(set, **c))
                .map(|c| c.as_str());
            let with_dict: Vec<&str> = plain.iter().copied().chain(dict).collect();
            let value = |tokens: &[&str]| {
                (!tokens.is_empty())
                    .then(|| HeaderValue::from_str(&tokens.join(", ")).expect("tokens are ASCII"))
            };
            values[set.bits()] = value(&plain);
            values[SETS + set.bits()] = value(&with_dict);
        }
        values
    });
    values[usize::from(with_dictionaries) * SETS + formats.bits()].clone()
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
pub(crate) fn parse(headers: &HeaderMap, accept: FormatSet, with_dictionaries: bool) -> Codings {
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
                Some(format) if accept.contains(format) => Coding::Plain(format),
                Some(_) => return Codings::Unsupported,
                None => match DictCoding::from_token(token) {
                    Some(dict) if with_dictionaries && decodes_dictionary(accept, dict) => {
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
    /// The codings decoded (and, on a client, accepted).
    pub(crate) accept: FormatSet,
    pub(crate) limits: DecompressionLimits,
    pub(crate) pool: CodecPool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            accept: FormatSet::all(),
            limits: DecompressionLimits::default(),
            pool: CodecPool::global().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_one(value: &str, accept: FormatSet) -> Codings {
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
        let all = FormatSet::all();
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
        let mut no_deflate = FormatSet::all();
        no_deflate.set(Format::Deflate, false);
        assert_eq!(parse_one("deflate", no_deflate), Codings::Unsupported);
    }

    #[test]
    fn several_lines() {
        let mut headers = HeaderMap::new();
        headers.append(CONTENT_ENCODING, HeaderValue::from_static("deflate"));
        headers.append(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        assert_eq!(
            order(parse(&headers, FormatSet::all(), false)),
            [Format::Gzip, Format::Deflate]
        );
    }

    #[test]
    fn dictionary_codings_only_where_dictionaries_are_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("DCZ"));
        assert_eq!(
            parse(&headers, FormatSet::all(), false),
            Codings::Unsupported
        );
        #[cfg(feature = "zstd")]
        {
            let Codings::Decode(chain) = parse(&headers, FormatSet::all(), true) else {
                panic!("dcz is decoded with dictionaries");
            };
            assert_eq!(
                chain.decode_order().collect::<Vec<_>>(),
                [Coding::Dictionary(DictCoding::Dcz)]
            );
            let mut no_zstd = FormatSet::all();
            no_zstd.set(Format::Zstd, false);
            assert_eq!(parse(&headers, no_zstd, true), Codings::Unsupported);
        }
        #[cfg(not(feature = "zstd"))]
        assert_eq!(
            parse(&headers, FormatSet::all(), true),
            Codings::Unsupported
        );
    }

    #[test]
    fn accept_value() {
        let mut accept = FormatSet::all();
        for format in Format::ALL {
            accept.set(*format, false);
        }
        assert!(accept_encoding(accept, false).is_none());
        assert!(accept_encoding(accept, true).is_none());
        accept.set(Format::Deflate, true);
        accept.set(Format::Gzip, true);
        assert_eq!(accept_encoding(accept, false).unwrap(), "gzip, deflate");
        // No dictionary coding without its coding underneath.
        assert_eq!(accept_encoding(accept, true).unwrap(), "gzip, deflate");
        #[cfg(all(feature = "zstd", feature = "br"))]
        {
            assert_eq!(
                accept_encoding(FormatSet::all(), false).unwrap(),
                "zstd, br, gzip, deflate"
            );
            assert_eq!(
                accept_encoding(FormatSet::all(), true).unwrap(),
                "zstd, br, gzip, deflate, dcz, dcb"
            );
        }
    }
}
