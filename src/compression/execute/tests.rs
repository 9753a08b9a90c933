//! A body known in full whose encoder fails before the headers are fixed: it falls back to
//! another coding the client accepts, then identity, and errs only when nothing else is
//! acceptable (`fall_back`, with encoders made to fail); and the path end to end.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};

use super::{Fallback, Whole, fall_back};
use crate::BoxError;
use crate::ContentCoding;
use crate::codec::OneShot;
use crate::compression::CompressionLayer;

/// An encoder that fails for the codings in `failing` and otherwise "encodes" to the
/// coding's token; and the codings it was asked for, in order.
fn encoder(
    failing: &[ContentCoding],
    asked: &mut Vec<ContentCoding>,
) -> impl FnMut(ContentCoding) -> Result<Bytes, BoxError> {
    move |coding| {
        asked.push(coding);
        match failing.contains(&coding) {
            true => Err(format!("{} encoder made to fail", coding.as_str()).into()),
            false => Ok(Bytes::from_static(coding.as_str().as_bytes())),
        }
    }
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

#[test]
fn a_failing_plain_encoder_sends_identity() {
    let mut asked = Vec::new();
    let fallback = Fallback {
        coding: None,
        identity: true,
    };
    let outcome = fall_back(
        ContentCoding::Gzip,
        &fallback,
        encoder(&[ContentCoding::Gzip], &mut asked),
    );
    assert!(matches!(outcome, Whole::Identity), "{outcome:?}");
    assert_eq!(asked, [ContentCoding::Gzip]);
}

#[test]
fn the_body_errs_when_nothing_else_is_acceptable() {
    let mut asked = Vec::new();
    let fallback = Fallback {
        coding: None,
        identity: false,
    };
    let outcome = fall_back(
        ContentCoding::Gzip,
        &fallback,
        encoder(&[ContentCoding::Gzip], &mut asked),
    );
    let Whole::Failed(error) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(error.to_string().contains("made to fail"), "{error}");
}

#[test]
fn a_failing_dictionary_encoder_sends_the_negotiated_coding() {
    for coding in [ContentCoding::Dcz, ContentCoding::Dcb] {
        let fallback = Fallback {
            coding: Some(ContentCoding::Gzip),
            identity: true,
        };
        let mut asked = Vec::new();
        let outcome = fall_back(coding, &fallback, encoder(&[coding], &mut asked));
        assert!(
            matches!(&outcome, Whole::Encoded(ContentCoding::Gzip, data) if &data[..] == b"gzip"),
            "{outcome:?}"
        );
        assert_eq!(asked, [coding, ContentCoding::Gzip]);

        let mut asked = Vec::new();
        let both = [coding, ContentCoding::Gzip];
        let outcome = fall_back(coding, &fallback, encoder(&both, &mut asked));
        assert!(matches!(outcome, Whole::Identity), "{outcome:?}");
        assert_eq!(asked, both);
    }
}

#[test]
fn a_working_encoder_is_asked_once() {
    let mut asked = Vec::new();
    let fallback = Fallback {
        coding: Some(ContentCoding::Gzip),
        identity: true,
    };
    let outcome = fall_back(ContentCoding::Dcz, &fallback, encoder(&[], &mut asked));
    assert!(
        matches!(outcome, Whole::Encoded(ContentCoding::Dcz, _)),
        "{outcome:?}"
    );
    assert_eq!(asked, [ContentCoding::Dcz]);
}

#[tokio::test]
async fn a_working_encoder_is_not_affected() {
    let (coding, body) = respond(CompressionLayer::new(), accepting("gzip")).await;
    assert_eq!(coding, Some(ContentCoding::Gzip));
    assert_eq!(body.unwrap(), text());
}
