//! The governor's steps, hysteresis and shedding, driven with recorded busy time.

use std::thread::sleep;
use std::time::Duration;

use http::HeaderMap;
use http::header::CONTENT_TYPE;

use super::*;

const WINDOW: Duration = Duration::from_millis(5);

fn governor() -> Governor {
    Governor::new().cores(1).window(WINDOW)
}

fn json(size: u64) -> Kind {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, "application/json".parse().unwrap());
    Kind::of(&headers, Some(size))
}

/// One window that closes with compression busy the whole time (or idle).
fn window(governor: &Governor, busy: bool) {
    if busy {
        // Far more than a window of one core: the share is over 1 whatever the sleep took.
        governor.record_busy(Duration::from_secs(1));
    }
    sleep(WINDOW + Duration::from_millis(1));
    let _ = governor.level(ContentCoding::Gzip, CompressionLevel::Default, json(1000));
}

fn level(governor: &Governor, coding: ContentCoding, level: i32) -> Option<CompressionLevel> {
    governor.level(coding, CompressionLevel::Precise(level), json(1000))
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
    assert_eq!(governor.stats().step, 0);
    assert_eq!(
        level(&governor, ContentCoding::Br, 9),
        Some(CompressionLevel::Precise(9))
    );
    let stats = governor.stats();
    assert_eq!((stats.steps_down, stats.steps_up, stats.shed), (0, 0, 0));
    assert!(
        stats.levels.contains(&(ContentCoding::Br, Some(9))),
        "{stats:?}"
    );
}

#[test]
fn under_load_it_steps_down_one_window_at_a_time_then_sheds() {
    let governor = governor();
    let mut levels = Vec::new();
    for _ in 0..4 {
        window(&governor, true);
        levels.push(level(&governor, ContentCoding::Br, 9));
    }
    let quality = |q| Some(CompressionLevel::Precise(q));
    assert_eq!(levels, [quality(6), quality(4), quality(2), quality(0)]);
    window(&governor, true);
    assert_eq!(governor.stats().step, SHED);
    // The one kind seen is the dearest there is: shed.
    governor.record_cost(json(1000), Duration::from_micros(50), 1000, 300);
    assert_eq!(level(&governor, ContentCoding::Br, 9), None);
    // It stays there under load: no step past shedding.
    window(&governor, true);
    assert_eq!(governor.stats().step, SHED);
    assert_eq!(governor.stats().steps_down, 5);
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
    let governor = governor();
    for _ in 0..5 {
        window(&governor, true);
    }
    let small = json(1000);
    let mut html = HeaderMap::new();
    html.insert(CONTENT_TYPE, "text/html".parse().unwrap());
    let big_html = Kind::of(&html, Some(1 << 20));
    let mut css = HeaderMap::new();
    css.insert(CONTENT_TYPE, "text/css".parse().unwrap());
    let css = Kind::of(&css, Some(20_000));
    // Per byte saved: the small JSON is dear, the big page cheap, the stylesheet between.
    governor.record_cost(small, Duration::from_micros(40), 1000, 400);
    governor.record_cost(big_html, Duration::from_millis(2), 1 << 20, 100_000);
    governor.record_cost(css, Duration::from_micros(60), 20_000, 4000);
    let gzip = |kind| governor.level(ContentCoding::Gzip, CompressionLevel::Default, kind);
    assert_eq!(gzip(small), None);
    assert_eq!(gzip(css), None, "the median is shed too");
    assert_eq!(gzip(big_html), Some(CompressionLevel::Precise(1)));
    // A kind never seen is not shed.
    assert!(gzip(Kind::of(&HeaderMap::new(), None)).is_some());
    assert_eq!(governor.stats().shed, 2);
}
