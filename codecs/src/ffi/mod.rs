//! All of the crate's `unsafe` code, and only here (the crate root denies `unsafe_code`
//! elsewhere): writing codec output into a `BytesMut`'s spare capacity without zero-filling
//! it first, the few libzstd calls `zstd-safe` does not wrap, and Google's C brotli. Each block says why it is
//! sound; what it offers the rest of the crate is safe to call.

use bytes::BytesMut;
use flate2::{
    Compress, CompressError, Decompress, DecompressError, FlushCompress, FlushDecompress, Status,
};

// Google's brotli, for `dcb`. Its items are `pub` because the workspace's brotli bench
// compiles this folder into itself (`#[path]`) to measure the wrapper; the crate exports none.
#[cfg(feature = "dcb")]
#[allow(unreachable_pub)]
pub(crate) mod brotli_c;
#[cfg(test)]
mod tests;
#[cfg(feature = "zstd")]
mod zstd;
#[cfg(feature = "dcz")]
pub(crate) mod zstd_raw;

#[cfg(feature = "zstd")]
pub(crate) use zstd::{Spare, error_code};

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
