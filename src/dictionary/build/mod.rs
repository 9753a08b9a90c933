//! [`DictionaryBuilder`]: the dictionary, and the levels to use it at, that send the fewest
//! bytes on held-out samples within a CPU budget.

mod cost;
mod evaluate;
mod judge;
mod objective;
mod samples;
mod select;
#[cfg(test)]
mod tests;

use bytes::Bytes;

use crate::ContentCoding;
use crate::codec::DictionaryError;
use crate::codec::MAX_DICTIONARY_LEN;
use evaluate::measure;
use judge::Judge;
#[cfg(test)]
use judge::{choose, rank};
pub(crate) use tower_gzip_codecs::train;

/// The `dcz` levels tried.
const DCZ_LEVELS: &[i32] = &[3, 4, 5, 6, 9, 12];
/// The `dcb` qualities tried.
#[cfg(feature = "dcb")]
const DCB_QUALITIES: &[i32] = &[4, 5, 6];
/// The sizes zstd's trainer is asked for (those within the size bound; the bound itself
/// when it is smaller than all).
const TRAINED_SIZES: &[usize] = &[16 << 10, 32 << 10, 64 << 10, 128 << 10];
/// The default size bound: 1 MiB.
pub(crate) const DEFAULT_MAX_SIZE: usize = 1 << 20;
/// The most a browser keeps of one dictionary: Chromium stores dictionaries of up to
/// 100 MiB each (its shared dictionary size limit) and ignores larger ones, so the size
/// bound may not pass it.
pub(crate) const BROWSER_DICTIONARY_LIMIT: usize = 100 << 20;
/// The default expected number of responses a client gets with one dictionary.
pub(crate) const DEFAULT_RESPONSES_PER_CLIENT: u64 = 100;

/// Builds a dictionary for one API from sample responses: makes candidates of several
/// kinds and sizes, measures each on samples held out from them at several levels, and
/// keeps the one that sends a client the fewest bytes, its own download included, within a
/// CPU budget.
///
/// - **Samples**: empty bodies and repeats are dropped; the rest are cut into 64 runs of
///   consecutive samples and every fourth run (at most 400 samples) is held out, by
///   position, never by content: neighbours (one client's pages) share more than the
///   responses a dictionary will meet, so they stay on one side. The others (their first
///   32 MiB) make the candidates.
/// - **Candidates**: zstd's trainer asked for 16, 32, 64 and 128 KiB (it may return
///   less), and raw training samples up to an eighth, a quarter, half and all of the size
///   bound (default 1 MiB), picked greedily by what they share with the other training
///   samples per byte, the most representative last (next to the response). Only
///   dictionaries up to the bound are tried, and none twice.
/// - **Levels**: `dcz` 3, 4, 5, 6, 9 and 12; `dcb` 4, 5 and 6. For each coding a candidate
///   uses the level with the fewest bytes among those within the budget, or the cheapest
///   when none is. Candidates rank by how many of their two codings are over budget, then
///   by their `dcz` plus `dcb` bytes per client, then by size; the first wins, among those
///   that send fewer bytes per response than plain zstd 3 and br on both codings.
/// - **Bytes per client**: the dictionary as it is served (zstd level 19: it is fetched
///   once and cached, so it is worth compressing hard) plus the expected number of
///   responses per client (default 100) times the mean held-out response with it. A larger
///   dictionary usually compresses each response better but costs its download: it wins
///   only when enough responses repay it. The report gives each candidate's ratio to the
///   plain coding, its served size and its break-even count of responses.
/// - **Budget**: `dcz` time per response at most 2.0x plain zstd 3's, `dcb` at most 1.3x
///   plain br's at the same quality, by default, over the held-out samples. The times come
///   from a cost model calibrated once (per coding, level and dictionary size, the CPU time
///   of responses of seven sizes, interpolated to each held-out response's size), not from
///   the clock, so that the same samples always give the same dictionary and levels; a
///   clock with a margin would still flip a level whose time sits near the margin. The
///   times measured during the build are reported beside the model's.
///
/// Deterministic: the same samples and settings give the same bytes, kind and levels.
///
/// # Example
///
/// ```
/// use tower_gzip::dictionary::{Dictionary, DictionaryBuilder, DictionaryStore};
/// use tower_gzip::dictionary::UseAsDictionary;
/// use tower_gzip::{CompressionLevel, ContentCoding, compression::CompressionLayer};
///
/// // Responses of one API: a real build takes hundreds, recorded from traffic.
/// let samples: Vec<String> = (0..80)
///     .map(|i| format!(
///         "{{\n  \"id\": {},\n  \"login\": \"user{}\",\n  \"url\": \"https://api.example.com/users/{}\",\n  \"admin\": {}\n}}",
///         i * 7919 % 100_000, i * 31 % 997, i * 31 % 997, i % 5 == 0
///     ))
///     .collect();
/// let built = DictionaryBuilder::new(&samples).max_size(8 << 10).build().unwrap();
/// assert!(!built.bytes.is_empty() && built.bytes.len() <= 8 << 10);
/// assert!(built.report.iter().any(|row| row.chosen));
///
/// let dictionary = Dictionary::new(built.bytes, UseAsDictionary::new("/users/*")).unwrap();
/// let store = DictionaryStore::new(1 << 20);
/// store.insert(dictionary);
/// let mut layer = CompressionLayer::new()
///     .dictionaries(store)
///     .level(ContentCoding::Dcz, CompressionLevel::Precise(built.dcz_level));
/// if let Some(quality) = built.dcb_quality {
///     layer = layer.level(ContentCoding::Dcb, CompressionLevel::Precise(quality));
/// }
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct DictionaryBuilder<'a> {
    samples: Vec<&'a [u8]>,
    max_size: usize,
    responses_per_client: u64,
    /// `dcz`'s, then `dcb`'s.
    budgets: [f64; 2],
    /// Whether trained candidates, then raw-sample ones, are made.
    kinds: [bool; 2],
    /// What candidates are made from, sample by sample, instead of the samples.
    material: Option<&'a [Vec<Bytes>]>,
}

/// What [`DictionaryBuilder::build`] chose, and everything it tried.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BuiltDictionary {
    /// The dictionary, exactly as it is to be served.
    pub bytes: Bytes,
    /// How it was made.
    pub kind: DictionaryKind,
    /// The `dcz` (zstd) level to use it at.
    pub dcz_level: i32,
    /// The `dcb` (brotli) quality to use it at; `None` without the `dcb` feature.
    pub dcb_quality: Option<i32>,
    /// How many held-out samples judged the candidates, and their bytes.
    pub held_out: usize,
    /// The held-out samples' bytes, uncompressed.
    pub held_out_bytes: usize,
    /// The expected responses per client the choice was made for.
    pub responses_per_client: u64,
    /// The dictionary's bytes as served (zstd level 19).
    pub served_len: usize,
    /// One row per coding and level tried: the plain baselines first, then each candidate's.
    pub report: Vec<CandidateReport>,
}

/// How a candidate dictionary was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DictionaryKind {
    /// By zstd's trainer (`ZDICT_trainFromBuffer`) asked for `asked` bytes (it may return
    /// fewer).
    Trained {
        /// The size asked for.
        asked: usize,
    },
    /// Whole training samples, `count` of them, the most representative last.
    Samples {
        /// How many samples.
        count: usize,
    },
}

/// One coding at one level on the held-out samples.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CandidateReport {
    /// The dictionary; `None` for a plain coding the budgets are relative to (`zstd` 3, `br`
    /// at each quality tried).
    pub kind: Option<DictionaryKind>,
    /// The dictionary's length (0 for a plain coding).
    pub dictionary_len: usize,
    /// The dictionary's SHA-256 (zeros for a plain coding).
    pub hash: [u8; 32],
    /// `dcz` or `dcb`; `zstd` or `br` for the baselines.
    pub coding: ContentCoding,
    /// The zstd level or brotli quality.
    pub level: i32,
    /// The held-out samples' compressed bytes, the `dcz`/`dcb` headers included.
    pub bytes: usize,
    /// `bytes` as a multiple of the plain coding's (`zstd` 3 for `dcz`, `br` at the same
    /// quality for `dcb`): the ratio per response, the dictionary excluded.
    pub ratio: f64,
    /// The dictionary's bytes as served, compressed (zstd level 19); 0 for a plain coding.
    pub served_len: usize,
    /// What one client downloads: `served_len` plus the expected responses per client
    /// times the mean held-out response.
    pub per_client_bytes: f64,
    /// How many responses a client must get before the dictionary has saved its own
    /// download against the plain coding; `None` for a plain coding or one that saves
    /// nothing per response.
    pub break_even: Option<u64>,
    /// The modelled time per response as a multiple of the plain coding's (`zstd` 3 for
    /// `dcz`, `br` at the same quality for `dcb`): what the budget is checked against.
    pub cost: f64,
    /// The time per response measured during the build, in microseconds (informative: it
    /// varies from run to run and decides nothing).
    pub micros: f64,
    /// Whether `cost` is within the coding's budget.
    pub within_budget: bool,
    /// Whether the build chose this dictionary at this level.
    pub chosen: bool,
}

/// A candidate dictionary.
struct Candidate {
    kind: DictionaryKind,
    bytes: Bytes,
}

impl<'a> DictionaryBuilder<'a> {
    /// A builder over `samples` (response bodies of the API the dictionary is for; a few
    /// hundred or more work best), with the default bound (1 MiB),
    /// responses per client (100) and budgets (2.0 for
    /// `dcz`, 1.3 for `dcb`).
    pub fn new<S: AsRef<[u8]>>(samples: &'a [S]) -> Self {
        DictionaryBuilder {
            samples: samples.iter().map(AsRef::as_ref).collect(),
            max_size: DEFAULT_MAX_SIZE,
            responses_per_client: DEFAULT_RESPONSES_PER_CLIENT,
            budgets: [2.0, 1.3],
            kinds: [true, true],
            material: None,
        }
    }

    /// The largest dictionary to try, in bytes (default 1 MiB; at most
    /// 100 MiB, what Chromium keeps): a client fetches it once,
    /// compressed, and every response encoder digests it.
    pub fn max_size(mut self, bytes: usize) -> Self {
        self.max_size = bytes;
        self
    }

    /// How many responses a client is expected to get with one dictionary (default 100, at
    /// least 1): what its download is spread over. Few responses favour a small
    /// dictionary, many a large one.
    pub fn responses_per_client(mut self, responses: u64) -> Self {
        self.responses_per_client = responses.max(1);
        self
    }

    /// The CPU budgets: `dcz`'s time per response at most `dcz` times plain zstd 3's, and
    /// `dcb`'s at most `dcb` times plain br's at the same quality (default 2.0 and 1.3).
    pub fn cpu_budget(mut self, dcz: f64, dcb: f64) -> Self {
        self.budgets = [dcz, dcb];
        self
    }

    /// Which kinds of candidates to make (default both): zstd's trainer's
    /// ([`DictionaryKind::Trained`]) and raw samples' ([`DictionaryKind::Samples`]). With
    /// neither, the build fails. For comparing the two kinds on one corpus.
    pub fn kinds(mut self, trained: bool, samples: bool) -> Self {
        self.kinds = [trained, samples];
        self
    }

    /// What candidates are made from: for the sample at index `i` of the samples, the pieces
    /// `material[i]` (none past its end), e.g. only the runs several clients were sent
    /// ([`learn::Anonymity`](crate::dictionary::learn::Anonymity)). The samples are split
    /// as always; the held-out ones still judge the candidates whole, and only the pieces of
    /// the training ones make them: no byte of a dictionary comes from anything else.
    pub fn material(mut self, material: &'a [Vec<Bytes>]) -> Self {
        self.material = Some(material);
        self
    }

    /// Makes the candidates, measures them and chooses.
    ///
    /// Fails with [`DictionaryError::Training`] for fewer than 16 distinct non-empty
    /// samples, when no candidate could be made, or when none sends fewer bytes than the
    /// plain codings on the held-out samples (samples with nothing in common);
    /// [`DictionaryError::Empty`] for a size bound of zero and
    /// [`DictionaryError::TooLarge`] for one over 128 MiB (what the codecs take) or
    /// 100 MiB (what Chromium keeps).
    pub fn build(&self) -> Result<BuiltDictionary, DictionaryError> {
        if self.max_size == 0 {
            return Err(DictionaryError::Empty);
        }
        if self.max_size > MAX_DICTIONARY_LEN.min(BROWSER_DICTIONARY_LIMIT) {
            return Err(DictionaryError::TooLarge {
                len: self.max_size as u64,
            });
        }
        let (training_at, held_at) = samples::split_indices(&self.samples)?;
        let held_out: Vec<&[u8]> = held_at.into_iter().map(|i| self.samples[i]).collect();
        let training: Vec<&[u8]> = match self.material {
            None => training_at.into_iter().map(|i| self.samples[i]).collect(),
            Some(material) => (training_at.into_iter())
                .flat_map(|i| material.get(i).into_iter().flatten())
                .map(|piece| &piece[..])
                .collect(),
        };
        let candidates = candidates(&training, self.max_size, self.kinds);
        if candidates.is_empty() {
            return Err(DictionaryError::Training(
                "no candidate dictionary could be made from the samples".into(),
            ));
        }
        Judge::new(&held_out, self).run(candidates)
    }
}

/// Every candidate a build over `samples` would judge (trained and raw), for tests of what
/// a dictionary can hold.
#[cfg(all(test, feature = "learn"))]
pub(crate) fn candidate_bytes(samples: &[&[u8]], bound: usize) -> Vec<(DictionaryKind, Bytes)> {
    let Ok(split) = samples::split(samples) else {
        return Vec::new();
    };
    let made = candidates(&split.training, bound, [true, true]);
    made.into_iter().map(|c| (c.kind, c.bytes)).collect()
}

/// The candidates from `training`, each at most `bound` bytes, none twice.
fn candidates(training: &[&[u8]], bound: usize, [trained, raw]: [bool; 2]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut add = |kind, bytes: Bytes| {
        if !bytes.is_empty() && bytes.len() <= bound && !out.iter().any(|c| c.bytes == bytes) {
            out.push(Candidate { kind, bytes });
        }
    };
    let mut sizes: Vec<usize> = TRAINED_SIZES
        .iter()
        .copied()
        .filter(|&s| s <= bound)
        .collect();
    if sizes.is_empty() {
        sizes.push(bound);
    }
    if !trained {
        sizes.clear();
    }
    for asked in sizes {
        // The trainer refuses too few or too uniform samples: then only raw candidates.
        if let Ok(bytes) = train(training, asked) {
            add(DictionaryKind::Trained { asked }, bytes);
        }
    }
    if !raw {
        return out;
    }
    let grams = select::Grams::count(training);
    for size in [bound / 8, bound / 4, bound / 2, bound] {
        let picked = grams.pick(training, size);
        let kind = DictionaryKind::Samples {
            count: picked.len(),
        };
        add(kind, select::assemble(training, &picked).into());
    }
    out
}
