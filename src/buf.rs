//! Input buffers the bodies read from.

use bytes::{Buf, Bytes};

/// Advances `input` past `n` bytes it has been used for, and lets the buffer behind it go
/// once all of it is: an empty view still holds its whole allocation (a producer's chunk,
/// or part of hyper's read buffer), which a body waiting for more input would pin.
pub(crate) fn consume(input: &mut Bytes, n: usize) {
    input.advance(n);
    if input.is_empty() {
        *input = Bytes::new();
    }
}
