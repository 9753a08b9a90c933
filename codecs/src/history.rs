//! The tail of a stream's input, to prime a fresh codec state after an idle release: the
//! state goes back to the pool, and the next one refers only to bytes the decoder has.

/// History kept: deflate's whole window, so the ratio after a pause is what an unbroken
/// stream would get (br's smallest streaming window, 128 KiB, holds it too).
pub(crate) const DICTIONARY: usize = 32 * 1024;

/// The tail of the input, kept by streaming bodies from the start (`keep_history` on the
/// flate and br encoders) and by any other stream from its first idle release on, so
/// one-shot bodies never pay for it. The copy is a small share of the deflate work; the
/// buffer is at most 32 KiB.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub(crate) tracking: bool,
    pub(crate) tail: Vec<u8>,
    /// Kept to [`CROWDED`] bytes: the stream gives its state back at every slice end.
    short: bool,
}

/// History kept by a stream that gives its state back at every slice end because more
/// streams than the pool's hold limit are compressing: half the window. Hundreds of such
/// streams at once each hold this instead of 32 KiB; priming with 16 KiB instead of 32 KiB
/// at each 64 KiB slice costs little ratio on text and JSON (BENCHMARKS.md, "Many streams
/// at once").
pub(crate) const CROWDED: usize = DICTIONARY / 2;

impl History {
    /// From now on, keep [`CROWDED`] bytes (what is held beyond them goes now).
    pub(crate) fn shorten(&mut self) {
        if !self.short {
            self.short = true;
            let excess = self.tail.len().saturating_sub(CROWDED);
            self.tail.drain(..excess);
            self.tail.shrink_to(CROWDED);
        }
    }

    pub(crate) fn record(&mut self, input: &[u8]) {
        if !self.tracking {
            return;
        }
        let limit = if self.short { CROWDED } else { DICTIONARY };
        // Grown to what the stream has given, doubling up to the dictionary size, so that an
        // idle SSE stream of small events keeps a tail the size of its events, not 32 KiB
        // each; a bulk stream (its first input is half the dictionary or more) gets the
        // whole dictionary at once.
        let want = (self.tail.len() + input.len()).min(limit);
        if want > self.tail.capacity() {
            let target = if want >= limit / 2 {
                limit
            } else {
                want.max(self.tail.capacity() * 2).min(limit)
            };
            self.tail.reserve_exact(target - self.tail.len());
        }
        if input.len() >= limit {
            self.tail.clear();
            self.tail.extend_from_slice(&input[input.len() - limit..]);
        } else {
            let keep = limit - input.len();
            if self.tail.len() > keep {
                self.tail.drain(..self.tail.len() - keep);
            }
            self.tail.extend_from_slice(input);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracking() -> History {
        History {
            tracking: true,
            ..History::default()
        }
    }

    #[test]
    fn keeps_the_last_window_of_input() {
        let mut history = tracking();
        let input: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        for chunk in input.chunks(7000) {
            history.record(chunk);
        }
        assert_eq!(history.tail, &input[input.len() - DICTIONARY..]);
        assert_eq!(history.tail.capacity(), DICTIONARY);
    }

    #[test]
    fn a_shortened_history_keeps_half_a_window_and_lets_the_rest_go() {
        let mut history = tracking();
        let input: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        history.record(&input[..50_000]);
        history.shorten();
        assert_eq!(history.tail, &input[50_000 - CROWDED..50_000]);
        assert!(history.tail.capacity() < DICTIONARY);
        history.record(&input[50_000..]);
        assert_eq!(history.tail, &input[input.len() - CROWDED..]);
        assert_eq!(history.tail.capacity(), CROWDED);
    }

    #[test]
    fn an_untracked_history_keeps_nothing() {
        let mut history = History::default();
        history.record(b"input");
        assert!(history.tail.is_empty());
    }
}
