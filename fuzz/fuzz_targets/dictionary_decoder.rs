//! The `dcz` and `dcb` decoders on arbitrary bodies behind a valid header (or none).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tower_gzip_fuzz::dictionary::check_decoder(data));
