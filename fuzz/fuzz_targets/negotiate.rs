//! Accept-Encoding through `CompressionLayer` and Content-Encoding through
//! `RequestDecompressionLayer`, with arbitrary header values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tower_gzip_fuzz::props::{Input, check_accept_encoding, check_content_encoding};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let which = input.byte();
    let value = input.rest();
    if which & 1 == 0 {
        check_accept_encoding(value);
    } else {
        // The value up to the first NUL is the header; what follows is the body.
        let (value, body) = match value.iter().position(|&b| b == 0) {
            Some(i) => (&value[..i], &value[i + 1..]),
            None => (value, &[][..]),
        };
        check_content_encoding(value, body);
    }
});
