//! The layer's metric handles, registered once: a response then costs an atomic add per
//! counter and a sample per histogram, with no key built nor looked up.

use metrics::{Counter, Histogram, counter, histogram};

use super::outcome::{DictionaryOutcome, ResponseTally, SkipReason};
use super::publish::{BYTES_IN, BYTES_OUT, DICTIONARY, RATIO, RESPONSES, SECONDS, SKIPPED};
use crate::CODINGS;
use crate::ContentCoding;

/// One handle per series the layer updates. Codings not compiled in get no-op handles.
pub(crate) struct Handles {
    responses: [Counter; CODINGS],
    identity: Counter,
    bytes_in: [Counter; CODINGS],
    bytes_out: [Counter; CODINGS],
    seconds: [Histogram; CODINGS],
    ratio: [Histogram; CODINGS],
    skipped: [Counter; SkipReason::ALL.len()],
    dictionary: [Counter; DictionaryOutcome::ALL.len()],
}

impl Handles {
    /// Registers every series with the recorder installed now, and describes them.
    pub(crate) fn register() -> Self {
        super::publish::describe();
        let mut handles = Handles {
            responses: std::array::from_fn(|_| Counter::noop()),
            identity: counter!(RESPONSES, "coding" => "identity"),
            bytes_in: std::array::from_fn(|_| Counter::noop()),
            bytes_out: std::array::from_fn(|_| Counter::noop()),
            seconds: std::array::from_fn(|_| Histogram::noop()),
            ratio: std::array::from_fn(|_| Histogram::noop()),
            skipped: SkipReason::ALL.map(|r| counter!(SKIPPED, "reason" => r.as_str())),
            dictionary: DictionaryOutcome::ALL
                .map(|o| counter!(DICTIONARY, "outcome" => o.as_str())),
        };
        for &coding in ContentCoding::ALL {
            let (i, name) = (coding.index(), coding.as_str());
            handles.responses[i] = counter!(RESPONSES, "coding" => name);
            handles.bytes_in[i] = counter!(BYTES_IN, "coding" => name);
            handles.bytes_out[i] = counter!(BYTES_OUT, "coding" => name);
            handles.seconds[i] = histogram!(SECONDS, "coding" => name);
            handles.ratio[i] = histogram!(RATIO, "coding" => name);
        }
        handles
    }

    pub(crate) fn compressed(&self, coding: ContentCoding) {
        self.responses[coding.index()].increment(1);
    }

    pub(crate) fn skipped(&self, reason: SkipReason) {
        self.identity.increment(1);
        self.skipped[reason as usize].increment(1);
    }

    pub(crate) fn finished(&self, tally: &ResponseTally) {
        let i = tally.coding.index();
        self.bytes_in[i].increment(tally.bytes_in);
        self.bytes_out[i].increment(tally.bytes_out);
        if let Some(time) = tally.time {
            self.seconds[i].record(time.as_secs_f64());
        }
        if tally.bytes_in > 0 {
            self.ratio[i].record(tally.bytes_out as f64 / tally.bytes_in as f64);
        }
    }

    pub(crate) fn dictionary(&self, outcome: DictionaryOutcome) {
        self.dictionary[outcome as usize].increment(1);
    }
}

impl std::fmt::Debug for Handles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handles").finish_non_exhaustive()
    }
}
