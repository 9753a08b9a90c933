//! The seed's protocol (OpenIM `msggateway`): a client that dials with `compression=gzip`
//! (query or header) sends each binary message as one whole gzip member and expects the
//! same back; text messages are a plain side channel. Nothing in the response confirms it,
//! and it is not RFC 7692: such messages travel with RSV1 clear (gzip output does not
//! shrink again, so a connection with both leaves them uncompressed).
//!
//! Unlike the seed's pool, inflating is bounded while it runs (the seed reads a member to
//! its end, ~1000x the 51,200-byte frame limit), and a state that failed is not reused
//! (the crate's pool resets or drops it).

use bytes::{Bytes, BytesMut};

use crate::codec::{DecodeError, DecodeErrorKind, Decoder, EncodeError, Encoder};
use crate::{CodecPool, CompressionLevel, ContentCoding};

use super::stats::{self, Coding, Way};

/// Whether the request asks for OpenIM-style gzip messages: query `compression=gzip`, else
/// the request header `compression: gzip` (exactly `gzip`, as the seed compares).
pub fn asks_for_gzip(uri: &http::Uri, headers: &http::HeaderMap) -> bool {
    let in_query = uri.query().and_then(|q| {
        q.split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == "compression")
            .map(|(_, v)| v == "gzip")
    });
    in_query.unwrap_or_else(|| headers.get("compression").is_some_and(|v| v == "gzip"))
}

/// Whole-member gzip per binary message, through the pool, with a bound on what a message
/// may inflate to.
#[derive(Clone, Debug)]
pub struct GzipMessages {
    pool: CodecPool,
    level: CompressionLevel,
    limit: usize,
}

impl Default for GzipMessages {
    fn default() -> Self {
        GzipMessages {
            pool: CodecPool::global().clone(),
            level: CompressionLevel::Default,
            limit: 64 << 20,
        }
    }
}

impl GzipMessages {
    /// The global pool, the default level, messages up to 64 MiB inflated.
    pub fn new() -> Self {
        Self::default()
    }

    /// The most bytes one message may inflate to.
    pub fn limit(mut self, bytes: usize) -> Self {
        self.limit = bytes;
        self
    }

    /// The pool the states come from.
    pub fn pool(mut self, pool: CodecPool) -> Self {
        self.pool = pool;
        self
    }

    /// One gzip member holding `message`.
    pub fn encode(&self, message: &[u8]) -> Result<Bytes, EncodeError> {
        let mut encoder = Encoder::for_coding(ContentCoding::Gzip, self.level, None, &self.pool)?;
        let mut out = BytesMut::with_capacity(message.len() / 3 + 32);
        encoder.encode(message, &mut out)?;
        encoder.finish(&mut out)?;
        stats::note_message(Coding::Gzip, Way::Out, message.len(), out.len());
        Ok(out.freeze())
    }

    /// The content of one whole gzip member; `TooLarge` as soon as it passes the limit
    /// (the inflater stops there), `TrailingData` after the member.
    pub fn decode(&self, member: &[u8]) -> Result<Bytes, DecodeError> {
        let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &self.pool)?;
        let mut out = BytesMut::new();
        let mut input = member;
        while !decoder.is_stream_end() && (!input.is_empty() || decoder.has_pending_output()) {
            let room = (self.limit + 1 - out.len()).min(64 * 1024);
            let consumed = decoder.decode(input, &mut out, room)?;
            input = &input[consumed..];
            if out.len() > self.limit {
                return Err(DecodeError::new(
                    DecodeErrorKind::TooLarge,
                    "gzip message over the limit",
                ));
            }
        }
        if !decoder.is_stream_end() {
            return Err(DecodeError::new(
                DecodeErrorKind::Truncated,
                "gzip message ends inside the member",
            ));
        }
        if !input.is_empty() {
            return Err(DecodeError::new(
                DecodeErrorKind::TrailingData,
                "bytes after the gzip member",
            ));
        }
        stats::note_message(Coding::Gzip, Way::In, out.len(), member.len());
        Ok(out.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip_and_bombs_stop_at_the_limit() {
        let codec = GzipMessages::new().pool(CodecPool::new()).limit(1000);
        let member = codec.encode(b"{\"cmd\": 1001}").unwrap();
        assert_eq!(&codec.decode(&member).unwrap()[..], b"{\"cmd\": 1001}");
        let bomb = GzipMessages::new().encode(&vec![0; 1 << 20]).unwrap();
        assert_eq!(
            codec.decode(&bomb).unwrap_err().kind(),
            DecodeErrorKind::TooLarge
        );
        let mut trailing = member.to_vec();
        trailing.push(0);
        assert!(codec.decode(&trailing).is_err());
        assert!(codec.decode(&member[..member.len() - 3]).is_err());
    }

    #[test]
    fn the_ask_is_read_from_the_query_then_the_header() {
        let parts = |uri: &str, header: Option<&str>| {
            let mut b = http::Request::builder().uri(uri);
            if let Some(h) = header {
                b = b.header("compression", h);
            }
            let parts = b.body(()).unwrap().into_parts().0;
            asks_for_gzip(&parts.uri, &parts.headers)
        };
        assert!(parts("/ws?sendID=1&compression=gzip", None));
        assert!(!parts("/ws?compression=deflate", Some("gzip")));
        assert!(parts("/ws", Some("gzip")));
        assert!(!parts("/ws", None));
    }
}
