//! Independent decoders (flate2, libzstd, the `brotli` crate) for what the crate sends.

use std::io::Read;

/// Reads `decoder` to the end and checks it left none of `data` behind (`what`: the stream's
/// name in messages).
fn read_whole<'a, R: Read>(
    mut decoder: R,
    into_inner: impl FnOnce(R) -> &'a [u8],
    what: &str,
) -> Vec<u8> {
    let mut out = Vec::new();
    decoder
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("flate2 could not decode the {what}: {e}"));
    let rest = into_inner(decoder);
    assert!(rest.is_empty(), "{} bytes after the {what}", rest.len());
    out
}

/// Decodes one complete gzip member with flate2 and checks nothing follows it.
pub fn gunzip(data: &[u8]) -> Vec<u8> {
    let decoder = flate2::read::GzDecoder::new(data);
    read_whole(decoder, |d| d.into_inner(), "gzip member")
}

/// Decodes a complete zlib stream (`Content-Encoding: deflate`) with flate2.
pub fn inflate(data: &[u8]) -> Vec<u8> {
    let decoder = flate2::read::ZlibDecoder::new(data);
    read_whole(decoder, |d| d.into_inner(), "zlib stream")
}

/// Decodes zstd frames (one or more, as an idle stream sends them) with libzstd directly,
/// independently of this crate's decoder, with the 8 MiB window limit of RFC 9659.
#[cfg(feature = "zstd")]
pub fn unzstd(data: &[u8]) -> Vec<u8> {
    let mut dctx = zstd_safe::DCtx::create();
    dctx.set_parameter(zstd_safe::DParameter::WindowLogMax(23))
        .expect("window limit");
    let mut input = zstd_safe::InBuffer::around(data);
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::new();
    let hint = loop {
        let mut output = zstd_safe::OutBuffer::around(&mut buf[..]);
        let hint = match dctx.decompress_stream(&mut output, &mut input) {
            Ok(hint) => hint,
            Err(code) => panic!(
                "libzstd could not decode the zstd body: {}",
                zstd_safe::get_error_name(code)
            ),
        };
        let full = output.pos() == output.capacity();
        out.extend_from_slice(output.as_slice());
        // Done when all input is taken and the decoder has no more output to give: it did
        // not fill the buffer, or it says the frame is complete (hint 0), which can happen on
        // a call that filled the buffer exactly.
        if input.pos() == data.len() && (!full || hint == 0) {
            break hint;
        }
    };
    assert_eq!(hint, 0, "the zstd body ends inside a frame");
    out
}

/// Decodes a brotli stream with the `brotli` crate's decoder, independently of this crate's.
#[cfg(feature = "br")]
pub fn unbrotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::Decompressor::new(data, 4096)
        .read_to_end(&mut out)
        .expect("brotli could not decode the br body");
    out
}

/// Decodes `data` as named by a `Content-Encoding` value (`None` = identity), with decoders
/// independent of this crate: flate2, libzstd (zstd-safe), the brotli crate.
pub fn decode(encoding: Option<&str>, data: &[u8]) -> Vec<u8> {
    match encoding {
        None => data.to_vec(),
        Some("gzip") => gunzip(data),
        Some("deflate") => inflate(data),
        #[cfg(feature = "zstd")]
        Some("zstd") => unzstd(data),
        #[cfg(feature = "br")]
        Some("br") => unbrotli(data),
        Some(other) => panic!("unexpected content-encoding {other:?}"),
    }
}
