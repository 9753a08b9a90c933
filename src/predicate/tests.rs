//! Unit tests of the predicates: sizes, media types, no-transform, and their combinators.

use super::*;
use crate::headers::COMPRESSED;
use bytes::Bytes;
use http::header::CONTENT_LENGTH;
use http_body::Frame;
use http_body_util::{Full, StreamBody};
use std::convert::Infallible;

/// A body whose size is not known in advance (an empty stream: no size hint).
type Unknown = StreamBody<futures_util::stream::Empty<Result<Frame<Bytes>, Infallible>>>;

fn unknown() -> Unknown {
    StreamBody::new(futures_util::stream::empty())
}

fn typed(content_type: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .header(CONTENT_TYPE, content_type)
        .body(Full::new(Bytes::from(vec![b'a'; 1024])))
        .unwrap()
}

fn default_compresses(content_type: &str) -> bool {
    DefaultPredicate::new().should_compress(&typed(content_type))
}

#[test]
fn default_compresses_text_and_unknown() {
    for ct in [
        "text/html",
        "text/html; charset=utf-8",
        "TEXT/Plain;Charset=UTF-8",
        "application/json",
        "application/javascript",
        "application/octet-stream",
        "application/x-tar",
        "application/wasm",
        "font/ttf",
        "",
    ] {
        assert!(default_compresses(ct), "{ct:?}");
    }
    let untyped = Response::new(Full::new(Bytes::from_static(b"x")));
    assert!(DefaultPredicate::new().should_compress(&untyped));
}

#[test]
fn default_skips_media() {
    for ct in [
        "image/png",
        "image/jpeg",
        "IMAGE/WebP",
        "image/avif; q=1",
        "audio/mpeg",
        "Audio/Ogg",
        "video/mp4",
        "video/webm; codecs=\"vp8, vorbis\"",
    ] {
        assert!(!default_compresses(ct), "{ct:?}");
    }
}

#[test]
fn default_compresses_svg() {
    assert!(default_compresses("image/svg+xml"));
    assert!(default_compresses("Image/SVG+XML; charset=utf-8"));
    assert!(default_compresses(" image/svg+xml ;charset=utf-8"));
}

#[test]
fn default_grpc_but_not_grpc_web() {
    for ct in [
        "application/grpc",
        "application/grpc+proto",
        "Application/GRPC+json",
    ] {
        assert!(!default_compresses(ct), "{ct:?}");
    }
    assert!(!default_compresses("application/grpc; charset=utf-8"));
    for ct in [
        "application/grpc-web",
        "application/grpc-web+proto",
        "application/grpc-web-text",
        "APPLICATION/GRPC-WEB-TEXT+proto",
    ] {
        assert!(default_compresses(ct), "{ct:?}");
    }
}

#[test]
fn default_skips_compressed_formats() {
    for ct in COMPRESSED {
        let ct = std::str::from_utf8(ct).unwrap();
        assert!(!default_compresses(ct), "{ct:?}");
        assert!(!default_compresses(&ct.to_ascii_uppercase()), "{ct:?}");
        assert!(!default_compresses(&format!("{ct}; name=x")), "{ct:?}");
    }
    assert!(!default_compresses("application/epub+zip"));
    assert!(!default_compresses("application/tlsrpt+GZIP"));
    // Only the media type is compared: parameters and prefixes don't match.
    assert!(default_compresses("application/zip-listing"));
    assert!(default_compresses("text/plain; note=application/zip"));
}

#[test]
fn default_compresses_sse() {
    assert!(default_compresses("text/event-stream"));
    assert!(default_compresses("text/event-stream; charset=utf-8"));
}

#[test]
fn default_ignores_size() {
    let tiny = Response::builder()
        .header(CONTENT_TYPE, "text/plain")
        .body(String::new())
        .unwrap();
    assert!(DefaultPredicate::default().should_compress(&tiny));
}

#[test]
fn default_non_utf8_content_type() {
    let response = Response::builder()
        .header(
            CONTENT_TYPE,
            http::HeaderValue::from_bytes(b"image/\xff").unwrap(),
        )
        .body(unknown())
        .unwrap();
    assert!(!DefaultPredicate::new().should_compress(&response));
}

#[test]
fn not_for_content_type() {
    let p = NotForContentType::new("application/x-custom");
    assert!(!p.should_compress(&typed("application/x-custom")));
    assert!(!p.should_compress(&typed("Application/X-Custom; v=1")));
    assert!(!p.should_compress(&typed("application/x-custom-2")));
    assert!(p.should_compress(&typed("application/json")));
    assert!(p.should_compress(&Response::new(unknown())));

    let p = NotForContentType::const_new("TEXT/");
    assert!(!p.should_compress(&typed("text/html")));
}

#[test]
fn not_for_content_type_constants() {
    let grpc = NotForContentType::GRPC;
    assert!(!grpc.should_compress(&typed("application/grpc")));
    assert!(!grpc.should_compress(&typed("application/grpc+proto")));
    assert!(grpc.should_compress(&typed("application/grpc-web+proto")));

    let images = NotForContentType::IMAGES;
    assert!(!images.should_compress(&typed("image/png")));
    assert!(!images.should_compress(&typed("Image/PNG")));
    assert!(images.should_compress(&typed("image/svg+xml; charset=utf-8")));
    assert!(images.should_compress(&typed("text/html")));

    let sse = NotForContentType::SSE;
    assert!(!sse.should_compress(&typed("text/event-stream")));
    assert!(sse.should_compress(&typed("text/plain")));
    assert!(format!("{sse:?}").contains("text/event-stream"));
}

#[test]
fn size_above_exact_hint() {
    let p = SizeAbove::new(4);
    assert!(!p.should_compress(&Response::new(String::from("abc"))));
    assert!(p.should_compress(&Response::new(String::from("abcd"))));
    assert!(p.should_compress(&Response::new(Full::new(Bytes::from_static(b"abcde")))));
    // The exact hint wins over a disagreeing header.
    let r = Response::builder()
        .header(CONTENT_LENGTH, "1000")
        .body(String::from("ab"))
        .unwrap();
    assert!(!p.should_compress(&r));
    assert!(!SizeAbove::default().should_compress(&Response::new(String::from("x"))));
}

fn unknown_with_length(values: &[&str]) -> Response<Unknown> {
    let mut r = Response::new(unknown());
    for v in values {
        r.headers_mut().append(CONTENT_LENGTH, v.parse().unwrap());
    }
    r
}

#[test]
fn size_above_content_length() {
    let p = SizeAbove::new(100);
    assert!(!p.should_compress(&unknown_with_length(&["99"])));
    assert!(p.should_compress(&unknown_with_length(&["100"])));
    assert!(!p.should_compress(&unknown_with_length(&["5, 5"])));
    assert!(!p.should_compress(&unknown_with_length(&["5", "5"])));
}

#[test]
fn size_above_unknown_size_compresses() {
    let p = SizeAbove::new(100);
    assert!(p.should_compress(&Response::new(unknown())));
    // Invalid or conflicting lengths count as unknown.
    for bad in [&["abc"][..], &["+5"], &["-1"], &["5", "6"], &["5,"], &[""]] {
        assert!(p.should_compress(&unknown_with_length(bad)), "{bad:?}");
    }
    assert!(p.should_compress(&unknown_with_length(&["99999999999999999999999"])));
}

fn rbody_size<B: Body>(response: &Response<B>) -> Option<u64> {
    body_size(response.headers(), response.body())
}

#[test]
fn body_size_sources() {
    assert_eq!(rbody_size(&Response::new(String::from("abc"))), Some(3));
    assert_eq!(rbody_size(&unknown_with_length(&["42"])), Some(42));
    assert_eq!(rbody_size(&unknown_with_length(&[" 42 , 42"])), Some(42));
    assert_eq!(rbody_size(&Response::new(unknown())), None);
    assert_eq!(rbody_size(&unknown_with_length(&["4 2"])), None);
}

#[test]
fn composition() {
    let yes = |_: StatusCode, _: Version, _: &HeaderMap, _: &Extensions| true;
    let no = |_: StatusCode, _: Version, _: &HeaderMap, _: &Extensions| false;
    let r = Response::new(String::from("body"));
    assert!(yes.and(yes).should_compress(&r));
    assert!(!yes.and(no).should_compress(&r));
    assert!(!no.and(yes).should_compress(&r));
    assert!(yes.or(no).should_compress(&r));
    assert!(no.or(yes).should_compress(&r));
    assert!(!no.or(no).should_compress(&r));
    assert!(no.not().should_compress(&r));
    assert!(!yes.not().should_compress(&r));
    assert!(no.not().not().not().should_compress(&r));

    let p = DefaultPredicate::new()
        .and(SizeAbove::new(256))
        .and(NotForContentType::new("application/x-custom"));
    assert!(p.should_compress(&typed("text/html")));
    assert!(!p.should_compress(&typed("application/x-custom")));
    assert!(!p.should_compress(&typed("image/png")));
    let images_only = NotForContentType::IMAGES.not();
    assert!(images_only.should_compress(&typed("image/png")));
    assert!(!images_only.should_compress(&typed("text/html")));
}

#[test]
fn closures_see_the_response_head() {
    let only_ok =
        |status: StatusCode, _: Version, _: &HeaderMap, _: &Extensions| status == StatusCode::OK;
    let mut r = Response::new(String::new());
    assert!(only_ok.should_compress(&r));
    *r.status_mut() = StatusCode::NOT_FOUND;
    assert!(!only_ok.should_compress(&r));

    #[derive(Clone)]
    struct Skip;
    let no_skip =
        |_: StatusCode, _: Version, _: &HeaderMap, ext: &Extensions| ext.get::<Skip>().is_none();
    r.extensions_mut().insert(Skip);
    assert!(!no_skip.should_compress(&r));

    let h2_only = |_: StatusCode, v: Version, h: &HeaderMap, _: &Extensions| {
        v == Version::HTTP_2 && !h.contains_key("x-raw")
    };
    *r.version_mut() = Version::HTTP_2;
    assert!(h2_only.should_compress(&r));
}

#[test]
fn option_none_always_compresses() {
    let none: Option<SizeAbove> = None;
    let some = Some(SizeAbove::new(100));
    let small = Response::new(String::from("x"));
    assert!(none.should_compress(&small));
    assert!(!some.should_compress(&small));
    // `Option::and` is inherent and would shadow the trait method here.
    assert!(Predicate::and(none, some).not().should_compress(&small));
}
