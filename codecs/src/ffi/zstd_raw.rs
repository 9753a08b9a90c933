//! Raw-content zstd dictionaries and the contexts that use them, over libzstd's C API.
//!
//! `zstd-safe` 8 loads dictionaries only in zstd's *auto* mode, where bytes that start with
//! the dictionary magic `37 a4 30 ec` are parsed as a zstd dictionary (entropy tables plus
//! content, and a dictionary id written into every frame). RFC 9842 and Chromium treat a
//! dictionary as raw bytes, always: a trained dictionary loaded in auto mode makes frames
//! Chromium rejects. The `*_advanced` calls with `ZSTD_dct_rawContent` are experimental in
//! libzstd and not wrapped by `zstd-safe`, so this file wraps the few it needs. Everything
//! else about the dictionaries stays safe Rust.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use zstd_safe::zstd_sys::{
    self, ZSTD_CCtx, ZSTD_CDict, ZSTD_DCtx, ZSTD_DDict, ZSTD_EndDirective, ZSTD_ErrorCode,
    ZSTD_ResetDirective, ZSTD_cParameter, ZSTD_customMem, ZSTD_dictContentType_e,
    ZSTD_dictLoadMethod_e, ZSTD_inBuffer, ZSTD_outBuffer,
};

/// libzstd's default allocator (the value of its `ZSTD_defaultCMem`).
fn default_mem() -> ZSTD_customMem {
    ZSTD_customMem {
        customAlloc: None,
        customFree: None,
        opaque: std::ptr::null_mut(),
    }
}

/// The window log zstd picks at `level` for input of unknown size, without a dictionary.
pub(crate) fn natural_window_log(level: i32) -> u32 {
    // SAFETY: ZSTD_getCParams is a pure function of its integer arguments (0: unknown size).
    let params = unsafe { zstd_sys::ZSTD_getCParams(level, 0, 0) };
    params.windowLog
}

/// A libzstd error code, kept for its name and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ZstdError(usize);

impl ZstdError {
    pub(crate) fn name(self) -> &'static str {
        zstd_safe::get_error_name(self.0)
    }

    pub(crate) fn code(self) -> ZSTD_ErrorCode {
        super::error_code(self.0)
    }
}

/// A libzstd return value: an error code, or a size.
fn check(code: usize) -> Result<usize, ZstdError> {
    // SAFETY: ZSTD_isError only reads the integer it is given.
    let is_error = unsafe { zstd_sys::ZSTD_isError(code) } != 0;
    if is_error {
        Err(ZstdError(code))
    } else {
        Ok(code)
    }
}

/// A digested compression dictionary at one level, loaded as raw content. It references
/// (does not copy) the dictionary's bytes and owns a handle to them.
pub(crate) struct RawCDict {
    ptr: NonNull<ZSTD_CDict>,
    _content: Bytes,
}

// SAFETY: a CDict is immutable once built; zstd.h: "ZSTD_CDict can be created once and
// shared by multiple threads concurrently, since its usage is read-only". The bytes it
// references are a `Bytes`, immutable and owned by the same value.
unsafe impl Send for RawCDict {}
// SAFETY: as above: every use through `&RawCDict` is a read.
unsafe impl Sync for RawCDict {}

impl RawCDict {
    /// Digests `content` as raw content for compression at `level`. `None` when libzstd
    /// fails (out of memory, or an invalid level).
    pub(crate) fn new(content: &Bytes, level: i32) -> Option<RawCDict> {
        // SAFETY: plain FFI; the params object is freed below on every path.
        let params = NonNull::new(unsafe { zstd_sys::ZSTD_createCCtxParams() })?;
        // SAFETY: `params` is a live CCtx_params; setting a parameter only writes into it.
        let set = unsafe {
            zstd_sys::ZSTD_CCtxParams_setParameter(
                params.as_ptr(),
                ZSTD_cParameter::ZSTD_c_compressionLevel,
                level,
            )
        };
        let cdict = check(set).ok().and_then(|_| {
            // SAFETY: `content` points at `content.len()` readable bytes that stay alive and
            // unmodified as long as the CDict (byRef): the CDict owns a clone of the `Bytes`
            // (same allocation, immutable). `params` is live; libzstd copies what it needs.
            NonNull::new(unsafe {
                zstd_sys::ZSTD_createCDict_advanced2(
                    content.as_ptr().cast::<c_void>(),
                    content.len(),
                    ZSTD_dictLoadMethod_e::ZSTD_dlm_byRef,
                    ZSTD_dictContentType_e::ZSTD_dct_rawContent,
                    params.as_ptr(),
                    default_mem(),
                )
            })
        });
        // SAFETY: `params` came from ZSTD_createCCtxParams and is freed once, here.
        unsafe { zstd_sys::ZSTD_freeCCtxParams(params.as_ptr()) };
        Some(RawCDict {
            ptr: cdict?,
            _content: content.clone(),
        })
    }

    /// The memory libzstd holds for it.
    pub(crate) fn sizeof(&self) -> usize {
        // SAFETY: `ptr` is a live CDict; sizeof only reads it.
        unsafe { zstd_sys::ZSTD_sizeof_CDict(self.ptr.as_ptr()) }
    }
}

impl Drop for RawCDict {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from ZSTD_createCDict_advanced2 and is freed once. No context
        // references it any more: a `CompressContext` holds an `Arc<RawCDict>` for as long
        // as it references the CDict, so the last Arc cannot drop while one does.
        unsafe {
            zstd_sys::ZSTD_freeCDict(self.ptr.as_ptr());
        }
    }
}

/// A digested decompression dictionary, loaded as raw content, referencing the bytes.
pub(crate) struct RawDDict {
    ptr: NonNull<ZSTD_DDict>,
    _content: Bytes,
}

// SAFETY: like a CDict, a DDict is only read once built (zstd.h: "ZSTD_DDict can be created
// once and shared by multiple threads concurrently").
unsafe impl Send for RawDDict {}
// SAFETY: as above.
unsafe impl Sync for RawDDict {}

impl RawDDict {
    /// Digests `content` as raw content for decompression.
    pub(crate) fn new(content: &Bytes) -> Option<RawDDict> {
        // SAFETY: as for `RawCDict::new`: the bytes outlive the DDict, which owns a clone.
        let ptr = NonNull::new(unsafe {
            zstd_sys::ZSTD_createDDict_advanced(
                content.as_ptr().cast::<c_void>(),
                content.len(),
                ZSTD_dictLoadMethod_e::ZSTD_dlm_byRef,
                ZSTD_dictContentType_e::ZSTD_dct_rawContent,
                default_mem(),
            )
        })?;
        Some(RawDDict {
            ptr,
            _content: content.clone(),
        })
    }
}

impl Drop for RawDDict {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDDict_advanced, freed once; contexts referencing it
        // hold an `Arc<RawDDict>` (see `DecompressContext`).
        unsafe {
            zstd_sys::ZSTD_freeDDict(self.ptr.as_ptr());
        }
    }
}

/// One streaming call, `call(output, input)`, from `input[*pos..]` (advancing `pos`) into at
/// most `room` more bytes of `out`'s spare capacity, which grows by what zstd wrote.
fn stream(
    input: &[u8],
    pos: &mut usize,
    out: &mut BytesMut,
    room: usize,
    call: impl FnOnce(&mut ZSTD_outBuffer, &mut ZSTD_inBuffer) -> usize,
) -> Result<usize, ZstdError> {
    out.reserve(room);
    let spare = out.spare_capacity_mut();
    let mut dst = ZSTD_outBuffer {
        dst: spare.as_mut_ptr().cast::<c_void>(),
        size: room.min(spare.len()),
        pos: 0,
    };
    let mut src = ZSTD_inBuffer {
        src: input.as_ptr().cast::<c_void>(),
        size: input.len(),
        pos: *pos,
    };
    let code = call(&mut dst, &mut src);
    let len = out.len() + dst.pos;
    assert!(dst.pos <= dst.size && len <= out.capacity() && src.pos <= input.len());
    // SAFETY: zstd initialized the first `dst.pos` bytes of the spare capacity it was given
    // (ZSTD_outBuffer contract: `pos` is where writing stopped, `pos <= size`), and that
    // region starts at `out.len()`; the assert keeps the new length in the allocation.
    unsafe { out.set_len(len) };
    *pos = src.pos;
    check(code)
}

/// What a [`Context`] of one direction calls: libzstd's functions for its context type.
pub(crate) trait Direction {
    /// `ZSTD_CCtx` or `ZSTD_DCtx`.
    type Raw;
    /// The digested dictionary a context references: [`RawCDict`] or [`RawDDict`].
    type Dict: Send + Sync;
    const CREATE: unsafe extern "C" fn() -> *mut Self::Raw;
    const FREE: unsafe extern "C" fn(*mut Self::Raw) -> usize;
    const RESET: unsafe extern "C" fn(*mut Self::Raw, ZSTD_ResetDirective) -> usize;
    const SIZEOF: unsafe extern "C" fn(*const Self::Raw) -> usize;
}

/// Compression: `ZSTD_CCtx` with a [`RawCDict`].
#[derive(Debug)]
pub(crate) enum Compress {}

impl Direction for Compress {
    type Raw = ZSTD_CCtx;
    type Dict = RawCDict;
    const CREATE: unsafe extern "C" fn() -> *mut ZSTD_CCtx = zstd_sys::ZSTD_createCCtx;
    const FREE: unsafe extern "C" fn(*mut ZSTD_CCtx) -> usize = zstd_sys::ZSTD_freeCCtx;
    const RESET: unsafe extern "C" fn(*mut ZSTD_CCtx, ZSTD_ResetDirective) -> usize =
        zstd_sys::ZSTD_CCtx_reset;
    const SIZEOF: unsafe extern "C" fn(*const ZSTD_CCtx) -> usize = zstd_sys::ZSTD_sizeof_CCtx;
}

/// Decompression: `ZSTD_DCtx` with a [`RawDDict`].
#[derive(Debug)]
pub(crate) enum Decompress {}

impl Direction for Decompress {
    type Raw = ZSTD_DCtx;
    type Dict = RawDDict;
    const CREATE: unsafe extern "C" fn() -> *mut ZSTD_DCtx = zstd_sys::ZSTD_createDCtx;
    const FREE: unsafe extern "C" fn(*mut ZSTD_DCtx) -> usize = zstd_sys::ZSTD_freeDCtx;
    const RESET: unsafe extern "C" fn(*mut ZSTD_DCtx, ZSTD_ResetDirective) -> usize =
        zstd_sys::ZSTD_DCtx_reset;
    const SIZEOF: unsafe extern "C" fn(*const ZSTD_DCtx) -> usize = zstd_sys::ZSTD_sizeof_DCtx;
}

/// A zstd context that references at most one dictionary, and owns a handle to it while it
/// does. `D`'s functions are libzstd's own for `D::Raw` (the two impls above), which is
/// what the `SAFETY` comments below rely on.
pub(crate) struct Context<D: Direction> {
    ptr: NonNull<D::Raw>,
    dict: Option<Arc<D::Dict>>,
}

/// A compression context for raw-content dictionaries.
pub(crate) type CompressContext = Context<Compress>;
/// A decompression context for raw-content dictionaries.
pub(crate) type DecompressContext = Context<Decompress>;

// SAFETY: a context is a heap object with no thread affinity, used only through `&mut self`;
// the dictionary it may reference is Send + Sync (bound above) and kept alive by its Arc.
unsafe impl<D: Direction> Send for Context<D> {}

impl<D: Direction> Context<D> {
    /// A new context, or `None` when out of memory.
    pub(crate) fn new() -> Option<Self> {
        // SAFETY: plain FFI (ZSTD_createCCtx / ZSTD_createDCtx).
        let ptr = NonNull::new(unsafe { (D::CREATE)() })?;
        Some(Context { ptr, dict: None })
    }

    /// Back to a neutral context: session and parameters reset, which also drops the
    /// dictionary reference (zstd.h: resetting parameters "removes any reference to any
    /// dictionary"), then the Arc. `false` if it grew past `max_size` (or the reset failed).
    pub(crate) fn clear(&mut self, max_size: usize) -> bool {
        // SAFETY: `ptr` is live; a session-and-parameters reset never touches the dictionary.
        let reset = unsafe {
            (D::RESET)(
                self.ptr.as_ptr(),
                ZSTD_ResetDirective::ZSTD_reset_session_and_parameters,
            )
        };
        if check(reset).is_err() {
            // Still referencing the dictionary: keep the Arc, and let the context be freed.
            return false;
        }
        self.dict = None;
        // SAFETY: `ptr` is live; sizeof only reads it.
        let size = unsafe { (D::SIZEOF)(self.ptr.as_ptr()) };
        size <= max_size
    }
}

impl<D: Direction> Drop for Context<D> {
    fn drop(&mut self) {
        // SAFETY: created by `D::CREATE` and freed once. Freeing does not read a referenced
        // dictionary, and `self.dict` (dropped after this) keeps it alive anyway.
        unsafe {
            (D::FREE)(self.ptr.as_ptr());
        }
    }
}

impl CompressContext {
    /// Starts a frame: references `cdict` (its level rules), sets the window log, and pledges
    /// the input size when it is known.
    pub(crate) fn begin(
        &mut self,
        cdict: Arc<RawCDict>,
        window_log: u32,
        pledged: Option<u64>,
    ) -> Result<(), ZstdError> {
        // SAFETY (every call below): `ptr` is a live CCtx owned by `self`, between frames.
        check(unsafe {
            zstd_sys::ZSTD_CCtx_setParameter(
                self.ptr.as_ptr(),
                ZSTD_cParameter::ZSTD_c_windowLog,
                window_log as i32,
            )
        })?;
        // SAFETY: as above; the CDict stays alive while referenced because `self.dict`
        // holds its Arc until `clear` unreferences it (or the context is freed).
        check(unsafe { zstd_sys::ZSTD_CCtx_refCDict(self.ptr.as_ptr(), cdict.ptr.as_ptr()) })?;
        self.dict = Some(cdict);
        if let Some(len) = pledged {
            // SAFETY: as above.
            check(unsafe { zstd_sys::ZSTD_CCtx_setPledgedSrcSize(self.ptr.as_ptr(), len) })?;
        }
        Ok(())
    }

    /// One `ZSTD_compressStream2` call: compresses from `input[*pos..]` (advancing `pos`)
    /// into at most `room` more bytes of `out`. Returns zstd's "left to flush" hint.
    pub(crate) fn compress(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        out: &mut BytesMut,
        room: usize,
        directive: ZSTD_EndDirective,
    ) -> Result<usize, ZstdError> {
        let cctx = self.ptr.as_ptr();
        stream(input, pos, out, room, |dst, src| {
            // SAFETY: `cctx` is live; `src` covers `input`, readable for the call; `dst`
            // covers spare capacity of `out`, writable for the call (zstd writes, never
            // reads it).
            unsafe { zstd_sys::ZSTD_compressStream2(cctx, dst, src, directive) }
        })
    }
}

impl DecompressContext {
    /// Prepares for a stream: references `ddict` and refuses frames whose window is over
    /// `max_window` bytes (before allocating it).
    pub(crate) fn begin(
        &mut self,
        ddict: Arc<RawDDict>,
        max_window: usize,
    ) -> Result<(), ZstdError> {
        // SAFETY: `ptr` is a live DCtx owned by `self`, between frames.
        check(unsafe { zstd_sys::ZSTD_DCtx_setMaxWindowSize(self.ptr.as_ptr(), max_window) })?;
        // SAFETY: as above; the DDict stays alive while referenced (`self.dict`).
        check(unsafe { zstd_sys::ZSTD_DCtx_refDDict(self.ptr.as_ptr(), ddict.ptr.as_ptr()) })?;
        self.dict = Some(ddict);
        Ok(())
    }

    /// One `ZSTD_decompressStream` call from `input[*pos..]` into at most `room` more bytes
    /// of `out`. Returns zstd's hint (0 at the end of a frame).
    pub(crate) fn decompress(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        out: &mut BytesMut,
        room: usize,
    ) -> Result<usize, ZstdError> {
        let dctx = self.ptr.as_ptr();
        stream(input, pos, out, room, |dst, src| {
            // SAFETY: as in `CompressContext::compress`.
            unsafe { zstd_sys::ZSTD_decompressStream(dctx, dst, src) }
        })
    }
}
