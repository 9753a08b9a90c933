//! Raw-sample dictionaries: which training samples to serve as the dictionary, in what
//! order.
//!
//! A sample is worth its place for the substrings it shares with other responses. Each
//! sample's distinct 8-byte substrings are counted over the training set (how many samples
//! contain each, in a hashed table as zstd's fastCover keeps its counts); a sample's gain is
//! what its not-yet-covered substrings are shared, summed. Samples are picked greedily by
//! gain per byte, the gains of the rest shrinking as their substrings get covered, so a
//! second copy of the same structure is worth little and the dictionary spreads over the
//! API's kinds of response. Only the training samples take part: the held-out ones judge
//! the result and must not shape it.
//!
//! The most representative sample goes last, next to the response: zstd and brotli reach
//! it at the shortest distances, and zstd's hash tables keep the latest position of each
//! substring.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Substrings of this many bytes count as shared: a match of 8 bytes or more is worth a
/// back-reference in both codings.
const GRAM: usize = 8;
/// log2 of the table of counts.
const TABLE_LOG: u32 = 22;

/// The counts of the training samples' substrings, and each sample's distinct ones.
pub(super) struct Grams {
    /// For each table slot, how many samples hold a substring that hashes to it.
    shared: Vec<u32>,
    /// Each counted sample's distinct slots, sorted.
    slots: Vec<Vec<u32>>,
}

impl Grams {
    /// Counts the substrings of `training` (4 bytes of memory per sample byte).
    pub(super) fn count(training: &[&[u8]]) -> Grams {
        let mut shared = vec![0u32; 1 << TABLE_LOG];
        let slots: Vec<Vec<u32>> = training
            .iter()
            .map(|sample| {
                let mut slots: Vec<u32> = sample.windows(GRAM).map(slot).collect();
                slots.sort_unstable();
                slots.dedup();
                for &s in &slots {
                    shared[s as usize] += 1;
                }
                slots
            })
            .collect();
        Grams { shared, slots }
    }

    /// Training indices for a dictionary of at most `bound` bytes, the most representative
    /// first. Samples sharing nothing are never picked.
    pub(super) fn pick(&self, training: &[&[u8]], bound: usize) -> Vec<usize> {
        let mut covered = vec![false; 1 << TABLE_LOG];
        let mut heap: BinaryHeap<(u64, Reverse<usize>)> = (0..self.slots.len())
            .filter(|&i| training[i].len() <= bound)
            .map(|i| (self.key(i, training[i].len(), &covered), Reverse(i)))
            .collect();
        let mut picked = Vec::new();
        let mut room = bound;
        while let Some((key, Reverse(i))) = heap.pop() {
            if key == 0 {
                break;
            }
            if training[i].len() > room {
                continue;
            }
            // Gains only shrink as more is covered: a stale key is an upper bound.
            let fresh = self.key(i, training[i].len(), &covered);
            if heap.peek().is_some_and(|top| (fresh, Reverse(i)) < *top) {
                heap.push((fresh, Reverse(i)));
                continue;
            }
            if fresh == 0 {
                break;
            }
            for &s in &self.slots[i] {
                covered[s as usize] = true;
            }
            room -= training[i].len();
            picked.push(i);
        }
        picked
    }

    /// Gain per byte, scaled to an integer: ties and order never depend on rounding.
    fn key(&self, i: usize, len: usize, covered: &[bool]) -> u64 {
        let gain: u64 = self.slots[i]
            .iter()
            .filter(|&&s| !covered[s as usize])
            .map(|&s| u64::from(self.shared[s as usize] - 1))
            .sum();
        (gain << 16) / len.max(1) as u64
    }
}

/// The table slot of one substring (a multiplicative hash, its top bits).
fn slot(gram: &[u8]) -> u32 {
    let word = u64::from_le_bytes(gram.try_into().expect("GRAM bytes"));
    (word.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - TABLE_LOG)) as u32
}

/// The dictionary of `picked` (most representative first): the same samples, that one
/// last.
pub(super) fn assemble(training: &[&[u8]], picked: &[usize]) -> Vec<u8> {
    let mut out = Vec::with_capacity(picked.iter().map(|&i| training[i].len()).sum());
    for &i in picked.iter().rev() {
        out.extend_from_slice(training[i]);
    }
    out
}
