//! An incremental gzip member header parser (RFC 1952 section 2.3) that takes input split at
//! any byte and never buffers the variable-length fields.

use crate::{DecodeError, DecodeErrorKind};

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
            // The CRC16 covers the header up to, not including, itself.
            let covered = !matches!(self.step, Step::HeaderCrc(_));
            let flags = self.flags;
            let (n, next) = match &mut self.step {
                Step::Fixed(part) => read_fixed(part, rest, first_member, &mut self.flags)?,
                Step::ExtraLen(part) => read_extra_len(part, rest, flags),
                Step::Extra { left } => skip_extra(left, rest, flags),
                Step::Name { seen } => read_text(seen, rest, FNAME, flags)?,
                Step::Comment { seen } => read_text(seen, rest, FCOMMENT, flags)?,
                Step::HeaderCrc(part) => read_header_crc(part, rest, &self.crc)?,
                Step::Done => unreachable!("loop condition"),
            };
            if let Some(next) = next {
                self.step = next;
            }
            if covered {
                self.crc.update(&rest[..n]);
            }
            pos += n;
        }
        Ok((pos, matches!(self.step, Step::Done)))
    }
}

/// What a step did with its input: the bytes it took, and the step that follows once its
/// field is complete.
type Advance = (usize, Option<Step>);

/// ID1 ID2 CM FLG MTIME XFL OS: ID1 = 31, ID2 = 139, CM = 8 (deflate), and the reserved FLG
/// bits must be zero.
fn read_fixed(
    part: &mut Partial<10>,
    rest: &[u8],
    first_member: bool,
    flags: &mut u8,
) -> Result<Advance, DecodeError> {
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
    let Some(fixed) = full else {
        return Ok((n, None));
    };
    *flags = fixed[3];
    if *flags & RESERVED != 0 {
        return Err(corrupt("reserved header flags are set"));
    }
    Ok((n, Some(after(*flags, FIXED))))
}

/// FEXTRA: XLEN, two bytes little-endian, the length of the extra field that follows.
fn read_extra_len(part: &mut Partial<2>, rest: &[u8], flags: u8) -> Advance {
    let (n, full) = part.fill(rest);
    let next = full.map(|len| {
        let left = usize::from(u16::from_le_bytes(len));
        // An empty FEXTRA: move on now, not when the next byte arrives.
        if left == 0 {
            after(flags, FEXTRA)
        } else {
            Step::Extra { left }
        }
    });
    (n, next)
}

/// FEXTRA: XLEN bytes of subfields, which a decoder may ignore.
fn skip_extra(left: &mut usize, rest: &[u8], flags: u8) -> Advance {
    let n = (*left).min(rest.len());
    *left -= n;
    (n, (*left == 0).then(|| after(flags, FEXTRA)))
}

/// FNAME and FCOMMENT: ISO 8859-1 text ended by a zero byte. The RFC sets no length limit;
/// [`MAX_TEXT_FIELD`] does.
fn read_text(seen: &mut usize, rest: &[u8], field: u8, flags: u8) -> Result<Advance, DecodeError> {
    // Look no further than the bound allows: a long field fails fast.
    let window = &rest[..rest.len().min(MAX_TEXT_FIELD + 1 - *seen)];
    let end = window.iter().position(|&b| b == 0);
    let n = end.map_or(window.len(), |i| i + 1);
    *seen += n;
    if *seen > MAX_TEXT_FIELD {
        return Err(corrupt("file name or comment is too long"));
    }
    Ok((n, end.map(|_| after(flags, field))))
}

/// FHCRC: CRC16, two bytes little-endian, the low 16 bits of the CRC-32 of every header byte
/// before it.
fn read_header_crc(
    part: &mut Partial<2>,
    rest: &[u8],
    crc: &crc32fast::Hasher,
) -> Result<Advance, DecodeError> {
    let (n, full) = part.fill(rest);
    let Some(stored) = full else {
        return Ok((n, None));
    };
    let actual = crc.clone().finalize() as u16;
    if u16::from_le_bytes(stored) != actual {
        return Err(corrupt("header CRC16 mismatch"));
    }
    Ok((n, Some(Step::Done)))
}

/// The step after the field `done`: the next optional field `flags` announce, in the order
/// the RFC lays them out.
fn after(flags: u8, done: u8) -> Step {
    const ORDER: [u8; 4] = [FEXTRA, FNAME, FCOMMENT, FHCRC];
    let next = ORDER
        .iter()
        .skip_while(|&&field| done != FIXED && field != done)
        .skip(usize::from(done != FIXED))
        .find(|&&field| flags & field != 0);
    match next {
        Some(&FEXTRA) => Step::ExtraLen(Partial::EMPTY),
        Some(&FNAME) => Step::Name { seen: 0 },
        Some(&FCOMMENT) => Step::Comment { seen: 0 },
        Some(&FHCRC) => Step::HeaderCrc(Partial::EMPTY),
        _ => Step::Done,
    }
}

/// Not a flag: marks the fixed part as the field just read.
const FIXED: u8 = 0;
