//! `tower_gzip::codec::Decoder` on arbitrary or mangled input, split anywhere.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tower_gzip_fuzz::props::check_decoder(data));
