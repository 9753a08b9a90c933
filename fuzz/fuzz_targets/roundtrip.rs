//! Random data in random frames through `CompressionLayer` and back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tower_gzip_fuzz::props::check_roundtrip(data));
