//! The header of `dcz` and `dcb` bodies (RFC 9842 sections 4 and 5): the coding's magic
//! bytes, then the SHA-256 of the dictionary.

use bytes::BytesMut;

use super::error::DictDecodeError;
use crate::ContentCoding;

/// The `dcz` magic: a zstd skippable frame (`0x184D2A5E`, little-endian) of 32 bytes, which
/// the hash fills, so a plain zstd decoder with the dictionary skips the header.
pub(crate) const DCZ_MAGIC: [u8; 8] = [0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00];

/// The `dcb` magic: `0xff` and `DCB`.
pub(crate) const DCB_MAGIC: [u8; 4] = [0xff, 0x44, 0x43, 0x42];

/// Each dictionary coding compiled in, with its magic bytes.
pub(crate) const HEADERS: &[(ContentCoding, &[u8])] = &[
    (ContentCoding::Dcz, &DCZ_MAGIC),
    (ContentCoding::Dcb, &DCB_MAGIC),
];

/// The longest header (`dcz`'s): 8 magic bytes and 32 hash bytes.
pub(crate) const MAX_HEADER: usize = DCZ_MAGIC.len() + 32;

/// Appends `magic` and `hash` to `out`.
pub(crate) fn write_header(magic: &[u8], hash: &[u8; 32], out: &mut BytesMut) {
    out.reserve(magic.len() + hash.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(hash);
}

/// Reads a header in whatever pieces the body arrives in, checking each byte as it comes:
/// a wrong magic byte fails at once, a wrong hash once the 32 bytes are in.
#[derive(Debug)]
pub(crate) struct HeaderReader {
    magic: &'static [u8],
    expected: [u8; 32],
    buf: [u8; MAX_HEADER],
    filled: usize,
}

impl HeaderReader {
    pub(crate) fn new(magic: &'static [u8], expected: [u8; 32]) -> Self {
        HeaderReader {
            magic,
            expected,
            buf: [0; MAX_HEADER],
            filled: 0,
        }
    }

    fn len(&self) -> usize {
        self.magic.len() + 32
    }

    /// Whether the whole header has been read and checked.
    pub(crate) fn is_done(&self) -> bool {
        self.filled == self.len()
    }

    /// Header bytes read so far.
    pub(crate) fn taken(&self) -> usize {
        self.filled
    }

    /// Whether no header byte has been read yet.
    pub(crate) fn is_untouched(&self) -> bool {
        self.filled == 0
    }

    /// Takes header bytes from the start of `input`; returns how many.
    pub(crate) fn feed(&mut self, input: &[u8]) -> Result<usize, DictDecodeError> {
        let take = (self.len() - self.filled).min(input.len());
        let start = self.filled;
        self.buf[start..start + take].copy_from_slice(&input[..take]);
        self.filled += take;
        let magic_end = self.filled.min(self.magic.len());
        if start < magic_end && self.buf[start..magic_end] != self.magic[start..magic_end] {
            return Err(DictDecodeError::BadMagic);
        }
        if self.is_done() {
            let mut found = [0; 32];
            found.copy_from_slice(&self.buf[self.magic.len()..self.len()]);
            if found != self.expected {
                return Err(DictDecodeError::WrongDictionary { found });
            }
        }
        Ok(take)
    }

    /// At the end of the body: `Ok` for a complete header (or none at all, an empty body).
    pub(crate) fn finish(&self) -> Result<(), DictDecodeError> {
        if self.is_done() || self.is_untouched() {
            Ok(())
        } else {
            Err(DictDecodeError::TruncatedHeader)
        }
    }
}

/// The hash a body names, when it starts with a complete header of `magic`.
pub(crate) fn peek_hash(magic: &[u8], body: &[u8]) -> Option<[u8; 32]> {
    let rest = body.strip_prefix(magic)?;
    rest.get(..32)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_read_in_any_pieces() {
        let hash = [9u8; 32];
        let mut header = BytesMut::new();
        write_header(&DCZ_MAGIC, &hash, &mut header);
        assert_eq!(header.len(), 40);
        for cut in 0..=header.len() {
            let mut reader = HeaderReader::new(&DCZ_MAGIC, hash);
            assert_eq!(reader.feed(&header[..cut]).unwrap(), cut);
            assert_eq!(reader.is_done(), cut == 40);
            let mut rest = header[cut..].to_vec();
            rest.extend_from_slice(b"payload");
            assert_eq!(reader.feed(&rest).unwrap(), 40 - cut);
            assert!(reader.is_done() && reader.finish().is_ok());
            assert_eq!(reader.feed(b"more").unwrap(), 0);
        }
        assert_eq!(peek_hash(&DCZ_MAGIC, &header), Some(hash));
        assert_eq!(peek_hash(&DCB_MAGIC, &header), None);
        assert_eq!(peek_hash(&DCZ_MAGIC, &header[..39]), None);
    }

    #[test]
    fn wrong_magic_hash_and_truncation_are_typed() {
        let hash = [1u8; 32];
        let mut reader = HeaderReader::new(&DCB_MAGIC, hash);
        assert_eq!(reader.feed(&[0xff, 0x44]), Ok(2));
        assert_eq!(reader.finish(), Err(DictDecodeError::TruncatedHeader));
        assert_eq!(reader.feed(&[0x00]), Err(DictDecodeError::BadMagic));

        let mut reader = HeaderReader::new(&DCB_MAGIC, hash);
        let mut body = DCB_MAGIC.to_vec();
        body.extend_from_slice(&[2u8; 32]);
        assert_eq!(
            reader.feed(&body),
            Err(DictDecodeError::WrongDictionary { found: [2u8; 32] })
        );
        assert!(HeaderReader::new(&DCB_MAGIC, hash).finish().is_ok());
    }
}
