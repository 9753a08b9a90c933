use std::task::{Context, Poll};

use http::header::{ACCEPT_ENCODING, Entry, RANGE};
use http::{Method, Request, Response};
use http_body::Body;
use tower_service::Service;

use super::future::Exchange;
use super::{DecompressionLayer, ResponseFuture};
use crate::CodingSet;
use crate::builders::builder_methods;
use crate::client::dictionaries::ClientDictionaryStore;
use crate::decompression::coding::{Settings, accept_encoding, decodable};
use crate::headers::{AVAILABLE_DICTIONARY, DICTIONARY_ID};

/// The request's fetch destination (Fetch Metadata), which `match-dest` is compared with.
const SEC_FETCH_DEST: &str = "sec-fetch-dest";

/// Decodes response bodies by their `Content-Encoding`; for HTTP clients.
///
/// Requests without `Accept-Encoding` get one listing the enabled codings (`zstd, br, gzip,
/// deflate` with the default features); requests that have one, or that ask for a `Range`
/// (a range of a compressed representation cannot be decoded alone), are left as they are.
///
/// Responses whose `Content-Encoding` lists only enabled codings (case-insensitive, `x-gzip`
/// is gzip, up to three stacked) are decoded:
/// `Content-Encoding` and `Content-Length` are removed and the body becomes a decoding
/// [`DecompressionBody`](crate::decompression::DecompressionBody), held to the configured
/// [`DecompressionLimits`](crate::decompression::DecompressionLimits). Every other response is
/// passed through untouched, headers included: unknown codings, overlong chains, responses to
/// `HEAD`, and `1xx`, `204 No Content`, `206 Partial Content` and `304 Not Modified`.
#[derive(Clone, Debug)]
pub struct Decompression<S> {
    pub(super) inner: S,
    pub(super) settings: Settings,
    pub(super) dictionaries: Option<ClientDictionaryStore>,
}

impl<S> Decompression<S> {
    /// Wraps `inner` with the defaults (see [`DecompressionLayer`]).
    pub fn new(inner: S) -> Self {
        Decompression {
            inner,
            settings: Settings::default(),
            dictionaries: None,
        }
    }

    /// A layer with the defaults.
    pub fn layer() -> DecompressionLayer {
        DecompressionLayer::new()
    }

    builder_methods!(decompression_switches);

    builder_methods!(inner_service);
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Decompression<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Body,
{
    type Response = Response<crate::decompression::DecompressionBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let ranged = req.headers().contains_key(RANGE);
        let exchange = self
            .dictionaries
            .as_ref()
            .map(|store| offer(store, self.settings.accept, &mut req, ranged));
        let offered = exchange.as_ref().is_some_and(|e| e.offered.is_some());
        if !ranged {
            if let Entry::Vacant(entry) = req.headers_mut().entry(ACCEPT_ENCODING) {
                if let Some(value) = accept_encoding(decodable(self.settings.accept, offered)) {
                    entry.insert(value);
                }
            }
        }
        // A response to HEAD has no body to decode.
        let settings = (req.method() != Method::HEAD).then(|| self.settings.clone());
        ResponseFuture::new(self.inner.call(req), settings, exchange)
    }
}

/// Names the dictionary that best matches the request, if any, in `Available-Dictionary`
/// (and `Dictionary-ID`). Only for requests whose codings this layer chooses: one with its
/// own `Accept-Encoding` or `Available-Dictionary`, or a `Range`, goes out as it is.
#[cfg_attr(not(dictionary_client), allow(unreachable_code, unused_variables))]
fn offer<B>(
    store: &ClientDictionaryStore,
    accept: CodingSet,
    req: &mut Request<B>,
    ranged: bool,
) -> Box<Exchange> {
    let headers = req.headers();
    let ours = !ranged
        && !headers.contains_key(ACCEPT_ENCODING)
        && !headers.contains_key(AVAILABLE_DICTIONARY)
        && decodable(accept, true) != accept;
    // A browser's fetch destination; other clients may set it to use `match-dest`.
    let dest = headers
        .get(SEC_FETCH_DEST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let found = ours.then(|| store.offer(req.uri(), dest)).flatten();
    if let Some(found) = &found {
        let headers = req.headers_mut();
        headers.insert(
            AVAILABLE_DICTIONARY,
            found.dictionary.available_dictionary(),
        );
        if let Some(id) = &found.id {
            headers.insert(DICTIONARY_ID, id.clone());
        }
    }
    let learn_from = (req.method() == Method::GET && !ranged).then(|| req.uri().clone());
    Box::new(Exchange {
        store: store.clone(),
        offered: found.map(|f| f.dictionary),
        learn_from,
    })
}
