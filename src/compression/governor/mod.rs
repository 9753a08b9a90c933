//! [`Governor`]: trades ratio for latency when compression takes too much of the CPU.

mod costs;
mod window;

use std::sync::atomic::{AtomicI32, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::CompressionLevel;
use crate::{CODINGS, ContentCoding};

use costs::Costs;
pub(crate) use costs::{ResponseKind, Timed};
use window::Window;

/// Steps from the configured levels down to each coding's fastest; one more step sheds.
const STEPS: u8 = 4;
/// The step past the fastest levels: the kinds of response that cost the most per byte
/// saved go unencoded.
const SHED: u8 = STEPS + 1;

/// An opt-in load governor for [`CompressionLayer::adaptive`](super::CompressionLayer::adaptive).
///
/// It measures the time the layer's own compression takes (one-shot bodies and streamed
/// slices, on whatever thread runs them) against the wall time of the cores it may use,
/// over short windows. When compression takes more than the upper share of those cores,
/// it steps the levels down, each coding a quarter of the way to its fastest level per
/// window, but never so far that a coding sends more than 1.2 times the bytes its
/// configured level sent (learned
/// from the responses at each step). When every coding is at its fastest level and that
/// is still too much, one more step stops compressing the kinds of response (media type
/// family by size class) whose compression costs the most time per byte it saves: those at
/// or above the median of the kinds seen, all of them when one kind is all the traffic.
/// When the share stays below the lower bound for three windows in a row, it steps back
/// up, one step at a time: the gap between the bounds and the wait are its hysteresis. At
/// light load it never moves, so the bytes are the configured levels' own.
///
/// It needs no timer and no runtime: windows close on the responses that arrive.
///
/// ```
/// use tower_gzip::compression::{CompressionLayer, Governor};
/// use tower_gzip::{CompressionLevel, ContentCoding};
///
/// let governor = Governor::new().shares(0.5, 0.25);
/// let layer = CompressionLayer::new()
///     .level(ContentCoding::Zstd, CompressionLevel::Precise(9))
///     .adaptive(governor.clone());
/// assert_eq!(governor.stats().step, 0);
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct Governor {
    inner: Arc<Inner>,
}

#[derive(Clone, Copy, Debug)]
struct Config {
    step_down_above: f64,
    step_up_below: f64,
    window: Duration,
    cores: f64,
    max_growth: f64,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    busy_nanos: AtomicU64,
    step: AtomicU8,
    steps_down: AtomicU64,
    steps_up: AtomicU64,
    shed: AtomicU64,
    /// The last window's share, in parts per million.
    share_ppm: AtomicU64,
    /// The last level used per coding, by [`ContentCoding::index`].
    levels: [AtomicI32; CODINGS],
    costs: Costs,
    window: Mutex<Window>,
}

/// What a [`Governor`] is doing, from [`Governor::stats`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GovernorStats {
    /// 0: the configured levels; 1 to 4: stepped down (4: as far as each coding may go);
    /// 5: also sending the dearest kinds of response unencoded.
    pub step: u8,
    /// The share of the cores' time compression took in the last closed window (0 to 1);
    /// after a pause, the window that spans it.
    pub busy_share: f64,
    /// Steps taken down since the start.
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
    /// Steps down above 50% of the cores' time in compression, back up below 25% for three
    /// windows of 200 ms, over the cores this process may run on, letting no coding grow
    /// its output past 1.2x.
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::from_config(Config {
            step_down_above: 0.5,
            step_up_below: 0.25,
            window: Duration::from_millis(200),
            cores: cores as f64,
            max_growth: 1.2,
        })
    }

    fn from_config(config: Config) -> Self {
        Governor {
            inner: Arc::new(Inner {
                config,
                busy_nanos: AtomicU64::new(0),
                step: AtomicU8::new(0),
                steps_down: AtomicU64::new(0),
                steps_up: AtomicU64::new(0),
                shed: AtomicU64::new(0),
                share_ppm: AtomicU64::new(0),
                levels: std::array::from_fn(|_| AtomicI32::new(i32::MIN)),
                costs: Costs::default(),
                window: Mutex::new(Window::new()),
            }),
        }
    }

    fn with(self, change: impl FnOnce(&mut Config)) -> Self {
        let mut config = self.inner.config;
        change(&mut config);
        Self::from_config(config)
    }

    /// The shares of the cores' time spent compressing above which it steps down and below
    /// which it steps back up (defaults 0.5 and 0.25).
    pub fn shares(self, step_down_above: f64, step_up_below: f64) -> Self {
        self.with(|c| {
            c.step_down_above = step_down_above;
            c.step_up_below = step_up_below.min(step_down_above);
        })
    }

    /// How long each measurement lasts (default 200 ms).
    #[cfg(test)]
    pub(crate) fn window(self, window: Duration) -> Self {
        self.with(|c| c.window = window)
    }

    /// The cores compression may use (default: those this process may run on).
    #[cfg(test)]
    pub(crate) fn cores(self, cores: usize) -> Self {
        self.with(|c| c.cores = cores.max(1) as f64)
    }

    /// How much more a coding may send than at its configured level (default 1.2: at most
    /// 20% more bytes). `f64::INFINITY` lets every coding go to its fastest level.
    #[cfg(test)]
    pub(crate) fn max_growth(self, factor: f64) -> Self {
        self.with(|c| c.max_growth = factor.max(1.0))
    }

    /// What it is doing now. A window that has run its length closes here too, so an idle
    /// layer reads as idle, not as its last busy window.
    pub fn stats(&self) -> GovernorStats {
        self.tick();
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

    /// Whether it has stepped levels down: the layers' compressing is over its share of
    /// the cores.
    pub fn under_pressure(&self) -> bool {
        self.inner.step.load(Ordering::Relaxed) > 0
    }

    /// Adds time spent compressing (a one-shot body or a streamed slice).
    pub(crate) fn record_busy(&self, busy: Duration) {
        let nanos = busy.as_nanos().min(u128::from(u64::MAX)) as u64;
        self.inner.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The level for one response of `coding` and `kind` configured at `level`, `None` to
    /// send it unencoded; and the step it is at, for [`Timed`]. Closes the window when due.
    pub(crate) fn level(
        &self,
        coding: ContentCoding,
        level: CompressionLevel,
        kind: ResponseKind,
    ) -> Option<(CompressionLevel, u8)> {
        self.tick();
        let i = &self.inner;
        let global = i.step.load(Ordering::Relaxed);
        let floor = i.costs.floor(coding);
        if global >= SHED && floor == STEPS && i.costs.costly(kind) {
            i.shed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let step = global.min(STEPS).min(floor);
        let configured = i32::from(level.native(coding));
        let fastest = i32::from(CompressionLevel::Fastest.native(coding));
        let stepped = stepped(configured, fastest, step);
        if i.levels[coding.index()].swap(stepped, Ordering::Relaxed) != stepped {
            level_changed(coding, stepped);
        }
        Some((CompressionLevel::Precise(stepped), step))
    }
}

/// With the `metrics` feature, the level gauge follows the governor (only on a change: the
/// gauge's lookup is not free).
fn level_changed(coding: ContentCoding, level: i32) {
    #[cfg(feature = "metrics")]
    crate::telemetry::publish_level(coding, level);
    let _ = (coding, level);
}

/// `configured` moved `step` quarters of the way to `fastest` (rounded towards `fastest`).
fn stepped(configured: i32, fastest: i32, step: u8) -> i32 {
    let gap = (configured - fastest).max(0);
    let moved = (gap * i32::from(step) + i32::from(STEPS) - 1) / i32::from(STEPS);
    configured - moved
}

#[cfg(test)]
mod tests;
