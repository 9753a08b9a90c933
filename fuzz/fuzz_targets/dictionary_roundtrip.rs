//! `dcz` and `dcb` round trips, one shot and streamed with flushes, decoded in small steps.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tower_gzip_fuzz::dictionary::check_round_trip(data));
