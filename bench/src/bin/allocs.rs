//! Allocations per response (or per request) for every case of `bench/benches/response/main.rs`:
//! tower-gzip against tower-http and no compression, counted by a global allocator; then the
//! bytes each layer sends per coding and size (the "which coding" table of BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin allocs
//! ```
//!
//! Each case runs 50 warm-up iterations, then the average over 200 iterations is printed as
//! a markdown table, followed by PASS/FAIL against its allocation and memory targets
//! (nothing is asserted: the exit status is 0 either way). Everything runs on the main
//! thread in a current-thread tokio runtime, so the global counters see only the case.
//!
//! Counting: `alloc`, `alloc_zeroed` and `realloc` each count as one allocation; bytes are
//! the requested size (the new size for `realloc`). Frees are not counted, but tracked for
//! the live-memory figure of the burst check. C code (libzstd, libdeflate) calls `malloc`
//! itself, past the global allocator: on glibc this binary also defines `malloc` and its
//! siblings, counting every call before forwarding it, and the tables include those
//! allocations (the "C share" column shows them alone).

use tower_gzip_support::bench as support;

use std::hint::black_box;

use bytes::Bytes;
use http_body_util::BodyExt;
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::ContentCoding;
use tower_gzip::codec::Encoder;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::decompression::RequestDecompressionLayer;
use tower_gzip::{CodecPool, CompressionLevel};

use support::{
    SIZES, accepting, check_request_decoding, drain, drain_request, expect_coding, full_response,
    gzip_body_request, gzip_bytes, gzip_request, identity_body_request, json, respond,
    streamed_response, tower_http_only,
};

// The counting allocator of the tests (the support crate's), process-wide counters.
use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();

/// The C share of allocations (libzstd's, libdeflate's): `allocs/c_heap.rs`.
mod allocs {
    pub mod c_heap;
}
use allocs::c_heap;

const WARM_UP: u64 = 50;
const ITERS: u64 = 200;

/// Allocations and bytes allocated per iteration, averaged: Rust's and C code's together,
/// and the C share alone (libzstd's, libdeflate's).
#[derive(Clone, Copy, Debug)]
struct Cost {
    allocs: f64,
    bytes: f64,
    c_allocs: f64,
    c_bytes: f64,
}

fn measure(mut f: impl FnMut()) -> Cost {
    for _ in 0..WARM_UP {
        f();
    }
    let before = alloc::total();
    let c0 = c_heap::totals();
    for _ in 0..ITERS {
        f();
    }
    let rust = alloc::total().since(before);
    let c1 = c_heap::totals();
    let (a, b) = (rust.allocations, rust.bytes);
    let per = |n: u64| n as f64 / ITERS as f64;
    // Every Rust allocation is one call into the C allocator too: the rest is C code's own.
    let (c_allocs, c_bytes) = match (c0, c1) {
        (Some((n0, m0)), Some((n1, m1))) => (
            per((n1 - n0).saturating_sub(a)),
            per((m1 - m0).saturating_sub(b)),
        ),
        _ => (0.0, 0.0),
    };
    Cost {
        allocs: per(a) + c_allocs,
        bytes: per(b) + c_bytes,
        c_allocs,
        c_bytes,
    }
}

/// Bytes live in the process now (Rust's allocations).
fn live() -> usize {
    alloc::total().live.max(0) as usize
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
    let (ours_level, their_level) = match level {
        1 => (
            CompressionLevel::Fastest,
            tower_http::CompressionLevel::Fastest,
        ),
        _ => (
            CompressionLevel::Default,
            tower_http::CompressionLevel::Default,
        ),
    };
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
    let echo = RequestDecompressionLayer::new().layer(service_fn(support::echo));
    check_request_decoding(rt, echo, "gzip", &payload, &gzipped);
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

/// `Full<Bytes>` responses answered with `coding` only: our layer with every coding on
/// (`CompressionLayer::new()`, default levels), tower-http's offering only `coding`, and
/// none; the request accepts only `coding`.
#[cfg(any(feature = "zstd", feature = "br"))]
fn coding_case(rt: &tokio::runtime::Runtime, coding: &'static str, size: usize) -> Row {
    let payload = json(size);
    let serve = || {
        let p = payload.clone();
        service_fn(move |_| full_response(p.clone()))
    };
    let ours = CompressionLayer::new().layer(serve());
    let theirs = tower_http_only(coding).layer(serve());
    rt.block_on(expect_coding(&ours, accepting(coding), coding));
    rt.block_on(expect_coding(&theirs, accepting(coding), coding));
    let identity = serve();
    Row {
        case: format!("response_{coding}/{}", label(size)),
        ours: measure(|| {
            black_box(rt.block_on(respond(&ours, accepting(coding))));
        }),
        theirs: measure(|| {
            black_box(rt.block_on(respond(&theirs, accepting(coding))));
        }),
        identity: measure(|| {
            black_box(rt.block_on(respond(&identity, accepting(coding))));
        }),
    }
}

/// A 16 KiB JSON request body encoded with `coding` (`encoded`), decoded and drained.
#[cfg(any(feature = "zstd", feature = "br"))]
fn coding_request_case(
    rt: &tokio::runtime::Runtime,
    coding: &'static str,
    payload: Bytes,
    encoded: Bytes,
) -> Row {
    let echo = RequestDecompressionLayer::new().layer(service_fn(support::echo));
    check_request_decoding(rt, echo, coding, &payload, &encoded);
    let ours = RequestDecompressionLayer::new().layer(service_fn(drain_request));
    let theirs = tower_http::decompression::RequestDecompressionLayer::new()
        .layer(service_fn(drain_request));
    let identity = service_fn(drain_request);
    Row {
        case: format!("request_{coding}/{}", label(payload.len())),
        ours: measure(|| {
            black_box(rt.block_on(respond(
                &ours,
                support::encoded_body_request(coding, encoded.clone()),
            )));
        }),
        theirs: measure(|| {
            black_box(rt.block_on(respond(
                &theirs,
                support::encoded_body_request(coding, encoded.clone()),
            )));
        }),
        identity: measure(|| {
            black_box(rt.block_on(respond(&identity, identity_body_request(payload.clone()))));
        }),
    }
}

#[cfg(any(feature = "zstd", feature = "br"))]
fn label(size: usize) -> &'static str {
    SIZES.iter().find(|(_, s)| *s == size).unwrap().0
}

/// The codings this build speaks, in the order of the wire-size table.
fn codings() -> Vec<&'static str> {
    let mut out = vec!["gzip", "deflate"];
    if cfg!(feature = "zstd") {
        out.push("zstd");
    }
    if cfg!(feature = "br") {
        out.push("br");
    }
    out
}

/// Response bytes on the wire, per size and coding: ours (default levels, every coding on)
/// and tower-http's (only that coding, its default quality).
fn wire_sizes(rt: &tokio::runtime::Runtime) {
    let codings = codings();
    println!(
        "
Body bytes on the wire per response: tower-gzip / tower-http, default levels.
"
    );
    print!("| size |");
    for coding in &codings {
        print!(" {coding} |");
    }
    println!();
    println!("|---|{}", "--:|".repeat(codings.len()));
    for (label, size) in SIZES {
        let payload = json(size);
        print!("| {label} ({size} B) |");
        for &coding in &codings {
            let serve = || {
                let p = payload.clone();
                service_fn(move |_| full_response(p.clone()))
            };
            let ours = CompressionLayer::new().layer(serve());
            let theirs = tower_http_only(coding).layer(serve());
            let a = rt.block_on(expect_coding(&ours, accepting(coding), coding));
            let b = rt.block_on(expect_coding(&theirs, accepting(coding), coding));
            print!(" {a} / {b} |");
        }
        println!();
    }
}

/// After `BURST` streaming responses are mid-stream at once and then all finish, the pool
/// keeps at most `max_idle` compressors, and live memory comes back to within that many states.
fn burst(rt: &tokio::runtime::Runtime) -> (String, bool) {
    const BURST: usize = 1_000;
    let max_idle = 16;
    let pool = CodecPool::builder().max_idle(max_idle).build();
    let payload = json(256 * 1024);
    let p = payload.clone();
    let svc = CompressionLayer::new()
        .pool(pool.clone())
        .layer(service_fn(move |_| streamed_response(p.clone())));
    // One compressor's footprint, measured: a gzip encoder draws one from a scratch pool.
    let before = live();
    let scratch = CodecPool::new();
    let one = Encoder::for_coding(
        ContentCoding::Gzip,
        CompressionLevel::Default,
        None,
        &scratch,
    )
    .unwrap();
    let state_bytes = live() - before;
    drop(one);
    drop(scratch);

    let live_before = live();
    let peak = rt.block_on(async {
        let mut bodies = Vec::with_capacity(BURST);
        for _ in 0..BURST {
            let res = svc.clone().oneshot(gzip_request()).await.unwrap();
            let mut body = res.into_body();
            // First frame: the compressor is checked out and the stream is under way.
            let _ = body.frame().await;
            bodies.push(body);
        }
        let peak = live();
        for body in bodies {
            black_box(drain(body).await);
        }
        peak
    });
    let stats = pool
        .stats()
        .kind(tower_gzip::pool::PoolKind::DeflateCompressors);
    let live_after = live().saturating_sub(live_before);
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
    let rows = measure_rows(&rt);
    print_table(&rows);
    let mut checks = response_checks(&rows);
    checks.extend(request_checks(&rows));
    checks.push(burst(&rt));
    println!("\nTargets:\n");
    for (text, ok) in &checks {
        println!("- {}: {text}", verdict(*ok));
    }
    wire_sizes(&rt);
}

/// Every case: whole and streamed responses, requests, then zstd's and br's.
fn measure_rows(rt: &tokio::runtime::Runtime) -> Vec<Row> {
    let mut rows = Vec::new();
    for (label, size) in SIZES {
        let case = format!("response/{label}");
        rows.push(response_case(rt, &case, size, 6, full_response));
    }
    rows.push(response_case(
        rt,
        "response_l1/1KiB",
        1024,
        1,
        full_response,
    ));
    for (label, size) in SIZES {
        let case = format!("streaming/{label}");
        rows.push(response_case(rt, &case, size, 6, streamed_response));
    }
    for (label, size) in SIZES {
        rows.push(request_case(rt, &format!("request/{label}"), size));
    }
    #[cfg(feature = "zstd")]
    {
        for size in [1024, 256 * 1024] {
            rows.push(coding_case(rt, "zstd", size));
        }
        let payload = json(16 * 1024);
        let encoded = support::zstd_bytes(&payload, 3);
        rows.push(coding_request_case(rt, "zstd", payload, encoded));
    }
    #[cfg(feature = "br")]
    {
        for size in [1024, 256 * 1024] {
            rows.push(coding_case(rt, "br", size));
        }
        let payload = json(16 * 1024);
        let encoded = support::br_bytes(&payload, 4);
        rows.push(coding_request_case(rt, "br", payload, encoded));
    }
    rows
}

fn print_table(rows: &[Row]) {
    println!(
        "Allocations per response (request/*: per request), average of {ITERS} iterations \
         after {WARM_UP} warm-up ones; level 6 unless noted.\n"
    );
    println!(
        "| case | tower_gzip allocs | tower_gzip bytes | tower_http allocs | tower_http bytes \
         | identity allocs | identity bytes | ours - identity (allocs) \
         | C share: tower_gzip / tower_http |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in rows {
        let c_share = if r.ours.c_allocs + r.theirs.c_allocs > 0.0 {
            format!(
                "{:.1} ({}) / {:.1} ({})",
                r.ours.c_allocs,
                kb(r.ours.c_bytes),
                r.theirs.c_allocs,
                kb(r.theirs.c_bytes)
            )
        } else {
            "-".to_owned()
        };
        println!(
            "| {} | {:.1} | {} | {:.1} | {} | {:.1} | {} | {:+.1} | {} |",
            r.case,
            r.ours.allocs,
            kb(r.ours.bytes),
            r.theirs.allocs,
            kb(r.theirs.bytes),
            r.identity.allocs,
            kb(r.identity.bytes),
            r.ours.allocs - r.identity.allocs,
            c_share,
        );
    }
}

fn find<'a>(rows: &'a [Row], case: &str) -> &'a Row {
    rows.iter().find(|r| r.case == case).unwrap()
}

/// The targets on responses: small ones cost about what identity does, large ones few
/// allocations.
fn response_checks(rows: &[Row]) -> Vec<(String, bool)> {
    let mut checks: Vec<(String, bool)> = Vec::new();
    let r = find(rows, "response/1KiB");
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
    if cfg!(feature = "zstd") {
        let r = find(rows, "response_zstd/1KiB");
        checks.push((
            format!(
                "response_zstd/1KiB: at most identity + 3 allocations and under 8 KB ({:.1} vs \
                 {:.1} + 3, {}; tower-http {:.1}, {})",
                r.ours.allocs,
                r.identity.allocs,
                kb(r.ours.bytes),
                r.theirs.allocs,
                kb(r.theirs.bytes)
            ),
            r.ours.allocs <= r.identity.allocs + 3.0 && r.ours.bytes < 8_000.0,
        ));
    }
    for case in ["response/1MiB", "streaming/1MiB"] {
        let r = find(rows, case);
        checks.push((
            format!(
                "{case}: at most 20 allocations ({:.1}; tower-http {:.1})",
                r.ours.allocs, r.theirs.allocs
            ),
            r.ours.allocs <= 20.0,
        ));
    }
    checks
}

/// Bounded request decompression: the decoder state comes from the pool and output
/// buffers are bounded by the frame size, so the cost per request must not grow with the
/// body: at every size at most identity + 8 allocations and identity + 128 KiB.
fn request_checks(rows: &[Row]) -> Vec<(String, bool)> {
    let mut checks = Vec::new();
    for (label, _) in SIZES {
        let case = format!("request/{label}");
        let r = find(rows, &case);
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
    checks
}
