//! [`Governor`]: trades ratio for latency when compression takes too much of the CPU.

use std::sync::atomic::{AtomicI32, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::CompressionLevel;
use crate::coding::{CODINGS, ContentCoding};

/// Steps from the configured levels down to each coding's fastest; one more step sheds.
const STEPS: u8 = 4;
/// The step past the fastest levels: the kinds of response that cost the most per byte
/// saved go unencoded.
const SHED: u8 = STEPS + 1;
/// Kinds of response: 5 families of media type by 3 size classes.
const KINDS: usize = 15;

/// An opt-in load governor for [`CompressionLayer::adaptive`](super::CompressionLayer::adaptive).
///
/// It measures the time the layer's own compression takes (one-shot bodies and streamed
/// slices, on whatever thread runs them) against the wall time of the cores it may use,
/// over short windows. When compression takes more than the upper share of those cores,
/// it steps every coding's level down, a quarter of the way to its fastest level per
/// window. At the fastest levels, one more step stops compressing the kinds of response
/// (media type family by size class) whose compression costs the most time per byte it
/// saves: those at or above the median of the kinds seen (all of them when one kind is all
/// the traffic). When the share falls below
/// the lower bound for a few windows in a row, it steps back up, one step at a time: the
/// gap between the bounds and the wait are its hysteresis. At light load it never moves,
/// so the bytes are the configured levels' own.
///
/// It needs no timer and no runtime: the windows close on the responses that arrive.
///
/// ```
/// use std::time::Duration;
/// use tower_gzip::compression::{CompressionLayer, Governor};
///
/// let governor = Governor::new().shares(0.5, 0.25).window(Duration::from_millis(250));
/// let layer = CompressionLayer::new().adaptive(governor.clone());
/// assert_eq!(governor.stats().step, 0);
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct Governor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    step_down_above: f64,
    step_up_below: f64,
    calm_windows: u32,
    window: Duration,
    cores: f64,
    busy_nanos: AtomicU64,
    step: AtomicU8,
    steps_down: AtomicU64,
    steps_up: AtomicU64,
    shed: AtomicU64,
    /// The last window's share, in parts per million.
    share_ppm: AtomicU64,
    /// The last level used per coding, by [`ContentCoding::index`].
    levels: [AtomicI32; CODINGS],
    /// Per kind of response, a moving average of the nanoseconds spent per byte saved (as
    /// `f64` bits; 0: not seen).
    cost: [AtomicU64; KINDS],
    window_state: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    started: Instant,
    calm: u32,
}

/// What a [`Governor`] is doing, from [`Governor::stats`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GovernorStats {
    /// 0: the configured levels; 1 to 4: stepped down (4: every coding's fastest); 5: also
    /// sending large bodies unencoded.
    pub step: u8,
    /// The share of the cores' time compression took in the last closed window (0 to 1).
    pub busy_share: f64,
    /// Steps taken down, and up, since the start.
    pub steps_down: u64,
    /// Steps taken up since the start.
    pub steps_up: u64,
    /// Responses sent unencoded because of the governor.
    pub shed: u64,
    /// The level each coding was last compressed at (its number, e.g. br quality), `None`
    /// for a coding not used yet.
    pub levels: Vec<(ContentCoding, Option<i32>)>,
}

impl Default for Governor {
    fn default() -> Self {
        Self::new()
    }
}

impl Governor {
    /// Steps down above 50% of the cores' time in compression, back up below 25% for 3
    /// windows of 200 ms, over the cores this process may run on.
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::build(0.5, 0.25, Duration::from_millis(200), cores as f64)
    }

    fn build(down: f64, up: f64, window: Duration, cores: f64) -> Self {
        Governor {
            inner: Arc::new(Inner {
                step_down_above: down,
                step_up_below: up.min(down),
                calm_windows: 3,
                window,
                cores,
                busy_nanos: AtomicU64::new(0),
                step: AtomicU8::new(0),
                steps_down: AtomicU64::new(0),
                steps_up: AtomicU64::new(0),
                shed: AtomicU64::new(0),
                share_ppm: AtomicU64::new(0),
                levels: std::array::from_fn(|_| AtomicI32::new(i32::MIN)),
                cost: std::array::from_fn(|_| AtomicU64::new(0)),
                window_state: Mutex::new(Window {
                    started: Instant::now(),
                    calm: 0,
                }),
            }),
        }
    }

    /// The shares of the cores' time spent compressing above which it steps down and below
    /// which it steps back up (defaults 0.5 and 0.25).
    pub fn shares(self, step_down_above: f64, step_up_below: f64) -> Self {
        let i = &self.inner;
        Self::build(step_down_above, step_up_below, i.window, i.cores)
    }

    /// How long each measurement lasts (default 200 ms).
    pub fn window(self, window: Duration) -> Self {
        let i = &self.inner;
        Self::build(i.step_down_above, i.step_up_below, window, i.cores)
    }

    /// The cores compression may use (default: those this process may run on).
    pub fn cores(self, cores: usize) -> Self {
        let i = &self.inner;
        Self::build(
            i.step_down_above,
            i.step_up_below,
            i.window,
            cores.max(1) as f64,
        )
    }

    /// What it is doing now.
    pub fn stats(&self) -> GovernorStats {
        let i = &self.inner;
        let levels = ContentCoding::ALL
            .iter()
            .map(|&c| {
                let level = i.levels[c.index()].load(Ordering::Relaxed);
                (c, (level != i32::MIN).then_some(level))
            })
            .collect();
        GovernorStats {
            step: i.step.load(Ordering::Relaxed),
            busy_share: i.share_ppm.load(Ordering::Relaxed) as f64 / 1e6,
            steps_down: i.steps_down.load(Ordering::Relaxed),
            steps_up: i.steps_up.load(Ordering::Relaxed),
            shed: i.shed.load(Ordering::Relaxed),
            levels,
        }
    }

    /// Adds time spent compressing (a one-shot body or a streamed slice).
    pub(crate) fn record_busy(&self, busy: Duration) {
        let nanos = busy.as_nanos().min(u128::from(u64::MAX)) as u64;
        self.inner.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// What one whole response of `kind` cost: `busy` to turn `bytes_in` into `bytes_out`.
    pub(crate) fn record_cost(&self, kind: Kind, busy: Duration, bytes_in: u64, bytes_out: u64) {
        let saved = bytes_in.saturating_sub(bytes_out).max(1) as f64;
        let cost = busy.as_nanos() as f64 / saved;
        let slot = &self.inner.cost[kind.0 as usize];
        let old = f64::from_bits(slot.load(Ordering::Relaxed));
        // A moving average over ~8 responses; a racing update loses one sample, no more.
        let new = if old == 0.0 {
            cost
        } else {
            old + (cost - old) / 8.0
        };
        slot.store(new.max(f64::MIN_POSITIVE).to_bits(), Ordering::Relaxed);
    }

    /// The level for one response of `coding` and `kind` configured at `level`, `None` to
    /// send it unencoded. Closes the window when it is due.
    pub(crate) fn level(
        &self,
        coding: ContentCoding,
        level: CompressionLevel,
        kind: Kind,
    ) -> Option<CompressionLevel> {
        self.tick();
        let i = &self.inner;
        let step = i.step.load(Ordering::Relaxed);
        if step >= SHED && self.costly(kind) {
            i.shed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let configured = i32::from(level.resolve(coding).get());
        let fastest = i32::from(CompressionLevel::Fastest.resolve(coding).get());
        let stepped = stepped(configured, fastest, step.min(STEPS));
        i.levels[coding.index()].store(stepped, Ordering::Relaxed);
        Some(CompressionLevel::Precise(stepped))
    }

    /// Closes the current window if it has run its length: one thread measures, the others
    /// go on.
    fn tick(&self) {
        let i = &self.inner;
        let Ok(mut window) = i.window_state.try_lock() else {
            return;
        };
        let elapsed = window.started.elapsed();
        if elapsed < i.window {
            return;
        }
        window.started = Instant::now();
        let busy = i.busy_nanos.swap(0, Ordering::Relaxed) as f64;
        let share = busy / (elapsed.as_nanos() as f64 * i.cores);
        i.share_ppm.store((share * 1e6) as u64, Ordering::Relaxed);
        let step = i.step.load(Ordering::Relaxed);
        if share > i.step_down_above && step < SHED {
            window.calm = 0;
            i.step.store(step + 1, Ordering::Relaxed);
            i.steps_down.fetch_add(1, Ordering::Relaxed);
        } else if share < i.step_up_below && step > 0 {
            window.calm += 1;
            if window.calm >= i.calm_windows {
                window.calm = 0;
                i.step.store(step - 1, Ordering::Relaxed);
                i.steps_up.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            window.calm = 0;
        }
    }
}

impl Governor {
    /// Whether `kind` costs at least the median of the kinds seen per byte saved (a kind
    /// not seen yet is not shed: nothing says it is dear).
    fn costly(&self, kind: Kind) -> bool {
        let cost = |slot: &AtomicU64| f64::from_bits(slot.load(Ordering::Relaxed));
        let mine = cost(&self.inner.cost[kind.0 as usize]);
        if mine == 0.0 {
            return false;
        }
        let mut seen = [0.0; KINDS];
        let mut n = 0;
        for c in self.inner.cost.iter().map(cost).filter(|&c| c > 0.0) {
            seen[n] = c;
            n += 1;
        }
        seen[..n].sort_by(f64::total_cmp);
        mine >= seen[(n - 1) / 2]
    }
}

/// A kind of response, for the cost per byte saved: its media type's family by its size
/// class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Kind(u8);

impl Kind {
    /// The kind of a response with these headers and (known) size.
    pub(crate) fn of(headers: &http::HeaderMap, size: Option<u64>) -> Kind {
        let media = headers
            .get(http::header::CONTENT_TYPE)
            .map_or(&b""[..], |value| {
                crate::headers::media_type(value.as_bytes())
            });
        let family = match media {
            m if crate::headers::ends_with_ci(m, b"json") => 0,
            m if crate::headers::starts_with_ci(m, b"text/html") => 1,
            m if crate::headers::ends_with_ci(m, b"javascript")
                || crate::headers::ends_with_ci(m, b"css") =>
            {
                2
            }
            m if crate::headers::starts_with_ci(m, b"text/") => 3,
            _ => 4,
        };
        let class = match size {
            Some(size) if size <= 4 << 10 => 0,
            Some(size) if size <= 64 << 10 => 1,
            _ => 2,
        };
        Kind(family * 3 + class)
    }
}

/// A streamed response's account with the governor: every slice's time as it is spent,
/// and the whole response's cost per byte saved when it ends.
#[derive(Debug)]
pub(crate) struct Timed {
    governor: Governor,
    kind: Kind,
    busy: Duration,
}

impl Timed {
    pub(crate) fn new(governor: Governor, kind: Kind) -> Self {
        Timed {
            governor,
            kind,
            busy: Duration::ZERO,
        }
    }

    /// Runs `work`, counting its time as compression.
    pub(crate) fn time<R>(&mut self, work: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let result = work();
        let busy = started.elapsed();
        self.governor.record_busy(busy);
        self.busy += busy;
        result
    }

    /// The response is over: what it cost in all.
    pub(crate) fn end(&self, bytes_in: u64, bytes_out: u64) {
        (self.governor).record_cost(self.kind, self.busy, bytes_in, bytes_out);
    }
}

/// `configured` moved `step` quarters of the way to `fastest` (rounded towards `fastest`).
fn stepped(configured: i32, fastest: i32, step: u8) -> i32 {
    let gap = (configured - fastest).max(0);
    let moved = (gap * i32::from(step) + i32::from(STEPS) - 1) / i32::from(STEPS);
    configured - moved
}

#[cfg(test)]
mod tests;
