//! Waiting in tests: for a condition, or for a future without a runtime.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Polls `cond` every 10 ms for up to 5 s; true if it held.
#[cfg(feature = "http")]
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

/// What `read` returns once `done` holds for it, polling every 10 ms from this thread (for
/// work another thread finishes: a background worker), or its last value after 30 s.
pub fn settle<T>(mut read: impl FnMut() -> T, done: impl Fn(&T) -> bool) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let value = read();
        if done(&value) || std::time::Instant::now() > deadline {
            return value;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Polls `future` to completion with a no-op waker. Everything it waits on is in memory and
/// self-waking, so a long run of Pending means a hang.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("future still pending after 1,000,000 polls");
}
