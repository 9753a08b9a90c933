//! A dictionary's codec state, prepared once and kept with it: `dcz` and `dcb` compress (and
//! `dcz` decompresses) against these rather than digesting the dictionary per body. Each
//! coding's part lives in the coding's folder; this is where they meet.

use bytes::Bytes;

/// The prepared parts of one dictionary, one per dictionary coding compiled in. Dropping
/// the dictionary while encoders run is sound: they hold an `Arc` of what they use.
pub(crate) struct Prepared {
    #[cfg(feature = "dcz")]
    pub(crate) zstd: crate::dcz::Prepared,
    #[cfg(feature = "dcb")]
    pub(crate) brotli: crate::dcb::Prepared,
}

impl Prepared {
    pub(crate) fn new(bytes: &Bytes) -> Self {
        Prepared {
            #[cfg(feature = "dcz")]
            zstd: crate::dcz::Prepared::new(bytes),
            #[cfg(feature = "dcb")]
            brotli: crate::dcb::Prepared::new(bytes),
        }
    }

    /// The memory the prepared parts made so far hold, beyond the dictionary's bytes.
    pub(crate) fn size(&self) -> usize {
        let mut size = 0;
        #[cfg(feature = "dcz")]
        {
            size += self.zstd.size();
        }
        #[cfg(feature = "dcb")]
        {
            size += self.brotli.size();
        }
        size
    }
}
