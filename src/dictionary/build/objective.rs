//! The builder's objective: what one client downloads, the dictionary included.
//!
//! A dictionary pays for itself only over several responses: a client fetches it once
//! (compressed, as it is served), then every response it gets with it is smaller. For an
//! expected number of responses per client `n`, a candidate's bytes per client are its
//! served size plus `n` times its mean compressed response; its break-even count is the
//! number of responses after which it has sent fewer bytes than the plain coding.

use bytes::BytesMut;

use crate::codec::DictionaryError;
use crate::codec::OneShot;
use crate::pool::CodecPool;
use crate::{CompressionLevel, ContentCoding};

/// The zstd level a dictionary is assumed to be served at: it is fetched once per client
/// and cached, so a deploy compresses it hard (or precompresses it).
pub(super) const SERVED_LEVEL: i32 = 19;

/// The dictionary's bytes as served: zstd at [`SERVED_LEVEL`], without its headers.
pub(super) fn served_len(dictionary: &[u8], pool: &CodecPool) -> Result<usize, DictionaryError> {
    let mut out = BytesMut::with_capacity(dictionary.len() / 4 + 64);
    OneShot::new(ContentCoding::Zstd)
        .level(CompressionLevel::Precise(SERVED_LEVEL))
        .pool(pool)
        .encode(dictionary, &mut out)
        .map_err(|e| DictionaryError::Training(format!("serving the dictionary: {e}")))?;
    Ok(out.len())
}

/// A candidate's bytes per client, scaled by the number of held-out samples so that it
/// stays an exact integer: `served * held_out + per_client * bytes`, where `bytes` are the
/// held-out samples' compressed bytes. Ranking by it is ranking by
/// `served + per_client * bytes / held_out`.
pub(super) fn scaled_per_client(
    served: usize,
    held_out: usize,
    per_client: u64,
    bytes: usize,
) -> u128 {
    served as u128 * held_out as u128 + u128::from(per_client) * bytes as u128
}

/// Bytes per client, unscaled: the served dictionary and `per_client` mean responses.
pub(super) fn per_client_bytes(
    served: usize,
    held_out: usize,
    per_client: u64,
    bytes: usize,
) -> f64 {
    served as f64 + per_client as f64 * bytes as f64 / held_out.max(1) as f64
}

/// How many responses a client must get before the dictionary (served once, `served`
/// bytes) has saved more than it cost, where the held-out samples took `bytes` with it and
/// `plain` without; `None` when it saves nothing per response.
pub(super) fn break_even(
    served: usize,
    held_out: usize,
    bytes: usize,
    plain: usize,
) -> Option<u64> {
    let saved = plain.checked_sub(bytes).filter(|&s| s > 0)?;
    // served / (saved / held_out), rounded up: the first count where the saving covers it.
    let count = (served as u128 * held_out as u128).div_ceil(saved as u128);
    Some(u64::try_from(count).unwrap_or(u64::MAX))
}
