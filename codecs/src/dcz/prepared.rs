//! A dictionary's zstd state for `dcz`, prepared once and kept with the dictionary: a
//! raw-content `CDict` per level and one `DDict`, each made on first use.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::dictionary::error::DictDecodeError;
use crate::ffi::zstd_raw::{RawCDict, RawDDict};
use crate::{DecodeError, DecodeErrorKind, EncodeError, Level};

/// The `CDict`s and the `DDict` of one dictionary. Creation failures (out of memory) are not
/// cached; encoders and decoders hold an `Arc` of what they use.
pub(crate) struct Prepared {
    bytes: Bytes,
    cdicts: [OnceLock<Arc<RawCDict>>; Level::COUNT],
    ddict: OnceLock<Arc<RawDDict>>,
}

impl Prepared {
    pub(crate) fn new(bytes: &Bytes) -> Self {
        Prepared {
            bytes: bytes.clone(),
            cdicts: std::array::from_fn(|_| OnceLock::new()),
            ddict: OnceLock::new(),
        }
    }

    /// The `CDict` for `level`, made once.
    pub(crate) fn cdict(&self, level: Level) -> Result<Arc<RawCDict>, EncodeError> {
        let slot = &self.cdicts[level.index()];
        if let Some(cdict) = slot.get() {
            return Ok(cdict.clone());
        }
        let made = RawCDict::new(&self.bytes, i32::from(level.get()))
            .ok_or_else(|| EncodeError::new("zstd: could not digest the dictionary"))?;
        // Two threads may race to make it; one wins and both use the winner.
        Ok(slot.get_or_init(|| Arc::new(made)).clone())
    }

    /// The `DDict`, made once.
    pub(crate) fn ddict(&self) -> Result<Arc<RawDDict>, DictDecodeError> {
        if let Some(ddict) = self.ddict.get() {
            return Ok(ddict.clone());
        }
        let made = RawDDict::new(&self.bytes).ok_or_else(|| {
            DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::CorruptData,
                "zstd could not digest the dictionary",
            ))
        })?;
        Ok(self.ddict.get_or_init(|| Arc::new(made)).clone())
    }

    /// The memory the `CDict`s made so far hold.
    pub(crate) fn size(&self) -> usize {
        let cdicts = self.cdicts.iter().filter_map(OnceLock::get);
        cdicts.map(|c| c.sizeof()).sum()
    }
}
