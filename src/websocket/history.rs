//! A parked window: the last `2^w` bytes a direction compressed or inflated, kept between
//! messages of a connection with context takeover instead of a whole codec state (a zlib-rs
//! compressor is 130-370 KiB, an inflater about 48 KiB; BENCHMARKS.md, "WebSocket"). The
//! next message draws a clean state from the pool and primes it with these bytes, which
//! is exactly the history the peer's codec holds.

use super::stats;

/// The last `cap` bytes of a direction's history.
#[derive(Debug)]
pub(crate) struct History {
    bytes: Vec<u8>,
    cap: usize,
}

impl History {
    /// An empty history of a `2^bits`-byte window.
    pub(crate) fn new(bits: u8) -> Self {
        History {
            bytes: Vec::new(),
            cap: 1 << bits,
        }
    }

    /// The bytes to prime a state with.
    pub(crate) fn window(&self) -> &[u8] {
        &self.bytes
    }

    /// Appends `data`, dropping what falls out of the window.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let before = self.bytes.len();
        if data.len() >= self.cap {
            self.bytes.clear();
            self.bytes.extend_from_slice(&data[data.len() - self.cap..]);
        } else {
            let overflow = (self.bytes.len() + data.len()).saturating_sub(self.cap);
            self.bytes.drain(..overflow);
            self.bytes.extend_from_slice(data);
        }
        // The window is the connection's only codec memory between messages.
        self.bytes.shrink_to(self.cap);
        stats::note_parked(self.bytes.len() as i64 - before as i64);
    }
}

impl Drop for History {
    fn drop(&mut self) {
        stats::note_parked(-(self.bytes.len() as i64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_window_bytes() {
        let mut history = History::new(9);
        history.push(&[1; 300]);
        history.push(&[2; 300]);
        assert_eq!(history.window().len(), 512);
        assert_eq!(history.window()[..212], [1; 212]);
        history.push(&[3; 1000]);
        assert_eq!(history.window(), &[3; 512][..]);
    }
}
