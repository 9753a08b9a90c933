//! A raw-socket WebSocket client that writes whatever frames a test needs.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub(crate) struct RawClient {
    stream: TcpStream,
    buf: Vec<u8>,
}

const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

impl RawClient {
    /// Connects and upgrades with `extensions` offered; returns the client and the 101's head.
    pub(crate) async fn connect(
        addr: SocketAddr,
        path: &str,
        extensions: &str,
    ) -> (RawClient, String) {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Extensions: {extensions}\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut client = RawClient {
            stream,
            buf: Vec::new(),
        };
        let end = loop {
            if let Some(end) = client.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            client.fill().await;
        };
        let head = String::from_utf8(client.buf.drain(..end).collect()).unwrap();
        (client, head)
    }

    async fn fill(&mut self) -> usize {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await.unwrap_or(0);
        self.buf.extend_from_slice(&chunk[..n]);
        n
    }

    /// Sends one masked frame.
    pub(crate) async fn send(&mut self, fin: bool, rsv1: bool, opcode: u8, payload: &[u8]) {
        let mut frame = vec![u8::from(fin) << 7 | u8::from(rsv1) << 6 | opcode];
        match payload.len() {
            n @ 0..=125 => frame.push(0x80 | n as u8),
            n @ 126..=0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&KEY);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ KEY[i % 4]));
        // The peer may close before taking it all (that is what some tests check).
        let _ = self.stream.write_all(&frame).await;
    }

    /// The next frame: (rsv1, opcode, payload), or `None` at the end of the stream.
    pub(crate) async fn frame(&mut self) -> Option<(bool, u8, Vec<u8>)> {
        loop {
            if self.buf.len() >= 2 {
                let (len, at) = match self.buf[1] & 0x7f {
                    126 if self.buf.len() >= 4 => {
                        (u16::from_be_bytes([self.buf[2], self.buf[3]]) as usize, 4)
                    }
                    127 if self.buf.len() >= 10 => (
                        u64::from_be_bytes(self.buf[2..10].try_into().unwrap()) as usize,
                        10,
                    ),
                    n @ 0..=125 => (n as usize, 2),
                    _ => (usize::MAX, 0),
                };
                if len != usize::MAX && self.buf.len() >= at + len {
                    let rsv1 = self.buf[0] & 0x40 != 0;
                    let opcode = self.buf[0] & 0x0f;
                    let payload = self.buf[at..at + len].to_vec();
                    self.buf.drain(..at + len);
                    return Some((rsv1, opcode, payload));
                }
            }
            if self.fill().await == 0 {
                return None;
            }
        }
    }

    /// Reads frames until a Close and returns its code (`None`: the stream ended first).
    pub(crate) async fn close_code(&mut self) -> Option<u16> {
        while let Some((_, opcode, payload)) = self.frame().await {
            if opcode == 8 {
                return Some(u16::from_be_bytes([payload[0], payload[1]]));
            }
        }
        None
    }
}

/// `data` deflated raw with a sync flush, its trailing `00 00 ff ff` stripped (RFC 7692).
pub(crate) fn deflate(data: &[u8]) -> Vec<u8> {
    let mut compress = flate2::Compress::new(flate2::Compression::new(6), false);
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    let mut input = data;
    loop {
        out.reserve(64 * 1024);
        let before = compress.total_in();
        compress
            .compress_vec(input, &mut out, flate2::FlushCompress::Sync)
            .unwrap();
        input = &input[(compress.total_in() - before) as usize..];
        if input.is_empty() && out.capacity() > out.len() {
            break;
        }
    }
    assert!(out.ends_with(&[0, 0, 0xff, 0xff]));
    out.truncate(out.len() - 4);
    out
}

/// `total` zero bytes deflated raw (a bomb), stripped as above, without holding them.
pub(crate) fn deflate_zeros(total: usize) -> Vec<u8> {
    let zeros = vec![0u8; 1 << 20];
    let mut compress = flate2::Compress::new(flate2::Compression::new(9), false);
    let mut out = Vec::new();
    let mut left = total;
    while left > 0 {
        let mut input = &zeros[..left.min(zeros.len())];
        left -= input.len();
        while !input.is_empty() {
            out.reserve(64 * 1024);
            let before = compress.total_in();
            compress
                .compress_vec(input, &mut out, flate2::FlushCompress::None)
                .unwrap();
            input = &input[(compress.total_in() - before) as usize..];
        }
    }
    loop {
        out.reserve(64 * 1024);
        compress
            .compress_vec(&[], &mut out, flate2::FlushCompress::Sync)
            .unwrap();
        if out.capacity() > out.len() {
            break;
        }
    }
    out.truncate(out.len() - 4);
    out
}

impl RawClient {
    /// Writes bytes as they are (a frame the helper would not make).
    pub(crate) async fn send_raw(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes).await;
    }
}
