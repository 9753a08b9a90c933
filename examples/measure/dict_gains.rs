//! What dictionaries buy on small API JSON: bytes on the wire and time per response for
//! plain zstd 3 and br 5 against `dcz` 3 and `dcb` 5 with dictionaries of 4, 16 and 32 KiB,
//! trained on other responses of the same API (BENCHMARKS.md, "What dictionaries buy on
//! small API JSON").
//!
//! ```text
//! cargo run --release --example dict_gains
//! ```
//!
//! 300 generated responses of 1-10 records (about 1 KB each), dictionaries trained on 2,000
//! others; each `dcz` body is checked to decode back. Bytes include the 40/36-byte `dcz`/`dcb`
//! headers (the table also gives them without); times are the best of 5 rounds.

use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::train;
use tower_gzip::{CodecPool, CompressionLevel};

mod dict_samples;
use dict_samples::{dictionary, json_samples};

/// The most a `dcz` body may decode to here.
const LIMIT: usize = 64 << 20;

fn main() {
    let pool = CodecPool::new();
    let training = json_samples(2000, 21);
    let bodies = json_samples(300, 22);
    let identity: usize = bodies.iter().map(Vec::len).sum();
    let n = bodies.len();
    // Bytes of all bodies, and the best of 5 rounds' time per response.
    let run = |encode: &dyn Fn(&[u8], &mut BytesMut)| -> (usize, f64) {
        let mut best = f64::MAX;
        let mut bytes = 0;
        for _ in 0..5 {
            let started = std::time::Instant::now();
            bytes = 0;
            for body in &bodies {
                let mut out = BytesMut::new();
                encode(body, &mut out);
                bytes += out.len();
            }
            best = best.min(started.elapsed().as_secs_f64() * 1e6 / n as f64);
        }
        (bytes, best)
    };
    let plain = |format, level| {
        run(&|body, out| {
            OneShot::new(format)
                .level(CompressionLevel::Precise(level))
                .pool(&pool)
                .encode(body, out)
                .unwrap()
        })
    };
    let pct = |bytes: usize| 100.0 * bytes as f64 / identity as f64;
    let (zstd3, zstd3_us) = plain(ContentCoding::Zstd, 3);
    let (br5, br5_us) = plain(ContentCoding::Br, 5);
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "{n} responses, {identity} bytes identity ({} average); dictionaries trained on {} \
         others; {build} build",
        identity / n,
        training.len()
    );
    println!(
        "| coding | bytes (without the 40/36-byte headers) | % of identity | vs plain | µs/response |"
    );
    println!("|---|---|---|---|---|");
    println!(
        "| zstd 3 | {zstd3} | {:.1}% | 1.00x | {zstd3_us:.1} |",
        pct(zstd3)
    );
    println!("| br 5 | {br5} | {:.1}% | 1.00x | {br5_us:.1} |", pct(br5));
    for size in [4 << 10, 16 << 10, 32 << 10] {
        let started = std::time::Instant::now();
        let dict = dictionary(train(&training, size).unwrap());
        let trained_in = started.elapsed();
        for body in &bodies {
            let mut out = BytesMut::new();
            let dcz = OneShot::new(ContentCoding::Dcz)
                .dictionary(&dict)
                .level(CompressionLevel::Precise(3))
                .pool(&pool);
            dcz.encode(body, &mut out).unwrap();
            assert_eq!(&dcz.decode(&out, LIMIT).unwrap()[..], &body[..]);
        }
        let (dcz, dcz_us) = run(&|body, out| {
            OneShot::new(ContentCoding::Dcz)
                .dictionary(&dict)
                .level(CompressionLevel::Precise(3))
                .pool(&pool)
                .encode(body, out)
                .unwrap()
        });
        let (dcb, dcb_us) = run(&|body, out| {
            OneShot::new(ContentCoding::Dcb)
                .dictionary(&dict)
                .level(CompressionLevel::Precise(5))
                .encode(body, out)
                .unwrap()
        });
        let kib = size >> 10;
        // A row: the bytes (and without the headers), their share of identity, and how they
        // compare with the plain coding's.
        let row = |coding: &str, bytes: usize, header: usize, plain: &str, base: usize, us: f64| {
            let payload = bytes - header * n;
            println!(
                "| {coding}, {kib} KiB dict | {bytes} ({payload}) | {:.1}% | {:.2}x {plain} ({:.2}x) | {us:.1} |",
                pct(bytes),
                bytes as f64 / base as f64,
                payload as f64 / base as f64
            );
        };
        row("dcz 3", dcz, 40, "zstd 3", zstd3, dcz_us);
        row("dcb 5", dcb, 36, "br 5", br5, dcb_us);
        println!(
            "({kib} KiB: {} bytes, trained in {trained_in:.2?})",
            dict.bytes().len()
        );
    }
}
