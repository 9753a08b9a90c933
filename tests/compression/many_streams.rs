//! What many streamed responses hold at once, per coding: bodies polled round robin, one
//! poll each per round as a runtime's tasks would be, all mid-body together. gzip, deflate
//! and zstd give their state back between slices past the pool's hold limit; br, which
//! cannot, lets at most `br_stream_limit` streams hold an encoder, the others waiting their
//! turn.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use http::Response;
use http::header::CONTENT_ENCODING;
use http_body::Body;
use tower_gzip::compression::{CompressionBody, CompressionLayer};
use tower_gzip::{
    CodecPool,
    pool::{KindStats, PoolStats},
};

use crate::common::{ReadyFrames, decode, text};
use crate::support::{SLICE, get, respond};

const STREAMS: usize = 24;
const BODY: usize = 6 * SLICE;

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// One stream under test: its body, what it has sent, the round of its first byte, and
/// the flag its waker raises.
struct Stream {
    body: Option<CompressionBody<ReadyFrames>>,
    wire: Vec<u8>,
    first_round: Option<usize>,
    woken: Arc<Flag>,
}

fn kind(stats: &PoolStats, coding: &str) -> KindStats {
    match coding {
        "zstd" => stats.kind(tower_gzip::pool::PoolKind::ZstdCompressors),
        "br" => stats.kind(tower_gzip::pool::PoolKind::BrCompressors),
        _ => stats.kind(tower_gzip::pool::PoolKind::DeflateCompressors),
    }
}

/// Runs `STREAMS` streamed bodies of `BODY` bytes each through `coding` to the end, one poll
/// per stream per round (a stream waiting for its turn is polled again only once woken, as
/// a runtime would). Returns the most states of the coding's kind checked out after any
/// poll, and the rounds of each stream's first byte.
async fn run(coding: &str, pool: &CodecPool) -> (u64, Vec<usize>) {
    let layer = CompressionLayer::new().pool(pool.clone());
    let body = text(BODY);
    let mut streams = Vec::new();
    for _ in 0..STREAMS {
        let chunks: Vec<Vec<u8>> = body.chunks(SLICE).map(<[u8]>::to_vec).collect();
        let res = respond(
            &layer,
            get(Some(coding)),
            Response::new(ReadyFrames::data(chunks)),
        );
        let res = res.await;
        assert_eq!(res.headers()[CONTENT_ENCODING], coding);
        streams.push(Stream {
            body: Some(res.into_body()),
            wire: Vec::new(),
            first_round: None,
            woken: Arc::new(Flag(AtomicBool::new(true))),
        });
    }
    let mut most = 0;
    for round in 0.. {
        assert!(round < 10_000, "{coding}: the streams must all end");
        let mut live = 0;
        for stream in &mut streams {
            let Some(body) = stream.body.as_mut() else {
                continue;
            };
            live += 1;
            if !stream.woken.0.swap(false, Ordering::SeqCst) {
                continue;
            }
            let waker = Waker::from(stream.woken.clone());
            let mut cx = Context::from_waker(&waker);
            match Pin::new(body).poll_frame(&mut cx) {
                Poll::Ready(Some(frame)) => {
                    let data = frame.unwrap().into_data().unwrap();
                    if !data.is_empty() && stream.first_round.is_none() {
                        stream.first_round = Some(round);
                    }
                    stream.wire.extend_from_slice(&data);
                    // Ready again at once: hyper would poll on.
                    stream.woken.0.store(true, Ordering::SeqCst);
                }
                Poll::Ready(None) => stream.body = None,
                Poll::Pending => {}
            }
            most = most.max(kind(&pool.stats(), coding).in_use());
        }
        if live == 0 {
            break;
        }
    }
    for stream in &streams {
        assert_eq!(decode(Some(coding), &stream.wire), body, "{coding}");
    }
    let stats = pool.stats();
    assert_eq!(
        stats.in_use(),
        0,
        "{coding}: all back at the end: {stats:?}"
    );
    assert_eq!(stats.br_streams().0 + stats.br_streams().1, 0, "{stats:?}");
    let firsts = streams.iter().map(|s| s.first_round.unwrap()).collect();
    (most, firsts)
}

/// The pool's hold limit and br stream limit here.
const LIMIT: usize = 4;

fn pool() -> CodecPool {
    CodecPool::builder()
        .max_idle(8)
        .hold_limit(LIMIT)
        .br_stream_limit(LIMIT)
        .build()
}

/// gzip, deflate and zstd: past the hold limit streams give their state back at each
/// slice end, so no more than the limit (and the one compressing now) are out, and every
/// stream's first bytes come in the first rounds.
#[tokio::test]
async fn releasable_codings_hold_at_most_the_hold_limit() {
    #[allow(unused_mut)]
    let mut codings = vec!["gzip", "deflate"];
    #[cfg(feature = "zstd")]
    codings.push("zstd");
    for coding in codings {
        let pool = pool();
        let (most, firsts) = run(coding, &pool).await;
        assert!(
            most <= LIMIT as u64 + 1,
            "{coding}: {most} states out at once for {STREAMS} streams"
        );
        let last_first = firsts.iter().max().copied().unwrap();
        assert!(
            last_first <= 4,
            "{coding}: first bytes by round {last_first}"
        );
    }
}

/// br: at most `br_stream_limit` encoders out at once; the others wait for a turn (first
/// come, first served) and all finish.
#[cfg(feature = "br")]
#[tokio::test]
async fn br_streams_take_turns() {
    let pool = pool();
    let (most, firsts) = run("br", &pool).await;
    assert_eq!(most, LIMIT as u64, "{STREAMS} streams");
    // The first four start at once; the rest in order of arrival, as turns free up.
    assert!(firsts[..4].iter().all(|&r| r <= 1), "{firsts:?}");
    assert!(firsts.windows(2).all(|w| w[0] <= w[1]), "{firsts:?}");
    assert!(firsts[STREAMS - 1] > firsts[0], "{firsts:?}");
}

/// A br stream whose producer pauses gives its turn and its state back (the first pause
/// releases it; the stream resumes with a primed encoder), so idle streams never keep busy
/// ones from starting.
#[cfg(feature = "br")]
#[tokio::test]
async fn an_idle_br_stream_gives_its_turn_back() {
    use crate::common::channel_body;
    let pool = CodecPool::builder().br_stream_limit(1).build();
    let layer = CompressionLayer::new().pool(pool.clone());
    let (tx, body) = channel_body();
    tx.data(text(100_000));
    let idle = respond(&layer, get(Some("br")), Response::new(body)).await;
    let mut idle = idle.into_body();
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut wire = Vec::new();
    // Read until the producer has nothing more (pending without a self-wake, which is only
    // a yield between slices): the stream is now idle.
    loop {
        flag.0.store(false, Ordering::SeqCst);
        match Pin::new(&mut idle).poll_frame(&mut cx) {
            Poll::Ready(Some(frame)) => {
                wire.extend_from_slice(&frame.unwrap().into_data().unwrap())
            }
            Poll::Ready(None) => panic!("the body has ended"),
            Poll::Pending if flag.0.load(Ordering::SeqCst) => {}
            Poll::Pending => break,
        }
    }
    let stats = pool.stats();
    assert_eq!(
        stats
            .kind(tower_gzip::pool::PoolKind::BrCompressors)
            .in_use(),
        0,
        "the state went back"
    );
    assert_eq!(stats.br_streams().0, 0, "the turn went back");
    // A second stream gets the only turn at once.
    let busy = crate::support::round(&layer, Some("br"), crate::support::full(text(200_000)));
    let busy = tokio::time::timeout(std::time::Duration::from_secs(20), busy)
        .await
        .expect("the idle stream's turn is free");
    assert_eq!(busy.decoded(), text(200_000));
    // And the idle one carries on when its producer does.
    tx.data(text(1000));
    drop(tx);
    while let Some(frame) = http_body_util::BodyExt::frame(&mut idle).await {
        wire.extend_from_slice(&frame.unwrap().into_data().unwrap());
    }
    let mut expected = text(100_000);
    expected.extend_from_slice(&text(1000));
    assert_eq!(decode(Some("br"), &wire), expected);
    assert_eq!(pool.stats().in_use(), 0);
}

/// br cannot give its state back: an event stream goes with another coding the client
/// accepts (Safari: `gzip, deflate, br`), as does a streamed body (of unknown size, or known
/// and over one slice) while every br turn is taken; with br alone, br it is.
#[cfg(feature = "br")]
#[tokio::test]
async fn streams_that_must_release_prefer_another_coding_to_br() {
    use http::HeaderValue;
    use http::header::CONTENT_TYPE;
    let pool = CodecPool::builder().br_stream_limit(1).build();
    let layer = CompressionLayer::new().pool(pool.clone());
    let sse = || {
        let (tx, body) = crate::common::channel_body();
        tx.data("data: hello\n\n");
        let mut res = Response::new(body);
        res.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        (tx, res)
    };
    let (_tx, res) = sse();
    let res = respond(&layer, get(Some("gzip, deflate, br")), res).await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "gzip");
    let (_tx, res) = sse();
    let res = respond(&layer, get(Some("br")), res).await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "br");
    // A download of unknown size: br while a turn is free...
    let download = || Response::new(ReadyFrames::data(vec![text(BODY)]));
    let first = respond(&layer, get(Some("gzip, br")), download()).await;
    assert_eq!(first.headers()[CONTENT_ENCODING], "br");
    let mut first = first.into_body();
    let waker = Waker::from(Arc::new(Flag(AtomicBool::new(false))));
    let mut cx = Context::from_waker(&waker);
    // Its first poll takes the only turn.
    let _ = Pin::new(&mut first).poll_frame(&mut cx);
    assert_eq!(pool.stats().br_streams().0, 1);
    // ...and gzip once every turn is taken.
    let second = respond(&layer, get(Some("gzip, br")), download()).await;
    assert_eq!(second.headers()[CONTENT_ENCODING], "gzip");
    assert_eq!(crate::support::collect(second).await.decoded(), text(BODY));
    // A body of known size streams too, and would wait as long.
    let known = || crate::support::full(text(BODY));
    let third = respond(&layer, get(Some("gzip, deflate, br")), known()).await;
    assert_eq!(third.headers()[CONTENT_ENCODING], "gzip");
    assert_eq!(crate::support::collect(third).await.decoded(), text(BODY));
    // br alone: br it is (it waits for the turn, taken here by `first` until it ends).
    let alone = respond(&layer, get(Some("br")), known()).await;
    assert_eq!(alone.headers()[CONTENT_ENCODING], "br");
    drop(first);
    assert_eq!(crate::support::collect(alone).await.decoded(), text(BODY));
}
