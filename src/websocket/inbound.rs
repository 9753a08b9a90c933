//! The read side: frames from the peer in, RSV1-clear frames for tungstenite out.
//!
//! Frames that are not compressed pass through byte for byte. A compressed message (RSV1
//! on its first frame, RFC 7692 section 6) is unmasked, inflated as its payload arrives,
//! and re-emitted as RSV1-clear frames of at most [`CHUNK`] bytes (one frame when its last
//! frame's payload is all there and inflates within a chunk): streaming keeps control frames
//! that arrive between fragments in their order (RFC 6455 section 5.4), and the inflated
//! message is never held whole here. Server role: the
//! re-emitted frames carry a zero mask key, so tungstenite's own masking rule still holds
//! and its config is the user's.

use bytes::{Buf, BytesMut};

use super::frame::{Header, OpCode, apply_mask};
use super::history::History;
use super::stats::{self, Coding, Way};
use crate::CodecPool;
use tower_gzip_codecs::raw::{RawInflate, SYNC_MARKER};

/// The most inflated bytes one re-emitted frame carries, and one inflate call makes.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Why the adapter fails the connection, with the close code it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// 1002: RSV1 on a control or continuation frame, a mask where none belongs, a new
    /// message inside another.
    Protocol(&'static str),
    /// 1007: the compressed data does not inflate.
    InvalidData(&'static str),
    /// 1009: the inflated message passed the limit.
    TooBig,
}

impl Fault {
    pub(crate) fn code(self) -> u16 {
        match self {
            Fault::Protocol(_) => 1002,
            Fault::InvalidData(_) => 1007,
            Fault::TooBig => 1009,
        }
    }

    pub(crate) fn reason(self) -> &'static str {
        match self {
            Fault::Protocol(why) | Fault::InvalidData(why) => why,
            Fault::TooBig => "message too big",
        }
    }
}

/// What the read side needs to inflate: the pool, the limit, and with takeover the window.
#[derive(Debug)]
pub(crate) struct InboundCodec {
    pub(crate) pool: CodecPool,
    pub(crate) limit: usize,
    pub(crate) history: Option<History>,
}

/// Where the parser is within the frame stream.
#[derive(Debug)]
enum ReadPhase {
    /// Waiting for a whole frame header.
    Header,
    /// Passing `left` payload bytes through.
    Copy { left: u64 },
    /// Inflating `left` more payload bytes of a compressed message's frame.
    Inflate(Frame),
    /// The last frame's payload is in: inflating what is pending, then the sync marker.
    Ending,
}

/// A compressed frame being read.
#[derive(Debug)]
struct Frame {
    left: u64,
    mask: Option<[u8; 4]>,
    offset: u64,
    fin: bool,
}

/// Where the message stream is.
// Not boxed: one per connection, where a box cost an allocation per message.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Message {
    /// Between messages.
    Idle,
    /// An uncompressed fragmented message: its continuations pass through.
    Plain,
    /// A compressed message being inflated.
    Compressed(Inflating),
}

#[derive(Debug)]
struct Inflating {
    inflate: RawInflate,
    /// The opcode of the next re-emitted frame: the message's own, then continuation.
    next_opcode: OpCode,
    /// Unmasked compressed bytes not yet taken by the inflater.
    pending: BytesMut,
    /// The inflater's output before it is framed, one buffer for the whole message.
    scratch: BytesMut,
    plain: usize,
    wire: usize,
    /// The deflate data ended (a BFINAL block): what follows is ignored.
    ended: bool,
}

/// What a step did.
pub(crate) enum Step {
    /// Something moved: step again.
    Progress,
    /// The raw buffer needs more bytes from the socket.
    NeedMore,
}

/// The read side's state.
#[derive(Debug)]
pub(crate) struct Inbound {
    /// Server role: frames in must be masked, frames out carry a zero key.
    server: bool,
    codec: Option<InboundCodec>,
    /// Bytes from the socket not yet parsed.
    pub(crate) raw: BytesMut,
    /// Bytes ready for tungstenite.
    pub(crate) out: BytesMut,
    phase: ReadPhase,
    message: Message,
}

impl Inbound {
    pub(crate) fn new(server: bool) -> Self {
        Inbound {
            server,
            codec: None,
            raw: BytesMut::new(),
            out: BytesMut::new(),
            phase: ReadPhase::Header,
            message: Message::Idle,
        }
    }

    /// Starts inflating compressed messages (after the handshake).
    pub(crate) fn arm(&mut self, codec: InboundCodec) {
        self.codec = Some(codec);
    }

    /// One step of parsing: moves bytes from `raw` to `out`.
    pub(crate) fn step(&mut self) -> Result<Step, Fault> {
        if self.codec.is_none() {
            // Not negotiated: everything passes through.
            let all = self.raw.split();
            self.out.extend_from_slice(&all);
            return Ok(if all.is_empty() {
                Step::NeedMore
            } else {
                Step::Progress
            });
        }
        match std::mem::replace(&mut self.phase, ReadPhase::Header) {
            ReadPhase::Header => self.read_header(),
            ReadPhase::Copy { left } => Ok(self.copy(left)),
            ReadPhase::Inflate(frame) => self.inflate_frame(frame),
            ReadPhase::Ending => self.end_message(),
        }
    }

    fn read_header(&mut self) -> Result<Step, Fault> {
        let Some((header, len)) = Header::parse(&self.raw) else {
            return Ok(Step::NeedMore);
        };
        if header.mask.is_some() != self.server {
            return Err(Fault::Protocol("frame masking does not match the role"));
        }
        let compressed = self.classify(&header)?;
        if compressed {
            self.raw.advance(len);
            self.phase = ReadPhase::Inflate(Frame {
                left: header.len,
                mask: header.mask,
                offset: 0,
                fin: header.fin,
            });
        } else {
            self.out.extend_from_slice(&self.raw[..len]);
            self.raw.advance(len);
            self.phase = ReadPhase::Copy { left: header.len };
        }
        Ok(Step::Progress)
    }

    /// Whether the frame belongs to a compressed message, enforcing RFC 7692 section 6's
    /// rules on RSV1 and starting or ending messages.
    fn classify(&mut self, header: &Header) -> Result<bool, Fault> {
        match header.opcode {
            OpCode::Control(_) => {
                if header.rsv1 {
                    return Err(Fault::Protocol("RSV1 set on a control frame"));
                }
                Ok(false)
            }
            OpCode::Continuation => {
                if header.rsv1 {
                    return Err(Fault::Protocol("RSV1 set on a continuation frame"));
                }
                match &self.message {
                    Message::Compressed(_) => Ok(true),
                    Message::Plain | Message::Idle => {
                        if header.fin {
                            self.message = Message::Idle;
                        }
                        Ok(false) // tungstenite rejects a stray continuation itself
                    }
                }
            }
            OpCode::Text | OpCode::Binary => {
                if !matches!(self.message, Message::Idle) {
                    return Err(Fault::Protocol("a new message inside a fragmented one"));
                }
                if header.rsv1 {
                    self.start_message(header.opcode)?;
                    return Ok(true);
                }
                if !header.fin {
                    self.message = Message::Plain;
                }
                Ok(false)
            }
            // Reserved data opcodes (RFC 6455 section 5.2: the connection fails); the
            // adapter parses every frame once armed, so it says so itself.
            OpCode::ReservedData(_) => Err(Fault::Protocol("reserved opcode")),
        }
    }

    fn start_message(&mut self, opcode: OpCode) -> Result<(), Fault> {
        let codec = self.codec.as_ref().expect("armed");
        let window = codec.history.as_ref().map_or(&[][..], History::window);
        let inflate = RawInflate::draw(&codec.pool, window)
            .map_err(|_| Fault::InvalidData("inflate dictionary refused"))?;
        self.message = Message::Compressed(Inflating {
            inflate,
            next_opcode: opcode,
            pending: BytesMut::new(),
            scratch: BytesMut::new(),
            plain: 0,
            wire: 0,
            ended: false,
        });
        Ok(())
    }

    fn copy(&mut self, left: u64) -> Step {
        let n = (left.min(self.raw.len() as u64)) as usize;
        self.out.extend_from_slice(&self.raw[..n]);
        self.raw.advance(n);
        if left - n as u64 > 0 {
            self.phase = ReadPhase::Copy {
                left: left - n as u64,
            };
            return if n == 0 {
                Step::NeedMore
            } else {
                Step::Progress
            };
        }
        Step::Progress
    }

    /// Moves the frame's payload (unmasked) to the inflater's input, and inflates it.
    fn inflate_frame(&mut self, mut frame: Frame) -> Result<Step, Fault> {
        let Message::Compressed(msg) = &mut self.message else {
            unreachable!("a compressed frame outside a compressed message");
        };
        let n = (frame.left.min(self.raw.len() as u64)) as usize;
        let start = msg.pending.len();
        msg.pending.extend_from_slice(&self.raw[..n]);
        self.raw.advance(n);
        if let Some(key) = frame.mask {
            apply_mask(&mut msg.pending[start..], key, frame.offset);
        }
        msg.wire += n;
        frame.left -= n as u64;
        frame.offset += n as u64;
        // A message's last bytes are inflated once, with the sync marker, so that a message
        // that fits in one chunk reaches tungstenite as one frame.
        let last = frame.left == 0 && frame.fin;
        let produced = if last { 0 } else { self.drain_inflater(false)? };
        match frame {
            Frame {
                left: 0, fin: true, ..
            } => self.phase = ReadPhase::Ending,
            Frame { left: 0, .. } => {}
            frame => {
                let needs_bytes = n == 0 && produced == 0;
                self.phase = ReadPhase::Inflate(frame);
                if needs_bytes {
                    return Ok(Step::NeedMore);
                }
            }
        }
        Ok(Step::Progress)
    }

    /// Appends the sync marker (RFC 7692 section 7.2.2), inflates the rest and ends the
    /// message with a FIN frame.
    fn end_message(&mut self) -> Result<Step, Fault> {
        if let Message::Compressed(msg) = &mut self.message {
            msg.pending.extend_from_slice(&SYNC_MARKER);
        }
        self.drain_inflater(true)?;
        let Message::Compressed(msg) = std::mem::replace(&mut self.message, Message::Idle) else {
            unreachable!("ending a compressed message");
        };
        stats::note_message(Coding::Deflate, Way::In, msg.plain, msg.wire);
        Ok(Step::Progress)
    }

    /// Inflates all pending input into re-emitted frames of at most [`CHUNK`] bytes; with
    /// `last`, the final one has FIN set (even when empty). Returns the bytes produced.
    fn drain_inflater(&mut self, last: bool) -> Result<usize, Fault> {
        let Message::Compressed(msg) = &mut self.message else {
            unreachable!("inflating outside a compressed message");
        };
        let codec = self.codec.as_mut().expect("armed");
        let mut total = 0;
        loop {
            let plain = &mut msg.scratch;
            plain.clear();
            let room = CHUNK.min(codec.limit - msg.plain + 1);
            let mut done = msg.ended;
            if !msg.ended {
                let step = msg
                    .inflate
                    .inflate(&msg.pending, plain, room)
                    .map_err(|_| Fault::InvalidData("invalid deflate data"))?;
                msg.pending.advance(step.consumed);
                msg.ended = step.ended;
                // A call that moved nothing (zlib never does with input and room, but the
                // loop must not rely on it) ends the drain too.
                let stalled = step.consumed == 0 && step.produced == 0;
                done = msg.pending.is_empty() && step.produced < room || step.ended || stalled;
            }
            if msg.ended {
                msg.pending.clear(); // after a BFINAL block nothing more is deflate
            }
            msg.plain += plain.len();
            total += plain.len();
            if msg.plain > codec.limit {
                return Err(Fault::TooBig);
            }
            if let Some(history) = &mut codec.history {
                history.push(plain);
            }
            let fin = last && done;
            if !plain.is_empty() || fin {
                emit(&mut self.out, self.server, msg.next_opcode, fin, plain);
                msg.next_opcode = OpCode::Continuation;
            }
            if done {
                return Ok(total);
            }
        }
    }
}

/// Appends an RSV1-clear frame with `payload` to `out`; server role: masked with a zero key
/// (the payload is unchanged by it).
fn emit(out: &mut BytesMut, server: bool, opcode: OpCode, fin: bool, payload: &[u8]) {
    let header = Header {
        fin,
        rsv1: false,
        rsv23: 0,
        opcode,
        mask: server.then_some([0; 4]),
        len: payload.len() as u64,
    };
    out.reserve(14 + payload.len());
    header.write(out);
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_gzip_codecs::raw::{RawDeflate, strip_sync_marker};

    fn armed(limit: usize) -> Inbound {
        let mut inbound = Inbound::new(false);
        inbound.arm(InboundCodec {
            pool: CodecPool::new(),
            limit,
            history: None,
        });
        inbound
    }

    fn compressed(data: &[u8]) -> Vec<u8> {
        let pool = CodecPool::new();
        let mut deflate = RawDeflate::draw(&pool, 6, 15, &[]).unwrap();
        let mut wire = BytesMut::new();
        deflate.sync_flush(data, &mut wire).unwrap();
        assert!(strip_sync_marker(&mut wire, 0));
        wire.to_vec()
    }

    fn frame(fin: bool, rsv1: bool, opcode: OpCode, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let header = Header {
            fin,
            rsv1,
            rsv23: 0,
            opcode,
            mask: None,
            len: payload.len() as u64,
        };
        header.write(&mut out);
        out.extend_from_slice(payload);
        out
    }

    fn run(inbound: &mut Inbound, bytes: &[u8]) -> Result<(), Fault> {
        for byte in bytes {
            // One byte at a time: every phase must cope with partial input.
            inbound.raw.extend_from_slice(&[*byte]);
            while let Step::Progress = inbound.step()? {}
        }
        Ok(())
    }

    /// Reassembles the payloads tungstenite would see, with their opcodes.
    fn frames(mut out: &[u8]) -> Vec<(OpCode, bool, Vec<u8>)> {
        let mut list = Vec::new();
        while let Some((h, at)) = Header::parse(out) {
            assert!(!h.rsv1);
            let end = at + h.len as usize;
            list.push((h.opcode, h.fin, out[at..end].to_vec()));
            out = &out[end..];
        }
        list
    }

    #[test]
    fn a_compressed_message_fragmented_around_a_ping_comes_out_in_order() {
        let text = b"hello hello hello hello hello, permessage-deflate".repeat(20);
        let wire = compressed(&text);
        let mut bytes = frame(false, true, OpCode::Text, &wire[..10]);
        bytes.extend(frame(true, false, OpCode::Control(9), b"ping"));
        bytes.extend(frame(true, false, OpCode::Continuation, &wire[10..]));
        let mut inbound = armed(1 << 20);
        run(&mut inbound, &bytes).unwrap();
        let got = frames(&inbound.out);
        let ping = got.iter().position(|f| f.0 == OpCode::Control(9)).unwrap();
        let message: Vec<u8> = got
            .iter()
            .filter(|f| f.0 != OpCode::Control(9))
            .flat_map(|f| f.2.clone())
            .collect();
        assert_eq!(message, text);
        assert_eq!(got[0].0, OpCode::Text);
        assert!(got.last().unwrap().1);
        assert!(ping >= 1);
    }

    #[test]
    fn rsv1_on_control_or_continuation_is_a_protocol_error() {
        let mut inbound = armed(1 << 20);
        let bad = frame(true, true, OpCode::Control(9), b"x");
        assert!(matches!(run(&mut inbound, &bad), Err(Fault::Protocol(_))));
        let mut inbound = armed(1 << 20);
        let mut bytes = frame(false, false, OpCode::Binary, b"a");
        bytes.extend(frame(true, true, OpCode::Continuation, b"b"));
        assert!(matches!(run(&mut inbound, &bytes), Err(Fault::Protocol(_))));
        let mut inbound = armed(1 << 20);
        let reserved = frame(true, false, OpCode::ReservedData(5), b"x");
        assert!(matches!(
            run(&mut inbound, &reserved),
            Err(Fault::Protocol(_))
        ));
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        let wire = compressed(&vec![0; 10 << 20]);
        let mut inbound = armed(1 << 20);
        inbound
            .raw
            .extend_from_slice(&frame(true, true, OpCode::Binary, &wire));
        let fault = loop {
            match inbound.step() {
                Ok(Step::Progress) => inbound.out.clear(),
                Ok(Step::NeedMore) => panic!("bomb passed"),
                Err(fault) => break fault,
            }
        };
        assert_eq!(fault, Fault::TooBig);
    }

    #[test]
    fn corrupt_deflate_is_invalid_data() {
        let mut inbound = armed(1 << 20);
        let bytes = frame(true, true, OpCode::Binary, &[0xff; 20]);
        assert!(matches!(
            run(&mut inbound, &bytes),
            Err(Fault::InvalidData(_))
        ));
    }
}
