//! Codec benchmarks.
//!
//! - `seed`: the Go seed's benchmark shape (a 50-byte random message), gzip compress and
//!   decompress with a fresh state per operation (a pool with `max_idle(0)`) against a warm
//!   pool.
//! - `codec`: gzip level 6 over synthetic JSON of 1 KiB to 4 MiB: our encoder from a warm
//!   pool, with a fresh state, and flate2's `write::GzEncoder` into a `Vec` (the naive
//!   baseline).
//!
//! `cargo bench -p tower-gzip-bench --bench codec` (add `-- --quick` for a fast pass). Allocation counts per
//! operation: `cargo run --release -p tower-gzip-bench --bin codec_allocs`.

use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

mod support;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tower_gzip::{CodecPool, CompressionLevel};
use tower_gzip_bench::gzip::{gunzip, gzip};

use support::random_message;

/// Synthetic JSON records, `len` bytes long.
fn json_payload(len: usize) -> Vec<u8> {
    let mut s = String::with_capacity(len + 128);
    s.push('[');
    let mut i = 0u64;
    while s.len() < len {
        s.push_str(&format!(
            "{{\"id\":{i},\"name\":\"user-{}\",\"email\":\"u{}@example.com\",\"score\":{}.{},\
             \"active\":{},\"tags\":[\"t{}\",\"t{}\"]}},",
            i * 7919 % 10_007,
            i * 104_729 % 100_003,
            i * 31 % 1000,
            i % 100,
            i % 3 == 0,
            i % 17,
            i % 5
        ));
        i += 1;
    }
    s.truncate(len);
    s.into_bytes()
}

fn seed(c: &mut Criterion) {
    let message = random_message(50);
    let fresh = CodecPool::builder().max_idle(0).build();
    let pooled = CodecPool::new();
    let level = CompressionLevel::Default;
    let wire = gzip(&pooled, level, &message);
    assert_eq!(&gunzip(&pooled, &wire)[..], &message[..]);

    let mut group = c.benchmark_group("seed");
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(message.len() as u64));
    group.bench_function("compress_fresh", |b| {
        b.iter(|| gzip(&fresh, level, black_box(&message)))
    });
    group.bench_function("compress_pooled", |b| {
        b.iter(|| gzip(&pooled, level, black_box(&message)))
    });
    group.bench_function("decompress_fresh", |b| {
        b.iter(|| gunzip(&fresh, black_box(&wire)))
    });
    group.bench_function("decompress_pooled", |b| {
        b.iter(|| gunzip(&pooled, black_box(&wire)))
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    let fresh = CodecPool::builder().max_idle(0).build();
    let pooled = CodecPool::new();
    let level = CompressionLevel::Default;

    let mut group = c.benchmark_group("codec");
    group.measurement_time(Duration::from_secs(3));
    for (label, len) in [
        ("1KiB", 1 << 10),
        ("16KiB", 16 << 10),
        ("256KiB", 256 << 10),
        ("4MiB", 4 << 20),
    ] {
        let data = json_payload(len);
        group.throughput(Throughput::Bytes(len as u64));
        group.sample_size(if len >= 256 << 10 { 20 } else { 50 });
        group.bench_with_input(BenchmarkId::new("pooled", label), &data, |b, data| {
            b.iter(|| gzip(&pooled, level, data))
        });
        group.bench_with_input(BenchmarkId::new("fresh", label), &data, |b, data| {
            b.iter(|| gzip(&fresh, level, data))
        });
        group.bench_with_input(
            BenchmarkId::new("flate2_gz_encoder", label),
            &data,
            |b, data| {
                b.iter(|| {
                    let mut encoder = flate2::write::GzEncoder::new(
                        Vec::new(),
                        flate2::Compression::new(6), // CompressionLevel::Default's gzip level
                    );
                    encoder.write_all(data).expect("write");
                    encoder.finish().expect("finish")
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, seed, codec);
criterion_main!(benches);
