//! Choosing dictionary compression for one response: the request offers `dcz`/`dcb`, names a
//! dictionary the server has, and the readability gate passes.

use http::HeaderMap;

use super::Dictionary;
use super::DictionaryStore;
use super::gate::gate;
use crate::ContentCoding;
use crate::negotiate::{AcceptEncoding, Q};

/// The dictionary coding and dictionary to compress a response with, if any: the request's
/// `Available-Dictionary` names a dictionary in `store`, its `Accept-Encoding` offers `dcz`
/// or `dcb`, `codings` (what the server will make, in its order of preference) includes
/// it, and the readability [`gate`] passes. The higher q-value wins; on a tie, the first of
/// `codings`.
///
/// The caller still decides whether the response is worth compressing at all (its type,
/// its size, an existing `Content-Encoding`), and sets `Content-Encoding` and `Vary: accept-encoding, available-dictionary` (RFC 9842
/// section 6.2).
#[cfg(any(all(test, both_dictionary_codings), fuzzing))]
pub(crate) fn select(
    request: &HeaderMap,
    response: &HeaderMap,
    store: &DictionaryStore,
    codings: &[ContentCoding],
) -> Option<(ContentCoding, Dictionary)> {
    let accept = AcceptEncoding::parse(request);
    select_parsed(&accept, request, response, store, codings)
}

/// [`select`] with the request's `Accept-Encoding` already parsed (a layer reads it once
/// per request). Only codings listed by name count: `*` never selects a dictionary coding,
/// as a client must not receive one it did not offer (RFC 9842 section 6.1).
pub(crate) fn select_parsed(
    accept: &AcceptEncoding,
    request: &HeaderMap,
    response: &HeaderMap,
    store: &DictionaryStore,
    codings: &[ContentCoding],
) -> Option<(ContentCoding, Dictionary)> {
    let mut best: Option<(ContentCoding, Q)> = None;
    for &coding in codings.iter().filter(|c| c.needs_dictionary()) {
        let q = accept.listed(coding);
        if q > 0 && best.is_none_or(|(_, best_q)| q > best_q) {
            best = Some((coding, q));
        }
    }
    let (coding, _) = best?;
    if !gate(request, response).is_allowed() {
        return None;
    }
    let dictionary = store.for_request(request)?;
    Some((coding, dictionary))
}

#[cfg(all(test, feature = "dcz", feature = "dcb"))]
mod tests {
    use super::*;
    use crate::headers::{AVAILABLE_DICTIONARY, UseAsDictionary};
    use http::header::ACCEPT_ENCODING;

    fn setup() -> (DictionaryStore, Dictionary) {
        let store = DictionaryStore::new(1 << 20);
        let dictionary = Dictionary::new(vec![b'd'; 64], UseAsDictionary::new("/*")).unwrap();
        assert!(store.insert(dictionary.clone()));
        (store, dictionary)
    }

    fn request(accept: &str, dictionary: &Dictionary) -> HeaderMap {
        let mut request = HeaderMap::new();
        request.insert(ACCEPT_ENCODING, accept.parse().unwrap());
        request.insert(AVAILABLE_DICTIONARY, dictionary.available_dictionary());
        request
    }

    const BOTH: &[ContentCoding] = &[ContentCoding::Dcz, ContentCoding::Dcb];

    #[test]
    fn q_values_and_server_preference() {
        let (store, d) = setup();
        let none = HeaderMap::new();
        let pick = |accept: &str, codings| {
            select(&request(accept, &d), &none, &store, codings).map(|(coding, _)| coding)
        };
        assert_eq!(pick("dcb, dcz", BOTH), Some(ContentCoding::Dcz));
        assert_eq!(pick("dcb, dcz;q=0.5", BOTH), Some(ContentCoding::Dcb));
        assert_eq!(pick("DCB;q=0.9, dcz;q=0.8", BOTH), Some(ContentCoding::Dcb));
        assert_eq!(
            pick("dcb, dcz", &[ContentCoding::Dcb]),
            Some(ContentCoding::Dcb)
        );
        assert_eq!(pick("dcz;q=0", BOTH), None);
        assert_eq!(
            pick("dcz;q=0.000, dcb;q=0.001", BOTH),
            Some(ContentCoding::Dcb)
        );
        assert_eq!(pick("dcz;q=2", BOTH), None, "malformed q refuses");
        assert_eq!(
            pick("*", BOTH),
            None,
            "a wildcard never selects a dictionary"
        );
        assert_eq!(pick("gzip, br, zstd", BOTH), None);
        assert_eq!(pick("dcz", &[]), None);
    }

    #[test]
    fn needs_a_known_dictionary_and_the_gate() {
        let (store, d) = setup();
        let none = HeaderMap::new();
        let other = Dictionary::new(vec![b'o'; 64], UseAsDictionary::new("/*")).unwrap();
        assert_eq!(select(&request("dcz", &other), &none, &store, BOTH), None);
        let mut no_dict = request("dcz", &d);
        no_dict.remove(AVAILABLE_DICTIONARY);
        assert_eq!(select(&no_dict, &none, &store, BOTH), None);
        let mut opaque = request("dcz", &d);
        opaque.insert("sec-fetch-mode", "no-cors".parse().unwrap());
        assert_eq!(select(&opaque, &none, &store, BOTH), None);
        opaque.insert("sec-fetch-site", "same-origin".parse().unwrap());
        assert!(select(&opaque, &none, &store, BOTH).is_some());
    }
}
