//! Learning a dictionary from a response body as the client reads it (RFC 9842): the
//! decoded frames are kept, by reference, until the body ends; then the whole is stored.

use bytes::{Bytes, BytesMut};

use crate::dictionary::{Candidate, ClientDictionaryStore};

/// A response body on its way to becoming a dictionary.
pub(crate) struct Learner {
    store: ClientDictionaryStore,
    candidate: Candidate,
    /// The decoded frames so far: clones of what the body hands out, not copies.
    frames: Vec<Bytes>,
    len: usize,
}

impl Learner {
    pub(crate) fn new(store: ClientDictionaryStore, candidate: Candidate) -> Self {
        Learner {
            store,
            candidate,
            frames: Vec::new(),
            len: 0,
        }
    }

    /// Keeps a decoded frame. `false` once the body is over the store's bound for one
    /// dictionary: the learner is to be dropped, and nothing is stored.
    pub(crate) fn keep(&mut self, data: &Bytes) -> bool {
        self.len += data.len();
        if self.len > self.store.max_entry_bytes() {
            self.store.refuse();
            return false;
        }
        if !data.is_empty() {
            self.frames.push(data.clone());
        }
        true
    }

    /// The body ended cleanly: store it.
    pub(crate) fn finish(self) {
        let body = match self.frames.len() {
            1 => self.frames.into_iter().next().unwrap_or_default(),
            _ => {
                let mut all = BytesMut::with_capacity(self.len);
                for frame in &self.frames {
                    all.extend_from_slice(frame);
                }
                all.freeze()
            }
        };
        self.store.learn(self.candidate, body);
    }
}
