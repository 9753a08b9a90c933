//! The memory of the digested zstd dictionaries (`Dictionary::prepared_size`) for a 4, 16
//! and 32 KiB trained dictionary, after `dcz` responses at levels 1, 3, 9 and 19 (one
//! digested dictionary per level used): the figures in `Dictionary::prepared_size`'s docs.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin dict_prepared_size
//! ```

use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::OneShot;
use tower_gzip::{CodecPool, CompressionLevel};
use tower_gzip_support::samples::train;

use dict_samples::{dictionary, json_samples};
use tower_gzip_bench::dict_samples;

fn main() {
    let pool = CodecPool::new();
    for size in [4 << 10, 16 << 10, 32 << 10] {
        let dict = dictionary(train(&json_samples(2000, 21), size).unwrap());
        for level in [1, 3, 9, 19] {
            OneShot::new(ContentCoding::Dcz)
                .dictionary(&dict)
                .level(CompressionLevel::Precise(level))
                .pool(&pool)
                .encode(b"x", &mut BytesMut::new())
                .unwrap();
            println!(
                "{} KiB dictionary, level {level}: {} bytes of CDicts so far",
                size >> 10,
                dict.prepared_size()
            );
        }
    }
}
