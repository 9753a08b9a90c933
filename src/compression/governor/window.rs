//! Closing a measurement window: the share of the cores compression took, and the step
//! that follows from it.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::{Governor, SHED};

/// Calm windows in a row before a step back up.
const CALM_WINDOWS: u32 = 3;

/// The window being measured.
#[derive(Debug)]
pub(super) struct Window {
    started: Instant,
    /// Windows in a row under the lower share.
    calm: u32,
}

impl Window {
    pub(super) fn new() -> Self {
        Window {
            started: Instant::now(),
            calm: 0,
        }
    }
}

impl Governor {
    /// Closes the current window if it has run its length: one thread measures, the others
    /// go on without waiting.
    pub(super) fn tick(&self) {
        let i = &self.inner;
        let Ok(mut window) = i.window.try_lock() else {
            return;
        };
        let elapsed = window.started.elapsed();
        if elapsed < i.config.window {
            return;
        }
        window.started = Instant::now();
        let busy = i.busy_nanos.swap(0, Ordering::Relaxed) as f64;
        let share = busy / (elapsed.as_nanos() as f64 * i.config.cores);
        i.share_ppm.store((share * 1e6) as u64, Ordering::Relaxed);
        let step = i.step.load(Ordering::Relaxed);
        if share > i.config.step_down_above && step < SHED {
            window.calm = 0;
            i.step.store(step + 1, Ordering::Relaxed);
            i.steps_down.fetch_add(1, Ordering::Relaxed);
        } else if share < i.config.step_up_below && step > 0 {
            window.calm += 1;
            if window.calm >= CALM_WINDOWS {
                window.calm = 0;
                i.step.store(step - 1, Ordering::Relaxed);
                i.steps_up.fetch_add(1, Ordering::Relaxed);
                if step == 1 {
                    // Back at the configured levels: learn the floors afresh next time.
                    i.costs.forget_floors();
                }
            }
        } else {
            window.calm = 0;
        }
    }
}
