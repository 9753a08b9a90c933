//! An incremental gzip member header parser (RFC 1952 section 2.3) that takes input split at
//! any byte and never buffers the variable-length fields.

use crate::codec::{DecodeError, DecodeErrorKind};

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const RESERVED: u8 = 0xe0;

/// Longest file name or comment accepted. Nothing is buffered, but an endless field would
/// let a peer stream input that never produces output.
pub(crate) const MAX_TEXT_FIELD: usize = 64 * 1024;

#[derive(Clone, Debug)]
pub(crate) struct HeaderParser {
    step: Step,
    flags: u8,
    /// Bytes of a fixed-size part collected so far (fixed header, XLEN or CRC16).
    buf: [u8; 10],
    filled: usize,
    /// Bytes left to skip in FEXTRA, or bytes seen in a NUL-terminated field.
    count: usize,
    crc: crc32fast::Hasher,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Fixed,
    ExtraLen,
    Extra,
    Name,
    Comment,
    HeaderCrc,
    Done,
}

fn corrupt(detail: &'static str) -> DecodeError {
    DecodeError::new(DecodeErrorKind::CorruptHeader, detail)
}

impl HeaderParser {
    pub(crate) fn new() -> Self {
        HeaderParser {
            step: Step::Fixed,
            flags: 0,
            buf: [0; 10],
            filled: 0,
            count: 0,
            crc: crc32fast::Hasher::new(),
        }
    }

    /// Consumes header bytes from `input`. Returns how many, and whether the header is done.
    pub(crate) fn parse(
        &mut self,
        input: &[u8],
        first_member: bool,
    ) -> Result<(usize, bool), DecodeError> {
        let mut pos = 0;
        while self.step != Step::Done && pos < input.len() {
            match self.step {
                Step::Fixed => {
                    let byte = input[pos];
                    // Check the magic byte by byte, so junk after a member is refused at once.
                    let expected = [0x1f, 0x8b, 8];
                    if self.filled < 3 && byte != expected[self.filled] {
                        return Err(if first_member || self.filled > 0 {
                            corrupt("not a gzip member (bad magic or method)")
                        } else {
                            DecodeError::new(
                                DecodeErrorKind::TrailingData,
                                "bytes after the last gzip member",
                            )
                        });
                    }
                    self.take(byte, &mut pos);
                    if self.filled == 10 {
                        self.flags = self.buf[3];
                        if self.flags & RESERVED != 0 {
                            return Err(corrupt("reserved header flags are set"));
                        }
                        self.filled = 0;
                        self.advance();
                    }
                }
                Step::ExtraLen => {
                    self.take(input[pos], &mut pos);
                    if self.filled == 2 {
                        self.count = u16::from_le_bytes([self.buf[0], self.buf[1]]) as usize;
                        self.filled = 0;
                        if self.count == 0 {
                            // An empty FEXTRA: move on now, not when the next byte arrives.
                            self.advance();
                        } else {
                            self.step = Step::Extra;
                        }
                    }
                }
                Step::Extra => {
                    let n = self.count.min(input.len() - pos);
                    self.crc.update(&input[pos..pos + n]);
                    pos += n;
                    self.count -= n;
                    if self.count == 0 {
                        self.advance();
                    }
                }
                Step::Name | Step::Comment => {
                    // Look no further than the bound allows: a long field fails fast.
                    let rest = &input[pos..];
                    let rest = &rest[..rest.len().min(MAX_TEXT_FIELD + 1 - self.count)];
                    let end = rest.iter().position(|&b| b == 0);
                    let n = end.map_or(rest.len(), |i| i + 1);
                    self.crc.update(&rest[..n]);
                    pos += n;
                    self.count += n;
                    if self.count > MAX_TEXT_FIELD {
                        return Err(corrupt("file name or comment is too long"));
                    }
                    if end.is_some() {
                        self.count = 0;
                        self.advance();
                    }
                }
                Step::HeaderCrc => {
                    self.buf[self.filled] = input[pos];
                    self.filled += 1;
                    pos += 1;
                    if self.filled == 2 {
                        let stored = u16::from_le_bytes([self.buf[0], self.buf[1]]);
                        let actual = self.crc.clone().finalize() as u16;
                        if stored != actual {
                            return Err(corrupt("header CRC16 mismatch"));
                        }
                        self.step = Step::Done;
                    }
                }
                Step::Done => unreachable!("loop condition"),
            }
        }
        Ok((pos, self.step == Step::Done))
    }

    fn take(&mut self, byte: u8, pos: &mut usize) {
        self.buf[self.filled] = byte;
        self.filled += 1;
        self.crc.update(&[byte]);
        *pos += 1;
    }

    /// Moves to the next optional field the flags announce, in RFC order.
    fn advance(&mut self) {
        let order = [
            (Step::Fixed, 0),
            (Step::ExtraLen, FEXTRA),
            (Step::Name, FNAME),
            (Step::Comment, FCOMMENT),
            (Step::HeaderCrc, FHCRC),
        ];
        let current = match self.step {
            Step::Extra => 1,
            other => order.iter().position(|(s, _)| *s == other).unwrap_or(0),
        };
        self.step = order[current + 1..]
            .iter()
            .find(|(_, flag)| self.flags & flag != 0)
            .map_or(Step::Done, |(step, _)| *step);
    }
}
