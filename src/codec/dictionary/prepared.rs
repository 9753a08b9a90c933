//! A dictionary's codec state, prepared once and kept with it: `dcz` and `dcb` compress (and
//! `dcz` decompresses) against these rather than digesting the dictionary per body.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

#[cfg(feature = "dcz")]
use super::error::DictDecodeError;
use crate::codec::EncodeError;
#[cfg(feature = "dcz")]
use crate::codec::{DecodeError, DecodeErrorKind, Level};
#[cfg(feature = "dcb")]
use crate::ffi::brotli_c::PreparedDictionary;
#[cfg(feature = "dcz")]
use crate::ffi::zstd_raw::{RawCDict, RawDDict};

/// The prepared state of one dictionary, each part made on first use: for `dcz` a
/// raw-content `CDict` per level and one `DDict`; for `dcb` one brotli prepared raw
/// dictionary (brotli's raw preparation does not depend on the quality, so every quality
/// shares it). Creation failures (out of memory) are not cached. Encoders hold an `Arc` of
/// what they use, so dropping the dictionary while they run is sound.
pub(crate) struct Prepared {
    #[cfg_attr(not(feature = "dcz"), allow(dead_code))]
    bytes: Bytes,
    #[cfg(feature = "dcz")]
    cdicts: [OnceLock<Arc<RawCDict>>; Level::COUNT],
    #[cfg(feature = "dcz")]
    ddict: OnceLock<Arc<RawDDict>>,
    #[cfg(feature = "dcb")]
    brotli: OnceLock<Arc<PreparedDictionary>>,
}

impl Prepared {
    pub(crate) fn new(bytes: &Bytes) -> Self {
        Prepared {
            bytes: bytes.clone(),
            #[cfg(feature = "dcz")]
            cdicts: std::array::from_fn(|_| OnceLock::new()),
            #[cfg(feature = "dcz")]
            ddict: OnceLock::new(),
            #[cfg(feature = "dcb")]
            brotli: OnceLock::new(),
        }
    }

    /// The `CDict` for `level`, made once.
    #[cfg(feature = "dcz")]
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
    #[cfg(feature = "dcz")]
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

    /// brotli's prepared raw dictionary, made once.
    #[cfg(feature = "dcb")]
    pub(crate) fn brotli(&self) -> Result<Arc<PreparedDictionary>, EncodeError> {
        if let Some(prepared) = self.brotli.get() {
            return Ok(prepared.clone());
        }
        let made = PreparedDictionary::new(&self.bytes)
            .ok_or_else(|| EncodeError::new("brotli: could not prepare the dictionary"))?;
        // As for the CDicts: a race has one winner, which both use.
        Ok(self.brotli.get_or_init(|| Arc::new(made)).clone())
    }

    /// The memory the prepared parts made so far hold, beyond the dictionary's bytes.
    pub(crate) fn size(&self) -> usize {
        let mut size = 0;
        #[cfg(feature = "dcz")]
        {
            let cdicts = self.cdicts.iter().filter_map(OnceLock::get);
            size += cdicts.map(|c| c.sizeof()).sum::<usize>();
        }
        #[cfg(feature = "dcb")]
        {
            size += self.brotli.get().map_or(0, |p| p.size());
        }
        size
    }
}
