//! The compression layer's side of Compression Dictionary Transport (RFC 9842): what a
//! request says about dictionaries, and whether its response is compressed against one.

use http::HeaderMap;
use http::header::{HOST, ORIGIN};
use http::uri::PathAndQuery;

use crate::ContentCoding;
use crate::compression::settings::CompressionSettings;
use crate::dictionary::scope::dictionary_covers;
use crate::dictionary::{Dictionary, gate, select_parsed};
use crate::headers::{AVAILABLE_DICTIONARY, SEC_FETCH_MODE, SEC_FETCH_SITE};
use crate::negotiate::AcceptEncoding;
use crate::telemetry::DictionaryOutcome;

/// The request headers the decision reads, copied at the request (the response's
/// `Access-Control-Allow-Origin` is needed too, so the decision waits for the response).
/// Copied only for requests that name a dictionary: others cost nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct DictionaryRequest {
    headers: Option<Box<HeaderMap>>,
    accept: AcceptEncoding,
    /// The request's path, which the dictionary's `match` must cover.
    path: Option<PathAndQuery>,
}

impl DictionaryRequest {
    pub(crate) fn capture(headers: &HeaderMap, uri: &http::Uri, accept: AcceptEncoding) -> Self {
        if !headers.contains_key(AVAILABLE_DICTIONARY) {
            return DictionaryRequest::default();
        }
        let mut copy = HeaderMap::with_capacity(8);
        for name in CAPTURED {
            for value in headers.get_all(&name) {
                copy.append(name.clone(), value.clone());
            }
        }
        DictionaryRequest {
            headers: Some(Box::new(copy)),
            accept,
            path: uri.path_and_query().cloned(),
        }
    }
}

/// What [`DictionaryRequest::capture`] copies.
const CAPTURED: [http::HeaderName; 5] = [
    AVAILABLE_DICTIONARY,
    SEC_FETCH_SITE,
    SEC_FETCH_MODE,
    ORIGIN,
    HOST,
];

/// The dictionary coding and dictionary for this response, if the request named a
/// dictionary the store has, offered a dictionary coding this layer makes, and the
/// readability gate passes, and the dictionary's `match` covers the request's path (RFC
/// 9842 section 2.2; refused otherwise): `Ok(None)` when the request named none (or the
/// layer has no store), `Err` with why when it named one and gets none.
pub(crate) fn choose(
    request: &DictionaryRequest,
    response: &HeaderMap,
    settings: &CompressionSettings,
) -> Result<Option<(ContentCoding, Dictionary)>, DictionaryOutcome> {
    let (Some(headers), Some(store)) = (request.headers.as_deref(), &settings.dictionaries) else {
        return Ok(None);
    };
    let codings = &settings.dictionary_codings;
    let path = request.path.as_ref().map_or("/", PathAndQuery::path);
    match select_parsed(&request.accept, headers, response, store, codings) {
        Some((_, dictionary)) if !dictionary_covers(&dictionary, headers, path) => {
            Err(DictionaryOutcome::Refused)
        }
        Some(chosen) => Ok(Some(chosen)),
        None if store.for_request(headers).is_none() => Err(DictionaryOutcome::Unknown),
        None if !gate(headers, response).is_allowed() => Err(DictionaryOutcome::Refused),
        None => Err(DictionaryOutcome::NotOffered),
    }
}
