//! Decompression bombs: compressed streams of zeros, generated chunk by chunk as they are
//! read (as an iterator of chunks or as a body), by flate2's own encoders (not this crate's).

use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use flate2::Compression;
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use http_body::{Body, Frame};

pub const MIB: usize = 1024 * 1024;
static ZEROS: [u8; MIB] = [0; MIB];

#[derive(Clone, Copy, Debug)]
pub enum BombKind {
    /// One gzip member.
    Gzip,
    /// One zlib stream.
    Zlib,
    /// Raw deflate, sent as `deflate`.
    RawDeflate,
    /// A gzip member of 1 MiB of zeros, repeated.
    GzipMembers,
}

impl BombKind {
    /// The `Content-Encoding` it is sent with.
    pub fn coding(self) -> &'static str {
        match self {
            BombKind::Gzip | BombKind::GzipMembers => "gzip",
            BombKind::Zlib | BombKind::RawDeflate => "deflate",
        }
    }
}

enum Enc {
    Gzip(GzEncoder<Vec<u8>>),
    Zlib(ZlibEncoder<Vec<u8>>),
    Raw(DeflateEncoder<Vec<u8>>),
    Members(Bytes),
}

/// `mib` MiB of zeros, compressed 1 MiB at a time as the chunks are asked for.
pub struct Bomb {
    enc: Enc,
    /// MiB of zeros still to encode.
    left: usize,
    done: bool,
    pulled: Arc<AtomicU64>,
}

impl Bomb {
    /// A stream of `mib` MiB of zeros.
    pub fn new(kind: BombKind, mib: usize) -> Self {
        let level = Compression::default();
        let enc = match kind {
            BombKind::Gzip => Enc::Gzip(GzEncoder::new(Vec::new(), level)),
            BombKind::Zlib => Enc::Zlib(ZlibEncoder::new(Vec::new(), level)),
            BombKind::RawDeflate => Enc::Raw(DeflateEncoder::new(Vec::new(), level)),
            BombKind::GzipMembers => {
                let mut e = GzEncoder::new(Vec::new(), level);
                e.write_all(&ZEROS).unwrap();
                Enc::Members(Bytes::from(e.finish().unwrap()))
            }
        };
        Bomb {
            enc,
            left: mib,
            done: false,
            pulled: Arc::default(),
        }
    }

    /// Compressed bytes handed out so far.
    pub fn pulled(&self) -> Arc<AtomicU64> {
        self.pulled.clone()
    }

    /// The encoder's output for the next MiB of zeros (empty while it buffers), or the end
    /// of the stream once every MiB is in.
    fn next_chunk(&mut self) -> Vec<u8> {
        macro_rules! step {
            ($e:expr) => {{
                if self.left > 0 {
                    $e.write_all(&ZEROS).unwrap();
                    self.left -= 1;
                } else {
                    $e.try_finish().unwrap();
                    self.done = true;
                }
                std::mem::take($e.get_mut())
            }};
        }
        match &mut self.enc {
            Enc::Gzip(e) => step!(e),
            Enc::Zlib(e) => step!(e),
            Enc::Raw(e) => step!(e),
            Enc::Members(member) => {
                self.left -= 1;
                self.done = self.left == 0;
                member.to_vec()
            }
        }
    }
}

impl Iterator for Bomb {
    type Item = Vec<u8>;

    /// The next non-empty chunk of compressed bytes.
    fn next(&mut self) -> Option<Vec<u8>> {
        while !self.done {
            let chunk = self.next_chunk();
            if !chunk.is_empty() {
                self.pulled.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                return Some(chunk);
            }
        }
        None
    }
}

impl Body for Bomb {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.next().map(|chunk| Ok(Frame::data(Bytes::from(chunk)))))
    }
}
