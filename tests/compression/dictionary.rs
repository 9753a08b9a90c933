//! `CompressionLayer::dictionaries`: dictionary-compressed responses (RFC 9842, `dcz` and
//! `dcb`), when they are chosen and when not, the readability gate, hostile
//! `Available-Dictionary` values, `Vary`, streamed bodies and the counters.

#![cfg(all(feature = "dcz", feature = "dcb"))]

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, ETAG, VARY};
use http::{HeaderValue, Request, Response};
use tower_gzip::CodecPool;
use tower_gzip::ContentCoding;
use tower_gzip::codec::OneShot;
use tower_gzip::compression::{CompressionLayer, DictionaryStats};
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::dictionary::{Dictionary, DictionaryStore};

use crate::common::{ReadyFrames, StutterBody, channel_body, decode, text};
use crate::support::{collect, full, respond};

/// One API record: long keys and phrases that every record shares, and its own values.
fn record(id: u32, price: u32) -> String {
    format!(
        r#"{{"identifier":{id},"displayName":"Product number {id}","description":"A durable product for everyday use in the kitchen and the garden, shipped in recyclable packaging","manufacturer":{{"name":"Example Industries Incorporated","country":"Netherlands"}},"availability":"in_stock","priceInCents":{price},"categories":["household","garden","outdoor"]}}"#
    )
}

/// A dictionary made of other records of the same API.
fn dictionary() -> Dictionary {
    let bytes: String = (0..4).map(|i| record(i, i * 700)).collect();
    Dictionary::new(bytes.into_bytes(), UseAsDictionary::new("/api/*")).unwrap()
}

/// A response: one record the dictionary has not seen.
fn body() -> Vec<u8> {
    record(123_456, 1999).into_bytes()
}

fn layer(store: &DictionaryStore) -> CompressionLayer {
    CompressionLayer::new()
        .dictionaries(store.clone())
        .pool(CodecPool::new())
}

fn store_with(dictionary: &Dictionary) -> DictionaryStore {
    let store = DictionaryStore::new(1 << 20);
    assert!(store.insert(dictionary.clone()));
    store
}

/// A browser-like request: Chromium's `Accept-Encoding`, the dictionary's hash, same-origin.
fn request(available: Option<HeaderValue>) -> Request<()> {
    let mut req = Request::get("/api/items/123456")
        .header(ACCEPT_ENCODING, "gzip, deflate, br, zstd, dcb, dcz")
        .header("sec-fetch-site", "same-origin")
        .header("sec-fetch-mode", "cors");
    if let Some(value) = available {
        req = req.header("available-dictionary", value);
    }
    req.body(()).unwrap()
}

fn vary(res: &Response<impl http_body::Body>) -> String {
    res.headers()
        .get_all(VARY)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

#[tokio::test]
async fn dcz_for_a_client_that_holds_the_dictionary() {
    let dictionary = dictionary();
    let store = store_with(&dictionary);
    let layer = layer(&store);
    let mut res = full(body());
    res.headers_mut()
        .insert(ETAG, HeaderValue::from_static("\"v1\""));
    let res = respond(
        &layer,
        request(Some(dictionary.available_dictionary())),
        res,
    )
    .await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "dcz");
    assert_eq!(vary(&res), "accept-encoding, available-dictionary");
    assert_eq!(res.headers()[ETAG], "W/\"v1\"");
    assert!(res.headers().get(CONTENT_LENGTH).is_none());
    // Known in full: an exact size, so hyper sends Content-Length.
    let length = http_body::Body::size_hint(res.body()).exact().unwrap() as usize;
    let out = collect(res).await;
    assert_eq!(out.body.len(), length);
    assert_eq!(
        &out.body[8..40],
        &dictionary.hash(),
        "the header names the dictionary"
    );
    let plain = OneShot::new(ContentCoding::Dcz)
        .dictionary(&dictionary)
        .decode(&out.body, 1 << 20)
        .unwrap();
    assert_eq!(&plain[..], &body()[..]);
    // Under 0.6x the bytes of plain zstd for the same body, header included.
    let zstd = collect(respond(&layer, request(None), full(body())).await).await;
    assert_eq!(zstd.encoding(), Some("zstd"));
    assert!(
        out.body.len() * 10 < zstd.body.len() * 6,
        "dcz {} vs zstd {} bytes",
        out.body.len(),
        zstd.body.len()
    );
    let stats = layer.stats();
    assert_eq!(stats.dictionaries().hits, 1);
    assert_eq!(stats.coding(ContentCoding::Dcz).compressed, 1);
}

#[tokio::test]
async fn dcb_when_preferred_or_the_only_one_offered() {
    let dictionary = dictionary();
    let store = store_with(&dictionary);
    let preferred = layer(&store).dictionary_codings(&[ContentCoding::Dcb, ContentCoding::Dcz]);
    let mut only_dcb = request(Some(dictionary.available_dictionary()));
    only_dcb
        .headers_mut()
        .insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip, dcb"));
    for (layer, req) in [
        (preferred, request(Some(dictionary.available_dictionary()))),
        (layer(&store), only_dcb),
    ] {
        let res = respond(&layer, req, full(body())).await;
        assert_eq!(res.headers()[CONTENT_ENCODING], "dcb");
        let out = collect(res).await;
        assert_eq!(&out.body[..4], &[0xff, 0x44, 0x43, 0x42]);
        let plain = OneShot::new(ContentCoding::Dcb)
            .dictionary(&dictionary)
            .decode(&out.body, 1 << 20)
            .unwrap();
        assert_eq!(&plain[..], &body()[..]);
    }
}

/// `Sec-Fetch-Site`, `Sec-Fetch-Mode`, `Origin`, `Access-Control-Allow-Origin`, and whether
/// the response is `dcz`.
type GateCase = (
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    bool,
);

/// RFC 9842's readability gate: by `Sec-Fetch-Site`, then `Sec-Fetch-Mode`, then CORS.
#[tokio::test]
async fn the_readability_gate_decides() {
    let dictionary = dictionary();
    let store = store_with(&dictionary);
    let layer = layer(&store);
    // (fetch site, fetch mode, origin, Access-Control-Allow-Origin) -> dcz?
    let cases: &[GateCase] = &[
        (Some("same-origin"), Some("no-cors"), None, None, true),
        (Some("cross-site"), None, None, None, true),
        (Some("cross-site"), Some("navigate"), None, None, true),
        (Some("same-site"), Some("same-origin"), None, None, true),
        (Some("cross-site"), Some("no-cors"), None, None, false),
        (Some("cross-site"), Some("websocket"), None, None, false),
        (
            Some("cross-site"),
            Some("cors"),
            Some("https://a.example"),
            Some("*"),
            true,
        ),
        (
            Some("cross-site"),
            Some("cors"),
            Some("https://a.example"),
            Some("https://a.example"),
            true,
        ),
        (
            Some("cross-site"),
            Some("cors"),
            Some("https://a.example"),
            Some("https://b.example"),
            false,
        ),
        (Some("cross-site"), Some("cors"), None, Some("*"), false),
        (
            Some("cross-site"),
            Some("cors"),
            Some("https://a.example"),
            None,
            false,
        ),
    ];
    for &(site, mode, origin, allow, expect) in cases {
        let mut req = Request::get("/api/items/123456")
            .header(ACCEPT_ENCODING, "gzip, dcz")
            .header("available-dictionary", dictionary.available_dictionary());
        for (name, value) in [
            ("sec-fetch-site", site),
            ("sec-fetch-mode", mode),
            ("origin", origin),
        ] {
            if let Some(value) = value {
                req = req.header(name, value);
            }
        }
        let mut res = full(body());
        if let Some(allow) = allow {
            res.headers_mut().insert(
                "access-control-allow-origin",
                HeaderValue::from_str(allow).unwrap(),
            );
        }
        let res = respond(&layer, req.body(()).unwrap(), res).await;
        let coding = res.headers()[CONTENT_ENCODING].to_str().unwrap().to_owned();
        assert_eq!(
            coding == "dcz",
            expect,
            "{site:?} {mode:?} {origin:?} {allow:?}: {coding}"
        );
        let out = collect(res).await;
        let plain = if expect {
            OneShot::new(ContentCoding::Dcz)
                .dictionary(&dictionary)
                .decode(&out.body, 1 << 20)
                .unwrap()
                .to_vec()
        } else {
            decode(Some(&coding), &out.body)
        };
        assert_eq!(plain, body());
    }
    let stats = layer.stats().dictionaries();
    assert_eq!(stats.hits, 6);
    assert_eq!(stats.refused, 5);
}

/// Anything but one byte sequence of 32 bytes naming a stored dictionary is ignored: the
/// response is a 200 with the usual coding.
#[tokio::test]
async fn hostile_available_dictionary_values_get_the_usual_coding() {
    let dictionary = dictionary();
    let store = store_with(&dictionary);
    let layer = layer(&store);
    let b64 = |len: usize| {
        use std::fmt::Write;
        // Base64 of `len` zero bytes, hand-made: "AAAA" per 3 bytes.
        let mut s = String::new();
        for _ in 0..len / 3 {
            s.push_str("AAAA");
        }
        match len % 3 {
            1 => s.push_str("AA=="),
            2 => s.push_str("AAA="),
            _ => {}
        }
        let _ = write!(s, "");
        s
    };
    let hash = dictionary
        .available_dictionary()
        .to_str()
        .unwrap()
        .to_owned();
    let values = [
        "not-a-byte-sequence".to_string(),
        ":not base64!:".to_string(),
        format!(":{}:", b64(16)),
        format!(":{}:", b64(33)),
        format!("{hash}, {hash}"),
        format!("({hash})"),
        format!(":{}:", b64(6144)),
        String::new(),
        format!(":{}:", b64(32)),
        "\"a string\"".to_string(),
    ];
    for value in values {
        let req = request(Some(HeaderValue::from_str(&value).unwrap()));
        let res = respond(&layer, req, full(body())).await;
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()[CONTENT_ENCODING], "zstd", "{value:.40}");
        assert_eq!(vary(&res), "accept-encoding, available-dictionary");
        let out = collect(res).await;
        assert_eq!(out.decoded(), body());
    }
    assert_eq!(layer.stats().dictionaries().hits, 0);
    assert_eq!(layer.stats().dictionaries().unknown, 10);
}

/// Without a dictionary offered, or under the floor, the layer behaves as without
/// dictionaries, except that `Vary` names `Available-Dictionary` too.
#[tokio::test]
async fn no_dictionary_no_change_but_vary() {
    let dictionary = dictionary();
    let store = store_with(&dictionary);
    let layer = layer(&store);
    let res = respond(&layer, request(None), full(body())).await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "zstd");
    assert_eq!(vary(&res), "accept-encoding, available-dictionary");
    // Under the floor: identity, with both Vary tokens.
    let res = respond(
        &layer,
        request(Some(dictionary.available_dictionary())),
        full("tiny"),
    )
    .await;
    assert!(res.headers().get(CONTENT_ENCODING).is_none());
    assert_eq!(vary(&res), "accept-encoding, available-dictionary");
    // The dictionary offered but not its coding: the usual coding.
    let mut req = request(Some(dictionary.available_dictionary()));
    req.headers_mut()
        .insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip, br"));
    let res = respond(&layer, req, full(body())).await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "br");
    assert_eq!(layer.stats().dictionaries().not_offered, 1);
    // A retired dictionary is unknown from then on.
    store.remove(&dictionary.hash());
    let res = respond(
        &layer,
        request(Some(dictionary.available_dictionary())),
        full(body()),
    )
    .await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "zstd");
}

/// A dictionary is applied only to requests its `match` covers (RFC 9842 section 2.2): a
/// client naming it on another path gets the plain coding, counted as refused.
#[tokio::test]
async fn a_dictionary_is_never_applied_outside_its_match() {
    let dictionary = dictionary();
    let store = store_with(&dictionary);
    let layer = layer(&store);
    for path in ["/account/settings", "/", "/apix"] {
        let mut req = request(Some(dictionary.available_dictionary()));
        *req.uri_mut() = path.parse().unwrap();
        let res = respond(&layer, req, full(body())).await;
        assert_eq!(res.headers()[CONTENT_ENCODING], "zstd", "{path}");
        assert_eq!(decode(Some("zstd"), &collect(res).await.body), body());
    }
    let stats = layer.stats().dictionaries();
    assert_eq!((stats.hits, stats.refused), (0, 3));
    // Within its match, applied.
    let res = respond(
        &layer,
        request(Some(dictionary.available_dictionary())),
        full(body()),
    )
    .await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "dcz");
}

/// Streamed bodies: flushed per event while the producer waits, large ones sliced; both
/// codings decode to the input.
#[tokio::test]
async fn streamed_bodies_are_dictionary_compressed_too() {
    let dictionary = dictionary();
    let store = store_with(&dictionary);
    for coding in [ContentCoding::Dcz, ContentCoding::Dcb] {
        let layer = layer(&store).dictionary_codings(&[coding]);
        // Events, each decodable as soon as it is sent.
        let (tx, events) = channel_body();
        let res = respond(
            &layer,
            request(Some(dictionary.available_dictionary())),
            Response::new(events),
        )
        .await;
        assert_eq!(res.headers()[CONTENT_ENCODING], coding.as_str());
        let mut res = res.into_body();
        let mut wire = Vec::new();
        let mut sent = Vec::new();
        for i in 0..3 {
            let event = format!("data: {}\n\n", String::from_utf8(body()).unwrap())
                .replace("100", &i.to_string());
            tx.data(event.clone());
            sent.extend_from_slice(event.as_bytes());
            let frame = http_body_util::BodyExt::frame(&mut res)
                .await
                .unwrap()
                .unwrap();
            wire.extend_from_slice(&frame.into_data().unwrap());
            let plain = dict_decode(coding, &dictionary, &wire, true);
            assert_eq!(plain, sent, "{coding:?}: event {i} decodable at once");
        }
        drop(tx);
        while let Some(frame) = http_body_util::BodyExt::frame(&mut res).await {
            wire.extend_from_slice(&frame.unwrap().into_data().unwrap());
        }
        assert_eq!(dict_decode(coding, &dictionary, &wire, false), sent);

        // A large body of unknown size, in stutters, and one of known size.
        let big = text(300_000);
        let chunks: Vec<Bytes> = big.chunks(7000).map(Bytes::copy_from_slice).collect();
        let stutter = Response::new(StutterBody::data(chunks.clone()));
        let ready = Response::new(ReadyFrames::data(chunks));
        for out in [
            collect(
                respond(
                    &layer,
                    request(Some(dictionary.available_dictionary())),
                    stutter,
                )
                .await,
            )
            .await,
            collect(
                respond(
                    &layer,
                    request(Some(dictionary.available_dictionary())),
                    ready,
                )
                .await,
            )
            .await,
            collect(
                respond(
                    &layer,
                    request(Some(dictionary.available_dictionary())),
                    full(big.clone()),
                )
                .await,
            )
            .await,
        ] {
            assert_eq!(out.encoding(), Some(coding.as_str()));
            assert_eq!(dict_decode(coding, &dictionary, &out.body, false), big);
        }
    }
}

/// Decodes a dictionary-compressed body; `partial`: the stream may not be finished (only
/// what was flushed so far).
fn dict_decode(
    coding: ContentCoding,
    dictionary: &Dictionary,
    wire: &[u8],
    partial: bool,
) -> Vec<u8> {
    use bytes::BytesMut;
    use tower_gzip::codec::Decoder;
    let mut out = BytesMut::new();
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(coding, Some(dictionary), &pool).unwrap();
    let mut input = wire;
    while !input.is_empty() || decoder.has_pending_output() {
        let n = decoder.decode(input, &mut out, 1 << 20).unwrap();
        input = &input[n..];
    }
    if !partial {
        decoder.finish().unwrap();
    }
    out.to_vec()
}

#[test]
fn dictionary_stats_start_at_zero() {
    let layer = CompressionLayer::new();
    assert_eq!(layer.stats().dictionaries(), DictionaryStats::default());
}
