//! Bombs: 1 GiB streams of zeros, stopped at the limit, over HTTP and at the body.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::CONTENT_ENCODING;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, LengthLimitError};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::CodecPool;
use tower_gzip::decompression::{DecompressionBody, RequestDecompressionLayer};

use crate::alloc;
use crate::common::bomb::{Bomb, BombKind, MIB};
use crate::common::server::http1_client as client;
use crate::harness::FRAME_LIMIT;
use crate::server::{post_to, serve};

/// Streams a 1 GiB bomb to a real server whose only defence is the decoded-size limit.
async fn bomb_over_http(kind: BombKind) {
    let limit = 20 * MIB;
    let layer = RequestDecompressionLayer::new()
        .limits(tower_gzip::decompression::DecompressionLimits::none().with_max_size(Some(limit)));
    let (server, probe) = serve(layer).await;
    let bomb = Bomb::new(kind, 1024);
    let pulled = bomb.pulled();
    let (status, _) = post_to(&client(), &server, "/echo", Some(kind.coding()), bomb).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let total = probe.total.load(Ordering::SeqCst) as usize;
    let max_frame = probe.max_frame.load(Ordering::SeqCst);
    eprintln!(
        "{kind:?} bomb over HTTP: limit {limit}, decoded bytes handed out {total}, largest \
         frame {max_frame}, compressed bytes generated {}",
        pulled.load(Ordering::SeqCst)
    );
    assert!(total <= limit, "{total} > {limit}");
    assert!(total + FRAME_LIMIT >= limit, "stopped early at {total}");
    assert!(max_frame <= FRAME_LIMIT);
}

#[tokio::test]
async fn bombs_are_413_over_http() {
    for kind in [
        BombKind::Gzip,
        BombKind::Zlib,
        BombKind::RawDeflate,
        BombKind::GzipMembers,
    ] {
        bomb_over_http(kind).await;
    }
}

/// The decoded body never holds more than the limit plus one frame, and inflation stops at
/// the limit: measured at the body, with the allocator's peak on this thread.
#[tokio::test]
async fn single_member_bomb_stops_at_the_limit() {
    let limit = 20 * MIB;
    let pool = CodecPool::new();
    let layer = RequestDecompressionLayer::new()
        .limits(tower_gzip::decompression::DecompressionLimits::none().with_max_size(Some(limit)))
        .pool(pool.clone());
    let bomb = Bomb::new(BombKind::Gzip, 1024);
    let pulled = bomb.pulled();
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "gzip")
        .body(bomb)
        .unwrap();
    let result = Arc::new(Mutex::new(None));
    let slot = result.clone();
    let svc = layer.layer(service_fn(move |req: Request<DecompressionBody<Bomb>>| {
        let slot = slot.clone();
        async move {
            let mut body = req.into_body();
            let (mut total, mut max_frame) = (0usize, 0usize);
            let err = loop {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        let data = frame.into_data().unwrap();
                        total += data.len();
                        max_frame = max_frame.max(data.len());
                    }
                    Some(Err(err)) => break err,
                    None => panic!("a 1 GiB bomb ended under a 20 MiB limit"),
                }
            };
            *slot.lock().unwrap() = Some((err, total, max_frame));
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
        }
    }));
    // Measured from before the decoder is drawn from the (fresh) pool; the bomb generator's
    // chunks are allocated on this thread too, so this is an upper bound.
    let mark = alloc::reset_thread_peak();
    svc.oneshot(req).await.unwrap();
    let peak = alloc::this_thread().since(mark).peak as usize;
    let (err, total, max_frame) = result.lock().unwrap().take().unwrap();
    let pulled = pulled.load(Ordering::SeqCst);
    eprintln!(
        "gzip bomb at the body: limit {limit}, decoded {total}, largest frame {max_frame}, \
         compressed read {pulled}, peak extra heap on the reading thread {peak}"
    );
    assert!(err.downcast_ref::<LengthLimitError>().is_some(), "{err}");
    // Inflation stopped at the limit: nothing past it was handed out, and at most the
    // partial frame that crossed it was withheld.
    assert!(total <= limit && total + FRAME_LIMIT > limit, "{total}");
    // A 1 GiB single-member bomb is ~1 MB compressed; 20 MiB of it is ~20 KB.
    assert!(pulled < 64 * 1024, "read {pulled} compressed bytes");
    assert!(max_frame <= FRAME_LIMIT);
    assert!(peak < 4 * MIB, "peak {peak}");
    assert_eq!(
        pool.stats()
            .kind(tower_gzip::pool::PoolKind::DeflateDecompressors)
            .in_use(),
        0,
        "decoder back in the pool"
    );
}
