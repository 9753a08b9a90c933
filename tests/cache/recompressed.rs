//! What the cache's background recompression buys on recorded API JSON (the shared corpus's
//! bodies of 16-64 KiB): once a hot body has been recompressed at its coding's densest
//! level, br answers and zstd answers are smaller than at the layer's default level, and
//! every answer still decodes to the identity body, with decoders independent of the
//! crate's (the brotli and zstd command-line tools where installed). Skips without the
//! corpus.

use std::convert::Infallible;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::cache::{CacheStats, VariantCache};
use tower_gzip::compression::CompressionLayer;
use tower_gzip_support::{corpus, decode, tools};

/// The recorded bodies of 16-64 KiB.
fn bodies() -> Option<Vec<Bytes>> {
    let recorded = corpus::recorded()?;
    let sized = recorded
        .into_iter()
        .filter(|r| (16 << 10..=64 << 10).contains(&r.body.len()))
        .map(|r| Bytes::from(r.body));
    Some(sized.collect())
}

/// Asks the layer for `body` in `coding`: the answer's bytes, checked to be encoded so.
async fn answer(layer: &CompressionLayer, body: &Bytes, coding: &str) -> Bytes {
    let body = body.clone();
    let service = layer.layer(service_fn(move |_: Request<()>| {
        let res = Response::new(Full::new(body.clone()));
        async move { Ok::<_, Infallible>(res) }
    }));
    let req = Request::get("/").header(ACCEPT_ENCODING, coding).body(());
    let res = service.oneshot(req.unwrap()).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], coding);
    res.into_body().collect().await.unwrap().to_bytes()
}

/// Serves every body again until the worker has recompressed them all (at most two
/// minutes): a hit while the worker's queue is full is queued again at a later hit.
async fn recompressed(
    layer: &CompressionLayer,
    cache: &VariantCache,
    bodies: &[Bytes],
    coding: &str,
) -> CacheStats {
    let deadline = Instant::now() + Duration::from_secs(120);
    while cache.stats().recompressed < bodies.len() as u64 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        for body in bodies {
            answer(layer, body, coding).await;
        }
    }
    cache.stats()
}

/// Decodes `wire` with the coding's command-line tool (`brotli` for br, `zstd`).
fn decode_with_tool(coding: &str, wire: &[u8]) -> Vec<u8> {
    let tool = if coding == "br" { "brotli" } else { coding };
    let mut child = Command::new(tool)
        .args(["-d", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let wire = wire.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&wire));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{tool} -d failed");
    out.stdout
}

/// The bytes of every answer at the layer's default level, then after recompression; each
/// answer decoded and compared with its body.
async fn before_and_after(bodies: &[Bytes], coding: &str, tool: bool) -> (usize, usize) {
    let cache = VariantCache::builder().recompress(Some(1.0)).build();
    let layer = CompressionLayer::new().cache(cache.clone());
    let mut before = 0;
    for body in bodies {
        // Seen, filed, then hit: the hit queues the entry for the worker.
        answer(&layer, body, coding).await;
        let filed = answer(&layer, body, coding).await;
        before += filed.len();
        assert_eq!(answer(&layer, body, coding).await, filed);
    }
    let stats = recompressed(&layer, &cache, bodies, coding).await;
    assert_eq!(stats.recompressed, bodies.len() as u64, "{stats:?}");
    let mut after = 0;
    for body in bodies {
        let wire = answer(&layer, body, coding).await;
        after += wire.len();
        assert_eq!(decode::decode(Some(coding), &wire), body[..]);
        if tool {
            assert_eq!(decode_with_tool(coding, &wire), body[..]);
        }
    }
    (before, after)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recompressed_answers_are_smaller_on_recorded_api_json() {
    let Some(bodies) = bodies() else {
        return;
    };
    assert!(bodies.len() >= 50, "{} bodies of 16-64 KiB", bodies.len());
    let tools = tools::available(&["brotli", "zstd"], &[]);
    for (coding, bound) in [("br", 0.88), ("zstd", 0.95)] {
        let (before, after) = before_and_after(&bodies, coding, tools).await;
        let ratio = after as f64 / before as f64;
        eprintln!(
            "{coding}: {} bodies, {before} B at the default level, {after} B recompressed: {ratio:.3}x",
            bodies.len()
        );
        assert!(ratio <= bound, "{coding}: {ratio:.3}x, over {bound}x");
    }
}
