//! RFC 6455 section 5.2 frame headers: parsed from bytes that arrive in any pieces, and
//! written. The adapter reads every header twice over (once here, once in tungstenite), but
//! only headers: payloads it does not compress pass through untouched.

use bytes::BufMut;

/// Opcodes (RFC 6455 section 5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpCode {
    /// 0x0: a continuation frame.
    Continuation,
    /// 0x1: the first frame of a text message.
    Text,
    /// 0x2: the first frame of a binary message.
    Binary,
    /// 0x8-0xF: close, ping, pong and reserved control opcodes (tungstenite rejects the
    /// reserved ones; the adapter forwards them untouched so that it does).
    Control(u8),
    /// 0x3-0x7: reserved data opcodes, forwarded for tungstenite to reject.
    ReservedData(u8),
}

impl OpCode {
    fn from_bits(bits: u8) -> Self {
        match bits {
            0 => OpCode::Continuation,
            1 => OpCode::Text,
            2 => OpCode::Binary,
            8..=15 => OpCode::Control(bits),
            other => OpCode::ReservedData(other),
        }
    }

    pub(crate) fn bits(self) -> u8 {
        match self {
            OpCode::Continuation => 0,
            OpCode::Text => 1,
            OpCode::Binary => 2,
            OpCode::Control(bits) | OpCode::ReservedData(bits) => bits,
        }
    }

    /// The close opcode.
    pub(crate) const CLOSE: OpCode = OpCode::Control(8);
}

/// A parsed frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) fin: bool,
    pub(crate) rsv1: bool,
    /// RSV2 and RSV3 as they came (not ours: tungstenite rejects them).
    pub(crate) rsv23: u8,
    pub(crate) opcode: OpCode,
    pub(crate) mask: Option<[u8; 4]>,
    pub(crate) len: u64,
}

impl Header {
    /// Parses a header from the start of `buf`: `Ok(None)` when more bytes are needed,
    /// else the header and its length in bytes.
    pub(crate) fn parse(buf: &[u8]) -> Option<(Header, usize)> {
        let (&b0, rest) = buf.split_first()?;
        let &b1 = rest.first()?;
        let (len, mut at) = match b1 & 0x7f {
            126 => (
                u64::from(u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?)),
                4,
            ),
            127 => (u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?), 10),
            n => (u64::from(n), 2),
        };
        let mask = if b1 & 0x80 != 0 {
            let key: [u8; 4] = buf.get(at..at + 4)?.try_into().ok()?;
            at += 4;
            Some(key)
        } else {
            None
        };
        let header = Header {
            fin: b0 & 0x80 != 0,
            rsv1: b0 & 0x40 != 0,
            rsv23: b0 & 0x30,
            opcode: OpCode::from_bits(b0 & 0x0f),
            mask,
            len,
        };
        Some((header, at))
    }

    /// Appends the header to `out` (the shortest length encoding, as RFC 6455 requires).
    pub(crate) fn write(&self, out: &mut impl BufMut) {
        let b0 =
            u8::from(self.fin) << 7 | u8::from(self.rsv1) << 6 | self.rsv23 | self.opcode.bits();
        out.put_u8(b0);
        let mask_bit = if self.mask.is_some() { 0x80 } else { 0 };
        match self.len {
            n @ 0..=125 => out.put_u8(mask_bit | n as u8),
            n @ 126..=0xffff => {
                out.put_u8(mask_bit | 126);
                out.put_u16(n as u16);
            }
            n => {
                out.put_u8(mask_bit | 127);
                out.put_u64(n);
            }
        }
        if let Some(key) = self.mask {
            out.put_slice(&key);
        }
    }

    /// Whether this is a control frame (close, ping, pong, reserved 0xB-0xF).
    pub(crate) fn is_control(&self) -> bool {
        matches!(self.opcode, OpCode::Control(_))
    }
}

/// XORs `data` with `key`, starting at byte `offset` of the payload (so a payload can be
/// unmasked in pieces).
pub(crate) fn apply_mask(data: &mut [u8], key: [u8; 4], offset: u64) {
    // The key as it stands at `data[0]`, twice: eight bytes are XORed at a time.
    let mut key = key;
    key.rotate_left((offset % 4) as usize);
    let [a, b, c, d] = key;
    let word = u64::from_ne_bytes([a, b, c, d, a, b, c, d]);
    let mut words = data.chunks_exact_mut(8);
    for chunk in &mut words {
        let masked = u64::from_ne_bytes((&*chunk).try_into().expect("8 bytes")) ^ word;
        chunk.copy_from_slice(&masked.to_ne_bytes());
    }
    // The rest starts at a multiple of 8 from `data[0]`, where the key starts over.
    for (byte, k) in words.into_remainder().iter_mut().zip(key.iter().cycle()) {
        *byte ^= k;
    }
}

/// A whole Close frame with `code` and `reason` (RFC 6455 section 5.5.1), masked with
/// `mask` when the writer is a client.
pub(crate) fn close_frame(code: u16, reason: &str, mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut payload = code.to_be_bytes().to_vec();
    // Control payloads are at most 125 bytes.
    payload.extend_from_slice(&reason.as_bytes()[..reason.len().min(123)]);
    let header = Header {
        fin: true,
        rsv1: false,
        rsv23: 0,
        opcode: OpCode::CLOSE,
        mask,
        len: payload.len() as u64,
    };
    let mut out = Vec::with_capacity(payload.len() + 8);
    header.write(&mut out);
    if let Some(key) = mask {
        apply_mask(&mut payload, key, 0);
    }
    out.extend_from_slice(&payload);
    out
}

/// A frame header's bytes as they arrive, up to the 14 a header can have: no allocation
/// per frame.
#[derive(Debug, Default)]
pub(crate) struct PartialHeader {
    bytes: [u8; 14],
    len: u8,
}

impl PartialHeader {
    /// The bytes so far.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a byte; `false` when 14 are there already (then the bytes are no header).
    pub(crate) fn push(&mut self, byte: u8) -> bool {
        let Some(slot) = self.bytes.get_mut(usize::from(self.len)) else {
            return false;
        };
        *slot = byte;
        self.len += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_at_every_length_encoding() {
        for len in [0u64, 125, 126, 65_535, 65_536, 1 << 40] {
            for mask in [None, Some([1, 2, 3, 4])] {
                let header = Header {
                    fin: len % 2 == 0,
                    rsv1: true,
                    rsv23: 0,
                    opcode: OpCode::Binary,
                    mask,
                    len,
                };
                let mut out = Vec::new();
                header.write(&mut out);
                assert_eq!(Header::parse(&out), Some((header, out.len())));
                assert_eq!(Header::parse(&out[..out.len() - 1]), None);
            }
        }
    }

    #[test]
    fn masking_in_pieces_equals_masking_whole() {
        let key = [9, 8, 7, 6];
        let mut whole: Vec<u8> = (0..50).collect();
        let mut pieces = whole.clone();
        apply_mask(&mut whole, key, 0);
        apply_mask(&mut pieces[..7], key, 0);
        apply_mask(&mut pieces[7..], key, 7);
        assert_eq!(whole, pieces);
    }

    #[test]
    fn masking_a_word_at_a_time_equals_masking_each_byte() {
        let key = [0x12, 0x34, 0x56, 0x78];
        for len in [0, 1, 3, 7, 8, 9, 15, 16, 17, 100] {
            for offset in 0..6u64 {
                let data: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
                let mut fast = data.clone();
                apply_mask(&mut fast, key, offset);
                let slow: Vec<u8> = data
                    .iter()
                    .enumerate()
                    .map(|(i, b)| b ^ key[(offset as usize + i) % 4])
                    .collect();
                assert_eq!(fast, slow, "len {len} offset {offset}");
            }
        }
    }

    #[test]
    fn a_close_frame_carries_its_code() {
        let frame = close_frame(1009, "too big", None);
        let (header, at) = Header::parse(&frame).unwrap();
        assert_eq!(header.opcode, OpCode::CLOSE);
        assert_eq!(&frame[at..at + 2], &1009u16.to_be_bytes());
    }
}
