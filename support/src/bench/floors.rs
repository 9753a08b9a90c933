//! The physical floors the response benches compare the layers with: each codec library
//! alone on reused state, and payloads encoded once per bench.

use bytes::Bytes;

/// The codec's physical floor: one reused raw deflate state with gzip framing, writing into
/// a reused buffer.
pub struct RawFloor {
    deflate: flate2::Compress,
    out: Vec<u8>,
}

impl RawFloor {
    pub fn new(level: u32) -> Self {
        RawFloor {
            deflate: flate2::Compress::new(flate2::Compression::new(level), false),
            out: Vec::with_capacity(2 * 1024 * 1024),
        }
    }

    pub fn gzip(&mut self, input: &[u8]) -> usize {
        self.deflate.reset();
        self.out.clear();
        self.out
            .extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        loop {
            let consumed = self.deflate.total_in() as usize;
            let status = self
                .deflate
                .compress_vec(
                    &input[consumed..],
                    &mut self.out,
                    flate2::FlushCompress::Finish,
                )
                .unwrap();
            if status == flate2::Status::StreamEnd {
                break;
            }
            self.out.reserve(64 * 1024);
        }
        let crc = crc32fast::hash(input);
        self.out.extend_from_slice(&crc.to_le_bytes());
        self.out
            .extend_from_slice(&(input.len() as u32).to_le_bytes());
        self.out.len()
    }
}

impl RawFloor {
    /// The gzip member written by the last [`RawFloor::gzip`] call.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
}

/// `payload` as one gzip member at `level` (10-byte header, no flags), made once per bench.
pub fn gzip_bytes(payload: &[u8], level: u32) -> Bytes {
    let mut floor = RawFloor::new(level);
    floor.gzip(payload);
    Bytes::copy_from_slice(floor.output())
}

/// The inflate floor: one reused raw inflate state and a reused output buffer; the gzip
/// header (10 bytes, no flags, as [`gzip_bytes`] writes it) and trailer are handled here, the
/// CRC32 with crc32fast. Returns the decoded length.
pub struct RawInflateFloor {
    inflate: flate2::Decompress,
    out: Vec<u8>,
}

impl RawInflateFloor {
    pub fn new() -> Self {
        RawInflateFloor {
            inflate: flate2::Decompress::new(false),
            out: Vec::with_capacity(2 * 1024 * 1024),
        }
    }

    pub fn gunzip(&mut self, member: &[u8]) -> usize {
        assert!(member.len() >= 18 && member[..4] == [0x1f, 0x8b, 8, 0]);
        let (deflate, trailer) = member[10..].split_at(member.len() - 18);
        self.inflate.reset(false);
        self.out.clear();
        loop {
            let consumed = self.inflate.total_in() as usize;
            let status = self
                .inflate
                .decompress_vec(
                    &deflate[consumed..],
                    &mut self.out,
                    flate2::FlushDecompress::Finish,
                )
                .unwrap();
            if status == flate2::Status::StreamEnd {
                break;
            }
            self.out.reserve(64 * 1024);
        }
        let crc = u32::from_le_bytes(trailer[..4].try_into().unwrap());
        let isize = u32::from_le_bytes(trailer[4..].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(&self.out));
        assert_eq!(isize, self.out.len() as u32);
        self.out.len()
    }
}

impl Default for RawInflateFloor {
    fn default() -> Self {
        Self::new()
    }
}

/// gzip level 6 by libdeflate alone: one reused `libdeflater::Compressor` writing a gzip
/// member into a reused buffer. The floor of the one-shot path (bodies up to 64 KiB).
#[cfg(feature = "libdeflate")]
pub struct LibdeflateFloor {
    compressor: libdeflater::Compressor,
    out: Vec<u8>,
}

#[cfg(feature = "libdeflate")]
impl LibdeflateFloor {
    pub fn new(level: u32) -> Self {
        let level = libdeflater::CompressionLvl::new(level as i32).unwrap();
        LibdeflateFloor {
            compressor: libdeflater::Compressor::new(level),
            out: Vec::new(),
        }
    }

    pub fn gzip(&mut self, input: &[u8]) -> usize {
        let bound = self.compressor.gzip_compress_bound(input.len());
        self.out.resize(bound, 0);
        self.compressor.gzip_compress(input, &mut self.out).unwrap()
    }
}

/// zstd alone: one reused `zstd_safe::CCtx` at `level` (no content checksum, as the layer
/// writes it), reset per body (`SessionOnly`), the input size pledged, and the whole
/// frame written by one `compress_stream2(.., e_end)` into a reused buffer.
#[cfg(feature = "zstd")]
pub struct ZstdFloor {
    cctx: zstd_safe::CCtx<'static>,
    out: Vec<u8>,
}

#[cfg(feature = "zstd")]
impl ZstdFloor {
    pub fn new(level: i32) -> Self {
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
            .unwrap();
        ZstdFloor {
            cctx,
            out: Vec::new(),
        }
    }

    pub fn compress(&mut self, input: &[u8]) -> usize {
        self.cctx
            .reset(zstd_safe::ResetDirective::SessionOnly)
            .unwrap();
        self.cctx
            .set_pledged_src_size(Some(input.len() as u64))
            .unwrap();
        self.out.clear();
        self.out.reserve(zstd_safe::compress_bound(input.len()));
        let mut output = zstd_safe::OutBuffer::around(&mut self.out);
        let mut input = zstd_safe::InBuffer::around(input);
        let left = self
            .cctx
            .compress_stream2(
                &mut output,
                &mut input,
                zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end,
            )
            .unwrap();
        assert_eq!(left, 0, "one call with compress_bound room ends the frame");
        self.out.len()
    }

    /// The frame written by the last [`ZstdFloor::compress`] call.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
}

/// zstd decoding alone: one reused `DCtx`, the whole frame into a reused buffer.
#[cfg(feature = "zstd")]
pub struct ZstdDecodeFloor {
    dctx: zstd_safe::DCtx<'static>,
    out: Vec<u8>,
}

#[cfg(feature = "zstd")]
impl ZstdDecodeFloor {
    pub fn new(capacity: usize) -> Self {
        ZstdDecodeFloor {
            dctx: zstd_safe::DCtx::create(),
            out: Vec::with_capacity(capacity),
        }
    }

    pub fn decompress(&mut self, frame: &[u8]) -> usize {
        self.out.clear();
        self.dctx.decompress(&mut self.out, frame).unwrap()
    }
}

/// `payload` as one zstd frame at `level` (pledged size), made once per bench.
#[cfg(feature = "zstd")]
pub fn zstd_bytes(payload: &[u8], level: i32) -> Bytes {
    let mut floor = ZstdFloor::new(level);
    floor.compress(payload);
    Bytes::copy_from_slice(floor.output())
}

/// br alone: the brotli crate's one-call compressor (`BrotliCompressCustomAlloc`, reader to
/// writer) at `quality`, window 22 (`lgwin`, as the layer and tower-http use), the size hint
/// set to the input's length and the whole input handed over in one piece (as tower-http's
/// encoder receives a `Full` body), into reused buffers. The encoder state is built and freed
/// inside every call: that is the crate's one-call API (`BrotliEncoderCompress` over slices
/// is only exported through its C API).
#[cfg(feature = "br")]
pub struct BrFloor {
    params: brotli::enc::BrotliEncoderParams,
    input: Vec<u8>,
    chunk: Vec<u8>,
    out: Vec<u8>,
}

#[cfg(feature = "br")]
impl BrFloor {
    pub fn new(quality: i32) -> Self {
        let params = brotli::enc::BrotliEncoderParams {
            quality,
            lgwin: 22,
            ..Default::default()
        };
        BrFloor {
            params,
            input: Vec::new(),
            chunk: vec![0; 64 * 1024],
            out: Vec::new(),
        }
    }

    pub fn compress(&mut self, mut input: &[u8]) -> usize {
        self.params.size_hint = input.len();
        self.input.resize(input.len().max(1), 0);
        self.out.clear();
        brotli::BrotliCompressCustomAlloc(
            &mut input,
            &mut self.out,
            &mut self.input,
            &mut self.chunk,
            &self.params,
            brotli::enc::StandardAlloc::default(),
        )
        .unwrap()
    }

    /// The stream written by the last [`BrFloor::compress`] call.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
}

/// br decoding alone: the brotli crate's one-call `BrotliDecompress` into a reused buffer.
#[cfg(feature = "br")]
pub struct BrDecodeFloor {
    out: Vec<u8>,
}

#[cfg(feature = "br")]
impl BrDecodeFloor {
    pub fn new(capacity: usize) -> Self {
        BrDecodeFloor {
            out: Vec::with_capacity(capacity),
        }
    }

    pub fn decompress(&mut self, mut stream: &[u8]) -> usize {
        self.out.clear();
        brotli::BrotliDecompress(&mut stream, &mut self.out).unwrap();
        self.out.len()
    }
}

/// `payload` as one br stream at `quality`, window 22, made once per bench.
#[cfg(feature = "br")]
pub fn br_bytes(payload: &[u8], quality: i32) -> Bytes {
    let mut floor = BrFloor::new(quality);
    floor.compress(payload);
    Bytes::copy_from_slice(floor.output())
}
