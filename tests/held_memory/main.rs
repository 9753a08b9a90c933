//! What a compressed response holds on the heap while it waits: an idle stream and a stalled
//! reader, measured through `Compression` with the tests' counting allocator (per thread, so
//! the tests do not see each other). A target of its own, so the lib's unit tests run on the
//! system allocator.

use std::convert::Infallible;
use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::header::ACCEPT_ENCODING;
use http::{HeaderMap, Request, Response, StatusCode, Version};
use http_body::Body;
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::CodecPool;
use tower_gzip::ContentCoding;
use tower_gzip::codec::Decoder;
use tower_gzip::compression::{CompressionBody, CompressionLayer};

use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();
use tower_gzip_support as common;

use common::bodies::Rows;
use common::{BodySender, ChannelBody, channel_body};

/// The response to a request accepting only `format`, through `Compression` with `pool`
/// and a predicate that always compresses (no size floor, no read-ahead).
fn compressed<B>(format: ContentCoding, pool: &CodecPool, body: B) -> Pin<Box<CompressionBody<B>>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tower_gzip::BoxError>,
{
    let mut body = Some(body);
    let svc = CompressionLayer::new()
        .pool(pool.clone())
        .compress_when(|_: StatusCode, _: Version, _: &HeaderMap, _: &http::Extensions| true)
        .layer(service_fn(move |_: Request<()>| {
            let body = body.take().expect("called once");
            async move { Ok::<_, Infallible>(Response::new(body)) }
        }));
    let req = Request::get("/")
        .header(ACCEPT_ENCODING, format.as_str())
        .body(())
        .unwrap();
    let mut future = pin!(svc.oneshot(req));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(response) => Box::pin(response.unwrap().into_body()),
        Poll::Pending => panic!("the handler answers at once"),
    }
}

/// Polls until `Pending` or the end; the bytes emitted.
fn drain<B>(body: &mut Pin<Box<CompressionBody<B>>>) -> Vec<u8>
where
    CompressionBody<B>: Body<Data = Bytes, Error: std::fmt::Debug>,
{
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut out = Vec::new();
    while let Poll::Ready(Some(frame)) = body.as_mut().poll_frame(&mut cx) {
        if let Ok(data) = frame.unwrap().into_data() {
            out.extend_from_slice(&data);
        }
    }
    out
}

/// Decodes what a stream has sent so far (complete or not).
fn decode_prefix(format: ContentCoding, wire: &[u8]) -> Vec<u8> {
    let mut decoder = Decoder::for_coding(format, None, &CodecPool::new()).unwrap();
    let mut out = BytesMut::new();
    let mut input = wire;
    while !input.is_empty() || decoder.has_pending_output() {
        let n = decoder.decode(input, &mut out, usize::MAX).unwrap();
        input = &input[n..];
    }
    out.to_vec()
}

/// An idle stream (producer `Pending`) holds no codec state, br's included, and no buffer
/// beyond a history the size of its events; everything sent so far decodes. 1,000 idle SSE
/// streams must cost about what they cost without compression.
#[test]
fn idle_streams_hold_no_codec_state() {
    let events: Vec<Bytes> = (0..6)
        .map(|i| {
            Bytes::from(format!(
                "event: tick\ndata: {{\"n\":{i},\"msg\":\"hello hello hello\"}}\n\n"
            ))
        })
        .collect();
    // br included: it cannot restart a stream, but a fresh encoder primed with the history
    // and the last distances goes on with it.
    for format in ContentCoding::PLAIN.iter().copied() {
        // No idle shelf: a state given back is freed, so live bytes show what the body holds.
        // A park bound of zero: every pause counts as long (events seconds apart).
        let pool = CodecPool::builder()
            .max_idle(0)
            .park_bound(std::time::Duration::ZERO)
            .build();
        let (producer, body): (BodySender, ChannelBody) = channel_body();
        let mut body = compressed(format, &pool, body);
        let mut wire = Vec::new();
        let mut plain = Vec::new();
        let mut held = 0;
        for event in &events {
            producer.data(event.clone());
            plain.extend_from_slice(event);
            let before = alloc::this_thread().live;
            let sent = drain(&mut body);
            // What the body kept: live bytes now, less the test's own copy of the frames.
            held += alloc::this_thread().live - before - sent.capacity() as i64;
            assert!(
                held < 2048,
                "{format:?}: an idle stream holds {held} bytes after {} B of events",
                plain.len()
            );
            wire.extend(sent);
            let stats = pool.stats();
            assert_eq!(stats.in_use(), 0, "{format:?} idle: {stats:?}");
            assert_eq!(decode_prefix(format, &wire), plain, "{format:?}");
        }
        drop(producer);
        wire.extend(drain(&mut body));
        assert!(body.is_end_stream());
        assert_eq!(common::decode(Some(format.as_str()), &wire), plain);
    }
}

/// In a crowded pool (more streams than its hold limit; here the limit is 0), a slow
/// reader takes one frame and stalls: what the body pins meanwhile is bounded by the
/// history it keeps (32 KiB) and its output block, not a codec state (~190 KB for
/// zlib-rs at level 6).
#[test]
fn a_stalled_reader_pins_no_codec_state_in_a_crowded_pool() {
    const CHUNKS: usize = 64;
    const CHUNK: usize = 16 * 1024;
    for format in [ContentCoding::Gzip, ContentCoding::Deflate] {
        // No idle shelf: a state given back is freed, so live bytes show what is held.
        let pool = CodecPool::builder().max_idle(0).hold_limit(0).build();
        // A first response sets up what the process keeps for good (lazily built tables).
        drop(compressed(format, &pool, Rows::new(0, 0)));
        let before = alloc::this_thread().live;
        let producer = Rows::new(CHUNKS, CHUNK);
        let mut body = compressed(format, &pool, producer);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let frame = loop {
            match body.as_mut().poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(frame))) => break frame,
                Poll::Pending => continue,
                other => panic!("{format:?}: {:?}", other.map(|f| f.map(|r| r.is_ok()))),
            }
        };
        let first = frame.into_data().unwrap_or_default();
        assert!(!first.is_empty());
        let pinned = alloc::this_thread().live - before;
        assert_eq!(pool.stats().in_use(), 0, "{format:?}");
        // The frame the reader holds (a 32 KiB output block) and the 32 KiB dictionary
        // (66,360 bytes); none of the producer's chunks (an emptied view of one would pin
        // it whole, 16 KiB more).
        assert!(
            pinned < 72 * 1024,
            "{format:?}: a stalled reader pins {pinned} bytes"
        );
        // Reading on still yields one valid stream.
        let mut wire = first.to_vec();
        wire.extend(drain_all(&mut body, &mut cx));
        assert!(body.is_end_stream());
        let plain = common::decode(Some(format.as_str()), &wire);
        assert_eq!(plain.len(), CHUNKS * CHUNK);
    }
}

/// Polls to the end, through the body's yields; the bytes emitted.
fn drain_all(body: &mut Pin<Box<CompressionBody<Rows>>>, cx: &mut Context<'_>) -> Vec<u8> {
    let mut wire = Vec::new();
    loop {
        match body.as_mut().poll_frame(cx) {
            Poll::Ready(Some(frame)) => {
                if let Ok(data) = frame.unwrap().into_data() {
                    wire.extend_from_slice(&data);
                }
            }
            Poll::Ready(None) => return wire,
            Poll::Pending => {}
        }
    }
}
