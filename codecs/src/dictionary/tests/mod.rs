//! Tests of `dcz` and `dcb` by concern: round trips (fixed and property-based), the
//! raw-content proof and pooling, typed errors and bounds, and interop with other
//! implementations.

use bytes::BytesMut;

use super::frame::{DCB_MAGIC, DCZ_MAGIC};
use crate::ContentCoding;
use crate::Decode;
use crate::dcb::Core as DcbCore;
use crate::dcb::{DcbDecoder, DcbEncoder};
use crate::dcz::Core as DczCore;
use crate::dcz::{DczDecoder, DczEncoder, dcz_window_limit};
use crate::dictionary::encode_all;
use crate::dictionary::error::DictDecodeError;
use crate::dictionary::train;
use crate::dictionary::*;
use crate::encoding::{Driving, Encode};

mod dcb;
mod errors;
mod interop;
mod padding;
mod raw_content;
mod round_trip;

// The same API-like JSON the measuring programs use (the support crate's).
pub(crate) use tower_gzip_support::json_samples;

pub(super) const LIMIT: usize = 64 << 20;

/// A whole `dcz` body decoded with `dictionary`, refusing output over `max_len` bytes.
pub(super) fn decode_dcz(
    dictionary: &Dictionary,
    body: &[u8],
    pool: &crate::CodecPool,
    max_len: usize,
) -> Result<BytesMut, DictDecodeError> {
    DczDecoder::new(dictionary, pool)?.decode_all(body, max_len)
}

/// A whole `dcb` body decoded with `dictionary`, refusing output over `max_len` bytes.
pub(super) fn decode_dcb(
    dictionary: &Dictionary,
    body: &[u8],
    max_len: usize,
) -> Result<BytesMut, DictDecodeError> {
    DcbDecoder::new(dictionary).decode_all(body, max_len)
}

pub(super) fn dictionary(bytes: impl Into<bytes::Bytes>) -> Dictionary {
    Dictionary::new(bytes).unwrap()
}

/// A dictionary trained on one set of JSON samples, and bodies from another.
/// Runs `each(dictionary, the other one, i, body)` for every body on three threads, each
/// alternating two dictionaries made of different samples: pooled states serve any
/// dictionary and must come back neutral.
pub(super) fn alternating_on_threads(
    bodies: &[Vec<u8>],
    each: impl Fn(&Dictionary, &Dictionary, usize, &[u8]) + Sync,
) {
    let a = dictionary(json_samples(30, 5).concat());
    let b = dictionary(json_samples(30, 6).concat());
    std::thread::scope(|scope| {
        for t in 0..3 {
            let (a, b, each) = (&a, &b, &each);
            scope.spawn(move || {
                for (i, body) in bodies.iter().enumerate() {
                    let (dict, other) = if (i + t) % 2 == 0 { (a, b) } else { (b, a) };
                    each(dict, other, i, body);
                }
            });
        }
    });
}

pub(super) fn trained() -> (Dictionary, Vec<Vec<u8>>) {
    let bytes = train(&json_samples(800, 11), 16 * 1024).unwrap();
    (dictionary(bytes), json_samples(50, 12))
}

/// The window size a zstd frame header declares (its content size for single-segment
/// frames), per RFC 8878 section 3.1.1.1.
pub(super) fn frame_window(frame: &[u8]) -> u64 {
    assert_eq!(&frame[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    let descriptor = frame[4];
    if descriptor & 0x20 == 0 {
        let window = frame[5];
        let base = 1u64 << (10 + (window >> 3));
        base + (base / 8) * u64::from(window & 7)
    } else {
        zstd_safe::get_frame_content_size(frame).unwrap().unwrap()
    }
}

/// Streams `body` through `encoder` in `cuts`-sized chunks, flushing or idling after some.
pub(super) fn stream<C: Encode>(
    encoder: &mut Driving<C>,
    body: &[u8],
    cuts: &[usize],
    flush_every: usize,
) -> BytesMut {
    let mut wire = BytesMut::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let n = cuts
            .get(i % cuts.len().max(1))
            .copied()
            .unwrap_or(rest.len())
            .clamp(1, rest.len());
        encoder.encode(&rest[..n], &mut wire).unwrap();
        rest = &rest[n..];
        i += 1;
        if flush_every > 0 && i % flush_every == 0 {
            // Alternately a flush and an idle (a `dcz` idle ends the frame).
            if (i / flush_every) % 2 == 0 {
                encoder.flush(&mut wire).unwrap();
            } else {
                encoder.idle(&mut wire).unwrap();
            }
        }
    }
    encoder.finish(&mut wire).unwrap();
    assert!(encoder.is_finished() && !encoder.holds_state());
    assert_eq!(encoder.total_in(), body.len() as u64);
    assert_eq!(encoder.total_out(), wire.len() as u64);
    wire
}

/// Decodes a `dcb` body's brotli stream with Google's decoder (the one Chromium runs), the
/// dictionary attached as a raw prefix.
pub(super) fn google_decodes_dcb(dict: &Dictionary, wire: &[u8]) -> Vec<u8> {
    use crate::ffi::brotli_c::{Decoder, Stop};
    assert_eq!(&wire[..4], &DCB_MAGIC);
    let mut decoder = Decoder::new(Some(dict.bytes()), 0).unwrap();
    let mut out = BytesMut::new();
    let (consumed, stop) = decoder.decode(&wire[36..], &mut out, &mut usize::MAX.clone());
    assert_eq!((consumed, stop), (wire.len() - 36, Ok(Stop::End)));
    out.to_vec()
}

/// Decodes `wire` fed in `cuts`-sized pieces with `budget` bytes of output per call.
pub(super) fn decode_chunked<D: Decode>(
    decoder: &mut D,
    wire: &[u8],
    cuts: &[usize],
    budget: usize,
) -> BytesMut {
    let mut out = BytesMut::new();
    let mut rest = wire;
    let mut i = 0;
    loop {
        let n = cuts
            .get(i % cuts.len().max(1))
            .copied()
            .unwrap_or(rest.len())
            .clamp(1, rest.len().max(1))
            .min(rest.len());
        i += 1;
        let mut piece = &rest[..n];
        loop {
            let progress = decoder.decode(piece, &mut out, budget).unwrap();
            piece = &piece[progress.consumed..];
            if piece.is_empty() && !decoder.has_pending_output() {
                break;
            }
        }
        rest = &rest[n..];
        if rest.is_empty() {
            break;
        }
    }
    decoder.finish().unwrap();
    assert_eq!(decoder.total_in(), wire.len() as u64);
    assert_eq!(decoder.total_out(), out.len() as u64);
    out
}

/// Bodies run on any tokio worker: every type a response holds must be `Send`, and the
/// shared ones `Sync` too.
#[test]
fn types_are_send_and_sync() {
    fn send<T: Send>() {}
    fn shared<T: Send + Sync>() {}
    shared::<Dictionary>();
    send::<DczEncoder>();
    send::<DczDecoder>();
    send::<DcbEncoder>();
    send::<DcbDecoder>();
    shared::<DictDecodeError>();
    shared::<DictionaryError>();
}
