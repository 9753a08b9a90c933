//! One message, compressed or decompressed whole, with codec state drawn from the pool for
//! the message and given back after it (reset; discarded after a panic, as everywhere).
//!
//! The output buffer, prefix included, is the only allocation: the prefix is written first
//! and patched with the length once the message is done.

use bytes::{BufMut, Bytes, BytesMut};

use super::encoding::MessageEncoding;
use super::frame::{Message, PREFIX_LEN, Prefix};
use super::settings::Limits;
use super::status::{Code, GrpcStatus};
use crate::codec::{DecodeErrorKind, Decoder, EncodeError, Encoder, OneShot};
use crate::{CodecPool, CompressionLevel, ContentCoding};
use tower_gzip_codecs::deflate_bound;

/// How a side compresses the messages it sends.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Compress<'a> {
    pub(crate) coding: ContentCoding,
    pub(crate) level: CompressionLevel,
    /// Messages shorter than this go as they are, flag clear.
    pub(crate) min_size: usize,
    pub(crate) pool: &'a CodecPool,
}

impl Compress<'_> {
    /// The message, prefix included, as it goes on the wire: compressed, or as it came when
    /// it is short, already compressed, or compression would not make it smaller.
    pub(crate) fn message(&self, message: Message) -> Result<Bytes, GrpcStatus> {
        let payload = message.payload();
        if message.compressed || payload.len() < self.min_size {
            return Ok(message.frame);
        }
        let mut out = BytesMut::with_capacity(PREFIX_LEN + output_room(self.coding, payload.len()));
        out.put_bytes(0, PREFIX_LEN);
        self.encode(payload, &mut out)
            .map_err(|e| GrpcStatus::internal(format!("compressing a message: {e}")))?;
        if out.len() >= message.frame.len() {
            return Ok(message.frame);
        }
        Prefix::patch(&mut out, true);
        Ok(out.freeze())
    }

    /// Compresses all of `payload` as one stream, appended to `out`.
    ///
    /// gzip and deflate messages under [`ONE_SHOT_DEFLATE_FROM`] go through a pooled
    /// zlib-rs deflate state, the deflate tonic runs with a state it builds per message, so
    /// that a message never costs more than tonic's at the same level. libdeflate, which the
    /// one-shot path uses, is faster on some payloads of that size and slower on others
    /// (highly repetitive records); on longer messages it was faster on every payload
    /// measured (BENCHMARKS.md, "gRPC unary calls against tonic").
    fn encode(&self, payload: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        match self.coding {
            ContentCoding::Gzip | ContentCoding::Deflate if streams(payload.len()) => {
                let mut encoder = Encoder::new(self.coding, self.level, self.pool);
                encoder.encode(payload, out)?;
                encoder.finish(out)
            }
            coding => OneShot::new(coding)
                .level(self.level)
                .pool(self.pool)
                .encode(payload, out),
        }
    }
}

/// The length from which gzip and deflate messages are compressed in one shot (libdeflate,
/// with its feature) rather than by the pooled zlib-rs state.
const ONE_SHOT_DEFLATE_FROM: usize = 64 * 1024;

/// Whether a gzip or deflate message of `len` bytes goes through the zlib-rs state.
fn streams(len: usize) -> bool {
    len < ONE_SHOT_DEFLATE_FROM
}

/// The room to allocate for `len` bytes compressed, so that the encoder's own reserve
/// finds it there: the worst cases of zstd (`ZSTD_compressBound`, under
/// `len + len/128 + 128`) and of the zlib-rs encoder (zlib's `compressBound`, the gzip
/// header and trailer, its margin); libdeflate compresses into pooled scratch and reserves
/// what it wrote, which half the input holds for anything worth compressing.
fn output_room(coding: ContentCoding, len: usize) -> usize {
    match coding {
        ContentCoding::Zstd => len + len / 128 + 128,
        _ if streams(len) => deflate_bound(len).max(64) + DEFLATE_FRAMING_ROOM,
        _ => len / 2 + 64,
    }
}

/// The gzip header (10 bytes; zlib's is 2) and the zlib-rs encoder's margin past the bound
/// for its last block and trailer.
const DEFLATE_FRAMING_ROOM: usize = 10 + 64 + 8;

/// How a side decompresses the messages it receives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decompress<'a> {
    pub(crate) encoding: MessageEncoding,
    pub(crate) limits: Limits,
    pub(crate) pool: &'a CodecPool,
}

impl Decompress<'_> {
    /// The message, prefix included, with its flag clear: decoded if it was flagged
    /// compressed, else as it came.
    pub(crate) fn message(&self, message: Message) -> Result<Bytes, GrpcStatus> {
        if !message.compressed {
            return Ok(message.frame);
        }
        let coding = match self.encoding {
            MessageEncoding::Coding(coding) => coding,
            MessageEncoding::Identity => {
                return Err(GrpcStatus::internal(
                    "protocol error: a message is flagged compressed but grpc-encoding is identity",
                ));
            }
            MessageEncoding::Unknown => {
                let message = "a message is compressed in a grpc-encoding not accepted here";
                return Err(GrpcStatus::new(Code::Unimplemented, message));
            }
        };
        let payload = message.payload();
        if payload.is_empty() {
            return Err(GrpcStatus::internal(
                "compressed message is empty (truncated)",
            ));
        }
        self.decode(coding, payload)
    }

    /// Decodes `payload` into a new frame, never past the limits.
    fn decode(&self, coding: ContentCoding, payload: &[u8]) -> Result<Bytes, GrpcStatus> {
        let max_len = self.limits.max_decoded(payload.len());
        let mut decoder = Decoder::for_coding(coding, None, self.pool)
            .map_err(|e| decode_status(coding, e.kind(), &e))?;
        let hint = announced_size(coding, &decoder, payload).map_or(0, |n| n.min(max_len));
        // Room for the trailer's last steps too, so an honest size is one allocation.
        let mut out = BytesMut::with_capacity(PREFIX_LEN + hint + TAIL_ROOM);
        out.put_bytes(0, PREFIX_LEN);
        let mut input = payload;
        loop {
            let produced = out.len() - PREFIX_LEN;
            // One byte over the limit tells a message at the limit from one past it.
            let budget = max_len.saturating_add(1) - produced;
            let consumed = decoder
                .decode(input, &mut out, budget)
                .map_err(|e| decode_status(coding, e.kind(), &e))?;
            if out.len() - PREFIX_LEN > max_len {
                return Err(self.limits.exceeded(payload.len()));
            }
            input = &input[consumed..];
            let stalled = consumed == 0 && out.len() - PREFIX_LEN == produced;
            if (input.is_empty() && !decoder.has_pending_output()) || stalled {
                break;
            }
        }
        decoder
            .finish()
            .map_err(|e| decode_status(coding, e.kind(), &e))?;
        Prefix::patch(&mut out, false);
        Ok(out.freeze())
    }
}

/// Spare room past an announced size: the decoders want some before they read a trailer.
const TAIL_ROOM: usize = 1024;

/// The most deflate can inflate one byte of input to (RFC 1951's longest match per
/// shortest code): a gzip size past it is a lie.
const DEFLATE_MAX_RATIO: usize = 1032;

/// The decoded size a message announces, if believable: a zstd frame header's content size,
/// or a gzip trailer's ISIZE (the size modulo 2^32) when deflate could reach it. A hint for
/// one allocation, capped by the caller at the limit.
fn announced_size(coding: ContentCoding, decoder: &Decoder, payload: &[u8]) -> Option<usize> {
    match coding {
        ContentCoding::Gzip if payload.len() >= 18 => {
            let isize = payload.last_chunk::<4>().map(|b| u32::from_le_bytes(*b))?;
            let isize = isize as usize;
            (isize <= payload.len().saturating_mul(DEFLATE_MAX_RATIO)).then_some(isize)
        }
        ContentCoding::Zstd => decoder
            .announced_size(payload)
            .and_then(|n| usize::try_from(n).ok()),
        _ => None,
    }
}

/// The status for a message the decoder refused: `INTERNAL`, with what was wrong.
fn decode_status(
    coding: ContentCoding,
    kind: DecodeErrorKind,
    error: &dyn std::fmt::Display,
) -> GrpcStatus {
    let what = match kind {
        DecodeErrorKind::Truncated => "truncated",
        _ => "corrupt",
    };
    GrpcStatus::internal(format!("{} message {what}: {error}", coding.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(compressed: bool, payload: &[u8]) -> Message {
        let mut frame = BytesMut::new();
        Prefix::write(&mut frame, compressed, payload.len());
        frame.extend_from_slice(payload);
        Message {
            compressed,
            frame: frame.freeze(),
        }
    }

    fn compress(pool: &CodecPool) -> Compress<'_> {
        Compress {
            coding: ContentCoding::Gzip,
            level: CompressionLevel::Default,
            min_size: 16,
            pool,
        }
    }

    fn decompress(pool: &CodecPool, max_size: usize) -> Decompress<'_> {
        let limits = Limits {
            max_size,
            ..Limits::default()
        };
        let encoding = MessageEncoding::Coding(ContentCoding::Gzip);
        Decompress {
            encoding,
            limits,
            pool,
        }
    }

    fn reread(frame: Bytes) -> Message {
        Message {
            compressed: frame[0] == 1,
            frame,
        }
    }

    #[test]
    fn a_message_comes_back_as_it_was_sent() {
        let pool = CodecPool::new();
        let text = b"a gRPC message, a gRPC message, a gRPC message".repeat(20);
        let wire = compress(&pool).message(message(false, &text)).unwrap();
        assert_eq!(wire[0], 1);
        assert!(wire.len() < text.len() / 4);
        let back = decompress(&pool, 1 << 20).message(reread(wire)).unwrap();
        assert_eq!(back, message(false, &text).frame);
    }

    #[test]
    fn gzip_and_deflate_messages_on_either_side_of_the_one_shot_length_come_back() {
        let pool = CodecPool::new();
        let line = b"{\"id\":7,\"name\":\"item-7\",\"ok\":true}\n";
        for coding in [ContentCoding::Gzip, ContentCoding::Deflate] {
            for len in [1024, ONE_SHOT_DEFLATE_FROM - 1, ONE_SHOT_DEFLATE_FROM] {
                let text: Vec<u8> = line.iter().copied().cycle().take(len).collect();
                let side = Compress {
                    coding,
                    ..compress(&pool)
                };
                let wire = side.message(message(false, &text)).unwrap();
                assert_eq!(wire[0], 1, "{coding:?} {len}");
                let receiver = Decompress {
                    encoding: MessageEncoding::Coding(coding),
                    ..decompress(&pool, 1 << 20)
                };
                let back = receiver.message(reread(wire)).unwrap();
                assert_eq!(back, message(false, &text).frame, "{coding:?} {len}");
            }
        }
    }

    #[test]
    fn short_and_incompressible_messages_go_as_they_are() {
        let pool = CodecPool::new();
        let short = message(false, b"tiny");
        assert_eq!(compress(&pool).message(short.clone()).unwrap(), short.frame);
        let noise: Vec<u8> = (0..200u32).map(|i| (i * 7919 % 251) as u8).collect();
        let noisy = message(false, &noise);
        assert_eq!(compress(&pool).message(noisy.clone()).unwrap(), noisy.frame);
    }

    #[test]
    fn limits_and_corruption_have_their_statuses() {
        let pool = CodecPool::new();
        let zeros = compress(&pool)
            .message(message(false, &[0; 10_000]))
            .unwrap();
        let error = decompress(&pool, 9_999).message(reread(zeros.clone()));
        assert_eq!(error.unwrap_err().code(), Code::ResourceExhausted);
        assert!(
            decompress(&pool, 10_000)
                .message(reread(zeros.clone()))
                .is_ok()
        );
        let cut = zeros.slice(..zeros.len() - 4);
        let error = decompress(&pool, 10_000).message(reread(cut)).unwrap_err();
        assert_eq!(error.code(), Code::Internal);
        let identity = Decompress {
            encoding: MessageEncoding::Identity,
            ..decompress(&pool, 10_000)
        };
        let error = identity.message(reread(zeros)).unwrap_err();
        assert!(error.message().contains("identity"), "{error}");
    }
}
