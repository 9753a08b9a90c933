//! The running check value of a gzip (CRC32) or zlib (Adler-32) stream.

use super::Framing;

#[derive(Clone, Debug)]
pub(crate) enum Checksum {
    Crc32(crc32fast::Hasher),
    Adler32(u32),
}

impl Checksum {
    pub(crate) fn new(framing: Framing) -> Self {
        match framing {
            Framing::Gzip => Checksum::Crc32(crc32fast::Hasher::new()),
            Framing::Zlib => Checksum::Adler32(1),
        }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        match self {
            Checksum::Crc32(hasher) => hasher.update(data),
            Checksum::Adler32(sum) => *sum = zlib_rs::adler32::adler32(*sum, data),
        }
    }

    pub(crate) fn value(&self) -> u32 {
        match self {
            Checksum::Crc32(hasher) => hasher.clone().finalize(),
            Checksum::Adler32(sum) => *sum,
        }
    }
}
