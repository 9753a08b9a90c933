//! `dcz` or `dcb` when its cargo feature is off: the names `any.rs` dispatches to, whose
//! constructors fail, so no value of them ever exists.
#![allow(dead_code)]

use bytes::BytesMut;

use super::dictionary::Dictionary;
use super::{CompressionLevel, Decode, DecodeError, DecodeErrorKind, Encode, EncodeError};
use super::{Progress, Totals};
use crate::pool::CodecPool;

const NOT_COMPILED: &str = "this dictionary coding is not compiled in (its cargo feature is off)";

/// No encoder or decoder of the coding can be made.
#[derive(Debug)]
pub(crate) enum Absent {}

pub(crate) type DczEncoder = Absent;
pub(crate) type DcbEncoder = Absent;
pub(crate) type DczDecoder = Absent;
pub(crate) type DcbDecoder = Absent;

/// An encoder for the coding: never.
pub(crate) fn encoder(
    _: &Dictionary,
    _: CompressionLevel,
    _: &CodecPool,
) -> Result<Absent, EncodeError> {
    Err(EncodeError::new(NOT_COMPILED))
}

/// A decoder for the coding: never.
pub(crate) fn decoder(_: &Dictionary, _: &CodecPool) -> Result<Absent, DecodeError> {
    Err(DecodeError::new(DecodeErrorKind::Unsupported, NOT_COMPILED))
}

/// A one-shot encode that fails.
pub(crate) fn encode_all(
    _: &Dictionary,
    _: CompressionLevel,
    _: &[u8],
    _: &CodecPool,
    _: &mut BytesMut,
) -> Result<(), EncodeError> {
    Err(EncodeError::new(NOT_COMPILED))
}

impl Encode for Absent {
    fn encode(&mut self, _: &[u8], _: &mut BytesMut) -> Result<Progress, EncodeError> {
        match *self {}
    }

    fn flush(&mut self, _: &mut BytesMut) -> Result<Progress, EncodeError> {
        match *self {}
    }

    fn finish(&mut self, _: &mut BytesMut) -> Result<Progress, EncodeError> {
        match *self {}
    }

    fn holds_state(&self) -> bool {
        match *self {}
    }

    fn totals(&self) -> Totals {
        match *self {}
    }
}

impl Decode for Absent {
    fn decode(&mut self, _: &[u8], _: &mut BytesMut, _: usize) -> Result<Progress, DecodeError> {
        match *self {}
    }

    fn has_pending_output(&self) -> bool {
        match *self {}
    }

    fn finish(&self) -> Result<(), DecodeError> {
        match *self {}
    }

    fn is_stream_end(&self) -> bool {
        match *self {}
    }

    fn total_in(&self) -> u64 {
        match *self {}
    }

    fn total_out(&self) -> u64 {
        match *self {}
    }

    #[cfg(test)]
    fn members(&self) -> u64 {
        match *self {}
    }
}
