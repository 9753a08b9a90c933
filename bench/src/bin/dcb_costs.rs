//! Where a `dcb` response's time goes: a new brotli encoder, the same with the dictionary
//! loaded into it (`set_custom_dictionary`, which hashes it), and a whole `dcb` response
//! (`OneShot` with a dictionary, quality 5), for a 4 KiB and a 32 KiB trained dictionary; the mean of 200
//! runs each. The `brotli` crate has no shared prepared dictionary, so `dcb` pays the
//! loading on every response (BENCHMARKS.md, "What dictionaries buy on small API JSON").
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin dcb_costs
//! ```

use brotli::enc::encode::{BrotliEncoderParameter as P, BrotliEncoderStateStruct};
use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::OneShot;
use tower_gzip_support::samples::train;

use dict_samples::{dictionary, json_samples};
use tower_gzip_bench::dict_samples;

fn main() {
    let body = json_samples(1, 5).concat();
    for size in [4 << 10, 32 << 10] {
        let dict = dictionary(train(&json_samples(2000, 21), size).unwrap());
        let time = |f: &dyn Fn()| {
            let started = std::time::Instant::now();
            for _ in 0..200 {
                f();
            }
            started.elapsed().as_secs_f64() * 1e6 / 200.0
        };
        let fresh = time(&|| {
            let mut core = BrotliEncoderStateStruct::new(brotli::enc::StandardAlloc::default());
            core.set_parameter(P::BROTLI_PARAM_QUALITY, 5);
            core.set_parameter(P::BROTLI_PARAM_LGWIN, 22);
            std::hint::black_box(&mut core);
        });
        let with_dict = time(&|| {
            let mut core = BrotliEncoderStateStruct::new(brotli::enc::StandardAlloc::default());
            core.set_parameter(P::BROTLI_PARAM_QUALITY, 5);
            core.set_parameter(P::BROTLI_PARAM_LGWIN, 22);
            core.set_custom_dictionary(dict.bytes().len(), dict.bytes());
            std::hint::black_box(&mut core);
        });
        let whole = time(&|| {
            let mut out = BytesMut::new();
            OneShot::new(ContentCoding::Dcb)
                .dictionary(&dict)
                .encode(&body, &mut out)
                .unwrap();
        });
        println!(
            "{} KiB dictionary, {} B body: new encoder {fresh:.1} µs, + dictionary {with_dict:.1} µs, whole dcb {whole:.1} µs",
            size >> 10,
            body.len()
        );
    }
}
