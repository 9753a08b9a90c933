//! Arbitrary bytes from a WebSocket peer, in arbitrary pieces, into the permessage-deflate
//! adapter's read side: it never panics, never hands tungstenite an RSV1 frame or a message
//! past its limit, and fails bad input with a close code (1002, 1007, 1009).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let piece = usize::from(flags >> 3) + 1;
    let limit = 1 << (10 + (flags & 3));
    if let Some(code) = tower_gzip::fuzzing::inbound_frames(rest, piece, flags & 4 != 0, flags & 8 != 0, limit) {
        assert!(matches!(code, 1002 | 1007 | 1009), "close code {code}");
    }
});
