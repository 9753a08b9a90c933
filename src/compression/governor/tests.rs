//! The governor's steps, hysteresis, growth bound and shedding, driven with recorded busy
//! time and recorded responses.

use std::thread::sleep;
use std::time::Duration;

use http::HeaderMap;
use http::header::CONTENT_TYPE;

use super::*;
// br as a sample coding on a 0-11 scale (the governor has no policy of its own for it).
use ContentCoding::{Br, Gzip};

const WINDOW: Duration = Duration::from_millis(5);

fn governor() -> Governor {
    Governor::new().cores(1).window(WINDOW)
}

fn kind(media: &str, size: u64) -> ResponseKind {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, media.parse().unwrap());
    ResponseKind::of(&headers, Some(size))
}

fn json() -> ResponseKind {
    kind("application/json", 1000)
}

/// One window that closes with compression busy the whole time (or idle).
fn window(governor: &Governor, busy: bool) {
    if busy {
        // Far more than a window of one core: the share is over 1 whatever the sleep took.
        governor.record_busy(Duration::from_secs(1));
    }
    sleep(WINDOW + Duration::from_millis(1));
    governor.tick();
}

fn level(governor: &Governor, coding: ContentCoding, level: i32) -> Option<i32> {
    let (level, _) = governor.level(coding, CompressionLevel::Precise(level), json())?;
    match level {
        CompressionLevel::Precise(n) => Some(n),
        other => panic!("{other:?}"),
    }
}

/// `n` responses of `kind` compressed at `step`: `out` bytes of 1000 each, in `busy`.
fn responses(governor: &Governor, kind: ResponseKind, step: u8, n: u32, out: u64, busy: Duration) {
    for _ in 0..n {
        let mut timed = Timed::new(governor.clone(), kind, Br, step);
        sleep(busy);
        timed.add(busy);
        timed.end(1000, out);
    }
}

#[test]
fn a_step_is_a_quarter_of_the_way_to_the_fastest_level() {
    assert_eq!(
        (0..=4).map(|s| stepped(9, 0, s)).collect::<Vec<_>>(),
        [9, 6, 4, 2, 0]
    );
    assert_eq!(
        (0..=4).map(|s| stepped(12, 1, s)).collect::<Vec<_>>(),
        [12, 9, 6, 3, 1]
    );
    // Already at (or under) the fastest: nowhere to go.
    assert_eq!(stepped(1, 1, 4), 1);
    assert_eq!(stepped(0, 1, 2), 0);
}

#[test]
fn at_light_load_the_levels_stay_as_configured() {
    let governor = governor();
    for _ in 0..5 {
        governor.record_busy(Duration::from_micros(10));
        window(&governor, false);
    }
    assert_eq!(level(&governor, Gzip, 9), Some(9));
    let stats = governor.stats();
    assert_eq!(
        (stats.step, stats.steps_down, stats.steps_up, stats.shed),
        (0, 0, 0, 0)
    );
    assert!(stats.levels.contains(&(Gzip, Some(9))), "{stats:?}");
}

#[cfg(feature = "br")]
#[test]
fn under_load_it_steps_down_one_window_at_a_time_then_sheds() {
    let governor = governor().max_growth(f64::INFINITY);
    let mut levels = Vec::new();
    for _ in 0..4 {
        window(&governor, true);
        levels.push(level(&governor, Br, 9));
    }
    assert_eq!(levels, [Some(6), Some(4), Some(2), Some(0)]);
    window(&governor, true);
    assert_eq!(governor.stats().step, SHED);
    // The one kind seen is the dearest there is: shed.
    responses(&governor, json(), 4, 1, 300, Duration::ZERO);
    assert_eq!(level(&governor, Br, 9), None);
    // It stays there under load: no step past shedding.
    window(&governor, true);
    let stats = governor.stats();
    assert_eq!((stats.step, stats.steps_down, stats.shed), (SHED, 5, 1));
}

#[cfg(all(feature = "br", feature = "zstd"))]
#[test]
fn a_coding_stops_where_its_output_would_grow_too_much() {
    let governor = governor().max_growth(1.2);
    // At the configured level, 300 bytes out of 1000.
    responses(&governor, json(), 0, 4, 300, Duration::ZERO);
    window(&governor, true);
    assert_eq!(level(&governor, Br, 9), Some(6));
    responses(&governor, json(), 1, 4, 330, Duration::ZERO); // 1.1x: fine
    window(&governor, true);
    assert_eq!(level(&governor, Br, 9), Some(4));
    responses(&governor, json(), 2, 4, 400, Duration::ZERO); // 1.33x: too much
    window(&governor, true);
    window(&governor, true);
    assert_eq!(
        level(&governor, Br, 9),
        Some(6),
        "back to the last step in bounds"
    );
    // Another coding has learned no bound: it goes on down.
    assert_eq!(level(&governor, ContentCoding::Zstd, 12), Some(1));
    // At the bottom, br is not shed (its bound held it above its fastest level).
    window(&governor, true);
    assert_eq!(governor.stats().step, SHED);
    assert_eq!(level(&governor, Br, 9), Some(6));
}

#[test]
fn it_steps_back_up_only_after_calm_windows() {
    let governor = governor();
    window(&governor, true);
    window(&governor, true);
    assert_eq!(governor.stats().step, 2);
    window(&governor, false);
    window(&governor, false);
    assert_eq!(governor.stats().step, 2, "two calm windows are not enough");
    window(&governor, false);
    assert_eq!(governor.stats().step, 1);
    // A busy window resets the count.
    window(&governor, false);
    window(&governor, true);
    assert_eq!(governor.stats().step, 2);
    let stats = governor.stats();
    assert_eq!((stats.steps_down, stats.steps_up), (3, 1));
}

#[test]
fn shedding_spares_the_kinds_that_cost_least_per_byte_saved() {
    let governor = governor().max_growth(f64::INFINITY);
    for _ in 0..5 {
        window(&governor, true);
    }
    let small = json();
    let big_html = kind("text/html", 1 << 20);
    let css = kind("text/css", 20_000);
    // Per byte saved: the small JSON is dear, the big page cheap, the stylesheet between.
    responses(&governor, small, 4, 1, 400, Duration::from_millis(3));
    responses(&governor, big_html, 4, 1, 100, Duration::ZERO);
    responses(&governor, css, 4, 1, 400, Duration::from_millis(1));
    let gzip = |kind| governor.level(Gzip, CompressionLevel::Default, kind);
    assert_eq!(gzip(small), None);
    assert_eq!(gzip(css), None, "the median is shed too");
    assert_eq!(gzip(big_html), Some((CompressionLevel::Precise(1), STEPS)));
    // A kind never seen is not shed.
    assert!(gzip(ResponseKind::of(&HeaderMap::new(), None)).is_some());
    assert_eq!(governor.stats().shed, 2);
}

#[test]
fn an_idle_governor_reads_as_idle() {
    let governor = governor();
    window(&governor, true);
    assert!(governor.inner.share_ppm.load(Ordering::Relaxed) > 900_000);
    // No response since: the next read closes the window that spans the pause.
    sleep(WINDOW + Duration::from_millis(1));
    assert_eq!(governor.stats().busy_share, 0.0);
}
