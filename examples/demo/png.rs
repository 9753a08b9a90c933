//! The demo's `/image.png`: a PNG whose pixels are compressed by this crate's own encoder.

use bytes::{Bytes, BytesMut};
use tower_gzip::ContentCoding;
use tower_gzip::codec::Encoder;
use tower_gzip::{CodecPool, CompressionLevel};

/// A 64×64 RGB gradient PNG, its IDAT zlib stream written by our own [`Encoder`] (with a
/// private pool, so the global pool's stats show only HTTP traffic).
pub fn png() -> Bytes {
    const SIDE: u8 = 64;
    let mut raw = Vec::new();
    for y in 0..SIDE {
        raw.push(0); // filter: none
        for x in 0..SIDE {
            raw.extend_from_slice(&[x * 4, y * 4, (x ^ y) * 4]);
        }
    }
    let mut idat = BytesMut::new();
    let mut encoder = Encoder::for_coding(
        ContentCoding::Deflate,
        CompressionLevel::Best,
        None,
        &CodecPool::new(),
    )
    .unwrap();
    encoder.encode(&raw, &mut idat).expect("in-memory encode");
    encoder.finish(&mut idat).expect("in-memory encode");

    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8; 4], data: &[u8]| {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = png.len();
        png.extend_from_slice(kind);
        png.extend_from_slice(data);
        let crc = crc32fast::hash(&png[start..]);
        png.extend_from_slice(&crc.to_be_bytes());
    };
    let side = u32::from(SIDE).to_be_bytes();
    // Width, height, bit depth 8, colour type 2 (RGB), compression, filter, no interlace.
    chunk(b"IHDR", &[&side[..], &side[..], &[8, 2, 0, 0, 0]].concat());
    chunk(b"IDAT", &idat);
    chunk(b"IEND", &[]);
    Bytes::from(png)
}
