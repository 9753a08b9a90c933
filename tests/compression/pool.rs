//! The codec returns to the pool when the body ends, is dropped or fails.

use bytes::Bytes;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use http::Response;
use http::header::CONTENT_ENCODING;
use http_body::Frame;
use http_body_util::BodyExt;
use tower_gzip::CodecPool;
use tower_gzip::compression::CompressionLayer;

use crate::common::{ReadyFrames, StutterBody, channel_body, gunzip, noise, text};
use crate::support::{full, get, private_pool, respond, round};

/// States checked out, streaming (zlib-rs) and one-shot (libdeflate) alike, and of every
/// other kind.
fn in_use(pool: &CodecPool) -> u64 {
    let stats = pool.stats();
    assert_eq!(
        stats.in_use(),
        stats
            .kind(tower_gzip::pool::PoolKind::DeflateCompressors)
            .in_use()
            + stats
                .kind(tower_gzip::pool::PoolKind::BlockCompressors)
                .in_use(),
        "only gzip and deflate are asked for here: {stats:?}"
    );
    stats.in_use()
}

/// Reads every frame the body has ready now, without waiting: polls until the body is
/// `Pending` without having woken itself. (A streaming body yields after each full slice
/// and wakes itself at once, to let other tasks run; that is not waiting for data.)
fn drain_ready<B: http_body::Body<Data = Bytes> + Unpin>(body: &mut B, into: &mut Vec<u8>)
where
    B::Error: std::fmt::Debug,
{
    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    loop {
        flag.0.store(false, Ordering::SeqCst);
        match Pin::new(&mut *body).poll_frame(&mut cx) {
            Poll::Ready(Some(frame)) => {
                into.extend_from_slice(&frame.unwrap().into_data().unwrap());
            }
            Poll::Ready(None) => panic!("the body has ended"),
            Poll::Pending if flag.0.load(Ordering::SeqCst) => {}
            Poll::Pending => return,
        }
    }
}

/// A private pool past its hold limit from the first stream on: streams give gzip/deflate
/// state back between slices.
fn crowded_pool() -> CodecPool {
    CodecPool::builder().max_idle(4).hold_limit(0).build()
}

#[tokio::test]
async fn codec_returns_to_pool_when_body_ends() {
    let pool = crowded_pool();
    let layer = CompressionLayer::new().pool(pool.clone());
    // One-shot: back as soon as the response is built.
    let out = round(&layer, Some("gzip"), full(text(1000))).await;
    assert_eq!(gunzip(&out.body), text(1000));
    assert_eq!(in_use(&pool), 0);
    // Streaming: back at the end. The first frame is one poll's slice of input (64 KiB,
    // incompressible so deflate has output by then) with more input ready. In a crowded
    // pool gzip and deflate give their state back between slices (the next one resumes from
    // the last 32 KiB), so none is held once the frame is out. Under the hold limit the
    // state is held while streaming (`state_is_held_while_streaming_under_the_hold_limit`).
    let data = noise(200_000, 11);
    let (tx, body) = channel_body();
    tx.data(data.clone());
    let res = respond(&layer, get(Some("gzip")), Response::new(body)).await;
    let mut body = res.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(in_use(&pool), 0, "released between slices");
    let mut all = first.to_vec();
    // Once the producer waits, the state goes back to the pool until more data comes.
    drain_ready(&mut body, &mut all);
    assert_eq!(in_use(&pool), 0, "not held while the producer waits");
    drop(tx);
    while let Some(f) = body.frame().await {
        all.extend_from_slice(&f.unwrap().into_data().unwrap());
    }
    assert_eq!(
        in_use(&pool),
        0,
        "returned at the end, before the body is dropped"
    );
    assert_eq!(gunzip(&all), data);
    drop(body);
    // The one-shot body used a whole-buffer compressor (libdeflate with the default
    // features), the streamed one a streaming state; each is back on its shelf.
    let stats = pool.stats();
    let (streaming, block) = (
        stats.kind(tower_gzip::pool::PoolKind::DeflateCompressors),
        stats.kind(tower_gzip::pool::PoolKind::BlockCompressors),
    );
    // Without libdeflate both draw from the streaming shelf: one state, reused.
    let states = if cfg!(feature = "libdeflate") { 2 } else { 1 };
    assert_eq!(streaming.created + block.created, states, "{stats:?}");
    assert_eq!(streaming.idle + block.idle, states as usize, "{stats:?}");
    assert_eq!(streaming.in_use() + block.in_use(), 0);
}

/// Under the hold limit a stream keeps its state between slices (gzip and zstd alike; past
/// it they give it back, `tests/compression/many_streams.rs`), so the state is out while a
/// stream is mid-way, and back when the producer waits, at the end, and when the body is
/// dropped.
#[tokio::test]
async fn state_is_held_while_streaming_under_the_hold_limit() {
    #[allow(unused_mut)]
    let mut cases = vec![("gzip", private_pool())];
    #[cfg(feature = "zstd")]
    cases.push(("zstd", private_pool()));
    for (coding, pool) in cases {
        let layer = CompressionLayer::new().pool(pool.clone());
        let data = noise(200_000, 13);
        let (tx, body) = channel_body();
        tx.data(data.clone());
        let res = respond(&layer, get(Some(coding)), Response::new(body)).await;
        assert_eq!(res.headers()[CONTENT_ENCODING], coding);
        let mut body = res.into_body();
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(pool.stats().in_use(), 1, "{coding}: held while streaming");
        let mut all = first.to_vec();
        drain_ready(&mut body, &mut all);
        assert_eq!(
            pool.stats().in_use(),
            0,
            "{coding}: not held while the producer waits"
        );
        drop(tx);
        while let Some(f) = body.frame().await {
            all.extend_from_slice(&f.unwrap().into_data().unwrap());
        }
        assert_eq!(pool.stats().in_use(), 0, "{coding}: returned at the end");
        assert_eq!(crate::common::decode(Some(coding), &all), data);
        drop(body);

        // Dropped mid-stream.
        let (tx, body) = channel_body();
        tx.data(noise(200_000, 5));
        let res = respond(&layer, get(Some(coding)), Response::new(body)).await;
        let mut body = res.into_body();
        let _ = body.frame().await.unwrap().unwrap();
        assert_eq!(pool.stats().in_use(), 1, "{coding}");
        drop(body);
        assert_eq!(pool.stats().in_use(), 0, "{coding}");
        assert!(tx.is_closed(), "inner body dropped too");
        let stats = pool.stats();
        assert_eq!(stats.in_use(), 0, "{stats:?}");
        assert_eq!(
            stats
                .kind(tower_gzip::pool::PoolKind::ZstdCompressors)
                .discarded,
            0,
            "{stats:?}"
        );
        assert_eq!(
            stats
                .kind(tower_gzip::pool::PoolKind::DeflateCompressors)
                .discarded,
            0,
            "{stats:?}"
        );
    }
}

#[tokio::test]
async fn codec_returns_to_pool_when_body_is_dropped() {
    let pool = crowded_pool();
    let layer = CompressionLayer::new().pool(pool.clone());
    let (tx, body) = channel_body();
    // More than one poll's slice (64 KiB). In a crowded pool deflate gives its state back
    // between slices, so none is out after the first frame (a stream that holds its state is
    // dropped mid-stream in `state_is_held_while_streaming_under_the_hold_limit`).
    tx.data(noise(200_000, 5));
    let res = respond(&layer, get(Some("deflate")), Response::new(body)).await;
    let mut body = res.into_body();
    let _ = body.frame().await.unwrap().unwrap();
    assert_eq!(in_use(&pool), 0);
    drop(body);
    assert_eq!(in_use(&pool), 0);
    assert!(tx.is_closed(), "inner body dropped too");
    // Dropped before the first poll: no state was drawn for it (one is drawn at the first
    // input, so many responses built before their bodies are polled hold none).
    let res = respond(&layer, get(Some("gzip")), full(text(200_000))).await;
    assert_eq!(in_use(&pool), 0);
    drop(res);
    assert_eq!(in_use(&pool), 0);
    assert_eq!(
        pool.stats()
            .kind(tower_gzip::pool::PoolKind::DeflateCompressors)
            .discarded,
        0
    );
}

#[tokio::test]
async fn inner_error_mid_stream_reaches_consumer_and_pool_recovers() {
    let pool = CodecPool::builder().max_idle(1).build();
    let layer = CompressionLayer::new().pool(pool.clone());
    for accept in ["gzip", "deflate"] {
        let (tx, body) = channel_body();
        tx.data(noise(10_000, 3));
        let res = respond(&layer, get(Some(accept)), Response::new(body)).await;
        let mut body = res.into_body();
        let first = body.frame().await.unwrap();
        assert!(first.is_ok());
        tx.data(text(3000));
        tx.error("upstream broke");
        let mut saw_error = false;
        for _ in 0..10 {
            match body.frame().await {
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    assert!(e.to_string().contains("upstream broke"), "{e}");
                    saw_error = true;
                    break;
                }
                None => break,
            }
        }
        assert!(saw_error, "{accept}: the error reaches the consumer");
        assert_eq!(in_use(&pool), 0, "{accept}: state returned on error");
        assert!(body.frame().await.is_none(), "ends after the error");
        drop(body);

        // The next response reuses the (reset) state and decodes correctly, on both paths.
        let data = text(20_000);
        let out = round(
            &layer,
            Some(accept),
            Response::new(StutterBody::data([data.clone()])),
        )
        .await;
        assert!(out.decoded() == data);
        let out = round(&layer, Some(accept), full(data.clone())).await;
        assert!(out.decoded() == data);
    }
    // Streaming states were reused after each error; one-shot bodies reuse theirs too.
    let stats = pool.stats();
    assert!(
        stats
            .kind(tower_gzip::pool::PoolKind::DeflateCompressors)
            .reused
            >= 3,
        "{stats:?}"
    );
    assert!(
        stats
            .kind(tower_gzip::pool::PoolKind::DeflateCompressors)
            .reused
            + stats
                .kind(tower_gzip::pool::PoolKind::BlockCompressors)
                .reused
            >= 4,
        "{stats:?}"
    );
}

#[tokio::test]
async fn error_before_anything_is_sent() {
    let pool = private_pool();
    let layer = CompressionLayer::new().pool(pool.clone());
    let body = ReadyFrames::new([
        Ok(Frame::data(Bytes::from_static(b"partial"))),
        Err("boom".into()),
    ]);
    let res = respond(&layer, get(Some("gzip")), Response::new(body)).await;
    assert!(res.headers().get(CONTENT_ENCODING).is_none());
    let mut body = res.into_body();
    let mut got = Vec::new();
    let mut err = None;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => got.extend_from_slice(&f.into_data().unwrap()),
            Err(e) => {
                err = Some(e.to_string());
                break;
            }
        }
    }
    assert_eq!(err.as_deref(), Some("boom"));
    assert_eq!(got, b"partial");
    assert_eq!(in_use(&pool), 0);
}
