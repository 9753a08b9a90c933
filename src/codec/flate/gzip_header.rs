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
    /// FLG, known once the fixed part is read.
    flags: u8,
    /// CRC-32 of the header bytes so far, for FHCRC.
    crc: crc32fast::Hasher,
}

/// Where the parser is; each step holds the bytes it collects (RFC 1952 section 2.3 order).
#[derive(Clone, Debug)]
enum Step {
    /// ID1 ID2 CM FLG MTIME(4) XFL OS.
    Fixed(Partial<10>),
    /// XLEN, little-endian.
    ExtraLen(Partial<2>),
    /// FEXTRA bytes still to skip.
    Extra {
        left: usize,
    },
    /// FNAME bytes seen so far, up to its NUL.
    Name {
        seen: usize,
    },
    /// FCOMMENT bytes seen so far, up to its NUL.
    Comment {
        seen: usize,
    },
    /// CRC16, little-endian.
    HeaderCrc(Partial<2>),
    Done,
}

/// A fixed-size field filled a byte at a time.
#[derive(Clone, Copy, Debug)]
struct Partial<const N: usize> {
    buf: [u8; N],
    filled: usize,
}

impl<const N: usize> Partial<N> {
    const EMPTY: Self = Partial {
        buf: [0; N],
        filled: 0,
    };

    /// Takes bytes from `input` until full; returns how many, and the field once full.
    fn fill(&mut self, input: &[u8]) -> (usize, Option<[u8; N]>) {
        let n = (N - self.filled).min(input.len());
        self.buf[self.filled..self.filled + n].copy_from_slice(&input[..n]);
        self.filled += n;
        (n, (self.filled == N).then_some(self.buf))
    }
}

fn corrupt(detail: &'static str) -> DecodeError {
    DecodeError::new(DecodeErrorKind::CorruptHeader, detail)
}

impl HeaderParser {
    pub(crate) fn new() -> Self {
        HeaderParser {
            step: Step::Fixed(Partial::EMPTY),
            flags: 0,
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
        while pos < input.len() && !matches!(self.step, Step::Done) {
            let rest = &input[pos..];
            let n = match &mut self.step {
                Step::Fixed(part) => {
                    // Check the magic byte by byte, so junk after a member is refused at once.
                    let expected = [0x1f, 0x8b, 8];
                    if let Some(&want) = expected.get(part.filled) {
                        if rest[0] != want {
                            return Err(if first_member || part.filled > 0 {
                                corrupt("not a gzip member (bad magic or method)")
                            } else {
                                DecodeError::new(
                                    DecodeErrorKind::TrailingData,
                                    "bytes after the last gzip member",
                                )
                            });
                        }
                    }
                    // One byte at a time while checking the magic, then the rest at once.
                    let take = if part.filled < 3 { 1 } else { rest.len() };
                    let (n, full) = part.fill(&rest[..take]);
                    if let Some(fixed) = full {
                        self.flags = fixed[3];
                        if self.flags & RESERVED != 0 {
                            return Err(corrupt("reserved header flags are set"));
                        }
                        self.step = self.after(FIXED);
                    }
                    n
                }
                Step::ExtraLen(part) => {
                    let (n, full) = part.fill(rest);
                    if let Some(len) = full {
                        let left = usize::from(u16::from_le_bytes(len));
                        // An empty FEXTRA: move on now, not when the next byte arrives.
                        self.step = if left == 0 {
                            self.after(FEXTRA)
                        } else {
                            Step::Extra { left }
                        };
                    }
                    n
                }
                Step::Extra { left } => {
                    let n = (*left).min(rest.len());
                    *left -= n;
                    if *left == 0 {
                        self.step = self.after(FEXTRA);
                    }
                    n
                }
                Step::Name { seen } | Step::Comment { seen } => {
                    // Look no further than the bound allows: a long field fails fast.
                    let window = &rest[..rest.len().min(MAX_TEXT_FIELD + 1 - *seen)];
                    let end = window.iter().position(|&b| b == 0);
                    let n = end.map_or(window.len(), |i| i + 1);
                    *seen += n;
                    if *seen > MAX_TEXT_FIELD {
                        return Err(corrupt("file name or comment is too long"));
                    }
                    if end.is_some() {
                        let field = if matches!(self.step, Step::Name { .. }) {
                            FNAME
                        } else {
                            FCOMMENT
                        };
                        self.step = self.after(field);
                    }
                    n
                }
                Step::HeaderCrc(part) => {
                    // The CRC16 covers the header up to, not including, itself.
                    let (n, full) = part.fill(rest);
                    if let Some(stored) = full {
                        let actual = self.crc.clone().finalize() as u16;
                        if u16::from_le_bytes(stored) != actual {
                            return Err(corrupt("header CRC16 mismatch"));
                        }
                        self.step = Step::Done;
                    }
                    pos += n;
                    continue;
                }
                Step::Done => unreachable!("loop condition"),
            };
            self.crc.update(&rest[..n]);
            pos += n;
        }
        Ok((pos, matches!(self.step, Step::Done)))
    }

    /// The step after the field `done`: the next optional field the flags announce.
    fn after(&self, done: u8) -> Step {
        const ORDER: [u8; 4] = [FEXTRA, FNAME, FCOMMENT, FHCRC];
        let next = ORDER
            .iter()
            .skip_while(|&&field| done != FIXED && field != done)
            .skip(usize::from(done != FIXED))
            .find(|&&field| self.flags & field != 0);
        match next {
            Some(&FEXTRA) => Step::ExtraLen(Partial::EMPTY),
            Some(&FNAME) => Step::Name { seen: 0 },
            Some(&FCOMMENT) => Step::Comment { seen: 0 },
            Some(&FHCRC) => Step::HeaderCrc(Partial::EMPTY),
            _ => Step::Done,
        }
    }
}

/// Not a flag: marks the fixed part as the field just read.
const FIXED: u8 = 0;
