//! The compression layer's side of Compression Dictionary Transport (RFC 9842): what a
//! request says about dictionaries, and whether its response is compressed against one.

use http::HeaderMap;

use super::report;
use super::service::Settings;
use super::stats::DictionaryOutcome;
use crate::ContentCoding;
use crate::dictionary::{Dictionary, gate, select_parsed};
use crate::headers::AVAILABLE_DICTIONARY;
use crate::negotiate::AcceptEncoding;

/// The request headers the decision reads, copied at the request (the response's
/// `Access-Control-Allow-Origin` is needed too, so the decision waits for the response).
/// Copied only for requests that name a dictionary: others cost nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct DictionaryRequest {
    headers: Option<Box<HeaderMap>>,
    accept: AcceptEncoding,
}

impl DictionaryRequest {
    pub(crate) fn capture(headers: &HeaderMap, accept: AcceptEncoding) -> Self {
        if !headers.contains_key(AVAILABLE_DICTIONARY) {
            return DictionaryRequest::default();
        }
        let mut copy = HeaderMap::with_capacity(8);
        for name in CAPTURED {
            for value in headers.get_all(name) {
                copy.append(http::HeaderName::from_static(name), value.clone());
            }
        }
        DictionaryRequest {
            headers: Some(Box::new(copy)),
            accept,
        }
    }
}

/// What [`DictionaryRequest::capture`] copies.
const CAPTURED: [&str; 4] = [
    AVAILABLE_DICTIONARY,
    "sec-fetch-site",
    "sec-fetch-mode",
    "origin",
];

/// The dictionary coding and dictionary for this response, if the request named a
/// dictionary the store has, offered a dictionary coding this layer makes, and the
/// readability gate passes. A request that named one and gets none is counted by why.
pub(crate) fn choose(
    request: &DictionaryRequest,
    response: &HeaderMap,
    settings: &Settings,
) -> Option<(ContentCoding, Dictionary)> {
    let headers = request.headers.as_deref()?;
    let store = settings.dictionaries.as_ref()?;
    let codings = &settings.dictionary_codings;
    let chosen = select_parsed(&request.accept, headers, response, store, codings);
    if chosen.is_none() {
        let outcome = if store.for_request(headers).is_none() {
            DictionaryOutcome::Unknown
        } else if !gate(headers, response).is_allowed() {
            DictionaryOutcome::Refused
        } else {
            DictionaryOutcome::NotOffered
        };
        report::dictionary(&settings.stats, outcome);
    }
    chosen
}
