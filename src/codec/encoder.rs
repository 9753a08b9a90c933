use bytes::BytesMut;
use flate2::{Compress, FlushCompress, Status};

use super::compress_into;

use super::checksum::Checksum;
use super::{CompressionLevel, EncodeError, Format, deflate_bound};
use crate::pool::{CodecPool, Pooled};

/// A streaming gzip or zlib encoder over a pooled deflate state.
///
/// Feed input with [`encode`](Encoder::encode), make everything so far decodable with
/// [`flush`](Encoder::flush), and end the stream with [`finish`](Encoder::finish). Output is
/// appended to the caller's buffer. Apart from growing that buffer, an encoder drawn from a
/// warm pool allocates nothing. Dropping it returns the state to the pool, reset.
#[derive(Debug)]
pub struct Encoder {
    deflate: Pooled<Compress>,
    format: Format,
    level: u32,
    check: Checksum,
    header_padding: usize,
    stage: Stage,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Nothing written yet, not even the header.
    Fresh,
    Running,
    Finished,
    /// A deflate call failed; the stream cannot be completed.
    Failed,
}

impl Encoder {
    /// An encoder for `format` at `level`, with a deflate state from `pool`.
    pub fn new(format: Format, level: CompressionLevel, pool: &CodecPool) -> Self {
        Encoder {
            deflate: pool.compressor(level),
            format,
            level: level.as_u32(),
            check: Checksum::new(format),
            header_padding: 0,
            stage: Stage::Fresh,
        }
    }

    /// Pads the gzip header with a comment field of `len` bytes (at most 65,535), a BREACH
    /// mitigation that makes the response length vary. Ignored for zlib, which has no such
    /// field, and once output has been written.
    pub fn with_header_padding(mut self, len: usize) -> Self {
        self.header_padding = len.min(u16::MAX as usize);
        self
    }

    /// The coding this encoder writes.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether [`finish`](Encoder::finish) has completed the stream.
    pub fn is_finished(&self) -> bool {
        self.stage == Stage::Finished
    }

    /// Bytes of input consumed so far.
    pub fn total_in(&self) -> u64 {
        self.deflate.total_in()
    }

    /// Bytes of deflate data produced so far (without header and trailer).
    pub fn total_out(&self) -> u64 {
        self.deflate.total_out()
    }

    /// Compresses all of `input`, appending whatever output is ready to `out`. Deflate may
    /// hold back some output until more input, a flush or the finish.
    pub fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        self.begin(out, input.len())?;
        self.check.update(input);
        self.run(input, out, FlushCompress::None)
    }

    /// A sync flush: everything encoded so far becomes decodable from `out`.
    pub fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.begin(out, 0)?;
        self.run(&[], out, FlushCompress::Sync)
    }

    /// Ends the stream: the last deflate block and the trailer go to `out`. Calling it again
    /// does nothing.
    pub fn finish(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if self.stage == Stage::Finished {
            return Ok(());
        }
        self.begin(out, 0)?;
        self.run(&[], out, FlushCompress::Finish)?;
        out.reserve(8);
        write_trailer(
            self.format,
            self.check.value(),
            self.deflate.total_in(),
            out,
        );
        self.stage = Stage::Finished;
        Ok(())
    }

    fn begin(&mut self, out: &mut BytesMut, input_len: usize) -> Result<(), EncodeError> {
        match self.stage {
            Stage::Running => Ok(()),
            Stage::Finished => Err(EncodeError {
                detail: "the stream is already finished".into(),
            }),
            Stage::Failed => Err(EncodeError {
                detail: "an earlier call failed; the stream is unusable".into(),
            }),
            Stage::Fresh => {
                // One reservation for the header, this call's output and the trailer, so a
                // short message costs the output buffer a single allocation.
                let header = match self.format {
                    Format::Gzip if self.header_padding > 0 => 10 + self.header_padding,
                    Format::Gzip => 10,
                    Format::Deflate => 2,
                };
                out.reserve(header + deflate_bound(input_len).max(64) + 64 + 8);
                self.write_header(out);
                self.stage = Stage::Running;
                Ok(())
            }
        }
    }

    fn write_header(&self, out: &mut BytesMut) {
        write_header(self.format, self.level, self.header_padding, out);
    }

    /// Drives deflate over `input` with `flush`, growing `out` as needed.
    fn run(
        &mut self,
        mut input: &[u8],
        out: &mut BytesMut,
        flush: FlushCompress,
    ) -> Result<(), EncodeError> {
        loop {
            // Output room is reserved, not zero-filled, so using all the spare capacity the
            // caller left is free and saves flush/finish loops over small rooms.
            let spare = out.capacity() - out.len();
            let room = deflate_bound(input.len()).max(spare).max(64);
            let step = compress_into(&mut self.deflate, input, out, room, flush);
            input = &input[step.consumed..];
            let status = match step.status {
                Ok(status) => status,
                Err(e) => return Err(self.fail(e.to_string())),
            };
            let done = match flush {
                FlushCompress::Finish => status == Status::StreamEnd,
                // A flush is complete when deflate stops short of filling the room.
                FlushCompress::Sync => input.is_empty() && step.produced < room,
                _ => input.is_empty(),
            };
            if done {
                return Ok(());
            }
            if step.consumed == 0 && step.produced == 0 {
                return Err(self.fail(format!("deflate made no progress ({status:?})")));
            }
        }
    }

    /// Marks the stream failed: every later call reports an error.
    fn fail(&mut self, detail: String) -> EncodeError {
        self.stage = Stage::Failed;
        EncodeError { detail }
    }
}

/// Writes a gzip (with `padding` bytes of header comment) or zlib header for `level`.
pub(crate) fn write_header(format: Format, level: u32, padding: usize, out: &mut BytesMut) {
    match format {
        Format::Gzip => {
            const FCOMMENT: u8 = 0x10;
            let padded = padding > 0;
            // XFL: 2 = maximum compression, 4 = fastest (RFC 1952 section 2.3.1).
            let xfl = match level {
                9 => 2,
                0 | 1 => 4,
                _ => 0,
            };
            let flags = if padded { FCOMMENT } else { 0 };
            // magic, CM = deflate, FLG, MTIME = 0 (none), XFL, OS = 255 (unknown).
            out.extend_from_slice(&[0x1f, 0x8b, 8, flags, 0, 0, 0, 0, xfl, 255]);
            if padded {
                // The comment is ISO 8859-1 text ending in a NUL; spaces will do.
                out.extend(std::iter::repeat_n(b' ', padding - 1));
                out.extend_from_slice(b"\0");
            }
        }
        Format::Deflate => {
            // CMF: deflate with a 32 KiB window; FLG: FLEVEL by level, no dictionary,
            // and FCHECK so that CMF*256 + FLG is a multiple of 31 (RFC 1950 section 2.2).
            let cmf: u16 = 0x78;
            let flevel: u16 = match level {
                0 | 1 => 0,
                2..=5 => 1,
                6 => 2,
                _ => 3,
            };
            let mut header = (cmf << 8) | (flevel << 6);
            header += 31 - header % 31;
            out.extend_from_slice(&header.to_be_bytes());
        }
    }
}

/// Writes the gzip trailer (CRC32, ISIZE) or the zlib one (Adler-32) for `len` input bytes.
pub(crate) fn write_trailer(format: Format, check: u32, len: u64, out: &mut BytesMut) {
    match format {
        Format::Gzip => {
            out.extend_from_slice(&check.to_le_bytes());
            // ISIZE is the input length modulo 2^32 (RFC 1952 section 2.3.1).
            out.extend_from_slice(&(len as u32).to_le_bytes());
        }
        Format::Deflate => out.extend_from_slice(&check.to_be_bytes()),
    }
}
