//! A body known in full whose encoder fails before the headers are fixed: it falls back to
//! another coding the client accepts, then identity, and errs only when nothing else is
//! acceptable.

use std::cell::RefCell;
use std::convert::Infallible;

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};

use crate::BoxError;
use crate::ContentCoding;
use crate::codec::OneShot;
use crate::compression::CompressionLayer;

thread_local! {
    /// The codings whose one-shot encoder fails on this thread.
    static FAILING: RefCell<Vec<ContentCoding>> = const { RefCell::new(Vec::new()) };
}

/// Fails when a test told `coding` to.
pub(super) fn fail_if_told(coding: ContentCoding) -> Result<(), BoxError> {
    match FAILING.with(|failing| failing.borrow().contains(&coding)) {
        true => Err(format!("{} encoder made to fail", coding.as_str()).into()),
        false => Ok(()),
    }
}

fn failing(codings: &[ContentCoding]) {
    FAILING.with(|failing| *failing.borrow_mut() = codings.to_vec());
}

fn text() -> Bytes {
    let line = "a line of a response body that repeats, with a number: ";
    (0..100)
        .map(|i| format!("{line}{i}\n"))
        .collect::<String>()
        .into()
}

/// What `layer` makes of a `text()` response to a request with `accept`: the coding and the
/// decoded body, or the body's error.
async fn respond(
    layer: CompressionLayer,
    request: Request<()>,
) -> (Option<ContentCoding>, Result<Bytes, BoxError>) {
    let service = layer.layer(service_fn(|_: Request<()>| async {
        Ok::<_, Infallible>(Response::new(Full::new(text())))
    }));
    let res = service.oneshot(request).await.unwrap();
    let coding = res
        .headers()
        .get(CONTENT_ENCODING)
        .map(|value| ContentCoding::from_token_bytes(value.as_bytes()).expect("a coding of ours"));
    let body = match res.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => return (coding, Err(error)),
    };
    (coding, Ok(decoded(coding, body)))
}

fn decoded(coding: Option<ContentCoding>, body: Bytes) -> Bytes {
    match coding {
        // Checked by the dictionary codecs' own tests.
        Some(coding) if coding.needs_dictionary() => body,
        Some(coding) => OneShot::new(coding)
            .decode(&body, 1 << 20)
            .unwrap()
            .freeze(),
        None => body,
    }
}

fn accepting(accept: &str) -> Request<()> {
    Request::builder()
        .header(ACCEPT_ENCODING, accept)
        .body(())
        .unwrap()
}

#[tokio::test]
async fn a_failing_plain_encoder_sends_identity() {
    failing(&[ContentCoding::Gzip]);
    let (coding, body) = respond(CompressionLayer::new(), accepting("gzip")).await;
    failing(&[]);
    assert_eq!(coding, None);
    assert_eq!(body.unwrap(), text());
}

#[tokio::test]
async fn the_body_errs_when_nothing_else_is_acceptable() {
    failing(&[ContentCoding::Gzip]);
    let request = accepting("gzip, identity;q=0");
    let (_, body) = respond(CompressionLayer::new(), request).await;
    failing(&[]);
    let error = body.unwrap_err();
    assert!(error.to_string().contains("made to fail"), "{error}");
}

#[tokio::test]
async fn a_working_encoder_is_not_affected() {
    let (coding, body) = respond(CompressionLayer::new(), accepting("gzip")).await;
    assert_eq!(coding, Some(ContentCoding::Gzip));
    assert_eq!(body.unwrap(), text());
}

#[cfg(feature = "dcz")]
mod dictionary {
    use super::*;
    use crate::dictionary::{Dictionary, DictionaryStore};
    use crate::headers::{AVAILABLE_DICTIONARY, UseAsDictionary};

    fn layer_and_request(coding: ContentCoding) -> (CompressionLayer, Request<()>) {
        let dictionary = Dictionary::new(text(), UseAsDictionary::new("/*")).unwrap();
        let store = DictionaryStore::new(1 << 20);
        assert!(store.insert(dictionary.clone()));
        let accept = format!("gzip, {}", coding.as_str());
        let request = Request::builder()
            .header(ACCEPT_ENCODING, accept)
            .header(AVAILABLE_DICTIONARY, dictionary.available_dictionary())
            .header("sec-fetch-site", "same-origin")
            .header("sec-fetch-mode", "cors")
            .body(())
            .unwrap();
        (CompressionLayer::new().dictionaries(store), request)
    }

    #[tokio::test]
    async fn a_failing_dictionary_encoder_sends_the_negotiated_coding() {
        for &coding in ContentCoding::DICTIONARY {
            let (layer, request) = layer_and_request(coding);
            let (chosen, _) = respond(layer.clone(), request).await;
            assert_eq!(chosen, Some(coding), "the dictionary is used when it works");

            let (_, request) = layer_and_request(coding);
            failing(&[coding]);
            let (chosen, body) = respond(layer, request).await;
            failing(&[]);
            assert_eq!(chosen, Some(ContentCoding::Gzip), "{coding:?}");
            assert_eq!(body.unwrap(), text());
        }
    }
}
