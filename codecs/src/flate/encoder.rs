use bytes::BytesMut;
use flate2::{Compress, Compression, FlushCompress, Status};

use super::checksum::Checksum;
use super::{Framing, compress_into, deflate_bound};
use crate::encoding::{Driving, Encode, EncodeOptions};
use crate::history::History;
use crate::pool::{CodecPool, Hold, Pooled};
use crate::{EncodeError, Level, SliceEnd};

/// A complete, empty, final fixed-Huffman block (BFINAL=1, BTYPE=01, end-of-block), valid
/// at a byte boundary. Ends a stream idle since a sync flush (byte-aligned) without drawing
/// a deflate state just to say "done".
const EMPTY_FINAL_BLOCK: [u8; 2] = [0x03, 0x00];

/// A streaming gzip or zlib encoder over a pooled raw deflate state.
///
/// The framing (header, CRC-32 or Adler-32, trailer) lives here and the byte counts in the
/// driver, not in the deflate state, so [`idle`](Encode::idle) can end the
/// current block with a sync flush and park the state in the pool: the stream goes
/// on with it when data comes, or, if another stream took it meanwhile, with a fresh state
/// primed with the last 32 KiB of input as its dictionary. The output is one valid deflate
/// stream either way: after a flush the stream is byte-aligned, and a state primed with the
/// true history only refers to bytes the decoder has (as in pigz).
pub(crate) type FlateEncoder = Driving<FlateCore>;

/// The [`Encode`] of gzip and zlib: our framing around a pooled raw deflate state.
#[derive(Debug)]
pub(crate) struct FlateCore {
    /// Not held before the first input, while idle and after the finish.
    deflate: Hold<Compress>,
    pool: CodecPool,
    framing: Framing,
    level: Level,
    check: Checksum,
    header: Header,
    /// The last input (at most [`DICTIONARY`](crate::history::DICTIONARY) bytes), to
    /// prime a state drawn after idling.
    history: History,
}

/// Whether the header is out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Header {
    /// Owed, with this many bytes of gzip comment padding.
    Owed { padding: usize },
    /// Written: this many bytes, which are not payload.
    Written { len: usize },
}

impl FlateEncoder {
    pub(crate) fn new(framing: Framing, level: Level, pool: &CodecPool) -> Self {
        Driving::with_core(FlateCore {
            // Drawn at the first input: many responses may be built before their bodies
            // are first polled, and none should hold a state for it.
            deflate: Hold::default(),
            pool: pool.clone(),
            framing,
            level,
            check: Checksum::new(framing),
            header: Header::Owed { padding: 0 },
            history: History::default(),
        })
    }
}

impl FlateCore {
    /// Writes the header if it is still owed.
    fn begin(&mut self, out: &mut BytesMut, input_len: usize) {
        if let Header::Owed { padding } = self.header {
            // One reservation for the header, this call's output and the trailer, so a
            // short message costs the output buffer a single allocation.
            let len = header_len(self.framing, padding);
            out.reserve(len + deflate_bound(input_len).max(64) + 64 + 8);
            write_header(self.framing, self.level, padding, out);
            self.header = Header::Written { len };
        }
    }

    /// The deflate state: the parked one taken back, or one drawn and primed with the
    /// history when it was given away.
    fn state(&mut self) -> Result<&mut Compress, EncodeError> {
        if !self.deflate.resume().is_held() {
            let mut state = draw(&self.pool, self.level);
            if !self.history.tail.is_empty() {
                state
                    .set_dictionary(&self.history.tail)
                    .map_err(|e| EncodeError::new(format!("priming deflate: {e}")))?;
                self.pool.note_primed::<Compress>(self.history.tail.len());
            }
            self.deflate.hold(state);
        }
        Ok(self.deflate.held().expect("drawn above"))
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
            let step = compress_into(self.state()?, input, out, room, flush);
            input = &input[step.consumed..];
            let status = step.status.map_err(|e| EncodeError::new(e.to_string()))?;
            let done = match flush {
                FlushCompress::Finish => status == Status::StreamEnd,
                // A flush is complete when deflate stops short of filling the room.
                FlushCompress::Sync | FlushCompress::Full => {
                    input.is_empty() && step.produced < room
                }
                _ => input.is_empty(),
            };
            if done {
                return Ok(());
            }
            if step.consumed == 0 && step.produced == 0 {
                return Err(EncodeError::new(format!(
                    "deflate made no progress ({status:?})"
                )));
            }
        }
    }
}

fn draw(pool: &CodecPool, level: Level) -> Pooled<Compress> {
    pool.take(level, || {
        Compress::new(Compression::new(u32::from(level.get())), false)
    })
}

impl Encode for FlateCore {
    /// A streaming body keeps the last 32 KiB of input from now on, so a released state
    /// resumes with the ratio of an unbroken stream. gzip pads its header with a comment
    /// field of up to 65,535 bytes; zlib, which has no such field, with empty blocks after
    /// its header (see [`write_empty_blocks`]).
    fn start(&mut self, options: &EncodeOptions) {
        if options.streaming {
            self.history.tracking = true;
        }
        if let Header::Owed { padding } = &mut self.header {
            *padding = options.padding.min(u16::MAX as usize);
        }
    }

    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        self.begin(out, input.len());
        self.check.update(input);
        // A state drawn now is primed with the history *before* this input.
        self.run(input, out, FlushCompress::None)?;
        self.history.record(input);
        Ok(())
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.begin(out, 0);
        // A parked state was flushed when it was parked.
        if self.deflate.is_held() {
            self.run(&[], out, FlushCompress::Sync)?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut BytesMut, total_in: u64) -> Result<(), EncodeError> {
        self.begin(out, 0);
        if self.deflate.is_held() {
            self.run(&[], out, FlushCompress::Finish)?;
        } else {
            // Idle since a flush: the stream is byte-aligned and only needs a last block, and
            // a parked state goes back to the shelf clean (dropping the lease).
            self.deflate.release();
            out.extend_from_slice(&EMPTY_FINAL_BLOCK);
        }
        out.reserve(8);
        write_trailer(self.framing, self.check.value(), total_in, out);
        // The state goes back to the pool as soon as the stream is done.
        self.deflate.release();
        Ok(())
    }

    fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.begin(out, 0);
        if self.deflate.is_held() {
            // A sync flush, not a full one: the parked state keeps its window (a full flush
            // clears the hash table, and the stream would lose its matches); one primed with
            // the history carries on as well.
            self.run(&[], out, FlushCompress::Sync)?;
            self.history.tracking = true;
            if self.pool.crowded::<Compress>() {
                // More streams than the hold limit: this one will prime a state at every
                // slice or event, and hundreds may wait at once; half a window will do.
                self.history.shorten();
            }
            // No room to park: released, as a crowded pool's slice end does.
            drop(self.deflate.park());
        }
        Ok(())
    }

    fn fail(&mut self) {
        // An interrupted state is reset by the pool before anyone else gets it.
        self.deflate.release();
    }

    fn holds_state(&self) -> bool {
        self.deflate.is_held()
    }

    fn has_payload(&self, total_out: u64) -> bool {
        match self.header {
            Header::Owed { .. } => false,
            Header::Written { len } => total_out > len as u64,
        }
    }

    fn at_slice_end(&self) -> SliceEnd {
        if self.deflate.is_held() && self.history.tracking && self.pool.crowded::<Compress>() {
            SliceEnd::Release
        } else {
            SliceEnd::Keep
        }
    }
}

/// The bytes [`write_header`] writes for `framing` and `padding`.
pub(crate) fn header_len(framing: Framing, padding: usize) -> usize {
    match framing {
        Framing::Gzip if padding > 0 => 10 + padding,
        Framing::Gzip => 10,
        Framing::Zlib => 2 + empty_blocks_len(padding),
    }
}

/// Four empty, non-final fixed-Huffman blocks: 40 bits. Each is BFINAL 0, BTYPE 01 (least
/// significant bit first: 1, 0) and the 7-bit end-of-block code 0.
const FOUR_EMPTY_FIXED: [u8; 5] = [0x02, 0x08, 0x20, 0x80, 0x00];

/// The bytes of [`write_empty_blocks`] for `padding`: none for 0, else 5 bytes and about
/// 1.25 more per unit, a different length for each `padding`.
fn empty_blocks_len(padding: usize) -> usize {
    match padding {
        0 => 0,
        _ => (10 * (padding - 1) + 3).div_ceil(8) + 4,
    }
}

/// zlib's length padding, where a zlib header has no room: `padding - 1` empty fixed-Huffman
/// blocks and an empty stored block, none final, written at a byte boundary (after the
/// header). The stored block ends on a byte boundary, where the raw deflate stream that
/// follows begins; decoders output nothing for empty blocks (a sync flush is one).
fn write_empty_blocks(padding: usize, out: &mut BytesMut) {
    if padding == 0 {
        return;
    }
    let fixed = padding - 1;
    out.reserve(empty_blocks_len(padding));
    for _ in 0..fixed / 4 {
        out.extend_from_slice(&FOUR_EMPTY_FIXED);
    }
    // The last 0-3 fixed blocks, then the stored block's 3 header bits (BFINAL 0, BTYPE 00)
    // and zero bits to the byte boundary.
    let tail: &[u8] = match fixed % 4 {
        0 => &[0x00],
        1 => &[0x02, 0x00],
        2 => &[0x02, 0x08, 0x00],
        _ => &[0x02, 0x08, 0x20, 0x00, 0x00],
    };
    out.extend_from_slice(tail);
    // LEN 0 and NLEN, its complement.
    out.extend_from_slice(&[0x00, 0x00, 0xff, 0xff]);
}

/// Writes a gzip (with `padding` bytes of header comment) or zlib (with `padding` empty
/// blocks after it) header for `level`.
pub(crate) fn write_header(framing: Framing, level: Level, padding: usize, out: &mut BytesMut) {
    let level = level.get();
    match framing {
        Framing::Gzip => {
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
        Framing::Zlib => {
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
            write_empty_blocks(padding, out);
        }
    }
}

/// Writes the gzip trailer (CRC32, ISIZE) or the zlib one (Adler-32) for `len` input bytes.
pub(crate) fn write_trailer(framing: Framing, check: u32, len: u64, out: &mut BytesMut) {
    match framing {
        Framing::Gzip => {
            out.extend_from_slice(&check.to_le_bytes());
            // ISIZE is the input length modulo 2^32 (RFC 1952 section 2.3.1).
            out.extend_from_slice(&(len as u32).to_le_bytes());
        }
        Framing::Zlib => out.extend_from_slice(&check.to_be_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pause_steps::step;
    use crate::{CompressionLevel, ContentCoding, Decoder};

    fn run(pool: &CodecPool) -> Vec<u8> {
        let level = CompressionLevel::Default.resolve(ContentCoding::Gzip);
        let mut e = FlateEncoder::new(Framing::Gzip, level, pool);
        let mut wire = BytesMut::new();
        e.encode(b"event: tick data n=0 hello hello hello\n", &mut wire)
            .unwrap();
        e.idle(&mut wire).unwrap();
        e.encode(b"event: tick data n=1 hello hello hello\n", &mut wire)
            .unwrap();
        e.idle(&mut wire).unwrap();
        e.finish(&mut wire).unwrap();
        let p = CodecPool::new();
        let mut d = Decoder::new(ContentCoding::Gzip, &p);
        let mut out = BytesMut::new();
        d.decode(&wire, &mut out, usize::MAX).unwrap();
        d.finish().unwrap();
        out.to_vec()
    }

    #[test]
    fn idle_release_keeps_the_stream_valid() {
        let want =
            b"event: tick data n=0 hello hello hello\nevent: tick data n=1 hello hello hello\n";
        assert_eq!(
            String::from_utf8_lossy(&run(&CodecPool::builder().max_idle(0).build())),
            String::from_utf8_lossy(want),
            "fresh states"
        );
        assert_eq!(
            String::from_utf8_lossy(&run(&CodecPool::new())),
            String::from_utf8_lossy(want),
            "reused states"
        );
    }

    /// Streams taking turns on a crowded pool (hold limit 0: any held state crowds it) give
    /// their states back clean at each pause rather than park them, so one state serves
    /// them all: none parked, none dropped, none built beyond the first; and every stream
    /// still decodes.
    #[test]
    fn a_crowded_pool_builds_no_state_beyond_the_first() {
        let pool = CodecPool::builder().hold_limit(0).max_idle(2).build();
        let level = CompressionLevel::Default.resolve(ContentCoding::Gzip);
        let mut streams: Vec<_> = (0..8)
            .map(|_| {
                (
                    FlateEncoder::new(Framing::Gzip, level, &pool),
                    BytesMut::new(),
                )
            })
            .collect();
        let chunk: Vec<u8> = (0..20_000u32)
            .map(|i| b"abcdefgh "[(i % 9) as usize])
            .collect();
        for _round in 0..4 {
            for (encoder, wire) in &mut streams {
                encoder.encode(&chunk, wire).unwrap();
                encoder.idle(wire).unwrap();
            }
        }
        let stats = pool.stats().kind(crate::pool::PoolKind::DeflateCompressors);
        assert_eq!(
            (stats.created, stats.parked, stats.discarded),
            (1, 0, 0),
            "{stats:?}"
        );
        for (mut encoder, mut wire) in streams {
            encoder.finish(&mut wire).unwrap();
            let mut d = Decoder::new(ContentCoding::Gzip, &CodecPool::new());
            let mut out = BytesMut::new();
            d.decode(&wire, &mut out, usize::MAX).unwrap();
            d.finish().unwrap();
            assert_eq!(out.len(), 4 * chunk.len());
            assert!(out.chunks(chunk.len()).all(|c| c == chunk));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any mix of encode, flush and idle (the state parked and taken back, or taken by
        /// another stream and a fresh one primed) stays one valid stream.
        #[test]
        fn idle_releases_round_trip(
            ops in proptest::collection::vec((0u8..4, 0usize..40_000), 1..12),
            zlib in proptest::bool::ANY,
            level in 0i32..10,
        ) {
            let pool = CodecPool::builder().max_idle(2).build();
            let framing = if zlib { Framing::Zlib } else { Framing::Gzip };
            let coding = if zlib { ContentCoding::Deflate } else { ContentCoding::Gzip };
            let level = CompressionLevel::Precise(level).resolve(coding);
            let mut encoder = FlateEncoder::new(framing, level, &pool);
            let mut wire = BytesMut::new();
            let mut plain = Vec::new();
            for (i, (op, len)) in ops.iter().enumerate() {
                let chunk: Vec<u8> = (0..*len).map(|j| b"abcabd\n{}"[(j * 7 + i) % 9] ^ (j / 5000) as u8).collect();
                // Another stream's draw takes the parked state: this one primes a fresh one.
                let other_draw = || drop(draw(&pool, level));
                if step(&mut encoder, &chunk, *op, &mut wire, &mut plain, other_draw) {
                    proptest::prop_assert!(!encoder.holds_state());
                }
            }
            encoder.finish(&mut wire).unwrap();
            let p = CodecPool::new();
            let mut d = Decoder::new(coding, &p);
            let mut out = BytesMut::new();
            let n = d.decode(&wire, &mut out, usize::MAX).unwrap();
            proptest::prop_assert_eq!(n, wire.len());
            d.finish().unwrap();
            proptest::prop_assert!(out[..] == plain[..]);
            proptest::prop_assert_eq!(pool.stats().kind(crate::pool::PoolKind::DeflateCompressors).in_use(), 0);
        }
    }
}

#[cfg(test)]
mod padding_tests {
    use std::io::Read;

    use super::*;
    use crate::{CompressionLevel, ContentCoding, Decoder};

    /// zlib padding is empty blocks after the header: a different length for each padding,
    /// and the stream decodes to the input with flate2 and with ours.
    #[test]
    fn zlib_padding_is_empty_blocks_and_round_trips() {
        let pool = CodecPool::new();
        let level = CompressionLevel::Default.resolve(ContentCoding::Deflate);
        let input = b"padded padded padded zlib stream, ".repeat(20);
        let mut lengths = Vec::new();
        for padding in (0..=300).chain([65_535, 1 << 20]) {
            let mut encoder = FlateEncoder::new(Framing::Zlib, level, &pool);
            encoder.options_mut().unwrap().padding = padding;
            let mut wire = BytesMut::new();
            encoder.encode(&input, &mut wire).unwrap();
            encoder.finish(&mut wire).unwrap();
            let mut plain = Vec::new();
            flate2::read::ZlibDecoder::new(&wire[..])
                .read_to_end(&mut plain)
                .unwrap();
            assert_eq!(plain, input, "flate2, padding {padding}");
            let mut decoder = Decoder::new(ContentCoding::Deflate, &pool);
            let mut out = BytesMut::new();
            decoder.decode(&wire, &mut out, usize::MAX).unwrap();
            decoder.finish().unwrap();
            assert_eq!(&out[..], &input[..], "ours, padding {padding}");
            lengths.push(wire.len() - empty_blocks_len(padding.min(65_535)));
        }
        // The padding is all the difference.
        assert!(lengths.iter().all(|&n| n == lengths[0]), "{lengths:?}");
        let sizes: Vec<usize> = (0..=300).map(empty_blocks_len).collect();
        assert!(
            sizes.windows(2).all(|w| w[0] < w[1]),
            "one length per padding"
        );
        assert_eq!(sizes[1], 5, "one empty stored block");
    }
}
