//! The samples a route holds: newest last, bounded in count and bytes, each numbered so that
//! "taken since" (fresh samples, never seen by the dictionary they judge) is a range. Each
//! is kept with its client's keyed hash.

use std::collections::{HashSet, VecDeque};

use bytes::Bytes;

#[derive(Debug)]
pub(crate) struct Samples {
    /// Number, client, body.
    held: VecDeque<(u64, u64, Bytes)>,
    bytes: usize,
    next: u64,
    max_count: usize,
    max_bytes: usize,
}

impl Samples {
    pub(crate) fn new(max_count: usize, max_bytes: usize) -> Self {
        Samples {
            held: VecDeque::new(),
            bytes: 0,
            next: 0,
            max_count,
            max_bytes,
        }
    }

    /// Keeps `body`, dropping the oldest past either bound; returns its number.
    pub(crate) fn push(&mut self, client: u64, body: Bytes) -> u64 {
        let seq = self.next;
        self.next += 1;
        if body.len() > self.max_bytes {
            return seq;
        }
        self.bytes += body.len();
        self.held.push_back((seq, client, body));
        while self.held.len() > self.max_count || self.bytes > self.max_bytes {
            let (.., old) = self.held.pop_front().expect("over a bound means not empty");
            self.bytes -= old.len();
        }
        seq
    }

    /// The number the next sample will get.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// The held samples numbered `since` or later, oldest first.
    pub(crate) fn since(&self, since: u64) -> impl DoubleEndedIterator<Item = &Bytes> {
        self.from(since).map(|(.., body)| body)
    }

    /// The held samples numbered `since` or later with their clients, oldest first.
    pub(crate) fn with_clients(&self, since: u64) -> Vec<(u64, Bytes)> {
        self.from(since).map(|(_, c, b)| (*c, b.clone())).collect()
    }

    /// How many distinct clients the samples numbered `since` or later were sent to.
    pub(crate) fn clients_since(&self, since: u64) -> usize {
        let clients: HashSet<u64> = self.from(since).map(|(_, c, _)| *c).collect();
        clients.len()
    }

    fn from(&self, since: u64) -> impl DoubleEndedIterator<Item = &(u64, u64, Bytes)> {
        let start = self.held.partition_point(|(seq, ..)| *seq < since);
        self.held.range(start..)
    }

    pub(crate) fn count_since(&self, since: u64) -> usize {
        self.since(since).count()
    }

    pub(crate) fn len(&self) -> usize {
        self.held.len()
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bounds_hold_under_churn(
            lens in proptest::collection::vec(0usize..3000, 1..400),
            max_count in 1usize..64,
            max_bytes in 1usize..20_000,
        ) {
            let mut samples = Samples::new(max_count, max_bytes);
            for (i, len) in lens.iter().enumerate() {
                let seq = samples.push(i as u64 % 3, Bytes::from(vec![b'x'; *len]));
                prop_assert_eq!(seq, i as u64);
                prop_assert!(samples.len() <= max_count);
                prop_assert!(samples.bytes() <= max_bytes);
                let counted: usize = samples.since(0).map(Bytes::len).sum();
                prop_assert_eq!(counted, samples.bytes());
                // The newest is always kept when it fits alone.
                if *len <= max_bytes {
                    prop_assert_eq!(samples.since(seq).count(), 1);
                }
            }
        }
    }

    #[test]
    fn since_counts_fresh_samples_only() {
        let mut samples = Samples::new(10, 1000);
        for i in 0..15u8 {
            samples.push(u64::from(i % 4), Bytes::from(vec![i; 10]));
        }
        assert_eq!(samples.len(), 10);
        assert_eq!(samples.count_since(0), 10);
        assert_eq!(samples.count_since(12), 3);
        assert_eq!(samples.since(14).next().unwrap()[0], 14);
        assert_eq!(samples.count_since(samples.next()), 0);
        assert_eq!(
            (samples.clients_since(0), samples.clients_since(13)),
            (4, 2)
        );
        assert_eq!(
            samples.with_clients(14),
            vec![(2, Bytes::from(vec![14; 10]))]
        );
    }
}
