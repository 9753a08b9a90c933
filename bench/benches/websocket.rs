//! WebSocket permessage-deflate: CPU and bytes per message on recorded API JSON
//! (`../shared/corpus/reddit-api.jsonl`, the bodies), one message from a client to a server over an
//! in-memory pipe (the client's deflate, the server's inflate and UTF-8 check):
//!
//! - `uncompressed`: plain tokio-tungstenite, no extension.
//! - `no_takeover`: the default (a pooled state drawn per message, reset and returned).
//! - `takeover_wN`: context takeover with windows of 2^N bytes (N = 12..15: 4-32 KiB), the
//!   default way: a busy connection keeps its compressor (`KeptCompressors`), the server
//!   primes a pooled inflater with the parked window per message.
//! - `takeover_wN_primed`: the same with no kept compressors: both sides prime a pooled
//!   state from the parked window per message, the cost of holding windows only.
//! - `fresh_state`: no takeover with a pool that keeps nothing (`max_idle(0)`): a new
//!   deflate and inflate state per message, the baseline the pool saves.
//! - `yawc_*`: yawc, the other Rust WebSocket library with permessage-deflate, level 6,
//!   the same 128-byte threshold and UTF-8 checked as tungstenite does: `yawc_no_takeover`
//!   (a state per connection, reset per message), `yawc_no_takeover_pooled` (its
//!   `DeflatePool`), `yawc_takeover_w15` (its default, context takeover).
//!
//! Bytes the client wrote per message (frame headers and masks included) are printed once
//! per variant (stderr). `cargo bench -p tower-gzip-bench --bench websocket`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tower_gzip_bench::websocket::{Pair, corpus, variants};

fn per_message(c: &mut Criterion) {
    let messages = corpus();
    let plain: usize = messages.iter().map(String::len).sum();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("websocket");
    group.throughput(Throughput::Elements(1));
    for (name, setup) in variants() {
        let written = Arc::new(AtomicU64::new(0));
        let mut pair = rt.block_on(Pair::new(setup, written.clone()));
        // Bytes: the whole corpus once, as the connection's first messages.
        let before = written.load(Ordering::Relaxed);
        rt.block_on(async {
            for m in &messages {
                pair.one(m).await;
            }
        });
        let wire = written.load(Ordering::Relaxed) - before;
        eprintln!(
            "websocket/{name}: {} messages, {:.0} B plain, {:.0} B on the wire per message ({:.3} of plain)",
            messages.len(),
            plain as f64 / messages.len() as f64,
            wire as f64 / messages.len() as f64,
            wire as f64 / plain as f64
        );
        let mut i = 0;
        group.bench_function(&name, |b| {
            b.iter(|| {
                rt.block_on(pair.one(&messages[i % messages.len()]));
                i += 1;
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = per_message
}
criterion_main!(benches);
