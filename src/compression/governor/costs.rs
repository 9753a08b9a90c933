//! What the governor learns from the responses it compressed: how much each kind of
//! response costs per byte saved, and how much each coding's output grows at each step.

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use http::HeaderMap;
use http::header::CONTENT_TYPE;

use super::{Governor, STEPS};
use crate::headers::{ends_with_ci, media_type, starts_with_ci};
use crate::{CODINGS, ContentCoding};

/// Kinds of response: 5 families of media type by 3 size classes.
const KINDS: usize = 15;
/// Responses at a step before its growth is judged.
const SAMPLES: u32 = 4;

/// A kind of response, for the cost per byte saved: its media type's family by its size
/// class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResponseKind(u8);

impl ResponseKind {
    /// The kind of a response with these headers and (known) size.
    pub(crate) fn of(headers: &HeaderMap, size: Option<u64>) -> ResponseKind {
        let media = headers
            .get(CONTENT_TYPE)
            .map_or(&b""[..], |value| media_type(value.as_bytes()));
        let family = match media {
            m if ends_with_ci(m, b"json") => 0,
            m if starts_with_ci(m, b"text/html") => 1,
            m if ends_with_ci(m, b"javascript") || ends_with_ci(m, b"css") => 2,
            m if starts_with_ci(m, b"text/") => 3,
            _ => 4,
        };
        let class = match size {
            Some(size) if size <= 4 << 10 => 0,
            Some(size) if size <= 64 << 10 => 1,
            _ => 2,
        };
        ResponseKind(family * 3 + class)
    }
}

/// Moving averages kept as `f64` bits (0: nothing seen), updated without locks: a racing
/// update loses one sample, no more.
#[derive(Debug, Default)]
struct Average(AtomicU64);

impl Average {
    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }

    /// Over ~8 samples.
    fn add(&self, sample: f64) {
        let old = self.get();
        let new = if old == 0.0 {
            sample
        } else {
            old + (sample - old) / 8.0
        };
        self.0
            .store(new.max(f64::MIN_POSITIVE).to_bits(), Ordering::Relaxed);
    }
}

#[derive(Debug)]
pub(super) struct Costs {
    /// Nanoseconds per byte saved, per kind.
    cost: [Average; KINDS],
    /// Output bytes per input byte, per coding and step, and how many responses made it.
    ratio: [[(Average, AtomicU32); STEPS as usize + 1]; CODINGS],
    /// The deepest step each coding may go to within the growth allowed.
    floor: [AtomicU8; CODINGS],
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            cost: Default::default(),
            ratio: Default::default(),
            floor: std::array::from_fn(|_| AtomicU8::new(STEPS)),
        }
    }
}

impl Costs {
    pub(super) fn floor(&self, coding: ContentCoding) -> u8 {
        self.floor[coding.index()].load(Ordering::Relaxed)
    }

    pub(super) fn forget_floors(&self) {
        for floor in &self.floor {
            floor.store(STEPS, Ordering::Relaxed);
        }
    }

    /// Whether `kind` costs at least the median of the kinds seen per byte saved (a kind
    /// not seen yet is not shed: nothing says it is dear).
    pub(super) fn costly(&self, kind: ResponseKind) -> bool {
        let mine = self.cost[kind.0 as usize].get();
        if mine == 0.0 {
            return false;
        }
        let mut seen = [0.0; KINDS];
        let mut n = 0;
        for cost in self.cost.iter().map(Average::get).filter(|&c| c > 0.0) {
            seen[n] = cost;
            n += 1;
        }
        seen[..n].sort_by(f64::total_cmp);
        mine >= seen[(n - 1) / 2]
    }

    /// One response's outcome; a step whose output grew past `max_growth` times step 0's
    /// becomes out of bounds for its coding.
    fn record(&self, done: &Timed, bytes_in: u64, bytes_out: u64, max_growth: f64) {
        let saved = bytes_in.saturating_sub(bytes_out).max(1) as f64;
        self.cost[done.kind.0 as usize].add(done.busy.as_nanos() as f64 / saved);
        if bytes_in == 0 {
            return;
        }
        let ratios = &self.ratio[done.coding.index()];
        let (average, count) = &ratios[done.step as usize];
        average.add(bytes_out as f64 / bytes_in as f64);
        let seen = count.fetch_add(1, Ordering::Relaxed) + 1;
        let base = ratios[0].0.get();
        if done.step > 0 && seen >= SAMPLES && base > 0.0 && average.get() > base * max_growth {
            self.floor[done.coding.index()].fetch_min(done.step - 1, Ordering::Relaxed);
        }
    }
}

/// One response's account with the governor: every slice's time as it is spent, and the
/// whole response's cost and growth when it ends.
#[derive(Debug)]
pub(crate) struct Timed {
    governor: Governor,
    kind: ResponseKind,
    coding: ContentCoding,
    step: u8,
    busy: Duration,
}

impl Timed {
    pub(crate) fn new(
        governor: Governor,
        kind: ResponseKind,
        coding: ContentCoding,
        step: u8,
    ) -> Self {
        Timed {
            governor,
            kind,
            coding,
            step,
            busy: Duration::ZERO,
        }
    }

    /// Counts `busy` as compression (timed by the report's `account`).
    pub(crate) fn add(&mut self, busy: Duration) {
        self.governor.record_busy(busy);
        self.busy += busy;
    }

    /// The response is over: what it cost in all.
    pub(crate) fn end(&self, bytes_in: u64, bytes_out: u64) {
        let inner = &self.governor.inner;
        let max_growth = inner.config.max_growth;
        inner.costs.record(self, bytes_in, bytes_out, max_growth);
    }
}
