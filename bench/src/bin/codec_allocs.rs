//! Time, bytes and allocations per operation of gzip compress/decompress, fresh state vs a
//! warm pool, in the shape of the Go seed's benchmark (a 50-byte random message), plus
//! 1 KiB of JSON.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin codec_allocs
//! ```
//!
//! A counting global allocator wraps the system one. The goal checked here: a pooled
//! compress or decompress of the 50-byte message makes at most one allocation (the output
//! buffer), and pooled is faster than fresh. Exits non-zero if the allocation goal fails.

use tower_gzip_support::bench as support;

use std::hint::black_box;
use std::time::Instant;

use tower_gzip::{CodecPool, CompressionLevel};

use support::random_message;
use tower_gzip_bench::gzip::{gunzip, gzip};

use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();

fn json_payload(len: usize) -> Vec<u8> {
    let mut s = String::from("[");
    let mut i = 0u64;
    while s.len() < len {
        s.push_str(&format!(
            "{{\"id\":{i},\"name\":\"user-{}\",\"email\":\"u{}@example.com\",\"active\":{}}},",
            i * 7919 % 10_007,
            i * 104_729 % 100_003,
            i % 3 == 0
        ));
        i += 1;
    }
    s.truncate(len);
    s.into_bytes()
}

/// Per-operation cost: median ns over the rounds, and the bytes and allocations per op.
struct Cost {
    ns: f64,
    bytes: f64,
    allocs: f64,
}

/// Measures two operations in alternating rounds, so that load from other processes falls
/// on both alike.
fn measure_pair(iters: u32, rounds: usize, mut ops: [&mut dyn FnMut(); 2]) -> [Cost; 2] {
    let mut times = [Vec::new(), Vec::new()];
    let mut counts = [(0, 0); 2];
    for op in ops.iter_mut() {
        for _ in 0..iters / 10 + 1 {
            op(); // warm up (and fill the pool)
        }
    }
    for _ in 0..rounds {
        for (i, op) in ops.iter_mut().enumerate() {
            let before = alloc::total();
            let start = Instant::now();
            for _ in 0..iters {
                op();
            }
            let elapsed = start.elapsed();
            let made = alloc::total().since(before);
            counts[i] = (made.allocations, made.bytes);
            times[i].push(elapsed.as_nanos() as f64 / f64::from(iters));
        }
    }
    [0, 1].map(|i| {
        times[i].sort_by(f64::total_cmp);
        Cost {
            ns: times[i][rounds / 2],
            allocs: counts[i].0 as f64 / f64::from(iters),
            bytes: counts[i].1 as f64 / f64::from(iters),
        }
    })
}

fn main() {
    let fresh = CodecPool::builder().max_idle(0).build();
    let pooled = CodecPool::new();
    let mut failures = Vec::new();

    println!(
        "{:<34} {:>12} {:>12} {:>10}",
        "gzip level 6", "ns/op", "B/op", "allocs/op"
    );
    for (label, data, iters) in [
        ("50 B random", random_message(50), 20_000),
        ("1 KiB JSON", json_payload(1024), 5_000),
    ] {
        let costs = payload_costs(&fresh, &pooled, &data, iters);
        failures.extend(report(label, &costs));
    }
    println!();
    println!("Go seed (OpenIM PR #1321), 50-byte message, ns/op B/op allocs/op:");
    println!("  compress   158,260 814,115 20 -> pooled 19,790 240 3");
    println!("  decompress   8,135  41,749  7 -> pooled  1,674 565 2");

    if !failures.is_empty() {
        for failure in &failures {
            eprintln!("FAIL: {failure}");
        }
        std::process::exit(1);
    }
}

/// (operation, fresh or pooled, its cost).
type Costs = [(&'static str, &'static str, Cost); 4];

/// Compressing and decompressing `data`, each with fresh states and pooled ones.
fn payload_costs(fresh: &CodecPool, pooled: &CodecPool, data: &[u8], iters: u32) -> Costs {
    const ROUNDS: usize = 11;
    let wire = gzip(pooled, CompressionLevel::Default, data).freeze();
    assert_eq!(&gunzip(pooled, &wire)[..], data);
    let [compress_fresh, compress_pooled] = measure_pair(
        iters,
        ROUNDS,
        [
            &mut || {
                drop(black_box(gzip(
                    fresh,
                    CompressionLevel::Default,
                    black_box(data),
                )))
            },
            &mut || {
                drop(black_box(gzip(
                    pooled,
                    CompressionLevel::Default,
                    black_box(data),
                )))
            },
        ],
    );
    let [decompress_fresh, decompress_pooled] = measure_pair(
        iters,
        ROUNDS,
        [
            &mut || drop(black_box(gunzip(fresh, black_box(&wire)))),
            &mut || drop(black_box(gunzip(pooled, black_box(&wire)))),
        ],
    );
    [
        ("compress", "fresh", compress_fresh),
        ("compress", "pooled", compress_pooled),
        ("decompress", "fresh", decompress_fresh),
        ("decompress", "pooled", decompress_pooled),
    ]
}

/// Prints the costs and the pooled speedups; the goals missed.
fn report(label: &str, costs: &Costs) -> Vec<String> {
    let mut failures = Vec::new();
    for (op, kind, cost) in costs {
        println!(
            "{:<34} {:>12.0} {:>12.0} {:>10.2}",
            format!("{label}: {op} {kind}"),
            cost.ns,
            cost.bytes,
            cost.allocs
        );
    }
    for pair in costs.chunks(2) {
        let [(op, _, fresh_cost), (_, _, pooled_cost)] = pair else {
            unreachable!("fresh, pooled pairs");
        };
        if pooled_cost.allocs > 1.0 {
            failures.push(format!(
                "{label}: pooled {op} made {:.2} allocations per op (goal: at most 1)",
                pooled_cost.allocs
            ));
        }
        let speedup = fresh_cost.ns / pooled_cost.ns;
        println!(
            "{:<34} {speedup:>11.2}x",
            format!("{label}: {op} pooled speedup")
        );
        if speedup <= 1.0 {
            println!("  warning: pooled {op} was not faster than fresh on this run");
        }
    }
    failures
}
