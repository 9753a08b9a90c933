use bytes::BytesMut;
use flate2::{Decompress, Status};

use super::checksum::Checksum;
use super::gzip_header::HeaderParser;
use super::{Framing, decompress_into};
use crate::codec::{Decode, DecodeError, DecodeErrorKind, Level, Progress};
use crate::pool::{CodecPool, Pooled};

/// A streaming gzip or zlib/raw-deflate decoder over a pooled raw inflate state.
///
/// Input may be split at any byte, including inside headers and trailers. Each call to
/// [`decode`](Decoder::decode) produces at most the number of bytes the caller allows, so
/// a size limit stops a decompression bomb before it is inflated. gzip input may hold several
/// members back to back (RFC 1952 section 2.2); `deflate` input may be zlib-wrapped (RFC 1950)
/// or raw deflate (RFC 1951), which many clients send under that name.
///
#[derive(Debug)]
pub(crate) struct FlateDecoder {
    inflate: Pooled<Decompress>,
    format: Framing,
    phase: Phase,
    check: Checksum,
    /// Output of the current member, for ISIZE.
    member_out: u64,
    header: HeaderParser,
    /// `deflate` only: the first byte, held while deciding between zlib and raw deflate.
    sniffed: Option<u8>,
    /// `deflate` only: the input has no zlib wrapper.
    raw: bool,
    trailer: [u8; 8],
    trailer_len: usize,
    members: u64,
    total_in: u64,
    total_out: u64,
    pending: bool,
    /// The first error; once set, every call reports it again.
    failed: Option<DecodeError>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    GzipHeader,
    /// `deflate`: waiting for the two bytes that tell zlib from raw deflate.
    Sniff,
    Body,
    Trailer,
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

impl FlateDecoder {
    /// A decoder for `format`, with an inflate state from `pool`.
    pub(crate) fn new(format: Framing, pool: &CodecPool) -> Self {
        FlateDecoder {
            inflate: pool.take(Level::NONE, || Decompress::new(false)),
            format,
            phase: match format {
                Framing::Gzip => Phase::GzipHeader,
                Framing::Zlib => Phase::Sniff,
            },
            check: Checksum::new(format),
            member_out: 0,
            header: HeaderParser::new(),
            sniffed: None,
            raw: false,
            trailer: [0; 8],
            trailer_len: 0,
            members: 0,
            total_in: 0,
            total_out: 0,
            pending: false,
            failed: None,
        }
    }

    fn start_member(&mut self) {
        self.phase = Phase::Body;
        self.check = Checksum::new(self.format);
        self.member_out = 0;
        self.trailer_len = 0;
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
            self.total_out += n_out as u64;
            *budget -= n_out;
            consumed += n_in;
            produced += n_out;
            input = &input[n_in..];
            let status = step.status;
            match status {
                Err(_) => {
                    return Err(DecodeError::new(
                        DecodeErrorKind::CorruptData,
                        "invalid deflate data",
                    ));
                }
                Ok(Status::StreamEnd) => {
                    // A raw inflater resets in nanoseconds, ready for the next member.
                    self.inflate.reset(false);
                    if self.raw {
                        self.members += 1;
                        self.phase = Phase::Done;
                    } else {
                        self.phase = Phase::Trailer;
                    }
                    break;
                }
                // Stopped short of the room: it needs more input.
                Ok(_) if n_out < room => break,
                Ok(_) => {}
            }
        }
        Ok((consumed, produced))
    }

    fn check_trailer(&mut self) -> Result<(), DecodeError> {
        let checksum_error = |detail| Err(DecodeError::new(DecodeErrorKind::Checksum, detail));
        let t = self.trailer;
        match self.format {
            Framing::Gzip => {
                if u32::from_le_bytes([t[0], t[1], t[2], t[3]]) != self.check.value() {
                    return checksum_error("CRC32 mismatch");
                }
                if u32::from_le_bytes([t[4], t[5], t[6], t[7]]) != self.member_out as u32 {
                    return checksum_error("ISIZE mismatch");
                }
                self.phase = Phase::MemberEnd;
            }
            Framing::Zlib => {
                if u32::from_be_bytes([t[0], t[1], t[2], t[3]]) != self.check.value() {
                    return checksum_error("Adler-32 mismatch");
                }
                self.phase = Phase::Done;
            }
        }
        self.members += 1;
        Ok(())
    }
}

impl Decode for FlateDecoder {
    /// Compressed bytes consumed so far, headers and trailers included.
    fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Decoded bytes produced so far.
    fn total_out(&self) -> u64 {
        self.total_out
    }

    /// Complete gzip members (or zlib/raw streams) decoded so far.
    fn members(&self) -> u64 {
        self.members
    }

    /// Whether the stream is complete: no further input is accepted, except another gzip
    /// member.
    fn is_stream_end(&self) -> bool {
        matches!(self.phase, Phase::MemberEnd | Phase::Done)
    }

    /// Whether the last [`decode`](Decoder::decode) filled its output budget, so that more
    /// output may be ready without more input. Call `decode` again (with the remaining input,
    /// possibly empty) before feeding more or calling [`finish`](Decoder::finish).
    fn has_pending_output(&self) -> bool {
        self.pending
    }

    /// Decodes from `input`, appending at most `max_out` bytes to `out`. Returns how many
    /// input bytes were consumed; fewer than `input.len()` only when the budget ran out.
    ///
    /// After an error the decoder is spent: every later call returns the same error.
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<Progress, DecodeError> {
        let before = out.len();
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let mut pos = 0;
        let mut budget = max_out;
        self.pending = false;
        let result = loop {
            let rest = &input[pos..];
            match self.phase {
                Phase::GzipHeader => {
                    if rest.is_empty() {
                        break Ok(());
                    }
                    match self.header.parse(rest, self.members == 0) {
                        Ok((n, done)) => {
                            pos += n;
                            if done {
                                self.start_member();
                            }
                        }
                        Err(e) => break Err(e),
                    }
                }
                Phase::MemberEnd => {
                    if rest.is_empty() {
                        break Ok(());
                    }
                    self.header = HeaderParser::new();
                    self.phase = Phase::GzipHeader;
                }
                Phase::Sniff => {
                    let Some(&next) = rest.first() else {
                        break Ok(());
                    };
                    let Some(first) = self.sniffed else {
                        self.sniffed = Some(next);
                        pos += 1;
                        continue;
                    };
                    if is_zlib_header(first, next) {
                        pos += 1;
                        if next & 0x20 != 0 {
                            break Err(DecodeError::new(
                                DecodeErrorKind::CorruptHeader,
                                "zlib preset dictionaries are not supported",
                            ));
                        }
                    } else {
                        // Raw deflate: the held byte is deflate data. One byte cannot end
                        // a stream or produce output, so inflate takes it whole.
                        self.raw = true;
                        let held = [first];
                        if let Err(e) = self.inflate_step(&held, out, &mut budget.max(1)) {
                            break Err(e);
                        }
                    }
                    self.sniffed = None;
                    self.start_member();
                }
                Phase::Body => {
                    if budget == 0 {
                        self.pending = true;
                        break Ok(());
                    }
                    match self.inflate_step(rest, out, &mut budget) {
                        Ok((consumed, produced)) => {
                            pos += consumed;
                            if self.phase == Phase::Body && consumed == 0 && produced == 0 {
                                break Ok(());
                            }
                        }
                        Err(e) => break Err(e),
                    }
                }
                Phase::Trailer => {
                    if rest.is_empty() {
                        break Ok(());
                    }
                    let want = match self.format {
                        Framing::Gzip => 8,
                        Framing::Zlib => 4,
                    };
                    let n = (want - self.trailer_len).min(rest.len());
                    self.trailer[self.trailer_len..self.trailer_len + n]
                        .copy_from_slice(&rest[..n]);
                    self.trailer_len += n;
                    pos += n;
                    if self.trailer_len == want {
                        if let Err(e) = self.check_trailer() {
                            break Err(e);
                        }
                    }
                }
                Phase::Done => {
                    if rest.is_empty() {
                        break Ok(());
                    }
                    break Err(DecodeError::new(
                        DecodeErrorKind::TrailingData,
                        "bytes after the end of the deflate stream",
                    ));
                }
            }
        };
        self.total_in += pos as u64;
        if let Err(error) = &result {
            self.pending = false;
            self.failed = Some(error.clone());
        }
        result.map(|()| Progress::since(pos, before, out))
    }

    /// Declares the end of input: `Ok` if the stream was complete (or no byte came at all, an
    /// empty body), else a [`DecodeErrorKind::Truncated`] error, or the error an earlier
    /// [`decode`](Decoder::decode) reported.
    fn finish(&self) -> Result<(), DecodeError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let empty = self.total_in == 0 && self.sniffed.is_none();
        if self.is_stream_end() || empty {
            Ok(())
        } else {
            Err(DecodeError::new(
                DecodeErrorKind::Truncated,
                "the body ended before the compressed stream did",
            ))
        }
    }
}
