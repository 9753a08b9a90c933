//! Accept-Encoding (RFC 9110 section 12.5.3): one parse per request, then negotiation.
//!
//! [`AcceptEncoding::parse`] walks the raw header bytes once, keeping only the best q-value
//! seen per coding this crate speaks (dictionary codings included), identity and `*`: O(n)
//! time, no allocation, and no assumption that the value is UTF-8. Plain and dictionary
//! codings are read by the same grammar; only [`choose`] and the dictionary selection read
//! the result differently (`*` never offers a dictionary coding, RFC 9842 section 6.1).

use crate::headers::trim;
use crate::{CODINGS, CodingSet, ContentCoding};
use http::HeaderMap;
use http::header::ACCEPT_ENCODING;

/// What to send, decided from the request's Accept-Encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Negotiated {
    /// Compress with this coding.
    Encode(ContentCoding),
    /// Send the representation unencoded.
    Identity,
    /// Nothing acceptable is offered: the service answers 406.
    NotAcceptable,
}

/// Which codings the server offers, and which wins when q-values tie.
///
/// The default order is tower-http's: zstd > br > gzip > deflate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Offered {
    enabled: CodingSet,
    /// Lower ranks win ties.
    rank: [u8; CODINGS],
}

impl Default for Offered {
    fn default() -> Self {
        let mut offered = Offered {
            enabled: CodingSet::plain(),
            rank: [u8::MAX; CODINGS],
        };
        for (rank, coding) in ContentCoding::PLAIN.iter().enumerate() {
            offered.rank[coding.index()] = rank as u8;
        }
        offered
    }
}

impl Offered {
    /// Only these codings, in the default order of preference.
    #[cfg(test)]
    pub(crate) fn only(codings: &[ContentCoding]) -> Self {
        let mut offered = Offered::default();
        for coding in ContentCoding::PLAIN {
            offered.set(*coding, codings.contains(coding));
        }
        offered
    }

    pub(crate) fn set(&mut self, coding: ContentCoding, on: bool) {
        self.enabled.set(coding, on);
    }

    /// Puts `order` first when q-values tie; codings not named keep their default order
    /// after them.
    pub(crate) fn prefer(&mut self, order: &[ContentCoding]) {
        let defaults = ContentCoding::PLAIN.iter().filter(|f| !order.contains(f));
        for (rank, coding) in order.iter().chain(defaults).enumerate() {
            self.rank[coding.index()] = rank as u8;
        }
    }

    /// The enabled codings, most preferred first.
    pub(crate) fn in_order(&self) -> impl Iterator<Item = ContentCoding> + '_ {
        let mut codings: [ContentCoding; CODINGS] = [ContentCoding::Gzip; CODINGS];
        let mut len = 0;
        for coding in self.enabled.iter() {
            codings[len] = coding;
            len += 1;
        }
        codings[..len].sort_by_key(|f| self.rank[f.index()]);
        codings.into_iter().take(len)
    }
}

/// q-values as thousandths: `q=1` is 1000, `q=0.5` is 500.
pub(crate) type Q = u16;
const Q_ONE: Q = 1000;

/// A request's `Accept-Encoding`, read once: the best q-value listed per coding; `None`
/// means "not listed".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AcceptEncoding {
    /// Whether the request has the header at all.
    present: bool,
    codings: [Option<Q>; CODINGS],
    identity: Option<Q>,
    star: Option<Q>,
}

impl AcceptEncoding {
    /// Reads every `Accept-Encoding` field line (several lines are one list).
    pub(crate) fn parse(headers: &HeaderMap) -> Self {
        let mut accept = AcceptEncoding::default();
        for value in headers.get_all(ACCEPT_ENCODING) {
            accept.present = true;
            for element in split_unquoted(value.as_bytes(), b',') {
                if let Some((coding, q)) = parse_element(element) {
                    accept.record(coding, q);
                }
            }
        }
        accept
    }

    fn record(&mut self, coding: &[u8], q: Q) {
        let slot = if let Some(coding) = ContentCoding::from_token_bytes(coding) {
            &mut self.codings[coding.index()]
        } else if coding.eq_ignore_ascii_case(b"identity") {
            &mut self.identity
        } else if coding == b"*" {
            &mut self.star
        } else {
            return;
        };
        // Duplicates are not defined by the RFC; the most permissive one wins.
        *slot = Some(slot.map_or(q, |old| old.max(q)));
    }

    /// The q-value `coding` is listed with by name, 0 if it is not (`*` aside).
    #[cfg_attr(not(dictionary), allow(dead_code))]
    pub(crate) fn listed(&self, coding: ContentCoding) -> Q {
        self.codings[coding.index()].unwrap_or(0)
    }
}

/// What [`choose`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) negotiated: Negotiated,
    /// The client refused identity (`identity;q=0`, or `*;q=0` without identity): a coding
    /// must be used even where the server would rather not (a body below the minimum size).
    pub(crate) identity_refused: bool,
}

/// Picks the response coding from the request's `Accept-Encoding` header(s).
#[cfg(test)]
pub(crate) fn negotiate(headers: &HeaderMap, offered: Offered) -> Negotiated {
    choose(&AcceptEncoding::parse(headers), offered).negotiated
}

/// Picks the response coding from the request's `Accept-Encoding`, and tells whether
/// identity was refused.
pub(crate) fn choose(seen: &AcceptEncoding, offered: Offered) -> Choice {
    // No header: the client has no preference, and not compressing is always safe.
    if !seen.present {
        return Choice {
            negotiated: Negotiated::Identity,
            identity_refused: false,
        };
    }
    // An explicit entry beats `*`; a coding neither listed nor covered by `*` is
    // unacceptable. The highest q wins; the first in preference order wins a tie.
    let mut best: Option<(ContentCoding, Q)> = None;
    for coding in offered.in_order() {
        let q = seen.codings[coding.index()].or(seen.star).unwrap_or(0);
        if q > 0 && best.is_none_or(|(_, best_q)| q > best_q) {
            best = Some((coding, q));
        }
    }

    // identity unlisted and no `*`: acceptable, but it loses to any acceptable coding.
    let identity = seen.identity.or(seen.star);
    let negotiated = match best {
        Some((_, q)) if identity.is_some_and(|iq| iq > q) => Negotiated::Identity,
        Some((coding, _)) => Negotiated::Encode(coding),
        None if identity == Some(0) => Negotiated::NotAcceptable,
        None => Negotiated::Identity,
    };
    Choice {
        negotiated,
        identity_refused: identity == Some(0),
    }
}

/// Parses one list element, `coding *( OWS ";" OWS param )`. Returns `None` for empty
/// elements and for entries whose q-value is invalid (those are ignored entirely).
fn parse_element(element: &[u8]) -> Option<(&[u8], Q)> {
    let mut parts = split_unquoted(element, b';');
    let coding = trim(parts.next()?);
    if coding.is_empty() {
        return None;
    }
    let mut q = None;
    for param in parts {
        let (name, value) = match param.iter().position(|&b| b == b'=') {
            Some(eq) => (trim(&param[..eq]), Some(trim(&param[eq + 1..]))),
            None => (trim(param), None),
        };
        if name.eq_ignore_ascii_case(b"q") {
            // A second weight is ambiguous: drop the entry rather than guess.
            if q.is_some() {
                return None;
            }
            q = Some(parse_qvalue(value?)?);
        }
    }
    Some((coding, q.unwrap_or(Q_ONE)))
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn parse_qvalue(s: &[u8]) -> Option<Q> {
    let (&first, rest) = s.split_first()?;
    let fraction = match rest {
        [] => &[][..],
        [b'.', digits @ ..] if digits.len() <= 3 => digits,
        _ => return None,
    };
    match first {
        b'0' => {
            let mut value = 0;
            let mut scale = 100;
            for &d in fraction {
                if !d.is_ascii_digit() {
                    return None;
                }
                value += Q::from(d - b'0') * scale;
                scale /= 10;
            }
            Some(value)
        }
        b'1' if fraction.iter().all(|&d| d == b'0') => Some(Q_ONE),
        _ => None,
    }
}

/// Splits on `sep` outside quoted strings, so a `,` or `;` inside a quoted parameter
/// value does not start a new element. Each byte is visited once.
fn split_unquoted(s: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let s = rest?;
        let mut quoted = false;
        let mut escaped = false;
        for (i, &b) in s.iter().enumerate() {
            if escaped {
                escaped = false;
            } else if quoted {
                match b {
                    b'\\' => escaped = true,
                    b'"' => quoted = false,
                    _ => {}
                }
            } else if b == b'"' {
                quoted = true;
            } else if b == sep {
                rest = Some(&s[i + 1..]);
                return Some(&s[..i]);
            }
        }
        rest = None;
        Some(s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn both() -> Offered {
        Offered::only(&[ContentCoding::Gzip, ContentCoding::Deflate])
    }
    const GZIP: Negotiated = Negotiated::Encode(ContentCoding::Gzip);
    const DEFLATE: Negotiated = Negotiated::Encode(ContentCoding::Deflate);
    const IDENTITY: Negotiated = Negotiated::Identity;
    const NOT_ACCEPTABLE: Negotiated = Negotiated::NotAcceptable;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(ACCEPT_ENCODING, HeaderValue::from_bytes(v).unwrap());
        }
        map
    }

    fn neg(value: &str) -> Negotiated {
        negotiate(&headers(&[value.as_bytes()]), both())
    }

    fn neg_with(value: &str, offered: Offered) -> Negotiated {
        negotiate(&headers(&[value.as_bytes()]), offered)
    }

    #[test]
    fn no_header_is_identity() {
        assert_eq!(negotiate(&HeaderMap::new(), both()), IDENTITY);
    }

    #[test]
    fn empty_value_is_identity_only() {
        assert_eq!(neg(""), IDENTITY);
        assert_eq!(neg(" , ,"), IDENTITY);
    }

    #[test]
    fn single_codings() {
        assert_eq!(neg("gzip"), GZIP);
        assert_eq!(neg("deflate"), DEFLATE);
        assert_eq!(neg("x-gzip"), GZIP);
        assert_eq!(neg("br"), IDENTITY);
        assert_eq!(neg("invalid, gzip"), GZIP);
        assert_eq!(neg("identity"), IDENTITY);
    }

    #[test]
    fn tokens_are_case_insensitive() {
        assert_eq!(neg("gZiP"), GZIP);
        assert_eq!(neg("X-GZIP"), GZIP);
        assert_eq!(neg("DEFLATE"), DEFLATE);
        assert_eq!(neg("gzip;q=0.5, IDENTITY;Q=1"), IDENTITY);
    }

    #[test]
    fn highest_q_wins() {
        assert_eq!(neg("gzip;q=0.5, deflate;q=0.8"), DEFLATE);
        assert_eq!(neg("gzip;q=0.8, deflate;q=0.5"), GZIP);
        assert_eq!(neg("gzip;q=0.995, deflate;q=0.997"), DEFLATE);
        assert_eq!(neg("gzip;q=0.5, deflate"), DEFLATE);
    }

    #[test]
    fn ties_prefer_gzip() {
        assert_eq!(neg("deflate, gzip"), GZIP);
        assert_eq!(neg("deflate;q=0.5, gzip;q=0.5"), GZIP);
        assert_eq!(neg("*"), GZIP);
    }

    #[test]
    fn q_zero_excludes() {
        assert_eq!(neg("gzip;q=0, deflate"), DEFLATE);
        assert_eq!(neg("gzip;q=0"), IDENTITY);
        assert_eq!(neg("gzip;q=0."), IDENTITY);
        assert_eq!(neg("gzip;q=0.000, deflate;q=0"), IDENTITY);
    }

    #[test]
    fn q_whitespace_and_case() {
        assert_eq!(neg(" gzip\t; q=0.5 ,\tdeflate ;\tq=0.8\t"), DEFLATE);
        assert_eq!(neg("gzip;q=0.5, deflate;Q=0.8"), DEFLATE);
        // Whitespace around `=` is tolerated on purpose; tower-http drops these entries.
        assert_eq!(neg("gzip;q =0.5, deflate;q=0.4"), GZIP);
        assert_eq!(neg("gzip;q= 0.5, deflate;q=0.4"), GZIP);
        assert_eq!(neg("gzip ; q = 0.5 , deflate;q=0.4"), GZIP);
    }

    #[test]
    fn valid_qvalues() {
        assert_eq!(parse_qvalue(b"0"), Some(0));
        assert_eq!(parse_qvalue(b"0."), Some(0));
        assert_eq!(parse_qvalue(b"0.5"), Some(500));
        assert_eq!(parse_qvalue(b"0.05"), Some(50));
        assert_eq!(parse_qvalue(b"0.001"), Some(1));
        assert_eq!(parse_qvalue(b"0.999"), Some(999));
        assert_eq!(parse_qvalue(b"1"), Some(1000));
        assert_eq!(parse_qvalue(b"1."), Some(1000));
        assert_eq!(parse_qvalue(b"1.000"), Some(1000));
        // 0.001 is low but still acceptable.
        assert_eq!(neg("gzip;q=0.001"), GZIP);
        assert_eq!(neg("gzip;q=1.000, deflate;q=0.999"), GZIP);
    }

    #[test]
    fn invalid_qvalues_drop_the_entry() {
        for q in [
            "-0.1", "00.5", "0.5000", ".5", "1.01", "1.001", "2", "abc", "", "0,5", "1e0", "0.5x",
            "+1", "0. 5",
        ] {
            assert_eq!(parse_qvalue(q.as_bytes()), None, "q={q:?}");
            assert_eq!(neg(&format!("gzip;q={q}")), IDENTITY, "q={q:?}");
            // The dropped entry does not hide a valid one.
            assert_eq!(neg(&format!("gzip;q={q}, deflate")), DEFLATE, "q={q:?}");
        }
        // `q` without a value, and a doubled weight, are also dropped.
        assert_eq!(neg("gzip;q"), IDENTITY);
        assert_eq!(neg("gzip;q=1;q=0"), IDENTITY);
        // A dropped identity;q=0 does not exclude identity.
        assert_eq!(neg("identity;q=-0"), IDENTITY);
    }

    #[test]
    fn other_parameters_are_ignored() {
        assert_eq!(neg("gzip;level=9;q=0.4, deflate;q=0.3"), GZIP);
        assert_eq!(neg("gzip;foo, deflate;q=0.3"), GZIP);
        // Separators inside a quoted value do not split the entry.
        assert_eq!(neg(r#"gzip;foo="a,b;q=0";q=0.4, deflate;q=0.3"#), GZIP);
        assert_eq!(neg(r#"gzip;foo="a\"b,c", deflate;q=0.3"#), GZIP);
    }

    #[test]
    fn header_lines_are_merged() {
        let h = headers(&[b"gzip;q=0.5", b"deflate"]);
        assert_eq!(negotiate(&h, both()), DEFLATE);
        let h = headers(&[b"gzip;q=0.5, deflate;q=0.4", b"identity;q=0", b"br"]);
        assert_eq!(negotiate(&h, both()), GZIP);
        let h = headers(&[b"identity;q=0", b"*;q=0"]);
        assert_eq!(negotiate(&h, both()), NOT_ACCEPTABLE);
        let h = headers(&[b"", b"gzip"]);
        assert_eq!(negotiate(&h, both()), GZIP);
    }

    #[test]
    fn duplicates_keep_the_best() {
        assert_eq!(neg("gzip;q=0, gzip;q=0.5, deflate;q=0.4"), GZIP);
        assert_eq!(neg("x-gzip;q=0.9, gzip;q=0.1, deflate;q=0.5"), GZIP);
    }

    #[test]
    fn wildcard() {
        assert_eq!(neg("*"), GZIP);
        assert_eq!(neg("*;q=0.5, gzip;q=1"), GZIP);
        assert_eq!(neg("*;q=0.5, gzip;q=0.2"), DEFLATE);
        assert_eq!(neg("*, gzip;q=0"), DEFLATE);
        assert_eq!(neg("*;q=0, gzip"), GZIP);
        assert_eq!(neg("*;q=0, identity"), IDENTITY);
        assert_eq!(neg("*;q=0"), NOT_ACCEPTABLE);
        assert_eq!(neg("*;q=0, br"), NOT_ACCEPTABLE);
        // `*` also gives its q to an unlisted identity.
        assert_eq!(neg("*;q=0.5, gzip;q=0.4, deflate;q=0.3"), IDENTITY);
        assert_eq!(neg("*;q=0.5, gzip;q=0.5"), GZIP);
    }

    #[test]
    fn identity_exclusion() {
        assert_eq!(neg("identity;q=0"), NOT_ACCEPTABLE);
        assert_eq!(neg("identity;q=0, gzip"), GZIP);
        assert_eq!(neg("identity;q=0, *;q=0"), NOT_ACCEPTABLE);
        assert_eq!(neg("*;q=0, identity;q=0"), NOT_ACCEPTABLE);
        assert_eq!(neg("identity;q=0, *"), GZIP);
        assert_eq!(neg("identity;q=0, br"), NOT_ACCEPTABLE);
    }

    #[test]
    fn identity_preferred_only_when_strictly_higher() {
        assert_eq!(neg("gzip;q=0.5, identity"), IDENTITY);
        assert_eq!(neg("gzip;q=0.5, identity;q=0.5"), GZIP);
        assert_eq!(neg("gzip;q=0.5, identity;q=0.4"), GZIP);
        // Unlisted identity never beats a listed coding, however low its q.
        assert_eq!(neg("gzip;q=0.001"), GZIP);
    }

    #[test]
    fn offered_subsets() {
        let deflate_only = Offered::only(&[ContentCoding::Deflate]);
        assert_eq!(neg_with("gzip, deflate;q=0.1", deflate_only), DEFLATE);
        assert_eq!(neg_with("gzip", deflate_only), IDENTITY);
        assert_eq!(neg_with("*", deflate_only), DEFLATE);
        assert_eq!(neg_with("gzip, identity;q=0", deflate_only), NOT_ACCEPTABLE);

        let gzip_only = Offered::only(&[ContentCoding::Gzip]);
        assert_eq!(neg_with("deflate, gzip;q=0.1", gzip_only), GZIP);

        let none = Offered::only(&[]);
        assert_eq!(neg_with("gzip, deflate", none), IDENTITY);
        assert_eq!(neg_with("*", none), IDENTITY);
        assert_eq!(neg_with("gzip, identity;q=0", none), NOT_ACCEPTABLE);
        assert_eq!(neg_with("*;q=0", none), NOT_ACCEPTABLE);
    }

    #[test]
    fn huge_header_is_linear_and_correct() {
        // ~64 KiB: thousands of unknown codings with one useful entry at the end.
        let mut value = String::with_capacity(64 * 1024);
        let mut i = 0;
        while value.len() < 64 * 1024 - 64 {
            value.push_str(&format!("c{i};q=0.5, "));
            i += 1;
        }
        value.push_str("identity;q=0, deflate;q=0.9, gzip;q=0.8");
        assert!(i > 4000);
        assert_eq!(neg(&value), DEFLATE);

        // Many header lines, each a long run of separators.
        let line = vec![b','; 16 * 1024];
        let mut lines: Vec<&[u8]> = vec![&line; 4];
        lines.push(b"gzip");
        assert_eq!(negotiate(&headers(&lines), both()), GZIP);

        // One unterminated quote swallowing the rest of the value.
        let mut quoted = b"gzip;x=\"".to_vec();
        quoted.extend(std::iter::repeat_n(b'a', 64 * 1024));
        assert_eq!(negotiate(&headers(&[&quoted]), both()), GZIP);
    }

    #[test]
    fn non_ascii_bytes_do_not_panic() {
        let garbage: &[u8] = b"\xff\xfe;q=\x80, gzip;q=0.\xe9, \xc3\x28, deflate;q=0.7\xa0";
        let h = headers(&[garbage]);
        assert_eq!(negotiate(&h, both()), IDENTITY);
        let h = headers(&[garbage, b"gzip;q=0.2"]);
        assert_eq!(negotiate(&h, both()), GZIP);
        let h = headers(&[b"\x80\x81\x82\xfe\xff", b"identity\xff;q=0"]);
        assert_eq!(negotiate(&h, both()), IDENTITY);
        // Every byte HeaderValue accepts, in every position of a short entry.
        for b in (0x20..=0xffu8).filter(|&b| b != 0x7f) {
            for v in [vec![b], vec![b'g', b, b';', b'q', b'=', b'0', b'.', b]] {
                let _ = negotiate(&headers(&[&v]), both());
            }
        }
    }

    #[cfg(all(feature = "dcz", feature = "dcb"))]
    #[test]
    fn ties_follow_the_preference_order() {
        let all = Offered::default();
        let neg_all = |v: &str| negotiate(&headers(&[v.as_bytes()]), all);
        // Chromium and curl --compressed.
        assert_eq!(
            neg_all("gzip, deflate, br, zstd"),
            Negotiated::Encode(ContentCoding::Zstd)
        );
        assert_eq!(
            neg_all("deflate, gzip, br, zstd"),
            Negotiated::Encode(ContentCoding::Zstd)
        );
        assert_eq!(
            neg_all("gzip, deflate, br"),
            Negotiated::Encode(ContentCoding::Br)
        );
        assert_eq!(neg_all("*"), Negotiated::Encode(ContentCoding::Zstd));
        // A higher q beats the order.
        assert_eq!(neg_all("zstd;q=0.5, gzip"), GZIP);
        let mut gzip_first = all;
        gzip_first.prefer(&[ContentCoding::Gzip]);
        assert_eq!(
            negotiate(&headers(&[b"gzip, deflate, br, zstd"]), gzip_first),
            GZIP
        );
        assert_eq!(
            negotiate(&headers(&[b"deflate, br, zstd"]), gzip_first),
            Negotiated::Encode(ContentCoding::Zstd)
        );
        let mut no_zstd = all;
        no_zstd.set(ContentCoding::Zstd, false);
        assert_eq!(
            negotiate(&headers(&[b"zstd, br"]), no_zstd),
            Negotiated::Encode(ContentCoding::Br)
        );
    }

    /// Plain and dictionary codings go through one grammar: the same header text gives a
    /// plain coding and a dictionary coding the same q-value.
    #[test]
    #[cfg(feature = "dcz")]
    fn plain_and_dictionary_codings_read_alike() {
        let table: &[(&str, Option<Q>)] = &[
            ("{}", Some(1000)),
            (" {} ", Some(1000)),
            ("{};q=0.5", Some(500)),
            ("{} ; Q=0.25", Some(250)),
            ("{};q=0", Some(0)),
            ("{};q=0.000", Some(0)),
            ("{};q=1.000", Some(1000)),
            ("{};q=0.5, {};q=0.7", Some(700)),
            ("{};q=0, {};q=0.3", Some(300)),
            ("{};q=2", None),
            ("{};q=0.5000", None),
            ("{};q=abc", None),
            ("{};q=0.5;q=0.6", None),
            ("{};q", None),
            ("{};foo=\"a,b\";q=0.4", Some(400)),
            ("*", None),
            ("", None),
        ];
        for coding in [ContentCoding::Gzip, ContentCoding::Dcz] {
            for &(template, want) in table {
                for upper in [false, true] {
                    let mut token = coding.as_str().to_owned();
                    if upper {
                        token.make_ascii_uppercase();
                    }
                    let value = template.replace("{}", &token);
                    let accept = AcceptEncoding::parse(&headers(&[value.as_bytes()]));
                    assert_eq!(accept.codings[coding.index()], want, "{value:?}");
                    assert_eq!(accept.listed(coding), want.unwrap_or(0), "{value:?}");
                }
            }
        }
    }

    /// `*` covers the plain codings a server offers, never a dictionary coding.
    #[test]
    #[cfg(feature = "dcz")]
    fn a_wildcard_offers_no_dictionary_coding() {
        let accept = AcceptEncoding::parse(&headers(&[b"*"]));
        assert_eq!(accept.listed(ContentCoding::Dcz), 0);
        assert_eq!(
            choose(&accept, Offered::default()).negotiated,
            Negotiated::Encode(ContentCoding::PLAIN[0])
        );
    }
}
