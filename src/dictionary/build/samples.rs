//! The samples a build uses: empty and repeated bodies dropped, then split deterministically
//! into the training set (what candidates are made from) and the held-out set (what they
//! are judged on).

use crate::codec::DictionaryError;

/// Every `HOLD_EVERY`th run of consecutive distinct samples is held out.
const HOLD_EVERY: usize = 4;
/// The samples are cut into this many runs (or runs of one sample, when fewer): neighbours
/// (one client's pages, one session's calls) share more than responses far apart, and a
/// dictionary is judged on responses it did not see the neighbours of.
const RUNS: usize = 64;
/// The fewest distinct non-empty samples a build accepts: 12 to make candidates from, 4
/// to judge them on.
pub(super) const MIN_SAMPLES: usize = 16;
/// The most samples held out: enough to judge candidates, and a bound on the build's time.
/// Samples past it train.
const MAX_HELD_OUT: usize = 400;
/// The most training bytes used (the first samples): bounds the build's memory (the
/// selection keeps 4 bytes per sample byte) and the trainer's time.
const MAX_TRAINING: usize = 32 << 20;

/// Training and held-out samples: disjoint, and no body is in both.
#[cfg(test)]
#[derive(Debug)]
pub(super) struct Split<'a> {
    pub(super) training: Vec<&'a [u8]>,
    pub(super) held_out: Vec<&'a [u8]>,
}

/// [`split_indices`], as the samples themselves.
#[cfg(test)]
pub(super) fn split<S: AsRef<[u8]>>(samples: &[S]) -> Result<Split<'_>, DictionaryError> {
    let (training, held_out) = split_indices(samples)?;
    let at = |i: usize| samples[i].as_ref();
    Ok(Split {
        training: training.into_iter().map(at).collect(),
        held_out: held_out.into_iter().map(at).collect(),
    })
}

/// Splits `samples`, as the indices of the training, then the held-out ones: empty ones and
/// repeats of an earlier one are dropped (an equal body on both sides would reward a
/// dictionary that holds it), the rest are cut into [`RUNS`] runs of consecutive samples,
/// and every fourth run, up to [`MAX_HELD_OUT`] samples, is held out; the others train, up
/// to [`MAX_TRAINING`] bytes. Position decides, never content, so the same samples always
/// split the same way.
pub(super) fn split_indices<S: AsRef<[u8]>>(
    samples: &[S],
) -> Result<(Vec<usize>, Vec<usize>), DictionaryError> {
    let mut seen = std::collections::HashSet::new();
    let distinct: Vec<usize> = (0..samples.len())
        .filter(|&i| {
            let s = samples[i].as_ref();
            !s.is_empty() && seen.insert(s)
        })
        .collect();
    if distinct.len() < MIN_SAMPLES {
        return Err(DictionaryError::Training(format!(
            "{} distinct non-empty samples of {} given; a build needs at least {MIN_SAMPLES}",
            distinct.len(),
            samples.len()
        )));
    }
    let (mut training, mut held_out) = (Vec::with_capacity(distinct.len()), Vec::new());
    let mut training_bytes = 0;
    let run = (distinct.len() / RUNS).max(1);
    for (n, i) in distinct.into_iter().enumerate() {
        let len = samples[i].as_ref().len();
        if (n / run) % HOLD_EVERY == HOLD_EVERY - 1 && held_out.len() < MAX_HELD_OUT {
            held_out.push(i);
        } else if training_bytes + len <= MAX_TRAINING {
            training_bytes += len;
            training.push(i);
        }
    }
    Ok((training, held_out))
}
