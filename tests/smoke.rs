use bytes::BytesMut;
use tower_gzip::codec::{Decoder, Encoder, Format};
use tower_gzip::{CodecPool, CompressionLevel};

fn roundtrip(format: Format, data: &[u8], split: usize) {
    let pool = CodecPool::new();
    let mut enc = Encoder::new(format, CompressionLevel::Default, &pool);
    let mut wire = BytesMut::new();
    for chunk in data.chunks(split.max(1)) {
        enc.encode(chunk, &mut wire).unwrap();
        enc.flush(&mut wire).unwrap();
    }
    enc.finish(&mut wire).unwrap();
    let mut dec = Decoder::new(format, &pool);
    let mut out = BytesMut::new();
    for chunk in wire.chunks(split.max(1)) {
        let mut input = chunk;
        loop {
            let n = dec.decode(input, &mut out, 100).unwrap();
            input = &input[n..];
            if input.is_empty() && !dec.has_pending_output() {
                break;
            }
        }
    }
    dec.finish().unwrap();
    assert_eq!(&out[..], data);
}

#[test]
fn smoke() {
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8 ^ (i / 1000) as u8).collect();
    for split in [1, 3, 7, 1000, 100_000] {
        roundtrip(Format::Gzip, &data, split);
        roundtrip(Format::Deflate, &data, split);
    }
    roundtrip(Format::Gzip, b"", 1);
    roundtrip(Format::Deflate, b"", 1);
}
