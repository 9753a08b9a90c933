//! Padded bodies (`breach_jitter`'s length padding) decoded by tools nobody here wrote: a
//! zstd skippable frame after the last frame for the `zstd` CLI and Python's `zstandard`
//! (its one-shot `decompress` reads only the first frame, hence the padding goes after it),
//! brotli metadata before the last meta-block for the `brotli` CLI and Python's `brotli`,
//! and empty deflate blocks after the zlib header for Python's `zlib`. Skipped without the
//! tool, failed under `REQUIRE_INTEROP=1`.

use bytes::BytesMut;
use tower_gzip::codec::{Encoder, OneShot};
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};

#[cfg(any(feature = "zstd", feature = "br"))]
use crate::codecs::run;
use crate::codecs::{python, samples};
use crate::common::tools;

/// `data` streamed with a flush every 4 KiB (one frame or stream), then `padding`.
fn streamed(coding: ContentCoding, data: &[u8], padding: usize) -> Vec<u8> {
    let pool = CodecPool::new();
    let mut encoder = Encoder::for_coding(coding, CompressionLevel::Default, None, &pool)
        .unwrap()
        .with_padding(padding);
    let mut wire = BytesMut::new();
    for chunk in data.chunks(4096) {
        encoder.encode(chunk, &mut wire).unwrap();
        encoder.flush(&mut wire).unwrap();
    }
    encoder.finish(&mut wire).unwrap();
    wire.to_vec()
}

fn one_shot(coding: ContentCoding, data: &[u8], padding: usize) -> Vec<u8> {
    let mut wire = BytesMut::new();
    OneShot::new(coding)
        .padding(padding)
        .encode(data, &mut wire)
        .unwrap();
    wire.to_vec()
}

/// Each sample padded three ways: streamed, and in one shot with a short and a long
/// padding (brotli's metadata header is 1 to 3 bytes by length).
fn padded(coding: ContentCoding) -> Vec<(Vec<u8>, Vec<u8>)> {
    samples()
        .into_iter()
        .flat_map(|data| {
            let wires = [
                streamed(coding, &data, 300),
                one_shot(coding, &data, 1),
                one_shot(coding, &data, 5_000),
            ];
            wires.map(|wire| (data.clone(), wire))
        })
        .collect()
}

#[cfg(feature = "zstd")]
#[test]
fn zstd_cli_and_python_zstandard_decode_our_padded_zstd() {
    if !tools::available(&["zstd"], &["zstandard"]) {
        return;
    }
    let cases = padded(ContentCoding::Zstd);
    for (data, wire) in &cases {
        assert!(run("zstd", &["-dc", "-q"], wire) == *data, "zstd -dc");
    }
    // One-shot `decompress` (the content size from the frame header, needed by it, is in
    // our one-shot frames), `decompressobj` and the streaming reader.
    let jobs: Vec<_> = cases
        .iter()
        .enumerate()
        .flat_map(|(i, (_, wire))| {
            let ops: &[u8] = if i % 3 == 0 { &[1, 2] } else { &[0, 1, 2] };
            ops.iter().map(move |&op| (op, &wire[..]))
        })
        .collect();
    let decoded = python(
        "import zstandard\n\
         def f(op, data):\n\
         \x20   d = zstandard.ZstdDecompressor()\n\
         \x20   if op == 0: return d.decompress(data)\n\
         \x20   if op == 1: return d.decompressobj().decompress(data)\n\
         \x20   return d.stream_reader(io.BytesIO(data), read_across_frames=True).read()",
        &jobs,
    );
    let mut decoded = decoded.into_iter();
    for (i, (data, _)) in cases.iter().enumerate() {
        let ops = if i % 3 == 0 { 2 } else { 3 };
        for _ in 0..ops {
            let py = decoded.next().unwrap();
            assert!(
                py == *data,
                "python zstandard, case {i}, {} bytes",
                data.len()
            );
        }
    }
}

#[cfg(feature = "br")]
#[test]
fn brotli_cli_and_python_brotli_decode_our_padded_br() {
    if !tools::available(&["brotli"], &["brotli"]) {
        return;
    }
    let cases = padded(ContentCoding::Br);
    for (data, wire) in &cases {
        assert!(run("brotli", &["-dc"], wire) == *data, "brotli -dc");
    }
    let jobs: Vec<_> = cases.iter().map(|(_, wire)| (0, &wire[..])).collect();
    let decoded = python(
        "import brotli\ndef f(op, data):\n    return brotli.decompress(data)",
        &jobs,
    );
    for ((data, _), py) in cases.iter().zip(decoded) {
        assert!(py == *data, "python brotli, {} bytes", data.len());
    }
}

#[test]
fn python_zlib_decodes_our_padded_deflate() {
    if !tools::available(&[], &["zlib"]) {
        return;
    }
    let cases = padded(ContentCoding::Deflate);
    let jobs: Vec<_> = cases.iter().map(|(_, wire)| (0, &wire[..])).collect();
    let decoded = python("def f(op, data):\n    return zlib.decompress(data)", &jobs);
    for ((data, _), py) in cases.iter().zip(decoded) {
        assert!(py == *data, "python zlib, {} bytes", data.len());
    }
}
