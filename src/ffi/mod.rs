//! All of the crate's `unsafe` code, and only here (the crate root denies `unsafe_code`
//! elsewhere): writing codec output into a `BytesMut`'s spare capacity without zero-filling
//! it first, and the few libzstd calls `zstd-safe` does not wrap. Each block says why it is
//! sound; what it offers the rest of the crate is safe to call.

use bytes::BytesMut;
use flate2::{
    Compress, CompressError, Decompress, DecompressError, FlushCompress, FlushDecompress, Status,
};
#[cfg(feature = "zstd")]
use zstd_safe::WriteBuf;
#[cfg(feature = "zstd")]
use zstd_safe::zstd_sys::{self, ZSTD_ErrorCode};

#[cfg(test)]
mod tests;
#[cfg(feature = "dcz")]
pub(crate) mod zstd_raw;

/// Bytes consumed and produced by one deflate or inflate call, and its status.
pub(crate) struct Step<S, E> {
    pub(crate) consumed: usize,
    pub(crate) produced: usize,
    pub(crate) status: Result<S, E>,
}

/// One `compress` call writing into `room` bytes of `out`'s spare capacity (reserved here,
/// never zero-filled); `out` grows by the bytes produced.
pub(crate) fn compress_into(
    deflate: &mut Compress,
    input: &[u8],
    out: &mut BytesMut,
    room: usize,
    flush: FlushCompress,
) -> Step<Status, CompressError> {
    into_spare(deflate, out, room, |deflate, spare| {
        deflate.compress_uninit(input, spare, flush)
    })
}

/// One `decompress` call writing into `room` bytes of `out`'s spare capacity (reserved here,
/// never zero-filled); `out` grows by the bytes produced.
///
/// Not zero-filling matters: a body of many tiny gzip members would otherwise pay for
/// clearing a whole output buffer per member, an amplification a peer could exploit.
pub(crate) fn decompress_into(
    inflate: &mut Decompress,
    input: &[u8],
    out: &mut BytesMut,
    room: usize,
) -> Step<Status, DecompressError> {
    into_spare(inflate, out, room, |inflate, spare| {
        inflate.decompress_uninit(input, spare, FlushDecompress::None)
    })
}

/// A flate2 stream's byte counters: (input taken, output written) since its last reset.
trait Totals {
    fn totals(&self) -> (u64, u64);
}

impl Totals for Compress {
    fn totals(&self) -> (u64, u64) {
        (self.total_in(), self.total_out())
    }
}

impl Totals for Decompress {
    fn totals(&self) -> (u64, u64) {
        (self.total_in(), self.total_out())
    }
}

/// Runs `call`, one of flate2's `*_uninit` calls on `stream`, on `room` bytes of `out`'s
/// spare capacity, and grows `out` by what it wrote. Private: its soundness rests on `call`
/// being such a call (the two functions above), which counts what it writes in `total_out`.
fn into_spare<T: Totals, S, E>(
    stream: &mut T,
    out: &mut BytesMut,
    room: usize,
    call: impl FnOnce(&mut T, &mut [std::mem::MaybeUninit<u8>]) -> Result<S, E>,
) -> Step<S, E> {
    out.reserve(room);
    let (in_before, out_before) = stream.totals();
    let status = call(stream, &mut out.spare_capacity_mut()[..room]);
    let (in_after, out_after) = stream.totals();
    let produced = (out_after - out_before) as usize;
    assert!(produced <= room, "flate2 wrote past its output buffer");
    // SAFETY: flate2's `*_uninit` calls write their output from the start of the slice they
    // are given and count it in `total_out`, so the first `produced` bytes of the spare
    // capacity are initialized; the assert above keeps `set_len` within the capacity
    // reserved. The tests in `ffi::tests` and the codec round-trip property tests compare
    // every byte written this way.
    unsafe { out.set_len(out.len() + produced) };
    Step {
        consumed: (in_after - in_before) as usize,
        produced,
        status,
    }
}

/// The kind of a libzstd error code (one that `ZSTD_isError` reports).
#[cfg(feature = "zstd")]
pub(crate) fn error_code(code: usize) -> ZSTD_ErrorCode {
    // SAFETY: ZSTD_getErrorCode only reads the integer it is given.
    unsafe { zstd_sys::ZSTD_getErrorCode(code) }
}

/// `out`'s spare capacity as a zstd output buffer: zstd writes after `out.len()` without the
/// capacity being zero-filled first, and at most the room given. The fields stay private
/// here: code that could shrink `out` under it would break the `WriteBuf` promise.
#[cfg(feature = "zstd")]
pub(crate) struct Spare<'a> {
    out: &'a mut BytesMut,
    /// `out.len()` plus the room this call may fill.
    end: usize,
}

#[cfg(feature = "zstd")]
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

#[cfg(feature = "zstd")]
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
