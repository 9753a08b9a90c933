use bytes::BytesMut;
use flate2::{Decompress, Status};

use super::checksum::Checksum;
use super::gzip_header::HeaderParser;
use super::{Framing, decompress_into};
use crate::decoding::{self, DecodeCore, Driven};
use crate::pool::{CodecPool, Pooled};
use crate::{DecodeError, DecodeErrorKind, Level};

/// A streaming gzip or zlib/raw-deflate decoder over a pooled raw inflate state.
///
/// Input may be split at any byte, including inside headers and trailers. Each call to
/// `decode` produces at most the number of bytes the caller allows, so a size limit stops a
/// decompression bomb before it is inflated. gzip input may hold several members back to back
/// (RFC 1952 section 2.2); `deflate` input may be zlib-wrapped (RFC 1950) or raw deflate
/// (RFC 1951), which many clients send under that name.
pub(crate) type FlateDecoder = Driven<FlateStream>;

/// The gzip or zlib/raw-deflate stream under a [`FlateDecoder`].
#[derive(Debug)]
pub(crate) struct FlateStream {
    inflate: Pooled<Decompress>,
    framing: Framing,
    phase: MemberPhase,
    /// The check value and length of the current member.
    check: Checksum,
    member_out: u64,
    /// `deflate` only: the input has no zlib wrapper.
    raw: bool,
    members: u64,
}

/// Where the stream is; each phase holds the bytes it collects.
#[derive(Debug)]
enum MemberPhase {
    GzipHeader(HeaderParser),
    /// `deflate`: the first byte, held until the second tells zlib from raw deflate.
    Sniff(Option<u8>),
    Body,
    /// The trailer bytes collected so far (gzip: CRC-32 and ISIZE; zlib: Adler-32).
    Trailer {
        bytes: [u8; 8],
        filled: usize,
    },
    /// gzip: a member ended; another may follow.
    MemberEnd,
    Done,
}

/// Spare capacity in the caller's buffer worth using as it is, without reserving more.
const MIN_SPARE: usize = 512;

/// How much output room one inflate call gets: the spare capacity the caller left, or room
/// for 8:1 on this input (typical of JSON and HTML); at most 256 KiB (so the CRC runs over
/// data still in cache) and never more than the budget. The room is reserved, not
/// zero-filled, so a generous room costs nothing but capacity.
fn inflate_room(input_len: usize, spare: usize, budget: usize) -> usize {
    let room = if spare >= MIN_SPARE {
        spare
    } else {
        input_len.saturating_mul(8).max(MIN_SPARE)
    };
    room.min(256 * 1024).min(budget)
}

fn is_zlib_header(cmf: u8, flg: u8) -> bool {
    cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
}

/// What one phase's step did.
enum MemberStep {
    /// Took this many input bytes; go on.
    Took(usize),
    /// Needs more input, or output room.
    Wait,
    /// Stopped at the budget with output (or input) left.
    Budget,
}

impl FlateDecoder {
    /// A decoder for `framing`, with an inflate state from `pool`.
    pub(crate) fn new(framing: Framing, pool: &CodecPool) -> Self {
        Driven::with_core(FlateStream {
            inflate: pool.take(Level::NONE, || Decompress::new(false)),
            framing,
            phase: FlateStream::first_phase(framing),
            check: Checksum::new(framing),
            member_out: 0,
            raw: false,
            members: 0,
        })
    }
}

impl FlateStream {
    fn first_phase(framing: Framing) -> MemberPhase {
        match framing {
            Framing::Gzip => MemberPhase::GzipHeader(HeaderParser::new()),
            Framing::Zlib => MemberPhase::Sniff(None),
        }
    }

    /// One step of the current phase over `input`.
    fn phase_step(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        budget: &mut usize,
    ) -> Result<MemberStep, DecodeError> {
        match &mut self.phase {
            MemberPhase::Body if *budget == 0 => Ok(MemberStep::Budget),
            MemberPhase::Body => {
                let (consumed, produced) = self.inflate_step(input, out, budget)?;
                let ended = !matches!(self.phase, MemberPhase::Body);
                Ok(if consumed == 0 && produced == 0 && !ended {
                    MemberStep::Wait
                } else {
                    MemberStep::Took(consumed)
                })
            }
            _ if input.is_empty() => Ok(MemberStep::Wait),
            MemberPhase::GzipHeader(header) => {
                let (n, done) = header.parse(input, self.members == 0)?;
                if done {
                    self.start_member();
                }
                Ok(MemberStep::Took(n))
            }
            MemberPhase::MemberEnd => {
                self.phase = Self::first_phase(Framing::Gzip);
                Ok(MemberStep::Took(0))
            }
            MemberPhase::Sniff(None) => {
                self.phase = MemberPhase::Sniff(Some(input[0]));
                Ok(MemberStep::Took(1))
            }
            MemberPhase::Sniff(Some(first)) => {
                let first = *first;
                self.sniff(first, input[0], out, budget)
            }
            MemberPhase::Trailer { bytes, filled } => {
                let want = match self.framing {
                    Framing::Gzip => 8,
                    Framing::Zlib => 4,
                };
                let n = (want - *filled).min(input.len());
                bytes[*filled..*filled + n].copy_from_slice(&input[..n]);
                *filled += n;
                if *filled == want {
                    let bytes = *bytes;
                    self.check_trailer(bytes)?;
                }
                Ok(MemberStep::Took(n))
            }
            MemberPhase::Done => Err(DecodeError::new(
                DecodeErrorKind::TrailingData,
                "bytes after the end of the deflate stream",
            )),
        }
    }

    /// `deflate`: the first two bytes tell a zlib header from raw deflate.
    fn sniff(
        &mut self,
        first: u8,
        second: u8,
        out: &mut BytesMut,
        budget: &mut usize,
    ) -> Result<MemberStep, DecodeError> {
        if is_zlib_header(first, second) {
            if second & 0x20 != 0 {
                return Err(DecodeError::new(
                    DecodeErrorKind::CorruptHeader,
                    "zlib preset dictionaries are not supported",
                ));
            }
            self.start_member();
            return Ok(MemberStep::Took(1));
        }
        // Raw deflate: the held byte is deflate data. One byte cannot end a stream or
        // produce output, so inflate takes it whole.
        self.raw = true;
        self.start_member();
        self.inflate_step(&[first], out, &mut (*budget).max(1))?;
        Ok(MemberStep::Took(0))
    }

    fn start_member(&mut self) {
        self.phase = MemberPhase::Body;
        self.check = Checksum::new(self.framing);
        self.member_out = 0;
    }

    /// One bounded inflate run. Returns (consumed, produced); moves to the trailer at the end
    /// of the deflate stream.
    fn inflate_step(
        &mut self,
        mut input: &[u8],
        out: &mut BytesMut,
        budget: &mut usize,
    ) -> Result<(usize, usize), DecodeError> {
        let (mut consumed, mut produced) = (0, 0);
        while *budget > 0 {
            let room = inflate_room(input.len(), out.capacity() - out.len(), *budget);
            let start = out.len();
            let step = decompress_into(&mut self.inflate, input, out, room);
            let (n_in, n_out) = (step.consumed, step.produced);
            self.check.update(&out[start..]);
            self.member_out += n_out as u64;
            *budget -= n_out;
            consumed += n_in;
            produced += n_out;
            input = &input[n_in..];
            match step.status {
                Err(_) => {
                    return Err(DecodeError::new(
                        DecodeErrorKind::CorruptData,
                        "invalid deflate data",
                    ));
                }
                Ok(Status::StreamEnd) => {
                    // A raw inflater resets in nanoseconds, ready for the next member.
                    self.inflate.reset(false);
                    self.phase = if self.raw {
                        self.members += 1;
                        MemberPhase::Done
                    } else {
                        MemberPhase::Trailer {
                            bytes: [0; 8],
                            filled: 0,
                        }
                    };
                    break;
                }
                // Stopped short of the room: it needs more input.
                Ok(_) if n_out < room => break,
                Ok(_) => {}
            }
        }
        Ok((consumed, produced))
    }

    fn check_trailer(&mut self, t: [u8; 8]) -> Result<(), DecodeError> {
        let checksum_error = |detail| Err(DecodeError::new(DecodeErrorKind::Checksum, detail));
        match self.framing {
            Framing::Gzip => {
                if u32::from_le_bytes([t[0], t[1], t[2], t[3]]) != self.check.value() {
                    return checksum_error("CRC32 mismatch");
                }
                // ISIZE is the length modulo 2^32 (RFC 1952 section 2.3.1).
                if u32::from_le_bytes([t[4], t[5], t[6], t[7]]) != self.member_out as u32 {
                    return checksum_error("ISIZE mismatch");
                }
                self.phase = MemberPhase::MemberEnd;
            }
            Framing::Zlib => {
                if u32::from_be_bytes([t[0], t[1], t[2], t[3]]) != self.check.value() {
                    return checksum_error("Adler-32 mismatch");
                }
                self.phase = MemberPhase::Done;
            }
        }
        self.members += 1;
        Ok(())
    }
}

impl DecodeCore for FlateStream {
    const TRUNCATED: &'static str = "the body ended before the compressed stream did";

    fn step(&mut self, input: &[u8], out: &mut BytesMut, budget: &mut usize) -> decoding::Stepped {
        let mut pos = 0;
        loop {
            match self.phase_step(&input[pos..], out, budget) {
                Ok(MemberStep::Took(n)) => pos += n,
                Ok(MemberStep::Wait) => return (pos, Ok(false)),
                Ok(MemberStep::Budget) => return (pos, Ok(true)),
                Err(error) => return (pos, Err(error)),
            }
        }
    }

    // The pool resets the inflate state before reuse.
    fn fail(&mut self) {}

    fn is_stream_end(&self) -> bool {
        matches!(self.phase, MemberPhase::MemberEnd | MemberPhase::Done)
    }

    fn members(&self) -> u64 {
        self.members
    }
}
