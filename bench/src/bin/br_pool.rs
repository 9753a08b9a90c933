//! What pooling brotli state saves: a fresh `brotli` encoder per body (what tower-http does
//! through async-compression) against this crate's pooled br encoder, and the same for the
//! decoder. Time per body (median), and bytes and allocations per body counted by a global
//! allocator.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin br_pool [iterations-scale] [sequential]
//! ```

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Instant;

use brotli::enc::StandardAlloc;
use brotli::enc::encode::{
    BrotliEncoderOperation, BrotliEncoderParameter, BrotliEncoderStateStruct,
};
use brotli::{BrotliDecompressStream, BrotliResult, BrotliState};
use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::{Decoder, Encoder, OneShot};
use tower_gzip::{CodecPool, CompressionLevel};

use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();

/// A JSON array of user records, like an API response.
fn json(len: usize) -> Vec<u8> {
    let names = [
        "ada", "grace", "alan", "edsger", "barbara", "donald", "ken", "dennis",
    ];
    let tags = ["admin", "ops", "dev", "qa", "sales", "beta"];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut out = b"[".to_vec();
    let mut id = 0;
    while out.len() < len {
        let name = names[next(8) as usize];
        out.extend_from_slice(
            format!(
                "{{\"id\":{id},\"name\":\"{name}\",\"email\":\"{name}{}@example.com\",\"score\":{},\"tags\":[\"{}\"]}},",
                next(1000),
                next(100_000),
                tags[next(6) as usize]
            )
            .as_bytes(),
        );
        id += 1;
    }
    out.truncate(len);
    out
}

/// A variant under test: a name and one body's work.
type Variant<'a> = (&'a str, Box<dyn FnMut() + 'a>);

/// Runs the variants round-robin, one body each per round, so that noise from other
/// processes on the machine hits them alike (each body then starts with caches holding the
/// other variants' tables); with `sequential`, each variant's bodies back to back (caches
/// warm with its own tables, noise less even). Returns per variant the median µs per body,
/// and bytes and allocations per body (counted in a separate pass).
fn measure(
    iterations: usize,
    sequential: bool,
    variants: &mut [Variant<'_>],
) -> Vec<(f64, f64, f64)> {
    let mut counts = Vec::new();
    for (_, body) in variants.iter_mut() {
        for _ in 0..iterations.div_ceil(10).max(3) {
            body(); // warm-up: fills the pool, settles malloc's thresholds
        }
        let before = alloc::total();
        let n = iterations.div_ceil(10).max(3);
        for _ in 0..n {
            body();
        }
        let made = alloc::total().since(before);
        let allocs = made.allocations as f64 / n as f64;
        let bytes = made.bytes as f64 / n as f64;
        counts.push((bytes, allocs));
    }
    let mut times = vec![Vec::with_capacity(iterations); variants.len()];
    if sequential {
        for ((_, body), times) in variants.iter_mut().zip(&mut times) {
            for _ in 0..iterations {
                let start = Instant::now();
                body();
                times.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
    } else {
        for _ in 0..iterations {
            for ((_, body), times) in variants.iter_mut().zip(&mut times) {
                let start = Instant::now();
                body();
                times.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
    }
    times
        .into_iter()
        .zip(counts)
        .map(|(mut times, (bytes, allocs))| {
            times.sort_by(f64::total_cmp);
            (times[times.len() / 2], bytes, allocs)
        })
        .collect()
}

/// tower-http's way: a new `BrotliEncoderStateStruct<StandardAlloc>` per body, streamed.
fn fresh_encode(input: &[u8], out: &mut Vec<u8>, size_hint: bool) {
    let mut enc = BrotliEncoderStateStruct::new(StandardAlloc::default());
    enc.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_QUALITY, 4);
    enc.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_LGWIN, 22);
    if size_hint {
        enc.set_parameter(
            BrotliEncoderParameter::BROTLI_PARAM_SIZE_HINT,
            input.len() as u32,
        );
    }
    out.clear();
    let mut buf = [0u8; 16 * 1024];
    for (op, data) in [
        (BrotliEncoderOperation::BROTLI_OPERATION_PROCESS, input),
        (BrotliEncoderOperation::BROTLI_OPERATION_FINISH, &[][..]),
    ] {
        let (mut avail_in, mut in_off) = (data.len(), 0);
        loop {
            let (mut avail_out, mut out_off, mut total) = (buf.len(), 0, None);
            assert!(enc.compress_stream(
                op,
                &mut avail_in,
                data,
                &mut in_off,
                &mut avail_out,
                &mut buf,
                &mut out_off,
                &mut total,
                &mut |_, _, _, _| ()
            ));
            out.extend_from_slice(&buf[..out_off]);
            let done = match op {
                BrotliEncoderOperation::BROTLI_OPERATION_FINISH => enc.is_finished(),
                _ => avail_in == 0 && !enc.has_more_output(),
            };
            if done {
                break;
            }
        }
    }
    brotli::enc::encode::BrotliEncoderDestroyInstance(&mut enc);
}

/// A new `BrotliState<StandardAlloc>` per body, output through a 16 KiB buffer.
fn fresh_decode(wire: &[u8], out: &mut Vec<u8>) {
    let mut state = BrotliState::new(
        StandardAlloc::default(),
        StandardAlloc::default(),
        StandardAlloc::default(),
    );
    out.clear();
    let mut buf = [0u8; 16 * 1024];
    let (mut avail_in, mut in_off) = (wire.len(), 0);
    loop {
        let (mut avail_out, mut out_off, mut total) = (buf.len(), 0, 0);
        let result = BrotliDecompressStream(
            &mut avail_in,
            &mut in_off,
            wire,
            &mut avail_out,
            &mut out_off,
            &mut buf,
            &mut total,
            &mut state,
        );
        out.extend_from_slice(&buf[..out_off]);
        match result {
            BrotliResult::ResultSuccess => break,
            BrotliResult::NeedsMoreOutput => {}
            other => panic!("decode failed: {}", other as i32),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sequential = args.iter().any(|a| a == "sequential");
    let scale: f64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(1.0);
    let pool = CodecPool::new();
    let mode = if sequential {
        "sequential"
    } else {
        "interleaved"
    };
    println!(
        "br quality 4, window 22; median µs per body ({mode}), bytes and allocations per body"
    );
    println!(
        "| body | variant | µs/body | bytes allocated | allocations | output |\n|---|---|---|---|---|---|"
    );
    for (label, size, iterations) in [
        ("1 KiB", 1024, 4000),
        ("4 KiB", 4096, 2000),
        ("16 KiB", 16 * 1024, 1000),
        ("256 KiB", 256 * 1024, 100),
    ] {
        let iterations = ((iterations as f64 * scale) as usize).max(5);
        body_case(label, size, iterations, sequential, &pool);
    }
    let stats = pool.stats();
    println!(
        "\npool: br_compressors {:?}\n      br_decompressors {:?}",
        stats.kind(tower_gzip::pool::PoolKind::BrCompressors),
        stats.kind(tower_gzip::pool::PoolKind::BrDecompressors)
    );
}

/// Each variant's output, in the order of [`variants`].
struct Outputs {
    fresh: RefCell<Vec<u8>>,
    fresh_hint: RefCell<Vec<u8>>,
    pooled: RefCell<BytesMut>,
    one_shot: RefCell<BytesMut>,
    fresh_decoded: RefCell<Vec<u8>>,
    pooled_decoded: RefCell<BytesMut>,
}

impl Outputs {
    fn new(size: usize) -> Self {
        Outputs {
            fresh: RefCell::new(Vec::with_capacity(size)),
            fresh_hint: RefCell::new(Vec::with_capacity(size)),
            pooled: RefCell::new(BytesMut::with_capacity(size)),
            one_shot: RefCell::new(BytesMut::with_capacity(size)),
            fresh_decoded: RefCell::new(Vec::with_capacity(size)),
            pooled_decoded: RefCell::new(BytesMut::with_capacity(size)),
        }
    }

    fn lens(&self) -> [usize; 6] {
        [
            self.fresh.borrow().len(),
            self.fresh_hint.borrow().len(),
            self.pooled.borrow().len(),
            self.one_shot.borrow().len(),
            self.fresh_decoded.borrow().len(),
            self.pooled_decoded.borrow().len(),
        ]
    }
}

/// Measures every variant on one body size, prints its rows and checks the outputs.
fn body_case(label: &str, size: usize, iterations: usize, sequential: bool, pool: &CodecPool) {
    let input = json(size);
    let mut wire = BytesMut::new();
    OneShot::new(ContentCoding::Br)
        .pool(pool)
        .encode(&input, &mut wire)
        .unwrap();
    let wire = wire.to_vec();
    let outputs = Outputs::new(size);
    let mut variants = variants(&input, &wire, pool, &outputs);
    let results = measure(iterations, sequential, &mut variants);
    let names: Vec<String> = variants.iter().map(|(name, _)| name.to_string()).collect();
    drop(variants);
    for ((name, (us, bytes, allocs)), len) in names.iter().zip(results).zip(outputs.lens()) {
        println!("| {label} | {name} | {us:.1} | {bytes:.0} | {allocs:.1} | {len} |");
    }
    // Same parameters, same bytes; and both decoders give the input back.
    assert_eq!(&outputs.fresh.borrow()[..], &outputs.pooled.borrow()[..]);
    assert_eq!(
        &outputs.fresh_hint.borrow()[..],
        &outputs.one_shot.borrow()[..]
    );
    assert_eq!(&outputs.fresh_decoded.borrow()[..], &input[..]);
    assert_eq!(&outputs.pooled_decoded.borrow()[..], &input[..]);
}

/// The encoders and decoders compared, fresh against pooled.
fn variants<'a>(
    input: &'a [u8],
    wire: &'a [u8],
    pool: &'a CodecPool,
    outputs: &'a Outputs,
) -> Vec<Variant<'a>> {
    vec![
        (
            "encode: fresh StandardAlloc, streamed (tower-http)",
            Box::new(|| fresh_encode(black_box(input), &mut outputs.fresh.borrow_mut(), false)),
        ),
        (
            "encode: fresh StandardAlloc, size hint",
            Box::new(|| fresh_encode(black_box(input), &mut outputs.fresh_hint.borrow_mut(), true)),
        ),
        (
            "encode: pooled Encoder, streamed",
            Box::new(|| {
                let mut out = outputs.pooled.borrow_mut();
                out.clear();
                let mut encoder =
                    Encoder::for_coding(ContentCoding::Br, CompressionLevel::Default, None, pool)
                        .unwrap();
                encoder.encode(black_box(input), &mut out).unwrap();
                encoder.finish(&mut out).unwrap();
            }),
        ),
        (
            "encode: pooled OneShot (size hint)",
            Box::new(|| {
                let mut out = outputs.one_shot.borrow_mut();
                out.clear();
                OneShot::new(ContentCoding::Br)
                    .pool(pool)
                    .encode(black_box(input), &mut out)
                    .unwrap();
            }),
        ),
        (
            "decode: fresh StandardAlloc",
            Box::new(|| fresh_decode(black_box(wire), &mut outputs.fresh_decoded.borrow_mut())),
        ),
        (
            "decode: pooled Decoder",
            Box::new(|| pooled_decode(wire, pool, &mut outputs.pooled_decoded.borrow_mut())),
        ),
    ]
}

/// A pooled `Decoder` per body.
fn pooled_decode(wire: &[u8], pool: &CodecPool, out: &mut BytesMut) {
    out.clear();
    let mut decoder = Decoder::for_coding(ContentCoding::Br, None, pool).unwrap();
    let mut rest = black_box(wire);
    while !rest.is_empty() || decoder.has_pending_output() {
        let consumed = decoder.decode(rest, out, 1 << 20).unwrap();
        rest = &rest[consumed..];
    }
    decoder.finish().unwrap();
}
