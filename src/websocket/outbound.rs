//! The write side: tungstenite's RSV1-clear frames in, the wire's frames out.
//!
//! Headers are parsed across writes. Control frames and messages left uncompressed pass
//! through; a data frame to compress is collected (tungstenite writes a message as one frame
//! unless the user sends fragments), unmasked, deflated with a sync flush whose trailing
//! `00 00 ff ff` goes (RFC 7692 section 7.2.1), re-masked with the key tungstenite chose,
//! and sent with RSV1 on the message's first frame only. A message that does not shrink is
//! sent as it was: RSV1 clear, and it does not enter the history.

use bytes::BytesMut;

use super::config::Reservation;
use super::frame::{Header, OpCode, PartialHeader, apply_mask};
use super::history::History;
use super::kept::Keeper;
use super::stats::{self, Coding, Way};
use crate::CodecPool;
use tower_gzip_codecs::deflate_bound;
use tower_gzip_codecs::raw::{RawDeflate, strip_sync_marker};

/// What the write side needs to compress.
#[derive(Debug)]
pub(crate) struct OutboundCodec {
    pub(crate) pool: CodecPool,
    pub(crate) level: u8,
    pub(crate) threshold: usize,
    pub(crate) window_bits: u8,
    pub(crate) history: Option<History>,
    /// With takeover, whether the compressor may stay with the connection between messages.
    pub(crate) keeper: Option<Keeper>,
}

/// Where the parser is within tungstenite's frames.
#[derive(Debug)]
enum WritePhase {
    /// Collecting a frame header's bytes.
    Header(PartialHeader),
    /// Passing `left` payload bytes through.
    Copy { left: u64 },
    /// Collecting a frame's payload to compress it.
    Collect { header: Header, payload: BytesMut },
}

/// A fragmented message being compressed, frame by frame, with one state.
// Not boxed: one per connection, where a box cost an allocation per message.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Message {
    Idle,
    Compressed(Deflating),
}

#[derive(Debug)]
struct Deflating {
    deflate: RawDeflate,
    /// The budget's charge for a kept compressor (none for one drawn from the pool).
    charge: Option<Reservation>,
    /// The message's bytes, kept for the history (takeover only).
    plain: Vec<u8>,
    plain_bytes: usize,
    wire: usize,
}

/// The write side's state.
#[derive(Debug)]
pub(crate) struct Outbound {
    codec: Option<OutboundCodec>,
    phase: WritePhase,
    message: Message,
    /// Bytes ready for the socket.
    pub(crate) wire: BytesMut,
}

impl Outbound {
    pub(crate) fn new() -> Self {
        Outbound {
            codec: None,
            phase: WritePhase::Header(PartialHeader::default()),
            message: Message::Idle,
            wire: BytesMut::new(),
        }
    }

    /// Starts compressing (after the handshake).
    pub(crate) fn arm(&mut self, codec: OutboundCodec) {
        self.codec = Some(codec);
    }

    /// Whether a frame of our own (a Close) can be inserted now: no frame is half written.
    pub(crate) fn at_frame_boundary(&self) -> bool {
        matches!(&self.phase, WritePhase::Header(head) if head.is_empty())
    }

    /// Takes all of `buf` (tungstenite's bytes), appending what is ready to `wire`.
    pub(crate) fn push(&mut self, mut buf: &[u8]) -> Result<(), String> {
        if self.codec.is_none() {
            self.wire.extend_from_slice(buf);
            return Ok(());
        }
        while !buf.is_empty() {
            let taken = match std::mem::replace(
                &mut self.phase,
                WritePhase::Header(PartialHeader::default()),
            ) {
                WritePhase::Header(head) => self.take_header(head, buf)?,
                WritePhase::Copy { left } => self.copy(left, buf),
                WritePhase::Collect { header, payload } => self.collect(header, payload, buf)?,
            };
            buf = &buf[taken..];
        }
        Ok(())
    }

    fn take_header(&mut self, mut head: PartialHeader, buf: &[u8]) -> Result<usize, String> {
        // Byte by byte until it parses: a header is at most 14 bytes.
        let mut taken = 0;
        let (header, _) = loop {
            if let Some(parsed) = Header::parse(head.as_slice()) {
                break parsed;
            }
            let Some(&byte) = buf.get(taken) else {
                self.phase = WritePhase::Header(head);
                return Ok(taken);
            };
            if !head.push(byte) {
                return Err("a frame header past 14 bytes".into());
            }
            taken += 1;
        };
        if self.compresses(&header) {
            let payload = BytesMut::with_capacity(header.len.min(1 << 20) as usize);
            self.phase = WritePhase::Collect { header, payload };
            if header.len == 0 {
                self.finish_frame(header, BytesMut::new())?;
            }
        } else {
            self.wire.extend_from_slice(head.as_slice());
            self.phase = WritePhase::Copy { left: header.len };
            if header.len == 0 {
                self.phase = WritePhase::Header(PartialHeader::default());
            }
        }
        Ok(taken)
    }

    /// Whether the frame is compressed: data frames at or above the threshold start a
    /// compressed message; continuations follow their message.
    fn compresses(&mut self, header: &Header) -> bool {
        let threshold = self.codec.as_ref().map_or(usize::MAX, |c| c.threshold);
        match header.opcode {
            _ if header.is_control() || header.rsv1 || header.rsv23 != 0 => false,
            OpCode::Text | OpCode::Binary => {
                let small = header.fin && header.len < threshold as u64;
                if small {
                    stats::note_message(
                        Coding::Identity,
                        Way::Out,
                        header.len as usize,
                        header.len as usize,
                    );
                } else if !header.fin {
                    // Decided at the first frame; the message is compressed whole.
                    self.message = Message::Idle;
                    return true;
                }
                !small
            }
            OpCode::Continuation => matches!(self.message, Message::Compressed(_)),
            _ => false,
        }
    }

    fn copy(&mut self, left: u64, buf: &[u8]) -> usize {
        let n = left.min(buf.len() as u64) as usize;
        self.wire.extend_from_slice(&buf[..n]);
        if left > n as u64 {
            self.phase = WritePhase::Copy {
                left: left - n as u64,
            };
        }
        n
    }

    fn collect(
        &mut self,
        header: Header,
        mut payload: BytesMut,
        buf: &[u8],
    ) -> Result<usize, String> {
        let want = (header.len - payload.len() as u64).min(buf.len() as u64) as usize;
        payload.extend_from_slice(&buf[..want]);
        if payload.len() as u64 == header.len {
            self.finish_frame(header, payload)?;
        } else {
            self.phase = WritePhase::Collect { header, payload };
        }
        Ok(want)
    }

    /// The connection's kept compressor, or one drawn and primed with the history.
    fn start_message(&mut self) -> Result<(), String> {
        let codec = self.codec.as_mut().expect("armed");
        let (deflate, charge) = match codec.keeper.as_mut().and_then(Keeper::take) {
            Some(kept) => (kept.deflate, Some(kept.charge)),
            None => {
                let window = codec.history.as_ref().map_or(&[][..], History::window);
                let deflate = RawDeflate::draw(&codec.pool, codec.level, codec.window_bits, window)
                    .map_err(|e| e.to_string())?;
                (deflate, None)
            }
        };
        self.message = Message::Compressed(Deflating {
            deflate,
            charge,
            plain: Vec::new(),
            plain_bytes: 0,
            wire: 0,
        });
        Ok(())
    }

    /// The message's last frame is out: its bytes enter the history, its state goes back
    /// (or stays with the connection).
    fn end_message(&mut self) {
        let Message::Compressed(msg) = std::mem::replace(&mut self.message, Message::Idle) else {
            unreachable!("ending a compressed message");
        };
        stats::note_message(Coding::Deflate, Way::Out, msg.plain_bytes, msg.wire);
        let codec = self.codec.as_mut().expect("armed");
        if let Some(history) = &mut codec.history {
            history.push(&msg.plain);
        }
        if let Some(keeper) = &mut codec.keeper {
            keeper.keep(msg.deflate, msg.charge);
        }
    }

    /// Compresses a whole frame's payload and appends the frame to `wire`.
    fn finish_frame(&mut self, header: Header, mut payload: BytesMut) -> Result<(), String> {
        self.phase = WritePhase::Header(PartialHeader::default());
        if let Some(key) = header.mask {
            apply_mask(&mut payload, key, 0);
        }
        let first = !matches!(header.opcode, OpCode::Continuation);
        if first {
            self.start_message()?;
        }
        let codec = self.codec.as_mut().expect("armed");
        let Message::Compressed(msg) = &mut self.message else {
            unreachable!("compressing outside a compressed message");
        };
        // Room for the worst case, so that the flush never grows it.
        let mut body = BytesMut::with_capacity(deflate_bound(payload.len()).max(64));
        msg.deflate
            .sync_flush(&payload, &mut body)
            .map_err(|e| e.to_string())?;
        if header.fin {
            strip_sync_marker(&mut body, 0);
        }
        if first && header.fin && body.len() >= payload.len() && codec.threshold > 0 {
            // Incompressible: sent as it was, outside the history, so the state that took
            // it in goes back to the pool.
            self.message = Message::Idle;
            if let Some(keeper) = &mut codec.keeper {
                keeper.drop_place();
            }
            stats::note_message(Coding::Identity, Way::Out, payload.len(), payload.len());
            write_frame(
                &mut self.wire,
                Header {
                    rsv1: false,
                    ..header
                },
                payload,
            );
            return Ok(());
        }
        msg.wire += body.len();
        msg.plain_bytes += payload.len();
        if codec.history.is_some() {
            msg.plain.extend_from_slice(&payload);
        }
        write_frame(
            &mut self.wire,
            Header {
                rsv1: first,
                len: body.len() as u64,
                ..header
            },
            body,
        );
        if header.fin {
            self.end_message();
        }
        Ok(())
    }
}

/// Appends `header` and `payload` (masked with the header's key, if any) to `wire`.
fn write_frame(wire: &mut BytesMut, header: Header, mut payload: BytesMut) {
    wire.reserve(14 + payload.len());
    Header {
        len: payload.len() as u64,
        ..header
    }
    .write(wire);
    if let Some(key) = header.mask {
        apply_mask(&mut payload, key, 0);
    }
    wire.extend_from_slice(&payload);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_gzip_codecs::raw::{RawInflate, SYNC_MARKER};

    fn armed(history: bool) -> Outbound {
        armed_at(history, 16)
    }

    fn armed_at(history: bool, threshold: usize) -> Outbound {
        let mut outbound = Outbound::new();
        outbound.arm(OutboundCodec {
            pool: CodecPool::new(),
            level: 6,
            threshold,
            window_bits: 15,
            history: history.then(|| History::new(15)),
            keeper: None,
        });
        outbound
    }

    fn frame(opcode: OpCode, fin: bool, mask: Option<[u8; 4]>, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        Header {
            fin,
            rsv1: false,
            rsv23: 0,
            opcode,
            mask,
            len: payload.len() as u64,
        }
        .write(&mut out);
        let mut payload = payload.to_vec();
        if let Some(key) = mask {
            apply_mask(&mut payload, key, 0);
        }
        out.extend(payload);
        out
    }

    fn inflate(wire: &[u8]) -> Vec<u8> {
        let pool = CodecPool::new();
        let mut inflate = RawInflate::draw(&pool, &[]).unwrap();
        let mut input = wire.to_vec();
        input.extend_from_slice(&SYNC_MARKER);
        let mut out = BytesMut::new();
        inflate.inflate(&input, &mut out, 1 << 20).unwrap();
        out.to_vec()
    }

    #[test]
    fn a_masked_message_is_compressed_and_remasked_with_rsv1() {
        let text = b"compress me, compress me, compress me, compress me".repeat(10);
        let key = [1, 2, 3, 4];
        let mut outbound = armed(false);
        for chunk in frame(OpCode::Text, true, Some(key), &text).chunks(7) {
            outbound.push(chunk).unwrap();
        }
        let (header, at) = Header::parse(&outbound.wire).unwrap();
        assert!(header.rsv1 && header.fin);
        assert_eq!(header.mask, Some(key));
        let mut body = outbound.wire[at..].to_vec();
        apply_mask(&mut body, key, 0);
        assert!(body.len() < text.len() / 4);
        assert_eq!(inflate(&body), text);
    }

    #[test]
    fn small_and_incompressible_messages_and_controls_pass_as_they_are() {
        let mut outbound = armed(true);
        let noise = tower_gzip_support::data::noise(500, 1);
        let mut bytes = frame(OpCode::Binary, true, None, b"tiny");
        bytes.extend(frame(OpCode::Control(9), true, None, b"ping"));
        bytes.extend(frame(OpCode::Binary, true, None, &noise));
        outbound.push(&bytes).unwrap();
        assert_eq!(&outbound.wire[..], &bytes[..]);
        assert!(
            outbound
                .codec
                .as_ref()
                .unwrap()
                .history
                .as_ref()
                .unwrap()
                .window()
                .is_empty()
        );
    }

    #[test]
    fn a_threshold_of_zero_compresses_every_data_message_even_when_it_grows() {
        let mut outbound = armed_at(false, 0);
        let bytes = frame(OpCode::Binary, true, None, b"tiny");
        outbound.push(&bytes).unwrap();
        let (header, at) = Header::parse(&outbound.wire).unwrap();
        assert!(header.rsv1 && header.fin);
        let body = &outbound.wire[at..];
        assert!(body.len() >= 4, "deflate grows four bytes: {body:?}");
        assert_eq!(inflate(body), b"tiny");
    }

    #[test]
    fn fragments_share_one_stream_and_rsv1_is_on_the_first_only() {
        let part = b"fragmented fragmented fragmented fragmented ".repeat(4);
        let mut outbound = armed(false);
        let mut bytes = frame(OpCode::Text, false, None, &part);
        bytes.extend(frame(OpCode::Control(9), true, None, b""));
        bytes.extend(frame(OpCode::Continuation, true, None, &part));
        outbound.push(&bytes).unwrap();
        let mut rest = &outbound.wire[..];
        let mut body = Vec::new();
        let mut rsv1 = Vec::new();
        while let Some((h, at)) = Header::parse(rest) {
            rsv1.push(h.rsv1);
            if !h.is_control() {
                body.extend_from_slice(&rest[at..at + h.len as usize]);
            }
            rest = &rest[at + h.len as usize..];
        }
        assert_eq!(rsv1, [true, false, false]);
        assert_eq!(inflate(&body), [&part[..], &part[..]].concat());
    }

    #[test]
    fn a_kept_compressor_holds_the_history_the_peer_holds() {
        use crate::websocket::kept::compressor_bytes;
        use crate::websocket::{KeptCompressors, WindowBudget};

        let places = KeptCompressors::new(1);
        let budget = WindowBudget::new(1 << 30);
        let mut outbound = armed(true);
        outbound.codec.as_mut().unwrap().keeper =
            Some(Keeper::new(places.clone(), budget.clone(), 15));
        // The peer: one inflater for the whole connection (it takes over its context).
        let pool = CodecPool::new();
        let mut peer = RawInflate::draw(&pool, &[]).unwrap();
        let json =
            |i: u32| format!(r#"{{"id":{i},"kind":"t3","title":"a post about websockets"}}"#);
        let noise = tower_gzip_support::data::noise(300, 2);
        let messages: Vec<Vec<u8>> = vec![
            json(1).repeat(4).into_bytes(),
            json(2).repeat(4).into_bytes(),
            noise,
            json(3).repeat(4).into_bytes(),
            json(4).repeat(4).into_bytes(),
            json(5).repeat(4).into_bytes(),
        ];
        let mut sizes = Vec::new();
        for (i, message) in messages.iter().enumerate() {
            if i == 4 {
                outbound
                    .codec
                    .as_ref()
                    .unwrap()
                    .keeper
                    .as_ref()
                    .unwrap()
                    .lose_place();
            }
            outbound.wire.clear();
            outbound
                .push(&frame(OpCode::Text, true, None, message))
                .unwrap();
            let (header, at) = Header::parse(&outbound.wire).unwrap();
            let body = &outbound.wire[at..];
            sizes.push(body.len());
            if !header.rsv1 {
                assert_eq!(body, &message[..], "message {i} went as it was");
                continue;
            }
            let mut input = body.to_vec();
            input.extend_from_slice(&SYNC_MARKER);
            let mut out = BytesMut::new();
            peer.inflate(&input, &mut out, 1 << 20).unwrap();
            assert_eq!(&out[..], &message[..], "message {i}");
            assert_eq!(places.held(), 1, "kept after message {i}");
            assert!(crate::websocket::stats().kept_compressors >= 1);
            assert_eq!(budget.held(), compressor_bytes(15));
        }
        // Each message after the first refers to the one before.
        assert!(sizes[1] < sizes[0] / 2, "{sizes:?}");
        assert!(sizes[5] < sizes[0] / 2, "{sizes:?}");
    }
}
