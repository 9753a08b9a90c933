//! Prints what gzip saves and costs on small JSON bodies, the measurement behind
//! the compression layer's default size floor (256 bytes): `cargo run --release -p tower-gzip-bench --bin min_size`.

use std::time::Instant;

use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::Encoder;
use tower_gzip::{CodecPool, CompressionLevel};

fn json(len: usize) -> Vec<u8> {
    let mut out = String::from("[");
    let mut i = 0;
    while out.len() < len {
        out.push_str(&format!(
            r#"{{"id":{i},"name":"item-{i:05}","price":{}.{:02},"tags":["a{}","b"]}},"#,
            i * 7 % 100,
            i * 13 % 100,
            i % 5
        ));
        i += 1;
    }
    out.truncate(len);
    out.into_bytes()
}

fn main() {
    let pool = CodecPool::new();
    println!("| body bytes | gzip bytes | saved | µs per compress (pooled, level 6) |");
    println!("|---|---|---|---|");
    for len in [32, 64, 128, 150, 192, 256, 384, 512, 1024, 2048] {
        let body = json(len);
        let mut out = BytesMut::with_capacity(4096);
        let rounds = 2000;
        let start = Instant::now();
        for _ in 0..rounds {
            out.clear();
            let mut enc =
                Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Default, None, &pool)
                    .unwrap();
            enc.encode(&body, &mut out).unwrap();
            enc.finish(&mut out).unwrap();
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / rounds as f64;
        let saved = 100.0 * (1.0 - out.len() as f64 / len as f64);
        println!("| {len} | {} | {saved:.0}% | {us:.2} |", out.len());
    }
}
