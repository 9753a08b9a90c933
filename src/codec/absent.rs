//! zstd or br when its cargo feature is off: the names `any.rs` dispatches to, made by the
//! same calls, and an error at every use. `Encoder::new(ContentCoding::Br, ..)` in a build
//! without br gets an encoder that fails, not a build error or a panic.
#![allow(dead_code)]

use bytes::BytesMut;

use super::{Decode, DecodeError, DecodeErrorKind, Encode, EncodeError, Level, Progress, Totals};
use crate::pool::CodecPool;

const NOT_COMPILED: &str = "this content coding is not compiled in (its cargo feature is off)";

/// An encoder whose every call fails.
#[derive(Debug)]
pub(crate) struct Absent;

pub(crate) type ZstdEncoder = Absent;
pub(crate) type BrEncoder = Absent;
pub(crate) type ZstdDecoder = AbsentDecoder;
pub(crate) type BrDecoder = AbsentDecoder;

impl Absent {
    pub(crate) fn new(_: Level, _: &CodecPool) -> Self {
        Absent
    }
}

/// A one-shot encode that fails.
pub(crate) fn encode_all(
    _: Level,
    _: &[u8],
    _: &CodecPool,
    _: &mut BytesMut,
) -> Result<(), EncodeError> {
    Err(EncodeError::new(NOT_COMPILED))
}

impl Encode for Absent {
    fn encode(&mut self, _: &[u8], _: &mut BytesMut) -> Result<Progress, EncodeError> {
        Err(EncodeError::new(NOT_COMPILED))
    }

    fn flush(&mut self, _: &mut BytesMut) -> Result<Progress, EncodeError> {
        Err(EncodeError::new(NOT_COMPILED))
    }

    fn finish(&mut self, _: &mut BytesMut) -> Result<Progress, EncodeError> {
        Err(EncodeError::new(NOT_COMPILED))
    }

    fn holds_state(&self) -> bool {
        false
    }

    fn totals(&self) -> Totals {
        Totals::new(0, 0, false)
    }
}

/// A decoder whose every call fails.
#[derive(Debug)]
pub(crate) struct AbsentDecoder;

impl AbsentDecoder {
    pub(crate) fn new(_: &CodecPool) -> Self {
        AbsentDecoder
    }
}

impl Decode for AbsentDecoder {
    fn decode(&mut self, _: &[u8], _: &mut BytesMut, _: usize) -> Result<Progress, DecodeError> {
        Err(DecodeError::new(DecodeErrorKind::Unsupported, NOT_COMPILED))
    }

    fn has_pending_output(&self) -> bool {
        false
    }

    fn finish(&self) -> Result<(), DecodeError> {
        Err(DecodeError::new(DecodeErrorKind::Unsupported, NOT_COMPILED))
    }

    fn is_stream_end(&self) -> bool {
        false
    }

    fn total_in(&self) -> u64 {
        0
    }

    fn total_out(&self) -> u64 {
        0
    }

    #[cfg(test)]
    fn members(&self) -> u64 {
        0
    }
}
