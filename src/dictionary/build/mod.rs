//! [`DictionaryBuilder`]: the dictionary, and the levels to use it at, that send the fewest
//! bytes on held-out samples within a CPU budget.

mod cost;
mod evaluate;
mod samples;
mod select;
#[cfg(test)]
mod tests;
mod train;

use bytes::Bytes;

use super::{Dictionary, MAX_DICTIONARY_LEN};
use crate::ContentCoding;
use crate::codec::dictionary::DictionaryError;
use crate::pool::CodecPool;
use evaluate::measure;
pub use train::train;

/// The `dcz` levels tried.
const DCZ_LEVELS: &[i32] = &[3, 4, 5, 6, 9, 12];
/// The `dcb` qualities tried.
#[cfg(feature = "dcb")]
const DCB_QUALITIES: &[i32] = &[4, 5, 6];
/// The sizes zstd's trainer is asked for (those within the size bound; the bound itself
/// when it is smaller than all).
const TRAINED_SIZES: &[usize] = &[16 << 10, 32 << 10, 64 << 10, 128 << 10];

/// Builds a dictionary for one API from sample responses: makes candidates of several
/// kinds and sizes, measures each on samples held out from them at several levels, and
/// keeps the one that sends the fewest bytes within a CPU budget.
///
/// - **Samples**: empty bodies and repeats are dropped; every fourth of the rest (at most
///   400) is held out, by position, never by content. The others (their first 32 MiB)
///   make the candidates.
/// - **Candidates**: zstd's trainer asked for 16, 32, 64 and 128 KiB (it may return
///   less), and raw training samples up to a quarter, half and all of the size bound
///   (default 128 KiB), picked greedily by what they share with the other training samples
///   per byte, the most representative last (next to the response). Only dictionaries up
///   to the bound are tried, and none twice.
/// - **Levels**: `dcz` 3, 4, 5, 6, 9 and 12; `dcb` 4, 5 and 6. For each coding a candidate
///   uses the level with the fewest bytes among those within the budget, or the cheapest
///   when none is. Candidates rank by how many of their two codings are over budget, then
///   by their `dcz` plus `dcb` bytes, then by size; the first wins, among those that send
///   fewer bytes than plain zstd 3 and br on both codings.
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
/// use tower_gzip::headers::UseAsDictionary;
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
    /// `dcz`'s, then `dcb`'s.
    budgets: [f64; 2],
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
    /// One row per coding and level tried: the plain baselines first, then each candidate's.
    pub report: Vec<CandidateReport>,
}

/// How a candidate dictionary was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DictionaryKind {
    /// By zstd's trainer ([`train`](super::train)) asked for `asked` bytes (it may return
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
    /// hundred or more work best), with the default bound (128 KiB) and budgets (2.0 for
    /// `dcz`, 1.3 for `dcb`).
    pub fn new<S: AsRef<[u8]>>(samples: &'a [S]) -> Self {
        DictionaryBuilder {
            samples: samples.iter().map(AsRef::as_ref).collect(),
            max_size: 128 << 10,
            budgets: [2.0, 1.3],
        }
    }

    /// The largest dictionary to try, in bytes (default 128 KiB): a client fetches it once,
    /// compressed, and every response encoder digests it.
    pub fn max_size(mut self, bytes: usize) -> Self {
        self.max_size = bytes;
        self
    }

    /// The CPU budgets: `dcz`'s time per response at most `dcz` times plain zstd 3's, and
    /// `dcb`'s at most `dcb` times plain br's at the same quality (default 2.0 and 1.3).
    pub fn cpu_budget(mut self, dcz: f64, dcb: f64) -> Self {
        self.budgets = [dcz, dcb];
        self
    }

    /// Makes the candidates, measures them and chooses.
    ///
    /// Fails with [`DictionaryError::Training`] for fewer than 16 distinct non-empty
    /// samples, when no candidate could be made, or when none sends fewer bytes than the
    /// plain codings on the held-out samples (samples with nothing in common);
    /// [`DictionaryError::Empty`] for a size bound of zero and
    /// [`DictionaryError::TooLarge`] for one over [`MAX_DICTIONARY_LEN`].
    pub fn build(&self) -> Result<BuiltDictionary, DictionaryError> {
        if self.max_size == 0 {
            return Err(DictionaryError::Empty);
        }
        if self.max_size > MAX_DICTIONARY_LEN {
            return Err(DictionaryError::TooLarge {
                len: self.max_size as u64,
            });
        }
        let split = samples::split(&self.samples)?;
        let candidates = candidates(&split.training, self.max_size);
        if candidates.is_empty() {
            return Err(DictionaryError::Training(
                "no candidate dictionary could be made from the samples".into(),
            ));
        }
        Judge::new(&split.held_out, self).run(candidates)
    }
}

/// The candidates from `training`, each at most `bound` bytes, none twice.
fn candidates(training: &[&[u8]], bound: usize) -> Vec<Candidate> {
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
    for asked in sizes {
        // The trainer refuses too few or too uniform samples: then only raw candidates.
        if let Ok(bytes) = train(training, asked) {
            add(DictionaryKind::Trained { asked }, bytes);
        }
    }
    let grams = select::Grams::count(training);
    for size in [bound / 4, bound / 2, bound] {
        let picked = grams.pick(training, size);
        let kind = DictionaryKind::Samples {
            count: picked.len(),
        };
        add(kind, select::assemble(training, &picked).into());
    }
    out
}

/// Measures candidates on the held-out samples and chooses.
struct Judge<'s> {
    held_out: &'s [&'s [u8]],
    bytes: usize,
    sizes: Vec<usize>,
    /// `dcz`'s, then `dcb`'s.
    budgets: [f64; 2],
    pool: CodecPool,
}

impl<'s> Judge<'s> {
    fn new(held_out: &'s [&'s [u8]], builder: &DictionaryBuilder<'_>) -> Self {
        Judge {
            held_out,
            bytes: held_out.iter().map(|s| s.len()).sum(),
            sizes: held_out.iter().map(|s| s.len()).collect(),
            budgets: builder.budgets,
            pool: CodecPool::new(),
        }
    }

    fn run(&self, candidates: Vec<Candidate>) -> Result<BuiltDictionary, DictionaryError> {
        let mut report = self.baselines()?;
        // The ranking key (codings over budget, bytes, dictionary length), the rows of the
        // chosen dcz and dcb levels, and the candidate.
        let mut best: Option<(Rank, [Option<usize>; 2], usize)> = None;
        for (index, candidate) in candidates.iter().enumerate() {
            let rows = self.rows(candidate)?;
            let dcz = choose(&rows, ContentCoding::Dcz).map(|i| i + report.len());
            let dcb = choose(&rows, ContentCoding::Dcb).map(|i| i + report.len());
            report.extend(rows);
            let key = rank(&report, [dcz, dcb], candidate.bytes.len());
            let saves = [dcz, dcb].iter().flatten().all(|&i| saves(&report, i));
            if saves && best.is_none_or(|(best_key, ..)| key < best_key) {
                best = Some((key, [dcz, dcb], index));
            }
        }
        let Some((_, chosen, index)) = best else {
            return Err(DictionaryError::Training(
                "no candidate dictionary saves bytes on the held-out samples".into(),
            ));
        };
        for row in chosen.iter().flatten() {
            report[*row].chosen = true;
        }
        let level = |row: Option<usize>| row.map(|i| report[i].level);
        Ok(BuiltDictionary {
            bytes: candidates[index].bytes.clone(),
            kind: candidates[index].kind,
            dcz_level: level(chosen[0]).expect("dcz is always measured"),
            dcb_quality: level(chosen[1]),
            held_out: self.held_out.len(),
            held_out_bytes: self.bytes,
            report,
        })
    }

    /// The plain codings the budgets are relative to.
    fn baselines(&self) -> Result<Vec<CandidateReport>, DictionaryError> {
        let mut plain = Vec::new();
        for (coding, level) in tried() {
            let base = cost::baseline(coding, level);
            if !plain.contains(&base) {
                plain.push(base);
            }
        }
        plain
            .into_iter()
            .map(|(coding, level)| {
                let measured = measure(self.held_out, coding, level, None, &self.pool)?;
                Ok(CandidateReport {
                    kind: None,
                    dictionary_len: 0,
                    hash: [0; 32],
                    coding,
                    level,
                    bytes: measured.bytes,
                    cost: 1.0,
                    micros: measured.micros,
                    within_budget: true,
                    chosen: false,
                })
            })
            .collect()
    }

    /// One candidate at every level of both codings.
    fn rows(&self, candidate: &Candidate) -> Result<Vec<CandidateReport>, DictionaryError> {
        let dictionary = Dictionary::new(candidate.bytes.clone(), None)?;
        tried()
            .into_iter()
            .map(|(coding, level)| {
                let budget = self.budgets[usize::from(coding == ContentCoding::Dcb)];
                let measured =
                    measure(self.held_out, coding, level, Some(&dictionary), &self.pool)?;
                let cost = cost::cost(coding, level, dictionary.len(), &self.sizes);
                Ok(CandidateReport {
                    kind: Some(candidate.kind),
                    dictionary_len: dictionary.len(),
                    hash: dictionary.hash(),
                    coding,
                    level,
                    bytes: measured.bytes,
                    cost,
                    micros: measured.micros,
                    within_budget: cost <= budget,
                    chosen: false,
                })
            })
            .collect()
    }
}

/// Whether `report[row]` sends fewer bytes than its plain coding (the baselines lead the
/// report): a dictionary that does not is worth nothing.
fn saves(report: &[CandidateReport], row: usize) -> bool {
    let r = &report[row];
    let (coding, level) = cost::baseline(r.coding, r.level);
    let plain = report
        .iter()
        .find(|p| p.kind.is_none() && p.coding == coding && p.level == level);
    plain.is_some_and(|p| r.bytes < p.bytes)
}

/// Codings over budget, bytes, dictionary length: lowest first.
type Rank = (usize, usize, usize);

/// The dictionary codings and levels tried.
fn tried() -> Vec<(ContentCoding, i32)> {
    let levels = DCZ_LEVELS.iter().map(|&l| (ContentCoding::Dcz, l));
    #[cfg(feature = "dcb")]
    let levels = levels.chain(DCB_QUALITIES.iter().map(|&q| (ContentCoding::Dcb, q)));
    levels.collect()
}

/// How a candidate ranks, lowest first: by how many of its codings are over budget (a
/// dictionary both codings can use within it first), then by the bytes of both on the
/// held-out samples, then by its length.
fn rank(
    report: &[CandidateReport],
    chosen: [Option<usize>; 2],
    len: usize,
) -> (usize, usize, usize) {
    let rows = chosen.iter().flatten().map(|&i| &report[i]);
    let over = rows.clone().filter(|r| !r.within_budget).count();
    (over, rows.map(|r| r.bytes).sum(), len)
}

/// The row of `coding` to use among one candidate's `rows`: the fewest bytes within the
/// budget (the lower level on a tie), else the lowest cost.
fn choose(rows: &[CandidateReport], coding: ContentCoding) -> Option<usize> {
    let of = || rows.iter().enumerate().filter(|(_, r)| r.coding == coding);
    of().filter(|(_, r)| r.within_budget)
        .min_by_key(|(_, r)| (r.bytes, r.level))
        .or_else(|| {
            of().min_by(|(_, a), (_, b)| a.cost.total_cmp(&b.cost).then(a.level.cmp(&b.level)))
        })
        .map(|(i, _)| i)
}
