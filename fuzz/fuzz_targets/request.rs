//! Arbitrary gzip, deflate, zstd and br request bodies through `RequestDecompressionLayer`
//! with small limits.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tower_gzip_fuzz::props::check_request(data));
