//! Length padding in `dcz` (a skippable frame after the last frame) and `dcb` (metadata
//! before the last meta-block), streamed and in one shot.

use bytes::BytesMut;

use super::*;
use crate::{CodecPool, CompressionLevel};
use crate::{Encoder, OneShot};

/// `body` as `coding` against `dict` with `padding`: streamed in 1,000-byte chunks with a
/// flush after each, and in one shot.
fn padded(
    coding: ContentCoding,
    dict: &Dictionary,
    body: &[u8],
    padding: usize,
    pool: &CodecPool,
) -> [BytesMut; 2] {
    let level = CompressionLevel::Default;
    let mut encoder = Encoder::for_coding(coding, level, Some(dict), pool)
        .unwrap()
        .with_padding(padding);
    let mut streamed = BytesMut::new();
    for chunk in body.chunks(1_000) {
        encoder.encode(chunk, &mut streamed).unwrap();
        encoder.flush(&mut streamed).unwrap();
    }
    encoder.finish(&mut streamed).unwrap();
    let mut shot = BytesMut::new();
    let one_shot = OneShot::new(coding)
        .level(level)
        .pool(pool)
        .dictionary(dict);
    one_shot.padding(padding).encode(body, &mut shot).unwrap();
    [streamed, shot]
}

#[test]
fn padded_dcz_and_dcb_decode_and_grow_by_the_padding() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    let mut bodies = bodies[..3].to_vec();
    bodies.push(Vec::new());
    for body in &bodies {
        let base = [
            padded(ContentCoding::Dcz, &dict, body, 1, &pool),
            padded(ContentCoding::Dcb, &dict, body, 1, &pool),
        ];
        for padding in [1, 2, 259, 4_000] {
            let dcz = padded(ContentCoding::Dcz, &dict, body, padding, &pool);
            let dcb = padded(ContentCoding::Dcb, &dict, body, padding, &pool);
            for (wire, base) in dcz.iter().zip(&base[0]) {
                assert_eq!(wire.len(), base.len() + padding - 1);
                let end = &wire[wire.len() - 8 - padding..];
                assert_eq!(end[..4], 0x184D_2A50u32.to_le_bytes(), "dcz ends skippable");
                let plain = decode_dcz(&dict, wire, &pool, LIMIT).unwrap();
                assert_eq!(&plain[..], &body[..], "dcz pad {padding}");
            }
            for (wire, base) in dcb.iter().zip(&base[1]) {
                assert_eq!(wire.len(), base.len() + padding - 1);
                let plain = decode_dcb(&dict, wire, LIMIT).unwrap();
                assert_eq!(&plain[..], &body[..], "dcb pad {padding}");
            }
        }
    }
    assert_eq!(pool.stats().in_use(), 0);
}
