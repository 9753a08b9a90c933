//! Learning a dictionary from a response body as the client reads it (RFC 9842): the
//! decoded frames are kept, by reference, until the body ends; then the whole is stored.

use bytes::Bytes;

use crate::buf::Chunks;
use crate::client::dictionaries::{Candidate, ClientDictionaryStore};

/// A response body on its way to becoming a dictionary.
pub(crate) struct Capture {
    store: ClientDictionaryStore,
    candidate: Candidate,
    /// The decoded frames so far: clones of what the body hands out, not copies.
    frames: Chunks,
}

impl Capture {
    pub(crate) fn new(store: ClientDictionaryStore, candidate: Candidate) -> Self {
        Capture {
            store,
            candidate,
            frames: Chunks::default(),
        }
    }

    /// Keeps a decoded frame. `false` once the body is over the store's bound for one
    /// dictionary: the capture is to be dropped, and nothing is stored.
    pub(crate) fn keep(&mut self, data: &Bytes) -> bool {
        if self.frames.len() + data.len() > self.store.max_entry_bytes() {
            self.store.refuse();
            return false;
        }
        self.frames.push(data.clone());
        true
    }

    /// The body ended cleanly: store it (one frame as it is, several joined).
    pub(crate) fn finish(self) {
        self.store.learn(self.candidate, self.frames.concat());
    }
}
