//! Allocations and bytes per dictionary-compressed response: a 1 KiB and a 16 KiB JSON body
//! through `CompressionLayer` as `dcz` and `dcb` (a 16 KiB dictionary trained on other
//! responses of the same API), beside plain `zstd` and `br` from the same layer.
//!
//! ```text
//! cargo run --release --example dict_allocs
//! ```
//!
//! Each case runs 50 warm-up responses, then averages 200. Counted: Rust's allocator (the
//! tests' counting allocator); libzstd's own `malloc` calls are not seen here
//! (`examples/allocs.rs` counts those), and a pooled, warm zstd context makes none. Prints
//! PASS/FAIL for the target "dcz allocates at most plain zstd's + 2 per 1 KiB response";
//! the exit status is 0 either way.

#[path = "../benches/support/mod.rs"]
mod support;

#[path = "../tests/common/alloc.rs"]
mod alloc;

use bytes::Bytes;
use tower::{Layer, service_fn};
use tower_gzip::CodecPool;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::dictionary::{DictCoding, Dictionary, DictionaryStore, UseAsDictionary, train};

use support::{accepting, expect_coding, full_response, json, json_from, respond};

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let samples: Vec<Bytes> = (0..400)
        .map(|k| json_from(1_000_000 + k * 37, 1024 + (k as usize % 7) * 512))
        .collect();
    let dictionary = Dictionary::new(
        train(&samples, 16 * 1024).expect("training"),
        UseAsDictionary::new("/*"),
    )
    .unwrap();
    let store = DictionaryStore::new(1 << 20);
    store.insert(dictionary.clone());
    let offering = |accept: &'static str| {
        let mut req = accepting(accept);
        req.headers_mut()
            .insert("available-dictionary", dictionary.available_dictionary());
        req.headers_mut().insert(
            "sec-fetch-site",
            http::HeaderValue::from_static("same-origin"),
        );
        req
    };
    println!("| body | coding | bytes | of identity | allocations | bytes allocated |");
    println!("|---|---|--:|--:|--:|--:|");
    let mut per_response = std::collections::HashMap::new();
    for size in [1024, 16 * 1024] {
        let payload = json(size);
        for (name, codings) in [
            ("zstd", &[][..]),
            ("dcz", &[DictCoding::Dcz][..]),
            ("br", &[][..]),
            ("dcb", &[DictCoding::Dcb][..]),
        ] {
            let p = payload.clone();
            let svc = CompressionLayer::new()
                .pool(CodecPool::new())
                .dictionaries(store.clone())
                .dictionary_codings(codings)
                .layer(service_fn(move |_| full_response(p.clone())));
            let wire = rt.block_on(expect_coding(&svc, offering(name), name));
            for _ in 0..50 {
                rt.block_on(respond(&svc, offering(name)));
            }
            let before = alloc::total();
            const N: u64 = 200;
            for _ in 0..N {
                std::hint::black_box(rt.block_on(respond(&svc, offering(name))));
            }
            let cost = alloc::total().since(before);
            let allocs = cost.allocations as f64 / N as f64;
            per_response.insert((size, name), allocs);
            println!(
                "| {} KiB | {name} | {wire} | {:.1}% | {allocs:.1} | {:.0} |",
                size / 1024,
                100.0 * wire as f64 / size as f64,
                cost.bytes as f64 / N as f64
            );
        }
    }
    let (dcz, zstd) = (per_response[&(1024, "dcz")], per_response[&(1024, "zstd")]);
    println!(
        "\n{}: dcz {dcz:.1} allocations per 1 KiB response, plain zstd {zstd:.1} (target: at most +2)",
        if dcz <= zstd + 2.0 { "PASS" } else { "FAIL" }
    );
}
