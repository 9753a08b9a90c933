//! Length padding in br streams: metadata meta-blocks after a flush, before the last
//! meta-block, skipped by every decoder.

use std::time::Duration;

use bytes::BytesMut;

use super::{json, level, reference_decode};
use crate::br::{BrEncoder, encode_all};
use crate::pool::CodecPool;
use crate::{CompressionLevel, ContentCoding, Decoder, Encoder};

/// Paddings around the metadata block's header sizes (1, 2 and 3 bytes) and the largest.
const PADDINGS: [usize; 8] = [1, 2, 3, 258, 259, 260, 4_096, 65_535];

/// `input` streamed through an encoder with `padding`, flushed every 5,000 bytes.
fn streamed(input: &[u8], quality: u8, padding: usize, pool: &CodecPool) -> Vec<u8> {
    let mut encoder = Encoder::new(
        ContentCoding::Br,
        CompressionLevel::Precise(quality.into()),
        pool,
    )
    .with_padding(padding);
    let mut wire = BytesMut::new();
    for chunk in input.chunks(5_000) {
        encoder.encode(chunk, &mut wire).unwrap();
        encoder.flush(&mut wire).unwrap();
    }
    encoder.finish(&mut wire).unwrap();
    wire.to_vec()
}

fn ours(wire: &[u8], pool: &CodecPool) -> Vec<u8> {
    let mut decoder = Decoder::new(ContentCoding::Br, pool);
    let mut out = BytesMut::new();
    let consumed = decoder.decode(wire, &mut out, usize::MAX).unwrap();
    assert_eq!(consumed, wire.len());
    decoder.finish().unwrap();
    out.to_vec()
}

/// Each padding adds exactly its bytes (the encoder is deterministic), and the stream
/// decodes to the input with our decoder and the `brotli` crate's.
#[test]
fn streamed_and_one_shot_padding_adds_its_bytes_and_decodes() {
    let pool = CodecPool::new();
    for input in [Vec::new(), b"x".to_vec(), json(20_000, 3)] {
        for quality in [0u8, 1, 4, 11] {
            let base_stream = streamed(&input, quality, 1, &pool);
            let mut base_shot = BytesMut::new();
            encode_all(level(quality), &input, 1, &pool, &mut base_shot).unwrap();
            for padding in PADDINGS {
                let wire = streamed(&input, quality, padding, &pool);
                assert_eq!(wire.len(), base_stream.len() + padding - 1, "q{quality}");
                let mut shot = BytesMut::new();
                encode_all(level(quality), &input, padding, &pool, &mut shot).unwrap();
                assert_eq!(shot.len(), base_shot.len() + padding - 1, "q{quality}");
                for wire in [&wire[..], &shot[..]] {
                    assert_eq!(ours(wire, &pool), input, "q{quality} pad {padding}");
                    assert_eq!(reference_decode(wire), input, "q{quality} pad {padding}");
                }
            }
        }
    }
    assert_eq!(pool.stats().in_use(), 0);
}

/// A streaming body that gave its state back at a pause ends without drawing one: its
/// padding goes after the pause's flush, before the last, empty meta-block.
#[test]
fn a_stream_ended_after_giving_its_state_back_is_padded() {
    let pool = CodecPool::builder()
        .max_idle(0)
        .park_bound(Duration::ZERO)
        .build();
    let input = json(3_000, 9);
    for padding in [0, 1, 300] {
        let mut encoder = BrEncoder::new(level(5), &pool);
        let options = encoder.options_mut().unwrap();
        (options.streaming, options.padding) = (true, padding);
        let mut wire = BytesMut::new();
        encoder.encode(&input, &mut wire).unwrap();
        encoder.idle(&mut wire).unwrap();
        assert!(!encoder.holds_state());
        let before = wire.len();
        encoder.finish(&mut wire).unwrap();
        assert_eq!(wire.len(), before + padding + 1, "pad {padding}");
        assert_eq!(reference_decode(&wire), input, "pad {padding}");
        assert_eq!(ours(&wire, &pool), input, "pad {padding}");
    }
}
