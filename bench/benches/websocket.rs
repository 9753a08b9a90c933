//! WebSocket permessage-deflate: CPU and bytes per message on recorded API JSON
//! (`../shared/corpus/reddit-api.jsonl`), one message from a client to a server over an
//! in-memory pipe (the client's deflate, the server's inflate, tungstenite on both ends):
//!
//! - `uncompressed`: plain tokio-tungstenite, no extension.
//! - `no_takeover`: the default (a pooled state drawn per message, reset and returned).
//! - `takeover_wN`: context takeover with windows of 2^N bytes (N = 12..15: 4-32 KiB),
//!   parked between messages and primed into a pooled state per message: the priming cost.
//! - `fresh_state`: no takeover with a pool that keeps nothing (`max_idle(0)`): a new
//!   deflate and inflate state per message, the baseline the pool saves.
//!
//! Bytes on the wire per message are printed once per variant (stderr).
//! `cargo bench -p tower-gzip-bench --bench websocket`

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::{SinkExt, StreamExt};
use tokio::io::DuplexStream;
use tokio_tungstenite::WebSocketStream;
use tower_gzip::CodecPool;
use tower_gzip::websocket::{
    DeflateConfig, DeflateIo, Message, WindowBudget, accept_async, client_async, stats,
};

/// The corpus's JSON bodies, one message each.
fn corpus() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/reddit-api.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("the corpus beside the repo");
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// One direction of a connection: what the client sends, the server reads. (Built once
/// per variant: its size does not matter.)
#[allow(clippy::large_enum_variant)]
enum Pair {
    Plain(WebSocketStream<DuplexStream>, WebSocketStream<DuplexStream>),
    Deflate(
        WebSocketStream<DeflateIo<DuplexStream>>,
        WebSocketStream<DeflateIo<DuplexStream>>,
    ),
}

impl Pair {
    async fn new(config: Option<DeflateConfig>) -> Pair {
        let (a, b) = tokio::io::duplex(1 << 20);
        match config {
            None => {
                let (server, client) = tokio::join!(
                    tokio_tungstenite::accept_async(a),
                    tokio_tungstenite::client_async("ws://bench/", b)
                );
                Pair::Plain(client.unwrap().0, server.unwrap())
            }
            Some(config) => {
                let (server, client) = tokio::join!(
                    accept_async(a, &config, None),
                    client_async("ws://bench/", b, &config, None)
                );
                Pair::Deflate(client.unwrap().0, server.unwrap())
            }
        }
    }

    async fn one(&mut self, message: &str) {
        let message = Message::text(message);
        match self {
            Pair::Plain(client, server) => {
                client.send(message).await.unwrap();
                server.next().await.unwrap().unwrap();
            }
            Pair::Deflate(client, server) => {
                client.send(message).await.unwrap();
                server.next().await.unwrap().unwrap();
            }
        }
    }
}

fn variants() -> Vec<(String, Option<DeflateConfig>)> {
    let budget = WindowBudget::new(1 << 30);
    let mut list = vec![
        ("uncompressed".to_owned(), None),
        ("no_takeover".to_owned(), Some(DeflateConfig::new())),
    ];
    for bits in [12u8, 13, 14, 15] {
        let config = DeflateConfig::new()
            .context_takeover(true)
            .max_window_bits(bits)
            .budget(budget.clone());
        list.push((format!("takeover_w{bits}"), Some(config)));
    }
    let fresh = DeflateConfig::new().pool(CodecPool::builder().max_idle(0).build());
    list.push(("fresh_state".to_owned(), Some(fresh)));
    list
}

fn per_message(c: &mut Criterion) {
    let messages = corpus();
    let plain: usize = messages.iter().map(String::len).sum();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("websocket");
    group.throughput(Throughput::Elements(1));
    for (name, config) in variants() {
        let mut pair = rt.block_on(Pair::new(config));
        // Bytes: the whole corpus once, as the connection's first messages.
        let before = stats();
        rt.block_on(async {
            for m in &messages {
                pair.one(m).await;
            }
        });
        let after = stats();
        let wire = (after.deflate[0].wire_bytes - before.deflate[0].wire_bytes)
            + (after.identity[1].wire_bytes - before.identity[1].wire_bytes);
        let wire = if wire == 0 { plain as u64 } else { wire };
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
