//! The unsafe parts of the zstd codec: writing into a `BytesMut`'s spare capacity, and
//! reading an error code's kind.

use bytes::BytesMut;
use zstd_safe::WriteBuf;
use zstd_safe::zstd_sys::{self, ZSTD_ErrorCode};

/// The kind of a libzstd error code (one that `ZSTD_isError` reports).
pub(crate) fn error_code(code: usize) -> ZSTD_ErrorCode {
    // SAFETY: ZSTD_getErrorCode only reads the integer it is given.
    unsafe { zstd_sys::ZSTD_getErrorCode(code) }
}

/// `out`'s spare capacity as a zstd output buffer: zstd writes after `out.len()` without the
/// capacity being zero-filled first, and at most the room given. The fields stay private
/// here: code that could shrink `out` under it would break the `WriteBuf` promise.
pub(crate) struct Spare<'a> {
    out: &'a mut BytesMut,
    /// `out.len()` plus the room this call may fill.
    end: usize,
}

// SAFETY: `as_slice` covers exactly the initialized bytes (`out[..len]`); `capacity` (`end`)
// never exceeds the BytesMut's allocated capacity (checked in `Spare::new`), so every byte
// zstd may write through `as_mut_ptr` lies inside the allocation; and `filled_until(n)` is
// only called by zstd-safe after zstd reports writing up to `n`, so `set_len(n)` exposes only
// initialized bytes. The round-trip tests compare every byte written this way.
unsafe impl WriteBuf for Spare<'_> {
    fn as_slice(&self) -> &[u8] {
        &self.out[..]
    }

    fn capacity(&self) -> usize {
        self.end
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.out.as_mut_ptr()
    }

    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: see the impl's comment: zstd initialized the first `n` bytes.
        unsafe { self.out.set_len(n) };
    }
}

impl<'a> Spare<'a> {
    /// Room for `room` more bytes in `out`, reserved (never zero-filled).
    pub(crate) fn new(out: &'a mut BytesMut, room: usize) -> Self {
        out.reserve(room);
        let end = out.len() + room;
        assert!(end <= out.capacity());
        Spare { out, end }
    }

    /// Where zstd starts writing: `out.len()` when made.
    pub(crate) fn start(&self) -> usize {
        self.out.len()
    }
}
