//! Allocations per response (or per request) for every case of `benches/response.rs`:
//! tower-gzip against tower-http and no compression, counted by a global allocator.
//!
//! ```text
//! cargo run --release --example allocs
//! ```
//!
//! Each case runs 50 warm-up iterations, then the average over 200 iterations is printed as
//! a markdown table, followed by PASS/FAIL against the targets of the performance issue
//! (nothing is asserted: the exit status is 0 either way). Everything runs on the main
//! thread in a current-thread tokio runtime, so the global counters see only the case.
//!
//! Counting: `alloc`, `alloc_zeroed` and `realloc` each count as one allocation; bytes are
//! the requested size (the new size for `realloc`). Frees are not counted, but tracked for
//! the live-memory figure of the burst check.

#[path = "../benches/support/mod.rs"]
mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::codec::{Encoder, Format};
use tower_gzip::compression::CompressionLayer;
use tower_gzip::decompression::RequestDecompressionLayer;
use tower_gzip::{CodecPool, CompressionLevel};

use support::{
    SIZES, drain, drain_request, full_response, gzip_body_request, gzip_bytes, gzip_request,
    identity_body_request, json, levels, respond, streamed_response,
};

// ---------------------------------------------------------------------------------------
// The counting allocator

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const WARM_UP: u64 = 50;
const ITERS: u64 = 200;

/// Allocations and bytes allocated per iteration, averaged.
#[derive(Clone, Copy, Debug)]
struct Cost {
    allocs: f64,
    bytes: f64,
}

fn measure(mut f: impl FnMut()) -> Cost {
    for _ in 0..WARM_UP {
        f();
    }
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    for _ in 0..ITERS {
        f();
    }
    let (a1, b1) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    Cost {
        allocs: (a1 - a0) as f64 / ITERS as f64,
        bytes: (b1 - b0) as f64 / ITERS as f64,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

struct Row {
    case: String,
    ours: Cost,
    theirs: Cost,
    identity: Cost,
}

/// Responses from `handler` (one `Full` frame, or 16 KiB frames) at `level`, through our
/// layer, tower-http's and none.
fn response_case<H, F, B>(
    rt: &tokio::runtime::Runtime,
    case: &str,
    size: usize,
    level: u32,
    handler: H,
) -> Row
where
    H: Fn(Bytes) -> F + Clone + Send + 'static,
    F: std::future::Future<Output = Result<http::Response<B>, std::convert::Infallible>>
        + Send
        + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tower_gzip::BoxError> + std::fmt::Debug,
{
    let payload = json(size);
    let (ours_level, their_level) = levels(level);
    let serve = |handler: H| {
        let p = payload.clone();
        service_fn(move |_| handler(p.clone()))
    };
    let ours = CompressionLayer::new()
        .quality(ours_level)
        .layer(serve(handler.clone()));
    let theirs = tower_http::compression::CompressionLayer::new()
        .quality(their_level)
        .layer(serve(handler.clone()));
    let identity = serve(handler);
    Row {
        case: case.to_owned(),
        ours: measure(|| {
            black_box(rt.block_on(respond(&ours, gzip_request())));
        }),
        theirs: measure(|| {
            black_box(rt.block_on(respond(&theirs, gzip_request())));
        }),
        identity: measure(|| {
            black_box(rt.block_on(respond(&identity, gzip_request())));
        }),
    }
}

/// Request bodies gzipped at level 6, decoded and drained.
fn request_case(rt: &tokio::runtime::Runtime, case: &str, size: usize) -> Row {
    let payload = json(size);
    let gzipped = gzip_bytes(&payload, 6);
    check_request_decoding(rt, &payload, &gzipped);
    let ours = RequestDecompressionLayer::new().layer(service_fn(drain_request));
    let theirs = tower_http::decompression::RequestDecompressionLayer::new()
        .layer(service_fn(drain_request));
    let identity = service_fn(drain_request);
    Row {
        case: case.to_owned(),
        ours: measure(|| {
            black_box(rt.block_on(respond(&ours, gzip_body_request(gzipped.clone()))));
        }),
        theirs: measure(|| {
            black_box(rt.block_on(respond(&theirs, gzip_body_request(gzipped.clone()))));
        }),
        identity: measure(|| {
            black_box(rt.block_on(respond(&identity, identity_body_request(payload.clone()))));
        }),
    }
}

/// Both layers hand the handler exactly the payload (so the request rows measure real work).
fn check_request_decoding(rt: &tokio::runtime::Runtime, payload: &Bytes, gzipped: &Bytes) {
    async fn collect<B>(req: http::Request<B>) -> Result<http::Response<Full<Bytes>>, B::Error>
    where
        B: http_body::Body<Data = Bytes>,
    {
        let body = req.into_body().collect().await?.to_bytes();
        let mut res = http::Response::new(Full::new(Bytes::new()));
        res.headers_mut()
            .insert("x-crc", crc32fast::hash(&body).into());
        Ok(res)
    }
    fn crc<B>(res: http::Response<B>) -> Option<u32> {
        res.headers().get("x-crc")?.to_str().ok()?.parse().ok()
    }
    let want = Some(crc32fast::hash(payload));
    rt.block_on(async {
        let ours = RequestDecompressionLayer::new().layer(service_fn(collect));
        let res = ours.oneshot(gzip_body_request(gzipped.clone())).await;
        assert_eq!(res.ok().and_then(crc), want, "tower-gzip decoding");
        let theirs =
            tower_http::decompression::RequestDecompressionLayer::new().layer(service_fn(collect));
        let res = theirs.oneshot(gzip_body_request(gzipped.clone())).await;
        assert_eq!(res.ok().and_then(crc), want, "tower-http decoding");
    });
}

/// After `BURST` streaming responses are mid-stream at once and then all finish, the pool
/// keeps at most `max_idle` compressors, and live memory comes back to within that many states.
fn burst(rt: &tokio::runtime::Runtime) -> (String, bool) {
    const BURST: usize = 1_000;
    let pool = CodecPool::new();
    let max_idle = pool.max_idle();
    let payload = json(256 * 1024);
    let p = payload.clone();
    let svc = CompressionLayer::new()
        .pool(pool.clone())
        .layer(service_fn(move |_| streamed_response(p.clone())));
    // One compressor's footprint, measured: a gzip encoder draws one from a scratch pool.
    let before = LIVE.load(Ordering::Relaxed);
    let scratch = CodecPool::new();
    let one = Encoder::new(Format::Gzip, CompressionLevel::Default, &scratch);
    let state_bytes = LIVE.load(Ordering::Relaxed) - before;
    drop(one);
    drop(scratch);

    let live_before = LIVE.load(Ordering::Relaxed);
    let peak = rt.block_on(async {
        let mut bodies = Vec::with_capacity(BURST);
        for _ in 0..BURST {
            let res = svc.clone().oneshot(gzip_request()).await.unwrap();
            let mut body = res.into_body();
            // First frame: the compressor is checked out and the stream is under way.
            let _ = body.frame().await;
            bodies.push(body);
        }
        let peak = LIVE.load(Ordering::Relaxed);
        for body in bodies {
            black_box(drain(body).await);
        }
        peak
    });
    let stats = pool.stats().compressors;
    let live_after = LIVE.load(Ordering::Relaxed).saturating_sub(live_before);
    let ok = stats.idle <= max_idle
        && stats.in_use() == 0
        && live_after <= max_idle * state_bytes + 64 * 1024;
    let text = format!(
        "burst of {BURST} concurrent streaming 256 KiB responses: peak {:.1} MB live, after: \
         {} idle compressors (max_idle {max_idle}), {} in use, {:.2} MB still live \
         (limit {max_idle} x {:.0} KB state + 64 KB = {:.2} MB); created {}, discarded {}",
        peak.saturating_sub(live_before) as f64 / 1e6,
        stats.idle,
        stats.in_use(),
        live_after as f64 / 1e6,
        state_bytes as f64 / 1e3,
        (max_idle * state_bytes + 64 * 1024) as f64 / 1e6,
        stats.created,
        stats.discarded,
    );
    (text, ok)
}

fn kb(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else {
        format!("{:.1} KB", bytes / 1e3)
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

fn main() {
    let rt = runtime();
    let mut rows = Vec::new();
    for (label, size) in SIZES {
        rows.push(response_case(
            &rt,
            &format!("response/{label}"),
            size,
            6,
            full_response,
        ));
    }
    rows.push(response_case(
        &rt,
        "response_l1/1KiB",
        1024,
        1,
        full_response,
    ));
    for (label, size) in SIZES {
        rows.push(response_case(
            &rt,
            &format!("streaming/{label}"),
            size,
            6,
            streamed_response,
        ));
    }
    for (label, size) in SIZES {
        rows.push(request_case(&rt, &format!("request/{label}"), size));
    }

    println!(
        "Allocations per response (request/*: per request), average of {ITERS} iterations \
         after {WARM_UP} warm-up ones; level 6 unless noted.\n"
    );
    println!(
        "| case | tower_gzip allocs | tower_gzip bytes | tower_http allocs | tower_http bytes \
         | identity allocs | identity bytes | ours - identity (allocs) |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|");
    for r in &rows {
        println!(
            "| {} | {:.1} | {} | {:.1} | {} | {:.1} | {} | {:+.1} |",
            r.case,
            r.ours.allocs,
            kb(r.ours.bytes),
            r.theirs.allocs,
            kb(r.theirs.bytes),
            r.identity.allocs,
            kb(r.identity.bytes),
            r.ours.allocs - r.identity.allocs,
        );
    }

    let find = |case: &str| rows.iter().find(|r| r.case == case).unwrap();
    let mut checks: Vec<(String, bool)> = Vec::new();
    let r = find("response/1KiB");
    checks.push((
        format!(
            "response/1KiB: at most identity + 2 allocations ({:.1} vs {:.1} + 2)",
            r.ours.allocs, r.identity.allocs
        ),
        r.ours.allocs <= r.identity.allocs + 2.0,
    ));
    checks.push((
        format!(
            "response/1KiB: under 8 KB allocated in total ({}; tower-http {})",
            kb(r.ours.bytes),
            kb(r.theirs.bytes)
        ),
        r.ours.bytes < 8_000.0,
    ));
    for case in ["response/1MiB", "streaming/1MiB"] {
        let r = find(case);
        checks.push((
            format!(
                "{case}: at most 20 allocations ({:.1}; tower-http {:.1})",
                r.ours.allocs, r.theirs.allocs
            ),
            r.ours.allocs <= 20.0,
        ));
    }
    // Bounded request decompression: the decoder state comes from the pool and output
    // buffers are bounded by the frame size, so the cost per request must not grow with the
    // body: at every size at most identity + 8 allocations and identity + 128 KiB.
    for (label, _) in SIZES {
        let case = format!("request/{label}");
        let r = find(&case);
        let max_allocs = r.identity.allocs + 8.0;
        let max_bytes = r.identity.bytes + 128.0 * 1024.0;
        checks.push((
            format!(
                "{case}: bounded ({:.1} allocs <= {max_allocs:.0}, {} <= {}; tower-http {:.1} \
                 allocs, {})",
                r.ours.allocs,
                kb(r.ours.bytes),
                kb(max_bytes),
                r.theirs.allocs,
                kb(r.theirs.bytes)
            ),
            r.ours.allocs <= max_allocs && r.ours.bytes <= max_bytes,
        ));
    }
    checks.push(burst(&rt));

    println!("\nTargets:\n");
    for (text, ok) in &checks {
        println!("- {}: {text}", verdict(*ok));
    }
}
