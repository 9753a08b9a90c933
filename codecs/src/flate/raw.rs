//! Raw deflate by message, for protocols that frame deflate themselves (WebSocket's
//! permessage-deflate, RFC 7692): a pooled compressor with a chosen window that ends each
//! message with a sync flush, and a pooled inflater whose output is bounded while it
//! inflates. Both can be primed with a dictionary (the last window of a connection's
//! history), which is how a connection with context takeover holds no codec state between
//! messages.
//!
//! Window 15 compressors are the ones the gzip and deflate encoders draw (same shelf, same
//! level tags); smaller windows get their own kind, tagged by window, because a state made
//! for one window cannot serve another. Inflaters are always window 15: a raw inflater with
//! a 32 KiB window decodes any stream made with a smaller one, and zlib-rs allocates its
//! 32 KiB window whatever `windowBits` says.

use bytes::BytesMut;
use flate2::{Compress, Compression, Decompress, FlushCompress, Status};

use super::{compress_into, decompress_into, deflate_bound};
use crate::pool::{CodecPool, Level, Pooled, PooledState};
use crate::{DecodeError, DecodeErrorKind, EncodeError};

/// The empty stored block a sync flush ends with; RFC 7692 section 7.2.1 strips it from
/// each message and section 7.2.2 appends it back before inflating.
pub const SYNC_MARKER: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// The windows raw deflate takes: zlib (and zlib-rs) refuse 8 for raw streams.
pub const WINDOW_BITS: std::ops::RangeInclusive<u8> = 9..=15;

/// A raw deflate compressor with a window below 32 KiB, on its own shelf, tagged by window.
pub(crate) struct SmallWindowCompress(Compress);

impl PooledState for SmallWindowCompress {
    const KIND: crate::pool::Kind = crate::pool::PoolKind::SmallWindowCompressors.kind();

    fn reset(&mut self) -> bool {
        self.0.reset();
        true
    }
}

/// The drawn compressor: window 15 from the shared deflate shelf, or a small window.
enum Drawn {
    Full(Pooled<Compress>),
    Small(Pooled<SmallWindowCompress>),
}

/// A pooled raw deflate compressor for one message; back to the pool, reset, on drop.
pub struct RawDeflate {
    state: Drawn,
}

impl std::fmt::Debug for RawDeflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawDeflate").finish_non_exhaustive()
    }
}

impl RawDeflate {
    /// Draws a compressor at `level` (1-9) and `window_bits` (9-15), primed with the last
    /// `2^window_bits` bytes of `dictionary` (the history the peer's inflater holds).
    pub fn draw(
        pool: &CodecPool,
        level: u8,
        window_bits: u8,
        dictionary: &[u8],
    ) -> Result<Self, EncodeError> {
        let level = level.clamp(1, 9);
        let bits = window_bits.clamp(*WINDOW_BITS.start(), *WINDOW_BITS.end());
        let state = if bits == 15 {
            let tag = Level::new(level);
            Drawn::Full(pool.take(tag, || {
                Compress::new(Compression::new(u32::from(level)), false)
            }))
        } else {
            // Tagged by window: the level is set on each draw (a reset state takes a new
            // level at no cost).
            let mut small = pool.take(Level::new(bits), || {
                SmallWindowCompress(Compress::new_with_window_bits(
                    Compression::new(u32::from(level)),
                    false,
                    bits,
                ))
            });
            small
                .0
                .set_level(Compression::new(u32::from(level)))
                .map_err(|e| EncodeError::new(format!("deflate level: {e}")))?;
            Drawn::Small(small)
        };
        let mut deflate = RawDeflate { state };
        if !dictionary.is_empty() {
            let keep = dictionary.len().min(1 << bits);
            deflate
                .compress()
                .set_dictionary(&dictionary[dictionary.len() - keep..])
                .map_err(|e| EncodeError::new(format!("deflate dictionary: {e}")))?;
        }
        Ok(deflate)
    }

    fn compress(&mut self) -> &mut Compress {
        match &mut self.state {
            Drawn::Full(state) => state,
            Drawn::Small(state) => &mut state.0,
        }
    }

    /// Compresses `input` and ends with a sync flush, appending to `out`: everything so far
    /// is decodable, and the output ends with [`SYNC_MARKER`].
    pub fn sync_flush(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        let mut input = input;
        loop {
            let room = deflate_bound(input.len()).max(64);
            let step = compress_into(self.compress(), input, out, room, FlushCompress::Sync);
            input = &input[step.consumed..];
            let status = step.status.map_err(|e| EncodeError::new(e.to_string()))?;
            // Done when all input is in and the flush left spare room (nothing pending).
            if input.is_empty() && step.produced < room {
                return Ok(());
            }
            if step.consumed == 0 && step.produced == 0 {
                return Err(EncodeError::new(format!(
                    "deflate made no progress ({status:?})"
                )));
            }
        }
    }
}

/// Removes a trailing [`SYNC_MARKER`] from `out[from..]`; `false` when there is none.
pub fn strip_sync_marker(out: &mut BytesMut, from: usize) -> bool {
    if out.len() >= from + SYNC_MARKER.len() && out.ends_with(&SYNC_MARKER) {
        out.truncate(out.len() - SYNC_MARKER.len());
        true
    } else {
        false
    }
}

/// What one inflate call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inflated {
    /// Input bytes taken.
    pub consumed: usize,
    /// Bytes appended to the output.
    pub produced: usize,
    /// The deflate data ended (a final block); nothing after it is deflate.
    pub ended: bool,
}

/// A pooled raw inflater for one message (a window-15 state from the shared shelf).
pub struct RawInflate {
    state: Pooled<Decompress>,
}

impl std::fmt::Debug for RawInflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawInflate").finish_non_exhaustive()
    }
}

impl RawInflate {
    /// Draws an inflater primed with `dictionary` (empty: none).
    pub fn draw(pool: &CodecPool, dictionary: &[u8]) -> Result<Self, DecodeError> {
        let mut state = pool.take(Level::NONE, || Decompress::new(false));
        if !dictionary.is_empty() {
            let keep = dictionary.len().min(1 << 15);
            state
                .set_dictionary(&dictionary[dictionary.len() - keep..])
                .map_err(|_| {
                    DecodeError::new(DecodeErrorKind::CorruptData, "inflate dictionary")
                })?;
        }
        Ok(RawInflate { state })
    }

    /// Inflates from `input` into at most `room` more bytes of `out`. The caller bounds
    /// `room` by what it still allows, so a bomb stops here, at the limit, instead of
    /// growing `out`.
    pub fn inflate(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        room: usize,
    ) -> Result<Inflated, DecodeError> {
        let step = decompress_into(&mut self.state, input, out, room);
        let status = step
            .status
            .map_err(|_| DecodeError::new(DecodeErrorKind::CorruptData, "invalid deflate data"))?;
        Ok(Inflated {
            consumed: step.consumed,
            produced: step.produced,
            ended: status == Status::StreamEnd,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| b"websocket message "[i % 18] ^ (i / 97) as u8)
            .collect()
    }

    fn inflate_all(pool: &CodecPool, dict: &[u8], wire: &[u8]) -> Vec<u8> {
        let mut inflate = RawInflate::draw(pool, dict).unwrap();
        let mut input = wire.to_vec();
        input.extend_from_slice(&SYNC_MARKER);
        let mut out = BytesMut::new();
        let mut at = 0;
        loop {
            let step = inflate.inflate(&input[at..], &mut out, 4096).unwrap();
            at += step.consumed;
            if at == input.len() && step.produced < 4096 {
                return out.to_vec();
            }
        }
    }

    #[test]
    fn every_window_round_trips_with_and_without_a_dictionary() {
        let pool = CodecPool::new();
        let dict = text(40_000);
        for bits in WINDOW_BITS {
            for dictionary in [&[][..], &dict[..]] {
                let message = text(10_000);
                let mut deflate = RawDeflate::draw(&pool, 6, bits, dictionary).unwrap();
                let mut wire = BytesMut::new();
                deflate.sync_flush(&message, &mut wire).unwrap();
                assert!(strip_sync_marker(&mut wire, 0));
                assert!(wire.len() < message.len() / 2, "bits {bits}");
                let window = &dictionary[dictionary.len().saturating_sub(1 << bits)..];
                assert_eq!(inflate_all(&pool, window, &wire), message, "bits {bits}");
            }
        }
    }

    #[test]
    fn a_primed_window_shrinks_a_repeated_message() {
        let pool = CodecPool::new();
        let message = text(3000);
        let sizes: Vec<usize> = [&[][..], &message[..]]
            .iter()
            .map(|dict| {
                let mut deflate = RawDeflate::draw(&pool, 6, 12, dict).unwrap();
                let mut wire = BytesMut::new();
                deflate.sync_flush(&message, &mut wire).unwrap();
                wire.len()
            })
            .collect();
        assert!(sizes[1] * 4 < sizes[0], "{sizes:?}");
    }

    #[test]
    fn inflate_stops_at_its_room() {
        let pool = CodecPool::new();
        let zeros = vec![0u8; 1 << 20];
        let mut deflate = RawDeflate::draw(&pool, 6, 15, &[]).unwrap();
        let mut wire = BytesMut::new();
        deflate.sync_flush(&zeros, &mut wire).unwrap();
        let mut inflate = RawInflate::draw(&pool, &[]).unwrap();
        let mut out = BytesMut::new();
        let step = inflate.inflate(&wire, &mut out, 1000).unwrap();
        assert_eq!(step.produced, 1000);
        assert_eq!(out.len(), 1000);
    }
}
