//! A dictionary's brotli state for `dcb`, prepared once and kept with the dictionary.
//! brotli's raw preparation does not depend on the quality, so every quality shares it.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::EncodeError;
use crate::ffi::brotli_c::PreparedDictionary;

/// brotli's prepared raw dictionary, made on first use. A creation failure (out of memory)
/// is not cached; encoders hold an `Arc` of it.
pub(crate) struct Prepared {
    bytes: Bytes,
    brotli: OnceLock<Arc<PreparedDictionary>>,
}

impl Prepared {
    pub(crate) fn new(bytes: &Bytes) -> Self {
        Prepared {
            bytes: bytes.clone(),
            brotli: OnceLock::new(),
        }
    }

    /// brotli's prepared raw dictionary, made once.
    pub(crate) fn get(&self) -> Result<Arc<PreparedDictionary>, EncodeError> {
        if let Some(prepared) = self.brotli.get() {
            return Ok(prepared.clone());
        }
        let made = PreparedDictionary::new(&self.bytes)
            .ok_or_else(|| EncodeError::new("brotli: could not prepare the dictionary"))?;
        // Two threads may race to make it; one wins and both use the winner.
        Ok(self.brotli.get_or_init(|| Arc::new(made)).clone())
    }

    /// The memory the prepared dictionary holds, once made.
    pub(crate) fn size(&self) -> usize {
        self.brotli.get().map_or(0, |p| p.size())
    }
}
