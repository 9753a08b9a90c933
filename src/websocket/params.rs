//! The `Sec-WebSocket-Extensions` grammar (RFC 6455 section 9.1) and permessage-deflate's
//! four parameters (RFC 7692 section 7.1): repeated headers, comma lists, quoted values.
//! An element with an unknown, duplicate or invalid parameter is an error here; the caller
//! declines that offer and tries the next (RFC 7692 section 5.1).

use http::HeaderMap;
use http::header::SEC_WEBSOCKET_EXTENSIONS;

/// The extension's name.
pub(crate) const PERMESSAGE_DEFLATE: &str = "permessage-deflate";

/// One element of the header: a name and its parameters, values unquoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) params: Vec<(String, Option<String>)>,
}

/// Every element of every `Sec-WebSocket-Extensions` header, in order. `None` when the
/// header is not valid text or breaks the grammar (an empty name, an open quote).
pub(crate) fn elements(headers: &HeaderMap) -> Option<Vec<Element>> {
    let mut out = Vec::new();
    for value in headers.get_all(SEC_WEBSOCKET_EXTENSIONS) {
        let text = value.to_str().ok()?;
        for element in split_outside_quotes(text, ',')? {
            if element.trim().is_empty() {
                continue; // "a, , b": empty list elements are allowed (RFC 9110 5.6.1)
            }
            out.push(parse_element(&element)?);
        }
    }
    Some(out)
}

/// Splits on `sep` where it is not inside a quoted string; `None` on an unclosed quote.
fn split_outside_quotes(text: &str, sep: char) -> Option<Vec<String>> {
    let mut parts = vec![String::new()];
    let mut quoted = false;
    let mut escaped = false;
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut()?.push(c);
    }
    (!quoted).then_some(parts)
}

fn parse_element(text: &str) -> Option<Element> {
    let mut parts = split_outside_quotes(text, ';')?.into_iter();
    let name = parts.next()?.trim().to_owned();
    if !is_token(&name) {
        return None;
    }
    let mut params = Vec::new();
    for part in parts {
        let (key, value) = match part.split_once('=') {
            Some((key, value)) => (key.trim(), Some(unquote(value.trim())?)),
            None => (part.trim(), None),
        };
        if !is_token(key) {
            return None;
        }
        params.push((key.to_ascii_lowercase(), value));
    }
    Some(Element { name, params })
}

/// A token, or a quoted string whose content is a token (RFC 6455 section 9.1: a quoted
/// value must still be a token once unquoted).
fn unquote(value: &str) -> Option<String> {
    let inner = match value.strip_prefix('"') {
        Some(rest) => rest.strip_suffix('"')?.replace('\\', ""),
        None => value.to_owned(),
    };
    is_token(&inner).then_some(inner)
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A window parameter's value: absent, present without a value, or a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Bits {
    /// Not in the element.
    #[default]
    Absent,
    /// Present, no value (`client_max_window_bits` in an offer).
    Bare,
    /// Present with a value in 8..=15.
    Value(u8),
}

/// permessage-deflate's parameters, as one element carries them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Params {
    pub(crate) server_no_context_takeover: bool,
    pub(crate) client_no_context_takeover: bool,
    pub(crate) server_max_window_bits: Bits,
    pub(crate) client_max_window_bits: Bits,
}

/// Why an element was declined (for the `tracing` event; the caller tries the next).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Invalid {
    Unknown,
    Duplicate,
    BadValue,
}

impl Params {
    /// Reads a permessage-deflate element's parameters (section 7.1: each at most once,
    /// no unknown ones, the takeover ones without a value, windows `1*DIGIT` in 8..=15).
    pub(crate) fn parse(element: &Element) -> Result<Params, Invalid> {
        let mut params = Params::default();
        for (key, value) in &element.params {
            let value = value.as_deref();
            match key.as_str() {
                "server_no_context_takeover" => {
                    flag(&mut params.server_no_context_takeover, value)?
                }
                "client_no_context_takeover" => {
                    flag(&mut params.client_no_context_takeover, value)?
                }
                "server_max_window_bits" => bits(&mut params.server_max_window_bits, value)?,
                "client_max_window_bits" => bits(&mut params.client_max_window_bits, value)?,
                _ => return Err(Invalid::Unknown),
            }
        }
        Ok(params)
    }
}

fn flag(slot: &mut bool, value: Option<&str>) -> Result<(), Invalid> {
    if *slot {
        return Err(Invalid::Duplicate);
    }
    if value.is_some() {
        return Err(Invalid::BadValue);
    }
    *slot = true;
    Ok(())
}

fn bits(slot: &mut Bits, value: Option<&str>) -> Result<(), Invalid> {
    if *slot != Bits::Absent {
        return Err(Invalid::Duplicate);
    }
    *slot = match value {
        None => Bits::Bare,
        // 1*DIGIT without a leading zero ("08" is not a valid value).
        Some(v) if v.len() <= 2 && !v.starts_with('0') && v.bytes().all(|b| b.is_ascii_digit()) => {
            match v.parse::<u8>() {
                Ok(n @ 8..=15) => Bits::Value(n),
                _ => return Err(Invalid::BadValue),
            }
        }
        Some(_) => return Err(Invalid::BadValue),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(SEC_WEBSOCKET_EXTENSIONS, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn lists_span_headers_and_quotes() {
        let map = headers(&[
            "permessage-deflate; client_max_window_bits, foo; a=\"x,y\"",
            "permessage-deflate; server_max_window_bits=\"10\"",
        ]);
        // "x,y" is not a token once unquoted: the whole header is refused.
        assert_eq!(elements(&map), None);
        let map = headers(&[
            "permessage-deflate; client_max_window_bits, foo",
            "permessage-deflate; server_max_window_bits=\"10\"",
        ]);
        let list = elements(&map).unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[1].name, "foo");
        let p = Params::parse(&list[2]).unwrap();
        assert_eq!(p.server_max_window_bits, Bits::Value(10));
        let p = Params::parse(&list[0]).unwrap();
        assert_eq!(p.client_max_window_bits, Bits::Bare);
    }

    #[test]
    fn invalid_parameters_are_named() {
        let cases = [
            ("permessage-deflate; x=1", Invalid::Unknown),
            (
                "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
                Invalid::Duplicate,
            ),
            (
                "permessage-deflate; client_no_context_takeover=1",
                Invalid::BadValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=16",
                Invalid::BadValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=7",
                Invalid::BadValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=010",
                Invalid::BadValue,
            ),
            (
                "permessage-deflate; client_max_window_bits=9; client_max_window_bits",
                Invalid::Duplicate,
            ),
        ];
        for (text, why) in cases {
            let list = elements(&headers(&[text])).unwrap();
            assert_eq!(Params::parse(&list[0]), Err(why), "{text}");
        }
    }
}
