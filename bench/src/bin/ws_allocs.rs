//! Allocations per WebSocket message, both ends together: the variants of the WebSocket
//! bench (`benches/websocket.rs`: plain, ours with and without takeover, a fresh state per
//! message, yawc) on the recorded corpus's bodies, one message from client to server each,
//! the seed's measure (OpenIM counted 20 allocations per message before pooling, 3 after).
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin ws_allocs [VARIANT...]
//! ```
//!
//! Each variant's connection first sends the whole corpus once (states drawn, buffers
//! grown), then the corpus again, counted: allocations and bytes asked per message, and
//! the peak of live bytes over the counted pass. Both ends run on this one thread, so the
//! thread's counters are exact. zlib-rs allocates through Rust's allocator: its states count.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use tower_gzip_bench::websocket::{Pair, corpus, variants};
use tower_gzip_support::alloc;

tower_gzip_support::count_allocations!();

fn main() {
    let messages = corpus();
    let n = messages.len() as f64;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!(
        "{:<26} {:>12} {:>14} {:>12}",
        "variant", "allocs/msg", "bytes/msg", "peak KiB"
    );
    let only: Vec<String> = std::env::args().skip(1).collect();
    let chosen = variants()
        .into_iter()
        .filter(|(name, _)| only.is_empty() || only.contains(name));
    for (name, setup) in chosen {
        let mut pair = rt.block_on(Pair::new(setup, Arc::new(AtomicU64::new(0))));
        let pass = |pair: &mut Pair| {
            rt.block_on(async {
                for m in &messages {
                    pair.one(m).await;
                }
            })
        };
        pass(&mut pair);
        let (counts, ()) = alloc::on_this_thread(|| pass(&mut pair));
        println!(
            "{name:<26} {:>12.2} {:>14.0} {:>12.0}",
            counts.allocations as f64 / n,
            counts.bytes as f64 / n,
            counts.peak as f64 / 1024.0
        );
    }
}
