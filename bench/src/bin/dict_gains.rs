//! What dictionaries buy on small API JSON: bytes on the wire and time per response for
//! plain zstd 3 and br 5 against `dcz` 3 and `dcb` 5 with dictionaries of 4, 16 and 32 KiB,
//! trained on other responses of the same API (BENCHMARKS.md, "What dictionaries buy on
//! small API JSON").
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin dict_gains
//! ```
//!
//! 300 generated responses of 1-10 records (about 1 KB each), dictionaries trained on 2,000
//! others; each `dcz` body is checked to decode back. Bytes include the 40/36-byte `dcz`/`dcb`
//! headers (the table also gives them without); times are the best of 5 rounds.

use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::Dictionary;
use tower_gzip::{CodecPool, CompressionLevel};
use tower_gzip_support::samples::train;

use dict_samples::{dictionary, json_samples};
use tower_gzip_bench::dict_samples;

/// The most a `dcz` body may decode to here.
const LIMIT: usize = 64 << 20;

/// The bodies measured, and the pool the codings draw from.
struct Bench {
    pool: CodecPool,
    bodies: Vec<Vec<u8>>,
    identity: usize,
}

impl Bench {
    /// Bytes of all bodies, and the best of 5 rounds' time per response.
    fn run(&self, encode: &dyn Fn(&[u8], &mut BytesMut)) -> (usize, f64) {
        let mut best = f64::MAX;
        let mut bytes = 0;
        for _ in 0..5 {
            let started = std::time::Instant::now();
            bytes = 0;
            for body in &self.bodies {
                let mut out = BytesMut::new();
                encode(body, &mut out);
                bytes += out.len();
            }
            best = best.min(started.elapsed().as_secs_f64() * 1e6 / self.bodies.len() as f64);
        }
        (bytes, best)
    }

    fn plain(&self, format: ContentCoding, level: i32) -> (usize, f64) {
        self.run(&|body, out| {
            OneShot::new(format)
                .level(CompressionLevel::Precise(level))
                .pool(&self.pool)
                .encode(body, out)
                .unwrap()
        })
    }

    fn pct(&self, bytes: usize) -> f64 {
        100.0 * bytes as f64 / self.identity as f64
    }

    /// Each `dcz` body decodes back.
    fn check_dcz(&self, dict: &Dictionary) {
        for body in &self.bodies {
            let mut out = BytesMut::new();
            let dcz = OneShot::new(ContentCoding::Dcz)
                .dictionary(dict)
                .level(CompressionLevel::Precise(3))
                .pool(&self.pool);
            dcz.encode(body, &mut out).unwrap();
            assert_eq!(&dcz.decode(&out, LIMIT).unwrap()[..], &body[..]);
        }
    }

    /// The rows of one dictionary size against the plain codings' bytes.
    fn dictionary_rows(&self, training: &[Vec<u8>], size: usize, zstd3: usize, br5: usize) {
        let started = std::time::Instant::now();
        let dict = dictionary(train(training, size).unwrap());
        let trained_in = started.elapsed();
        self.check_dcz(&dict);
        let (dcz, dcz_us) = self.run(&|body, out| {
            OneShot::new(ContentCoding::Dcz)
                .dictionary(&dict)
                .level(CompressionLevel::Precise(3))
                .pool(&self.pool)
                .encode(body, out)
                .unwrap()
        });
        let (dcb, dcb_us) = self.run(&|body, out| {
            OneShot::new(ContentCoding::Dcb)
                .dictionary(&dict)
                .level(CompressionLevel::Precise(5))
                .encode(body, out)
                .unwrap()
        });
        let kib = size >> 10;
        self.row(
            &format!("dcz 3, {kib} KiB dict"),
            dcz,
            40,
            ("zstd 3", zstd3),
            dcz_us,
        );
        self.row(
            &format!("dcb 5, {kib} KiB dict"),
            dcb,
            36,
            ("br 5", br5),
            dcb_us,
        );
        println!(
            "({kib} KiB: {} bytes, trained in {trained_in:.2?})",
            dict.bytes().len()
        );
    }

    /// A row: the bytes (and without the headers), their share of identity, and how they
    /// compare with the plain coding's.
    fn row(&self, coding: &str, bytes: usize, header: usize, plain: (&str, usize), us: f64) {
        let (plain, base) = plain;
        let payload = bytes - header * self.bodies.len();
        println!(
            "| {coding} | {bytes} ({payload}) | {:.1}% | {:.2}x {plain} ({:.2}x) | {us:.1} |",
            self.pct(bytes),
            bytes as f64 / base as f64,
            payload as f64 / base as f64
        );
    }
}

fn main() {
    let training = json_samples(2000, 21);
    let bodies = json_samples(300, 22);
    let identity: usize = bodies.iter().map(Vec::len).sum();
    let n = bodies.len();
    let bench = Bench {
        pool: CodecPool::new(),
        bodies,
        identity,
    };
    let (zstd3, zstd3_us) = bench.plain(ContentCoding::Zstd, 3);
    let (br5, br5_us) = bench.plain(ContentCoding::Br, 5);
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
        bench.pct(zstd3)
    );
    println!(
        "| br 5 | {br5} | {:.1}% | 1.00x | {br5_us:.1} |",
        bench.pct(br5)
    );
    for size in [4 << 10, 16 << 10, 32 << 10] {
        bench.dictionary_rows(&training, size, zstd3, br5);
    }
}
