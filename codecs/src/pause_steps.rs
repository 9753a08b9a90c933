//! One step of the paused-stream properties (the flate and br encoders run the same ops).

use bytes::BytesMut;

use super::encoding::{Driving, Encode};

/// Encodes `chunk`, then: flushes (`op` 0); pauses (1); pauses while another stream draws a
/// state of the kind, `other_draw` (2); or goes on (3). Returns whether it paused plainly
/// (op 1), for the caller's check of what the encoder holds then.
pub(crate) fn step(
    encoder: &mut Driving<impl Encode>,
    chunk: &[u8],
    op: u8,
    wire: &mut BytesMut,
    plain: &mut Vec<u8>,
    other_draw: impl FnOnce(),
) -> bool {
    encoder.encode(chunk, wire).unwrap();
    plain.extend_from_slice(chunk);
    match op {
        0 => drop(encoder.flush(wire).unwrap()),
        1 | 2 => drop(encoder.idle(wire).unwrap()),
        _ => {}
    }
    if op == 2 {
        other_draw();
    }
    op == 1
}
