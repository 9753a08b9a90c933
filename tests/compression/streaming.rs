//! Streaming: flushes when the producer waits, 64 KiB slices per poll, arbitrary chunkings.

use std::io::Write;

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderValue, Response};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use tower_gzip::compression::CompressionLayer;

use crate::common::{ReadyFrames, StutterBody, channel_body, gunzip, noise, text};
use crate::support::{SLICE, full, get, respond, round, stream_of};

/// Decodes a gzip stream incrementally: `feed` returns what became decodable.
struct Incremental {
    decoder: flate2::write::GzDecoder<Vec<u8>>,
    seen: usize,
}

impl Incremental {
    fn new() -> Self {
        Incremental {
            decoder: flate2::write::GzDecoder::new(Vec::new()),
            seen: 0,
        }
    }

    fn feed(&mut self, data: &[u8]) -> Vec<u8> {
        self.decoder.write_all(data).unwrap();
        self.decoder.flush().unwrap();
        let out = self.decoder.get_ref()[self.seen..].to_vec();
        self.seen = self.decoder.get_ref().len();
        out
    }

    fn total(&self) -> usize {
        self.decoder.get_ref().len()
    }
}

#[tokio::test]
async fn each_frame_is_flushed_when_the_producer_waits() {
    for accept in ["gzip", "text/event-stream"] {
        let (tx, body) = channel_body();
        let mut res = Response::new(body);
        res.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        let accept = if accept == "gzip" {
            "gzip"
        } else {
            "gzip;q=0.9"
        };
        tx.data("data: first\n\n");
        let res = respond(&CompressionLayer::new(), get(Some(accept)), res).await;
        assert_eq!(res.headers()[CONTENT_ENCODING], "gzip");
        let mut body = res.into_body();
        let mut dec = Incremental::new();
        for i in 0..5 {
            if i > 0 {
                tx.data(format!("data: event {i}\n\n"));
            }
            let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
                .await
                .expect("a frame without waiting for the end")
                .expect("not the end")
                .expect("no error");
            let data = frame.into_data().expect("data frame");
            let got = dec.feed(&data);
            let expected = if i == 0 {
                "data: first\n\n".to_string()
            } else {
                format!("data: event {i}\n\n")
            };
            assert_eq!(String::from_utf8(got).unwrap(), expected, "event {i}");
        }
        drop(tx);
        let mut rest = Vec::new();
        while let Some(frame) = body.frame().await {
            rest.extend_from_slice(&frame.unwrap().into_data().unwrap());
        }
        assert!(dec.feed(&rest).is_empty());
        dec.decoder.try_finish().unwrap();
    }
}

#[tokio::test]
async fn huge_frame_is_split_across_polls() {
    let data = noise(1024 * 1024, 7);
    // Known size (streamed from the start), unknown size (read ahead whole), and unknown
    // size with an accurate `is_end_stream` (`map_frame` drops the exact size hint).
    for (known, case) in [(true, "full"), (false, "ready"), (false, "map_frame")] {
        let layer = CompressionLayer::new();
        let res = match case {
            "full" => respond(&layer, get(Some("gzip")), full(data.clone()))
                .await
                .map(BodyExt::boxed_unsync),
            "ready" => {
                let body = ReadyFrames::data([data.clone()]);
                respond(&layer, get(Some("gzip")), Response::new(body))
                    .await
                    .map(BodyExt::boxed_unsync)
            }
            _ => {
                let body = Full::new(Bytes::from(data.clone())).map_frame(|f| f);
                assert_eq!(body.size_hint().exact(), None);
                respond(&layer, get(Some("gzip")), Response::new(body))
                    .await
                    .map(BodyExt::boxed_unsync)
            }
        };
        let known = format!("{known} {case}");
        let mut body = res.into_body();
        let mut dec = Incremental::new();
        let mut frames = 0usize;
        while let Some(frame) = body.frame().await {
            let frame = frame.unwrap().into_data().unwrap();
            frames += 1;
            // Input behind the output so far is at most one slice per poll that returned it,
            // plus once the rest of the chunk (at most one more slice), which the last slice
            // finishes rather than leave in hand.
            dec.feed(&frame);
            assert!(
                dec.total() <= (frames + 1) * SLICE,
                "known {known}: after {frames} frames {} bytes decoded",
                dec.total()
            );
            assert!(frames <= 200, "bounded");
        }
        // 16 slices of 64 KiB, the last two in one poll.
        assert!(
            frames >= 15,
            "known {known}: only {frames} frames for 1 MiB"
        );
        dec.decoder.try_finish().unwrap();
        assert_eq!(dec.decoder.get_ref().len(), data.len());
        assert!(dec.decoder.get_ref() == &data, "known {known}");
    }
}

#[tokio::test]
async fn a_single_poll_compresses_at_most_one_slice() {
    // Poll by hand: each Ready frame of a compressible 1 MiB body is followed by counting
    // how much the decoded output grew; a Pending with a self-wake is allowed in between.
    let data = text(1024 * 1024);
    let res = respond(
        &CompressionLayer::new(),
        get(Some("gzip")),
        full(data.clone()),
    )
    .await;
    let mut body = std::pin::pin!(res.into_body());
    let mut dec = Incremental::new();
    let mut polls = 0usize;
    let mut frames = 0usize;
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    loop {
        polls += 1;
        assert!(polls < 10_000, "bounded");
        match body.as_mut().poll_frame(&mut cx) {
            std::task::Poll::Ready(Some(frame)) => {
                frames += 1;
                dec.feed(&frame.unwrap().into_data().unwrap());
                // Sync flushes are not forced here, so decoded growth may lag; it can
                // never exceed the input compressed across all polls so far.
                assert!(
                    dec.total() <= polls * SLICE,
                    "{} after {polls}",
                    dec.total()
                );
            }
            std::task::Poll::Ready(None) => break,
            std::task::Poll::Pending => {}
        }
    }
    assert!(polls >= 16, "1 MiB needs at least 16 polls, took {polls}");
    assert!(frames >= 1);
    dec.decoder.try_finish().unwrap();
    assert!(dec.decoder.get_ref() == &data);
}

#[tokio::test]
async fn streaming_round_trips_many_shapes() {
    let data = text(300_000);
    for chunk in [1, 7, 1000, 65_536, 100_000] {
        for accept in ["gzip", "deflate"] {
            let chunks: Vec<Bytes> = data.chunks(chunk).map(Bytes::copy_from_slice).collect();
            let out = round(
                &CompressionLayer::new(),
                Some(accept),
                Response::new(stream_of(chunks)),
            )
            .await;
            assert_eq!(out.encoding(), Some(accept));
            assert!(out.decoded() == data, "chunk {chunk} {accept}");
        }
    }
    // Stuttering, with empty frames in between.
    let frames = ["", "hello ", "", "", "world", ""];
    let out = round(
        &CompressionLayer::new(),
        Some("gzip"),
        Response::new(StutterBody::data(frames)),
    )
    .await;
    assert_eq!(gunzip(&out.body), b"hello world");
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    #[test]
    fn any_chunking_round_trips(
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20_000),
        cuts in proptest::collection::vec(1usize..5000, 0..8),
        gzip in proptest::prelude::any::<bool>(),
        stutter in proptest::prelude::any::<bool>(),
        min_size in 0u64..600,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut chunks = Vec::new();
        let mut rest = &data[..];
        for cut in cuts {
            let n = cut.min(rest.len());
            chunks.push(Bytes::copy_from_slice(&rest[..n]));
            rest = &rest[n..];
        }
        chunks.push(Bytes::copy_from_slice(rest));
        let accept = if gzip { "gzip" } else { "deflate" };
        let layer = CompressionLayer::new().min_size(min_size);
        let out = rt.block_on(async {
            if stutter {
                round(&layer, Some(accept), Response::new(StutterBody::data(chunks))).await
            } else {
                round(&layer, Some(accept), Response::new(stream_of(chunks))).await
            }
        });
        if let Some(enc) = out.encoding() {
            proptest::prop_assert_eq!(enc, accept);
        } else {
            proptest::prop_assert!(!stutter && (data.len() as u64) < min_size);
        }
        proptest::prop_assert!(out.decoded() == data);
    }
}

/// A body of known size that pauses for every read (a file): zstd keeps one frame over the
/// pauses, so later text still matches earlier text, and sends no more than tower-http,
/// which holds its context throughout. Released at the first pause, the second frame could
/// not see the first: twice the bytes on this text.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn a_file_paused_per_read_keeps_its_zstd_history() {
    use tower::{Layer, ServiceExt, service_fn};
    // Records distinct within 34 KB, the whole repeated: only history reaches back that far.
    let records: String = (0..600)
        .map(|i| {
            format!(
                "{{\"id\":{},\"name\":\"item {}\",\"stock\":{}}},",
                i * 7919 % 100_003,
                i * 31,
                i % 97
            )
        })
        .collect();
    let body = Bytes::from(records.repeat(4));
    let chunks: Vec<Bytes> = body.chunks(64 * 1024).map(Bytes::copy_from_slice).collect();
    let file = move || StutterBody::data(chunks.clone()).sized();
    let answer = |wire: Bytes| {
        assert_eq!(crate::common::decode(Some("zstd"), &wire), body);
        wire.len()
    };
    let serve = {
        let file = file.clone();
        service_fn(move |_| {
            let res = Response::new(file());
            async move { Ok::<_, std::convert::Infallible>(res) }
        })
    };
    let ours = CompressionLayer::new()
        .layer(serve.clone())
        .oneshot(get(Some("zstd")));
    let ours = ours.await.unwrap();
    assert_eq!(ours.headers()[CONTENT_ENCODING], "zstd");
    let ours = answer(ours.into_body().collect().await.unwrap().to_bytes());
    let theirs = tower_http::compression::CompressionLayer::new().layer(serve);
    let theirs = theirs.oneshot(get(Some("zstd"))).await.unwrap();
    let theirs = answer(theirs.into_body().collect().await.unwrap().to_bytes());
    eprintln!(
        "a {} B file in 64 KiB reads, zstd: ours {ours} B, tower-http {theirs} B",
        body.len()
    );
    assert!(
        ours * 100 <= theirs * 102,
        "ours {ours} B, tower-http {theirs} B"
    );
}
