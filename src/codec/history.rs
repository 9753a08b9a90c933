//! The tail of a stream's input, to prime a fresh codec state after an idle release: the
//! state goes back to the pool, and the next one refers only to bytes the decoder has.

/// History kept: deflate's whole window, so the ratio after a pause is what an unbroken
/// stream would get (br's smallest streaming window, 128 KiB, holds it too).
pub(crate) const DICTIONARY: usize = 32 * 1024;

/// The tail of the input, kept by streaming bodies from the start (`keep_history` on the
/// flate and br encoders) and by any other stream from its first idle release on, so
/// one-shot bodies never pay for it. The copy costs ~1% of the deflate work; the buffer is at
/// most 32 KiB.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub(crate) tracking: bool,
    pub(crate) tail: Vec<u8>,
}

impl History {
    pub(crate) fn record(&mut self, input: &[u8]) {
        if !self.tracking {
            return;
        }
        // Grown to what the stream has given, doubling up to the dictionary size, so that an
        // idle SSE stream of small events keeps a tail the size of its events, not 32 KiB
        // each; a bulk stream (its first input is half the dictionary or more) gets the
        // whole dictionary at once.
        let want = (self.tail.len() + input.len()).min(DICTIONARY);
        if want > self.tail.capacity() {
            let target = if want >= DICTIONARY / 2 {
                DICTIONARY
            } else {
                want.max(self.tail.capacity() * 2).min(DICTIONARY)
            };
            self.tail.reserve_exact(target - self.tail.len());
        }
        if input.len() >= DICTIONARY {
            self.tail.clear();
            self.tail
                .extend_from_slice(&input[input.len() - DICTIONARY..]);
        } else {
            let keep = DICTIONARY - input.len();
            if self.tail.len() > keep {
                self.tail.drain(..self.tail.len() - keep);
            }
            self.tail.extend_from_slice(input);
        }
    }
}
