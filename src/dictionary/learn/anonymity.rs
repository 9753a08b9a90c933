//! k-anonymity of dictionary material: of samples from many clients, only the runs of at
//! least `n` bytes that responses to at least `k` distinct clients held go to the builder.
//! A value one client was sent (a token, an address, an attacker's planted string) is in
//! fewer than `k` clients' responses, so no byte of it reaches any dictionary kind.
//!
//! Every `n`-byte window of every sample is hashed and counted once per client that had it;
//! a sample keeps the union of its windows counted `k` times, as maximal runs (fragments).
//! Runs side by side may still spell a string no client was sent whole, or one client's
//! value when each of its `n`-byte pieces was also other clients' (`10.0.0.1` when
//! `10.0.0.10` to `.19` are clients too); a value with `n` bytes of its own cannot.
//! Time O(total bytes × n) (hashing and comparing each window; sorting each client's window
//! hashes). Memory: 4 MiB of counters that let only windows possibly sent to `k` clients
//! into the exact table (~40 bytes per distinct such window), and 8 bytes per window of one
//! client's samples at a time. The samples a route holds are bounded (4 MiB by default), so
//! is this.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher, RandomState};

use bytes::Bytes;

/// The fewest distinct clients a run must come from, by default.
pub(crate) const DEFAULT_CLIENTS: usize = 3;
/// The shortest run kept, in bytes, by default.
pub(crate) const DEFAULT_RUN: usize = 16;

/// Keeps, of response bodies from many clients, only what at least `k` distinct clients
/// were sent: every byte kept lies in a run of at least `n` bytes that occurred in the
/// responses to `k` clients or more. The [`Learner`](super::Learner) filters its samples
/// with it before any dictionary is built; it is public for measuring what that costs.
///
/// ```
/// use bytes::Bytes;
/// use tower_gzip::dictionary::learn::Anonymity;
///
/// let common = r#"{"kind":"listing","data":{"children":[],"after":null}"#;
/// let tokens = ["a81f3c", "c3d9e0", "7be2d4"];
/// let samples: Vec<(usize, Bytes)> = (0..3)
///     .map(|client| (client, Bytes::from(format!("{common},\"token\":\"{}\"}}", tokens[client]))))
///     .collect();
/// let kept = Anonymity::new(3, 16).fragments(&samples);
/// // Each sample's common part (and `,"token":"`, which all three were sent too).
/// assert_eq!(kept.len(), 3);
/// assert!(kept.iter().all(|f| f.starts_with(common.as_bytes())));
/// assert!(!kept.iter().any(|f| tokens.iter().any(|t| f.windows(6).any(|w| w == t.as_bytes()))));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anonymity {
    clients: usize,
    run: usize,
}

impl Default for Anonymity {
    /// `k` = 3 clients, runs of `n` = 16 bytes (BENCHMARKS.md, "Learned dictionaries: what
    /// k-anonymity costs").
    fn default() -> Self {
        Anonymity::new(DEFAULT_CLIENTS, DEFAULT_RUN)
    }
}

/// What the hash table keeps of a window: where it was first seen (to compare the bytes of
/// any later window with the same hash), and by how many clients (capped at `k`).
#[derive(Clone, Copy)]
struct Window {
    sample: u32,
    offset: u32,
    /// Distinct clients, capped at `k`; `u32::MAX` once two different windows collided.
    clients: u32,
}

const COLLIDED: u32 = u32::MAX;

impl Anonymity {
    /// Runs of at least `run` bytes (at least 1) from at least `clients` distinct clients
    /// (at least 1; 1 keeps everything).
    pub fn new(clients: usize, run: usize) -> Self {
        Anonymity {
            clients: clients.clamp(1, u32::MAX as usize - 1),
            run: run.max(1),
        }
    }

    /// `k`: the fewest distinct clients a kept run comes from.
    pub fn clients(&self) -> usize {
        self.clients
    }

    /// `n`: the shortest run kept, in bytes.
    pub fn run(&self) -> usize {
        self.run
    }

    /// The fragments of `samples` (each a body and the client it was sent to) that at least
    /// `k` clients were sent: maximal runs, each at least `n` bytes, in sample order. They
    /// share the samples' memory (`Bytes::slice`). Samples past 4 GiB in all are ignored.
    pub fn fragments<C: Hash + Eq>(&self, samples: &[(C, Bytes)]) -> Vec<Bytes> {
        self.fragments_by_sample(samples).concat()
    }

    /// [`fragments`](Self::fragments), sample by sample: the `i`th list holds the fragments
    /// of `samples[i]` (what [`DictionaryBuilder::material`] takes).
    ///
    /// [`DictionaryBuilder::material`]: crate::dictionary::DictionaryBuilder::material
    pub fn fragments_by_sample<C: Hash + Eq>(&self, samples: &[(C, Bytes)]) -> Vec<Vec<Bytes>> {
        let samples = &samples[..samples.len().min(u32::MAX as usize)];
        let table = self.count(samples);
        (samples.iter())
            .map(|(_, body)| {
                let mut out = Vec::new();
                self.keep_common(body, &table, &mut out);
                out
            })
            .collect()
    }

    /// Every window's count of distinct clients, client by client.
    fn count<C: Hash + Eq>(&self, samples: &[(C, Bytes)]) -> Table {
        let mut by_client: HashMap<&C, Vec<u32>> = HashMap::new();
        for (i, (client, _)) in samples.iter().enumerate() {
            by_client.entry(client).or_default().push(i as u32);
        }
        let mut table = Table::new(self.run);
        let sketch = Sketch::count(&table, samples, by_client.values());
        let k = self.clients as u32;
        let mut seen = HashSet::with_hasher(PassThrough::default());
        for indices in by_client.values() {
            seen.clear();
            for &i in indices {
                table.add(samples, i, k, &sketch, &mut seen);
            }
        }
        table
    }

    /// Pushes `body`'s maximal runs of windows counted `k` times onto `out`.
    fn keep_common(&self, body: &Bytes, table: &Table, out: &mut Vec<Bytes>) {
        let n = self.run;
        let mut run: Option<(usize, usize)> = None;
        for offset in 0..body.len().saturating_sub(n - 1) {
            if !table.is_common(&body[offset..offset + n], self.clients as u32) {
                continue;
            }
            run = match run {
                // Overlapping or touching windows: one run.
                Some((start, end)) if offset <= end => Some((start, offset + n)),
                Some((start, end)) => {
                    out.push(body.slice(start..end));
                    Some((offset, offset + n))
                }
                None => Some((offset, offset + n)),
            };
        }
        if let Some((start, end)) = run {
            out.push(body.slice(start..end));
        }
    }
}

/// Window hashes to what is known of them.
struct Table {
    run: usize,
    /// Keyed per build (SipHash with a random key): an attacker cannot aim collisions at a
    /// window, and a collision only removes content (see [`Window::clients`]).
    keys: RandomState,
    windows: HashMap<u64, Window, PassThrough>,
}

impl Table {
    fn new(run: usize) -> Self {
        Table {
            run,
            keys: RandomState::new(),
            windows: HashMap::with_hasher(PassThrough::default()),
        }
    }

    /// Counts sample `i`'s windows for its client, once each (`seen`: the client's so far),
    /// those the sketch lets through only.
    fn add<C>(&mut self, samples: &[(C, Bytes)], i: u32, k: u32, sketch: &Sketch, seen: &mut Seen) {
        let body = &samples[i as usize].1;
        let n = self.run;
        for offset in 0..body.len().saturating_sub(n - 1) {
            let bytes = &body[offset..offset + n];
            let hash = self.keys.hash_one(bytes);
            // A window with the hash of one let through is let through too: every window
            // with a hash in the table is compared with its first.
            if !sketch.may_reach(hash, k) {
                continue;
            }
            let window = self.windows.entry(hash).or_insert(Window {
                sample: i,
                offset: offset as u32,
                clients: 0,
            });
            // Every window is compared with the first of its hash, so a hash that is not
            // marked collided stands for one content only.
            let first = &samples[window.sample as usize].1;
            let first = &first[window.offset as usize..window.offset as usize + n];
            if first != bytes {
                window.clients = COLLIDED;
            } else if window.clients < k && seen.insert(hash) {
                window.clients += 1;
            }
        }
    }

    fn is_common(&self, bytes: &[u8], k: u32) -> bool {
        let hash = self.keys.hash_one(bytes);
        self.windows
            .get(&hash)
            .is_some_and(|w| w.clients != COLLIDED && w.clients >= k)
    }
}

/// Counters of distinct clients per window hash, two rows (a count-min sketch): they only
/// overcount, so a window whose counters are below `k` was sent to fewer than `k` clients
/// and stays out of the exact table, which then holds few more windows than the common.
struct Sketch {
    rows: Vec<u8>,
}

/// Counters per row: two rows of 2 MiB.
const ROW: usize = 1 << 21;

impl Sketch {
    fn count<'a, C>(
        table: &Table,
        samples: &[(C, Bytes)],
        clients: impl Iterator<Item = &'a Vec<u32>>,
    ) -> Self {
        let mut rows = vec![0u8; 2 * ROW];
        let mut hashes = Vec::new();
        for indices in clients {
            hashes.clear();
            for &i in indices {
                let windows = samples[i as usize].1.windows(table.run);
                hashes.extend(windows.map(|w| table.keys.hash_one(w)));
            }
            // Once per client.
            hashes.sort_unstable();
            hashes.dedup();
            for &hash in &hashes {
                for slot in Sketch::slots(hash) {
                    rows[slot] = rows[slot].saturating_add(1);
                }
            }
        }
        Sketch { rows }
    }

    fn slots(hash: u64) -> [usize; 2] {
        let mask = ROW - 1;
        [hash as usize & mask, ROW + ((hash >> 32) as usize & mask)]
    }

    /// Whether the windows with this hash may have been sent to `k` clients.
    fn may_reach(&self, hash: u64, k: u32) -> bool {
        let k = k.min(u32::from(u8::MAX));
        Sketch::slots(hash)
            .iter()
            .all(|&slot| u32::from(self.rows[slot]) >= k)
    }
}

/// One client's windows so far.
type Seen = HashSet<u64, PassThrough>;

/// The keys are SipHash values already: no second hash.
type PassThrough = BuildHasherDefault<Identity>;

#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
