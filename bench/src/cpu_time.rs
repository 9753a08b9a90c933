//! The calling thread's CPU time, for measuring programs that share the machine: time
//! spent descheduled does not count (Linux; wall time elsewhere).

/// This thread's CPU time in seconds, from an arbitrary start.
#[cfg(target_os = "linux")]
pub fn now() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, out: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.sec as f64 + t.nsec as f64 * 1e-9
}

/// Wall time in seconds since the first call.
#[cfg(not(target_os = "linux"))]
pub fn now() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

/// The best of `rounds` rounds' microseconds per item of `run` over `items` items.
pub fn best_micros(rounds: usize, items: usize, mut run: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let started = now();
            run();
            (now() - started) * 1e6 / items.max(1) as f64
        })
        .fold(f64::MAX, f64::min)
}
