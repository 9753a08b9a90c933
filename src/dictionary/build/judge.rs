//! Measuring the candidates on the held-out samples, and choosing one by the objective.

#[cfg(feature = "dcb")]
use super::DCB_QUALITIES;
use super::objective::{break_even, per_client_bytes, scaled_per_client, served_len};
use super::{
    BuiltDictionary, Candidate, CandidateReport, DCZ_LEVELS, DictionaryBuilder, cost, measure,
};
use crate::ContentCoding;
use crate::codec::DictionaryError;
use crate::dictionary::Dictionary;
use crate::pool::CodecPool;

/// Measures candidates on the held-out samples and chooses.
pub(super) struct Judge<'s> {
    held_out: &'s [&'s [u8]],
    bytes: usize,
    sizes: Vec<usize>,
    /// `dcz`'s, then `dcb`'s.
    budgets: [f64; 2],
    per_client: u64,
    pool: CodecPool,
}

/// What ranks a candidate, lowest first: codings over budget, `dcz` plus `dcb` bytes per
/// client (scaled, see [`scaled_per_client`]), dictionary length.
pub(super) type Rank = (usize, u128, usize);

impl<'s> Judge<'s> {
    pub(super) fn new(held_out: &'s [&'s [u8]], builder: &DictionaryBuilder<'_>) -> Self {
        Judge {
            held_out,
            bytes: held_out.iter().map(|s| s.len()).sum(),
            sizes: held_out.iter().map(|s| s.len()).collect(),
            budgets: builder.budgets,
            per_client: builder.responses_per_client,
            pool: CodecPool::new(),
        }
    }

    pub(super) fn run(
        &self,
        candidates: Vec<Candidate>,
    ) -> Result<BuiltDictionary, DictionaryError> {
        let mut report = self.baselines()?;
        // The ranking key, the rows of the chosen dcz and dcb levels, and the candidate.
        let mut best: Option<(Rank, [Option<usize>; 2], usize)> = None;
        for (index, candidate) in candidates.iter().enumerate() {
            let rows = self.rows(candidate, &report)?;
            let dcz = choose(&rows, ContentCoding::Dcz).map(|i| i + report.len());
            let dcb = choose(&rows, ContentCoding::Dcb).map(|i| i + report.len());
            report.extend(rows);
            let key = rank(&report, [dcz, dcb], self.held_out.len(), self.per_client);
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
        let dcz_row = chosen[0].expect("dcz is always measured");
        Ok(BuiltDictionary {
            bytes: candidates[index].bytes.clone(),
            kind: candidates[index].kind,
            dcz_level: report[dcz_row].level,
            dcb_quality: level(chosen[1]),
            held_out: self.held_out.len(),
            held_out_bytes: self.bytes,
            responses_per_client: self.per_client,
            served_len: report[dcz_row].served_len,
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
                    ratio: 1.0,
                    served_len: 0,
                    per_client_bytes: self.per_client_bytes(0, measured.bytes),
                    break_even: None,
                    cost: 1.0,
                    micros: measured.micros,
                    within_budget: true,
                    chosen: false,
                })
            })
            .collect()
    }

    /// One candidate at every level of both codings, against the plain rows of `report`.
    fn rows(
        &self,
        candidate: &Candidate,
        report: &[CandidateReport],
    ) -> Result<Vec<CandidateReport>, DictionaryError> {
        let dictionary = Dictionary::new(candidate.bytes.clone(), None)?;
        let served = served_len(&candidate.bytes, &self.pool)?;
        tried()
            .into_iter()
            .map(|(coding, level)| {
                let budget = self.budgets[usize::from(coding == ContentCoding::Dcb)];
                let measured =
                    measure(self.held_out, coding, level, Some(&dictionary), &self.pool)?;
                let cost = cost::cost(coding, level, dictionary.len(), &self.sizes);
                let plain = plain_bytes(report, coding, level).unwrap_or(measured.bytes);
                Ok(CandidateReport {
                    kind: Some(candidate.kind),
                    dictionary_len: dictionary.len(),
                    hash: dictionary.hash(),
                    coding,
                    level,
                    bytes: measured.bytes,
                    ratio: measured.bytes as f64 / plain.max(1) as f64,
                    served_len: served,
                    per_client_bytes: self.per_client_bytes(served, measured.bytes),
                    break_even: break_even(served, self.held_out.len(), measured.bytes, plain),
                    cost,
                    micros: measured.micros,
                    within_budget: cost <= budget,
                    chosen: false,
                })
            })
            .collect()
    }

    fn per_client_bytes(&self, served: usize, bytes: usize) -> f64 {
        per_client_bytes(served, self.held_out.len(), self.per_client, bytes)
    }
}

/// The held-out bytes of the plain coding `coding` at `level` is relative to (the
/// baselines lead the report).
fn plain_bytes(report: &[CandidateReport], coding: ContentCoding, level: i32) -> Option<usize> {
    let (coding, level) = cost::baseline(coding, level);
    report
        .iter()
        .find(|p| p.kind.is_none() && p.coding == coding && p.level == level)
        .map(|p| p.bytes)
}

/// Whether `report[row]` sends fewer bytes per response than its plain coding: a
/// dictionary that does not is worth nothing, however many responses a client gets.
fn saves(report: &[CandidateReport], row: usize) -> bool {
    let r = &report[row];
    plain_bytes(report, r.coding, r.level).is_some_and(|plain| r.bytes < plain)
}

/// The dictionary codings and levels tried.
fn tried() -> Vec<(ContentCoding, i32)> {
    let levels = DCZ_LEVELS.iter().map(|&l| (ContentCoding::Dcz, l));
    #[cfg(feature = "dcb")]
    let levels = levels.chain(DCB_QUALITIES.iter().map(|&q| (ContentCoding::Dcb, q)));
    levels.collect()
}

/// How a candidate ranks, lowest first: by how many of its codings are over budget (a
/// dictionary both codings can use within it first), then by the bytes per client of both
/// (its served size and `per_client` responses each, over `held_out` samples), then by its
/// length.
pub(super) fn rank(
    report: &[CandidateReport],
    chosen: [Option<usize>; 2],
    held_out: usize,
    per_client: u64,
) -> Rank {
    let rows = chosen.iter().flatten().map(|&i| &report[i]);
    let over = rows.clone().filter(|r| !r.within_budget).count();
    let bytes = rows
        .clone()
        .map(|r| scaled_per_client(r.served_len, held_out, per_client, r.bytes))
        .sum();
    let len = rows.map(|r| r.dictionary_len).max().unwrap_or(0);
    (over, bytes, len)
}

/// The row of `coding` to use among one candidate's `rows`: the fewest bytes within the
/// budget (the lower level on a tie), else the lowest cost.
pub(super) fn choose(rows: &[CandidateReport], coding: ContentCoding) -> Option<usize> {
    let of = || rows.iter().enumerate().filter(|(_, r)| r.coding == coding);
    of().filter(|(_, r)| r.within_budget)
        .min_by_key(|(_, r)| (r.bytes, r.level))
        .or_else(|| {
            of().min_by(|(_, a), (_, b)| a.cost.total_cmp(&b.cost).then(a.level.cmp(&b.level)))
        })
        .map(|(i, _)| i)
}
