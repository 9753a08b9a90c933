//! What many streams compressed side by side hold: N encoders, each fed a body in 64 KiB
//! slices, one slice per stream per round (as the streaming body serves them), so every
//! stream is mid-body at once. Prints the process's peak RSS growth, the bytes out, and the
//! time, per coding and per slice-end policy.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin stream_memory -- CODING POLICY [STREAMS] [BODY_BYTES]
//! ```
//!
//! Policies at a slice end: `keep` (encode only), `flush` (a sync flush), `idle` (the
//! encoder's idle, as at a producer's pause: a flush, then the state parked, kept or given
//! back as `Encoder::idle` describes).

use std::time::Instant;

use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::Encoder;
use tower_gzip::{CodecPool, CompressionLevel};

const SLICE: usize = 64 * 1024;

fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The words of [`text`].
const WORDS: &[&str] = &[
    "alpha",
    "bridge",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "granite",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lantern",
    "meadow",
    "nimbus",
    "orchid",
    "prairie",
    "quartz",
    "raven",
    "saffron",
    "timber",
    "umber",
    "velvet",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "it",
    "with",
    "for",
    "on",
    "over",
    "under",
    "compressed",
    "stream",
    "window",
    "block",
    "frame",
    "pool",
    "layer",
    "tower",
    "gzip",
];

/// Lines of words with line numbers, like the demo's `/big.txt`.
fn text(len: usize) -> Vec<u8> {
    let (mut out, mut seed, mut line, mut column) = (Vec::with_capacity(len + 80), 1, 0, 0);
    while out.len() < len {
        if column == 0 {
            line += 1;
            out.extend_from_slice(format!("{line:>7}  ").as_bytes());
        }
        seed = mix(seed);
        let word = WORDS[(seed % WORDS.len() as u64) as usize];
        out.extend_from_slice(word.as_bytes());
        column += word.len() + 1;
        if column > 70 {
            out.push(b'\n');
            column = 0;
        } else {
            out.push(b' ');
        }
    }
    out.truncate(len);
    out
}

fn rss_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn run(format: ContentCoding, policy: &str, streams: usize, body: &[u8]) {
    let pool = CodecPool::new();
    let before = rss_kb("VmRSS:");
    let started = Instant::now();
    let mut encoders: Vec<(Encoder, BytesMut)> = (0..streams)
        .map(|_| {
            let encoder =
                Encoder::for_coding(format, CompressionLevel::Default, None, &pool).unwrap();
            (encoder, BytesMut::new())
        })
        .collect();
    let mut wire = 0usize;
    for slice in body.chunks(SLICE) {
        for (encoder, out) in &mut encoders {
            encoder.encode(slice, out).expect("encode");
            match policy {
                "flush" => encoder.flush(out).expect("flush"),
                "idle" => encoder.idle(out).expect("idle"),
                _ => {}
            }
            wire += out.len();
            out.clear();
        }
    }
    for (encoder, out) in &mut encoders {
        encoder.finish(out).expect("finish");
        wire += out.len();
    }
    let elapsed = started.elapsed();
    let peak = rss_kb("VmHWM:").saturating_sub(before);
    drop(encoders);
    println!(
        "{:<8} {:<6} {streams:>4} streams: peak RSS +{:>8.1} MB ({:>6.0} KB/stream), {:>6.2}% of input, {:>7.1} ms",
        format.as_str(),
        policy,
        peak as f64 / 1024.0,
        peak as f64 / streams as f64,
        100.0 * wire as f64 / (body.len() * streams) as f64,
        elapsed.as_secs_f64() * 1e3
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let format = args
        .first()
        .and_then(|s| ContentCoding::from_token(s))
        .unwrap_or(ContentCoding::Gzip);
    let policy = args.get(1).map_or("keep", String::as_str);
    let streams: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
    let size: usize = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    // VmHWM only grows, so one process measures one case.
    run(format, policy, streams, &text(size));
}
