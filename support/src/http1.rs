//! The client side of HTTP/1.1 that the load generator needs, over a raw socket: one `GET`
//! written by hand, the response head, and a body read by its framing (chunked, a
//! Content-Length, or to the close), counting payload bytes without keeping them.
//!
//! Raw sockets rather than a client library, so a load can hold its sockets in states a
//! library hides (a small receive buffer read at a capped rate, a reset mid-body) and count
//! exactly what crossed the wire.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The longest response head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// A `GET path` request for `host` with `Accept-Encoding: coding` (none for `identity`),
/// and `Connection: close` when `close`.
pub fn get(host: &str, path: &str, coding: &str, close: bool, agent: &str) -> Vec<u8> {
    let accept = match coding {
        "identity" | "" => String::new(),
        coding => format!("Accept-Encoding: {coding}\r\n"),
    };
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\n{accept}{connection}User-Agent: {agent}\r\n\r\n"
    )
    .into_bytes()
}

/// A response's status line and header fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// The status code (0 when the status line has none).
    pub status: u16,
    /// Header fields in order, names lowercased, values trimmed.
    pub fields: Vec<(String, String)>,
}

impl Head {
    /// Parses the bytes before the blank line (the blank line itself may be included).
    pub fn parse(bytes: &[u8]) -> Head {
        let text = String::from_utf8_lossy(bytes);
        let mut lines = text.split("\r\n");
        let status = lines
            .next()
            .and_then(|line| line.split(' ').nth(1))
            .and_then(|code| code.parse().ok())
            .unwrap_or(0);
        let fields = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        Head { status, fields }
    }

    /// The first value of the field `name` (lowercase).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The response's Content-Encoding, lowercased; `identity` without one.
    pub fn coding(&self) -> String {
        self.field("content-encoding")
            .map_or_else(|| "identity".to_owned(), str::to_ascii_lowercase)
    }

    /// How the body is framed.
    pub fn framing(&self) -> Framing {
        let chunked = self
            .field("transfer-encoding")
            .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
        match self.field("content-length").map(str::parse) {
            _ if chunked => Framing::Chunked,
            Some(Ok(len)) => Framing::Length(len),
            _ => Framing::Close,
        }
    }
}

/// How a response body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// `Content-Length` bytes.
    Length(u64),
    /// At the connection's close.
    Close,
}

/// Reads the response head (through its blank line).
pub async fn read_head<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Head> {
    let mut head = Vec::new();
    loop {
        let n = reader.read_until(b'\n', &mut head).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if head.ends_with(b"\r\n\r\n") || head == b"\r\n" {
            return Ok(Head::parse(&head));
        }
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too long"));
        }
    }
}

/// Reads the body to its end by `framing` and returns its payload length (chunk framing
/// and trailers excluded). The bytes are dropped as they come.
pub async fn read_body<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    framing: Framing,
) -> io::Result<u64> {
    match framing {
        Framing::Chunked => read_chunked(reader).await,
        Framing::Length(len) => skip(reader, len).await.map(|()| len),
        Framing::Close => tokio::io::copy(reader, &mut tokio::io::sink()).await,
    }
}

/// A chunked body's payload length, read through its last chunk and trailers.
pub async fn read_chunked<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<u64> {
    let mut total = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed inside the chunked body",
            ));
        }
        let size = chunk_size(&line)?;
        if size == 0 {
            return skip_trailers(reader, &mut line).await.map(|()| total);
        }
        skip(reader, size + 2).await?;
        total += size;
    }
}

/// The size on a chunk-size line (`1a2b;ext=1\r\n`).
pub fn chunk_size(line: &[u8]) -> io::Result<u64> {
    let text = std::str::from_utf8(line).unwrap_or("");
    let digits = text.split(';').next().unwrap_or("").trim();
    u64::from_str_radix(digits, 16).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad chunk size line {text:?}"),
        )
    })
}

async fn skip_trailers<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> io::Result<()> {
    loop {
        line.clear();
        if reader.read_until(b'\n', line).await? == 0 || line == b"\r\n" {
            return Ok(());
        }
    }
}

async fn skip<R: AsyncBufRead + Unpin>(reader: &mut R, len: u64) -> io::Result<()> {
    let copied = tokio::io::copy(&mut reader.take(len), &mut tokio::io::sink()).await?;
    if copied < len {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block_on;

    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Encoding: GZIP\r\n\
        Transfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nA: b\r\n\r\nnext";

    #[test]
    fn reads_a_chunked_body_to_its_end() {
        let mut reader = CHUNKED;
        let (head, len) = block_on(async {
            let head = read_head(&mut reader).await.unwrap();
            let len = read_body(&mut reader, head.framing()).await.unwrap();
            (head, len)
        });
        assert_eq!(head.status, 200);
        assert_eq!(head.coding(), "gzip");
        assert_eq!(head.framing(), Framing::Chunked);
        assert_eq!(len, 5 + 16);
        assert_eq!(reader, b"next", "stops after the trailers");
    }

    #[test]
    fn a_truncated_chunked_body_is_an_error() {
        let cut = &CHUNKED[..CHUNKED.len() - 30];
        let mut reader = cut;
        let err = block_on(async {
            let head = read_head(&mut reader).await.unwrap();
            read_body(&mut reader, head.framing()).await.unwrap_err()
        });
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn length_and_close_framing() {
        let head = Head::parse(b"HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\n");
        assert_eq!((head.status, head.framing()), (404, Framing::Length(3)));
        assert_eq!(head.coding(), "identity");
        let mut reader: &[u8] = b"abcdef";
        let len = block_on(read_body(&mut reader, Framing::Length(3))).unwrap();
        assert_eq!((len, reader), (3, &b"def"[..]));
        let len = block_on(read_body(&mut reader, Framing::Close)).unwrap();
        assert_eq!(len, 3);
    }

    #[test]
    fn chunk_size_lines() {
        assert_eq!(chunk_size(b"1A2b\r\n").unwrap(), 0x1a2b);
        assert_eq!(chunk_size(b"0;name=v\r\n").unwrap(), 0);
        assert!(chunk_size(b"zz\r\n").is_err());
    }

    #[test]
    fn a_request_names_its_coding_unless_identity() {
        let with = String::from_utf8(get("h:1", "/x", "br", true, "t")).unwrap();
        assert!(with.starts_with("GET /x HTTP/1.1\r\nHost: h:1\r\nAccept-Encoding: br\r\n"));
        assert!(with.contains("Connection: close\r\n") && with.ends_with("\r\n\r\n"));
        let without = String::from_utf8(get("h:1", "/x", "identity", false, "t")).unwrap();
        assert!(!without.contains("Accept-Encoding") && !without.contains("Connection"));
    }
}
