//! Independent encoders (flate2, libzstd, the `brotli` crate) and a gzip member built by
//! hand, so tests check the crate's output and input against code it does not share.

use std::io::Write;

/// `data` through one of flate2's `write` encoders at the default level.
macro_rules! flate2_encode {
    ($encoder:ident, $data:expr) => {{
        let mut e = flate2::write::$encoder::new(Vec::new(), flate2::Compression::default());
        e.write_all($data).unwrap();
        e.finish().unwrap()
    }};
}

/// One gzip member of `data`, by flate2 at the default level.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    flate2_encode!(GzEncoder, data)
}

/// A zlib stream of `data` (`Content-Encoding: deflate`), by flate2 at the default level.
pub fn zlib(data: &[u8]) -> Vec<u8> {
    flate2_encode!(ZlibEncoder, data)
}

/// Raw deflate of `data` (no zlib wrapper), by flate2 at the default level.
pub fn raw_deflate(data: &[u8]) -> Vec<u8> {
    flate2_encode!(DeflateEncoder, data)
}

/// One zstd frame of `data` by libzstd directly (level 3), with the content size and, if
/// asked, the content checksum.
#[cfg(feature = "zstd")]
pub fn zstd_frame(data: &[u8], checksum: bool) -> Vec<u8> {
    use zstd_safe::{CCtx, CParameter};
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
    cctx.set_parameter(CParameter::ChecksumFlag(checksum))
        .unwrap();
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    cctx.compress2(&mut out, data).unwrap();
    out
}

/// One br stream of `data` by the `brotli` crate at this quality and window (2^`lgwin`).
#[cfg(feature = "br")]
pub fn br_stream(data: &[u8], quality: u32, lgwin: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut out, 4096, quality, lgwin);
        writer.write_all(data).unwrap();
    }
    out
}

/// Optional gzip header fields, and the ways to break one, for [`gzip_member`].
#[derive(Clone, Copy, Default)]
pub struct GzipHeader<'a> {
    /// FEXTRA's content.
    pub extra: Option<&'a [u8]>,
    /// FNAME, without its NUL.
    pub name: Option<&'a [u8]>,
    /// FCOMMENT, without its NUL.
    pub comment: Option<&'a [u8]>,
    /// FHCRC: the header's CRC16 follows it.
    pub hcrc: bool,
    /// Flag bits set on top of those the fields imply (the reserved ones, say).
    pub flags_or: u8,
    /// The compression method byte, instead of 8 (deflate).
    pub method: Option<u8>,
}

impl<'a> GzipHeader<'a> {
    /// A header with only FNAME set.
    pub fn named(name: &'a [u8]) -> Self {
        GzipHeader {
            name: Some(name),
            ..GzipHeader::default()
        }
    }
}

/// FHCRC, FEXTRA, FNAME and FCOMMENT of RFC 1952 section 2.3.1.
pub const FHCRC: u8 = 0x02;
pub const FEXTRA: u8 = 0x04;
pub const FNAME: u8 = 0x08;
pub const FCOMMENT: u8 = 0x10;

/// A gzip member built by hand, so every header field can be set or broken: the header `h`,
/// flate2's raw deflate of `data`, CRC-32 and ISIZE.
pub fn gzip_member(h: &GzipHeader<'_>, data: &[u8]) -> Vec<u8> {
    let mut flags = h.flags_or;
    flags |= if h.hcrc { FHCRC } else { 0 };
    flags |= if h.extra.is_some() { FEXTRA } else { 0 };
    flags |= if h.name.is_some() { FNAME } else { 0 };
    flags |= if h.comment.is_some() { FCOMMENT } else { 0 };
    let mut v = vec![0x1f, 0x8b, h.method.unwrap_or(8), flags, 1, 2, 3, 4, 0, 3];
    if let Some(extra) = h.extra {
        v.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        v.extend_from_slice(extra);
    }
    for field in [h.name, h.comment].into_iter().flatten() {
        v.extend_from_slice(field);
        v.push(0);
    }
    if h.hcrc {
        let crc = crc32fast::hash(&v) as u16;
        v.extend_from_slice(&crc.to_le_bytes());
    }
    v.extend_from_slice(&raw_deflate(data));
    v.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    v.extend_from_slice(&(data.len() as u32).to_le_bytes());
    v
}
