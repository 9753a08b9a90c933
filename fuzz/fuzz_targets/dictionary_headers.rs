//! RFC 9842's request and response headers: `Available-Dictionary` and `Use-As-Dictionary`
//! parsed from arbitrary bytes, never panicking; what parses re-serializes and parses back
//! to the same value; and the readability gate and `select` over arbitrary fetch metadata.
#![no_main]

use http::{HeaderMap, HeaderValue};
use libfuzzer_sys::fuzz_target;
use tower_gzip::ContentCoding;
use tower_gzip::dictionary::{Dictionary, DictionaryStore, UseAsDictionary};
use tower_gzip::fuzzing::{available_dictionary, readable, select, use_as_dictionary_value};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = HeaderValue::from_bytes(data) {
        // Any value parses to a hash or to nothing, never a panic.
        let mut headers = HeaderMap::new();
        headers.insert("available-dictionary", value);
        let _ = available_dictionary(&headers);
    }
    if let Some(meta) = UseAsDictionary::parse(data) {
        if let Some(value) = use_as_dictionary_value(&meta) {
            let again = UseAsDictionary::parse(value.as_bytes()).expect("our own header parses");
            assert_eq!(again, meta);
        }
    }
    // The same bytes as request headers around a known dictionary.
    let dictionary = Dictionary::new(&b"fuzz dictionary"[..], UseAsDictionary::new("/*")).unwrap();
    let store = DictionaryStore::new(1 << 16);
    store.insert(dictionary.clone());
    let mut parts = data.splitn(4, |&b| b == b'\n');
    let mut request = HeaderMap::new();
    let mut response = HeaderMap::new();
    for name in ["sec-fetch-site", "sec-fetch-mode", "origin"] {
        if let Some(Ok(value)) = parts.next().map(HeaderValue::from_bytes) {
            request.insert(name, value);
        }
    }
    if let Some(Ok(value)) = parts.next().map(HeaderValue::from_bytes) {
        response.insert("access-control-allow-origin", value);
    }
    request.insert("accept-encoding", HeaderValue::from_static("dcz, dcb"));
    request.insert("available-dictionary", dictionary.available_dictionary());
    let allowed = readable(&request, &response);
    let chosen = select(
        &request,
        &response,
        &store,
        &[ContentCoding::Dcz, ContentCoding::Dcb],
    );
    assert_eq!(
        chosen.is_some(),
        allowed,
        "a known, offered dictionary: the gate decides"
    );
});
