//! The two Structured Field headers of RFC 9842, parsed with `sfv` (RFC 9651):
//! `Available-Dictionary` (request) and `Use-As-Dictionary` (response).
//!
//! Both parsers are total: malformed, hostile or oversized values give `None`, never an
//! error or a panic, because a client that sends garbage simply gets no dictionary
//! compression (and a client ignores a dictionary it cannot understand).

use http::{HeaderMap, HeaderValue};
use sfv::{BareItemFromInput, DictSerializer, ItemSerializer, KeyRef, StringRef};

use std::fmt;

use super::AVAILABLE_DICTIONARY;
use super::sf::{self, Member};

/// The longest `id` RFC 9842 allows (section 2.1.3).
const MAX_ID_LEN: usize = 1024;

/// A longer `Available-Dictionary` value is refused before parsing. The canonical form of a
/// SHA-256 is 46 characters (`:` + 44 base64 + `:`); this leaves room for whitespace and
/// parameters and keeps hostile kilobytes of base64 from being decoded.
const MAX_AVAILABLE_DICTIONARY_LEN: usize = 256;

/// A longer `Use-As-Dictionary` value is refused before parsing: an `id` of 1024 characters,
/// a URL pattern and a few destinations fit easily.
const MAX_USE_AS_DICTIONARY_LEN: usize = 8 * 1024;

/// Parses an `Available-Dictionary` value: exactly one SF byte sequence of exactly 32 bytes
/// (a SHA-256). Anything else gives `None`: another item type, bad base64, another length,
/// a list of several values, an inner list, an empty or oversized value.
///
/// Parameters on the item are ignored, as RFC 9651 asks of parameters a field does not
/// define (RFC 9842 defines none).
pub(crate) fn parse_available_dictionary(value: &[u8]) -> Option<[u8; 32]> {
    if value.is_empty() || value.len() > MAX_AVAILABLE_DICTIONARY_LEN {
        return None;
    }
    match sf::item(value)? {
        BareItemFromInput::ByteSequence(bytes) => bytes.try_into().ok(),
        _ => None,
    }
}

/// The hash a request's `Available-Dictionary` names, if it has exactly one such header
/// line and the value is one Structured Field byte sequence of exactly 32 bytes (a SHA-256).
/// Anything else gives `None`: another item type, bad base64, another length, a list, an
/// empty or oversized value. Parameters are ignored, as RFC 9651 asks of parameters a field
/// does not define.
pub(crate) fn available_dictionary(headers: &HeaderMap) -> Option<[u8; 32]> {
    let mut values = headers.get_all(AVAILABLE_DICTIONARY).iter();
    let value = values.next()?;
    if values.next().is_some() {
        // Two lines combine into an SF list of two members: not one byte sequence.
        return None;
    }
    parse_available_dictionary(value.as_bytes())
}

/// The `Available-Dictionary` value for a hash: `:<base64>:`.
pub(crate) fn available_dictionary_value(hash: &[u8; 32]) -> HeaderValue {
    let value = ItemSerializer::new().bare_item(&hash[..]).finish();
    HeaderValue::from_str(&value).expect("an SF byte sequence is a valid header value")
}

/// Why `UseAsDictionary::to_header_value` refused: a string that is not a Structured Field
/// string (printable ASCII only), an `id` over 1024 characters (RFC 9842 section 2.1.3), or a `match` pattern with a
/// regexp group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InvalidMetadata(pub(crate) &'static str);

impl fmt::Display for InvalidMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid Use-As-Dictionary metadata: {}", self.0)
    }
}

impl std::error::Error for InvalidMetadata {}

/// Whether a URL pattern has a regexp group: an unescaped `(` (RFC 9842 section 2.1.1
/// forbids them; a client ignores such a dictionary).
fn has_regexp_group(pattern: &str) -> bool {
    let mut escaped = false;
    for c in pattern.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => return true,
            _ => {}
        }
    }
    false
}

/// The members of a `Use-As-Dictionary` header (RFC 9842 section 2.1): the URL pattern the
/// dictionary serves, the fetch destinations it serves, and its id.
///
/// Only `type=raw` dictionaries exist (the default), so there is no field for the type: the
/// parser gives `None` for any other type, as a client must ignore such a dictionary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UseAsDictionary {
    match_pattern: String,
    match_dest: Vec<String>,
    id: Option<String>,
}

impl UseAsDictionary {
    /// Metadata with the required `match` pattern (a URL Pattern, same origin, no regexp
    /// groups, for example `/app/*.js`).
    pub fn new(match_pattern: impl Into<String>) -> Self {
        UseAsDictionary {
            match_pattern: match_pattern.into(),
            match_dest: Vec::new(),
            id: None,
        }
    }

    /// Sets `match-dest`: the fetch destinations (`"document"`, `"script"`, ...) the
    /// dictionary serves. Empty (the default) means any.
    pub fn with_match_dest<I, S>(mut self, destinations: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.match_dest = destinations.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `id` (at most 1024 characters), which the client echoes as `Dictionary-ID`.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The `match` pattern.
    pub fn match_pattern(&self) -> &str {
        &self.match_pattern
    }

    /// The `match-dest` destinations (empty: any).
    #[cfg(any(dictionary_client, test))]
    pub(crate) fn match_dest(&self) -> &[String] {
        &self.match_dest
    }

    /// The `id`, if set.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The header value: `match="..."`, then `match-dest=(...)` and `id="..."` when set.
    ///
    /// Fails when a string is not an SF string (printable ASCII only: percent-encode
    /// anything else) or the id is over 1024 characters.
    pub(crate) fn to_header_value(&self) -> Result<HeaderValue, InvalidMetadata> {
        fn string<'a>(s: &'a str, what: &'static str) -> Result<&'a StringRef, InvalidMetadata> {
            StringRef::from_str(s).map_err(|_| InvalidMetadata(what))
        }
        if has_regexp_group(&self.match_pattern) {
            return Err(InvalidMetadata(
                "match has a regexp group, which RFC 9842 forbids",
            ));
        }
        if self.id.as_ref().is_some_and(|id| id.len() > MAX_ID_LEN) {
            return Err(InvalidMetadata("id is over 1024 characters"));
        }
        let mut ser = DictSerializer::new();
        ser.bare_item(
            KeyRef::constant("match"),
            string(&self.match_pattern, "match is not an SF string")?,
        );
        if !self.match_dest.is_empty() {
            let mut list = ser.inner_list(KeyRef::constant("match-dest"));
            for dest in &self.match_dest {
                list.bare_item(string(dest, "a match-dest entry is not an SF string")?);
            }
        }
        if let Some(id) = &self.id {
            ser.bare_item(
                KeyRef::constant("id"),
                string(id, "id is not an SF string")?,
            );
        }
        let value = ser.finish().map_err(|_| InvalidMetadata("empty"))?;
        HeaderValue::from_str(&value).map_err(|_| InvalidMetadata("not a header value"))
    }

    /// Parses a `Use-As-Dictionary` value: an SF dictionary with `match` (string, required,
    /// a URL pattern without regexp groups),
    /// `match-dest` (inner list of strings), `id` (string of at most 1024 characters) and
    /// `type` (token, default `raw`). Gives `None` for a value that is not an SF dictionary,
    /// lacks `match`, has a known member of the wrong type, or a `type` other than `raw`.
    /// Unknown members and parameters are ignored (RFC 9651 section 4.2).
    pub fn parse(value: &[u8]) -> Option<UseAsDictionary> {
        if value.len() > MAX_USE_AS_DICTIONARY_LEN {
            return None;
        }
        let dict = sf::dictionary(value)?;
        let string = |item: &BareItemFromInput<'_>| item.as_string().map(|s| s.as_str().to_owned());
        let member = |entry: &Member<'_>| match entry {
            Member::Item(item) => string(item),
            Member::InnerList(_) => None,
        };
        let match_pattern = member(dict.get("match")?)?;
        if has_regexp_group(&match_pattern) {
            return None;
        }
        let match_dest = match dict.get("match-dest") {
            None => Vec::new(),
            Some(Member::InnerList(items)) => items.iter().map(string).collect::<Option<_>>()?,
            Some(Member::Item(_)) => return None,
        };
        let id = match dict.get("id") {
            None => None,
            Some(entry) => Some(member(entry).filter(|id| id.len() <= MAX_ID_LEN)?),
        };
        match dict.get("type") {
            None => {}
            Some(Member::Item(item)) if item.as_token()?.as_str() == "raw" => {}
            Some(_) => return None,
        }
        Some(UseAsDictionary {
            match_pattern,
            match_dest,
            id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH_B64: &str = "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=";

    /// SHA-256 of "abc", whose base64 is `HASH_B64`.
    fn hash() -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::digest(b"abc").into()
    }

    /// The base64 of `n` bytes, as an SF byte sequence writes it.
    fn b64(n: usize) -> String {
        let item = ItemSerializer::new()
            .bare_item(&vec![0xa5u8; n][..])
            .finish();
        item.trim_matches(':').to_owned()
    }

    #[test]
    fn available_dictionary_accepts_one_32_byte_sequence() {
        let value = format!(":{HASH_B64}:");
        assert_eq!(parse_available_dictionary(value.as_bytes()), Some(hash()));
        assert_eq!(
            available_dictionary_value(&hash()).as_bytes(),
            value.as_bytes()
        );
        // Surrounding whitespace is allowed by RFC 9651; parameters are ignored.
        let spaced = format!("  :{HASH_B64}:  ");
        assert_eq!(parse_available_dictionary(spaced.as_bytes()), Some(hash()));
        let with_param = format!(":{HASH_B64}:;a=1");
        assert_eq!(
            parse_available_dictionary(with_param.as_bytes()),
            Some(hash())
        );
    }

    #[test]
    fn hostile_available_dictionary_values_give_none() {
        let hostile: Vec<String> = vec![
            String::new(),
            " ".into(),
            ":".into(),
            "::".into(),
            HASH_B64.into(),                   // not a byte sequence (a token-ish)
            format!("\"{HASH_B64}\""),         // a string
            format!(":{}:", b64(16)),          // 16 bytes
            format!(":{}:", b64(31)),          // 31 bytes
            format!(":{}:", b64(33)),          // 33 bytes
            format!(":{}:", b64(64)),          // 64 bytes
            format!(":{}:", "A".repeat(8192)), // 8 KB of base64
            format!(":{HASH_B64}:, :{HASH_B64}:"), // two values
            format!("(:{HASH_B64}:)"),         // an inner list
            format!(":{}!:", &HASH_B64[..43]), // bad base64
            format!(":{HASH_B64}"),            // unterminated
            format!(":{HASH_B64}: x"),         // trailing garbage
            "?1".into(),
            "42".into(),
            "sha-256=:abc:".into(),
        ];
        for value in &hostile {
            assert_eq!(
                parse_available_dictionary(value.as_bytes()),
                None,
                "{value:?}"
            );
        }
        // Not even UTF-8.
        assert_eq!(parse_available_dictionary(b":\xff\xfe:"), None);
    }

    #[test]
    fn available_dictionary_needs_exactly_one_header_line() {
        let value = available_dictionary_value(&hash());
        let mut headers = HeaderMap::new();
        assert_eq!(available_dictionary(&headers), None);
        headers.insert(AVAILABLE_DICTIONARY, value.clone());
        assert_eq!(available_dictionary(&headers), Some(hash()));
        headers.append(AVAILABLE_DICTIONARY, value);
        assert_eq!(available_dictionary(&headers), None);
    }

    #[test]
    fn use_as_dictionary_round_trips() {
        let metadata = UseAsDictionary::new("/api/*")
            .with_match_dest(["document", "script"])
            .with_id("v1");
        let value = metadata.to_header_value().unwrap();
        assert_eq!(UseAsDictionary::parse(value.as_bytes()), Some(metadata));
        let plain = UseAsDictionary::new("/x");
        let value = plain.to_header_value().unwrap();
        assert_eq!(value.to_str().unwrap(), r#"match="/x""#);
        assert_eq!(UseAsDictionary::parse(value.as_bytes()), Some(plain));
    }

    #[test]
    fn use_as_dictionary_parsing_rules() {
        let parse = |s: &str| UseAsDictionary::parse(s.as_bytes());
        let found =
            parse(r#"match="/a", match-dest=("script"), id="x", type=raw, extra=5"#).unwrap();
        assert_eq!(found.match_pattern(), "/a");
        assert_eq!(found.match_dest(), ["script"]);
        assert_eq!(found.id(), Some("x"));
        assert_eq!(
            parse(r#"match="/a", match-dest=()"#)
                .unwrap()
                .match_dest()
                .len(),
            0
        );
        // An escaped parenthesis is a literal, not a group.
        let literal = parse(r#"match="/a\\(1\\)""#).unwrap();
        assert_eq!(literal.match_pattern(), r"/a\(1\)");
        // Refused: no match, wrong types, unknown type, long id, not a dictionary.
        for bad in [
            "",
            r#"id="x""#,
            "match=/a",
            r#"match=("/a")"#,
            r#"match="/a", match-dest="script""#,
            r#"match="/a", match-dest=(script)"#,
            r#"match="/a", id=7"#,
            r#"match="/a", type=zstd-dict"#,
            r#"match="/a", type="raw""#,
            r#""/a""#,
            "match=\"/a",
            r#"match="/a/(\\d+)""#,
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        let long_id = format!(r#"match="/a", id="{}""#, "i".repeat(MAX_ID_LEN + 1));
        assert_eq!(parse(&long_id), None);
        let max_id = format!(r#"match="/a", id="{}""#, "i".repeat(MAX_ID_LEN));
        assert_eq!(parse(&max_id).unwrap().id().unwrap().len(), MAX_ID_LEN);
    }

    #[test]
    fn invalid_metadata_is_a_typed_error() {
        for metadata in [
            UseAsDictionary::new("/caf\u{e9}"),
            UseAsDictionary::new("/a").with_match_dest(["\n"]),
            UseAsDictionary::new("/a").with_id("i".repeat(MAX_ID_LEN + 1)),
            UseAsDictionary::new("/user/:id(\\d+)"),
        ] {
            assert!(matches!(
                metadata.to_header_value(),
                Err(InvalidMetadata(_))
            ));
        }
    }

    proptest::proptest! {
        #[test]
        fn hostile_dictionary_headers_never_panic(value in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = parse_available_dictionary(&value);
            let _ = UseAsDictionary::parse(&value);
        }
    }
}
