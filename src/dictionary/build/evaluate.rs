//! Compressing the held-out samples: bytes (deterministic) and time (reported only).

use std::time::Instant;

use bytes::BytesMut;

use crate::codec::DictionaryError;
use crate::codec::{EncodeError, OneShot};
use crate::dictionary::Dictionary;
use crate::pool::CodecPool;
use crate::{CompressionLevel, ContentCoding};

/// What one coding at one level did on the held-out samples.
#[derive(Clone, Copy, Debug)]
pub(super) struct Measured {
    /// Their compressed bytes, headers included.
    pub(super) bytes: usize,
    /// Microseconds per response, from one timed pass after a warm-up response.
    pub(super) micros: f64,
}

/// `coding` at `level` over `held_out`, with `dictionary` for `dcz` and `dcb`.
pub(super) fn measure(
    held_out: &[&[u8]],
    coding: ContentCoding,
    level: i32,
    dictionary: Option<&Dictionary>,
    pool: &CodecPool,
) -> Result<Measured, DictionaryError> {
    let level_of = CompressionLevel::Precise(level);
    let encode = |input: &[u8], out: &mut BytesMut| -> Result<(), EncodeError> {
        let one_shot = OneShot::new(coding).level(level_of).pool(pool);
        match dictionary {
            Some(dictionary) => one_shot.dictionary(dictionary).encode(input, out),
            None => one_shot.encode(input, out),
        }
    };
    let failed =
        |e: EncodeError| DictionaryError::Training(format!("{} {level}: {e}", coding.as_str()));
    let mut out = BytesMut::new();
    // The first response digests the dictionary for the level (zstd) and fills the pool.
    if let Some(first) = held_out.first() {
        encode(first, &mut out).map_err(failed)?;
    }
    let started = Instant::now();
    let mut bytes = 0;
    for sample in held_out {
        out.clear();
        encode(sample, &mut out).map_err(failed)?;
        bytes += out.len();
    }
    let micros = started.elapsed().as_secs_f64() * 1e6 / held_out.len().max(1) as f64;
    Ok(Measured { bytes, micros })
}
