//! A streamed response recorded as it is compressed, filed under its validator only once
//! the stream is complete: a response that fails, is dropped half-way or outgrows the entry
//! bound leaves nothing behind.

use super::store::ENTRY_OVERHEAD;
use super::{Fill, Stage, VariantCache};

/// The compressed bytes of one streamed response, so far.
#[derive(Debug)]
pub(crate) struct Recorder {
    cache: VariantCache,
    fill: Fill,
    /// `None` once the stream outgrew `bound`: nothing will be filed.
    bytes: Option<Vec<u8>>,
    bound: usize,
}

impl Recorder {
    pub(super) fn new(cache: VariantCache, fill: Fill, max_entry: u64) -> Recorder {
        Recorder {
            cache,
            fill,
            bytes: Some(Vec::new()),
            bound: usize::try_from(max_entry.saturating_sub(ENTRY_OVERHEAD)).unwrap_or(usize::MAX),
        }
    }

    /// Appends what the stream just sent.
    pub(crate) fn sent(&mut self, frame: &[u8]) {
        let Some(bytes) = &mut self.bytes else {
            return;
        };
        if bytes.len() + frame.len() > self.bound {
            // Over the bound: the entry would be refused anyway, so stop holding it.
            self.bytes = None;
            self.cache.inner.shared.counts.too_large_add();
            return;
        }
        bytes.extend_from_slice(frame);
    }

    /// The body was compressed in one go: file `compressed`, all of it.
    pub(crate) fn whole(self, compressed: &[u8]) {
        let shared = &self.cache.inner.shared;
        shared.file(self.fill, compressed, Stage::AsServed);
    }

    /// The stream ended complete: file what it sent.
    pub(crate) fn complete(self) {
        if let Some(bytes) = self.bytes {
            let shared = &self.cache.inner.shared;
            shared.file(self.fill, &bytes, Stage::AsServed);
        }
    }
}
