//! Unit tests of the pool's guard and shelves (tests/pool.rs tests the pool through the
//! public codecs).

use std::panic::{AssertUnwindSafe, catch_unwind};

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};

use super::*;
use crate::CompressionLevel;
use crate::ContentCoding;

/// The deflate level `n` as the pool tags it.
fn level(n: i32) -> Level {
    CompressionLevel::Precise(n).resolve(ContentCoding::Gzip)
}

fn compressor(pool: &CodecPool, n: i32) -> Pooled<Compress> {
    let level = level(n);
    pool.take(level, || {
        Compress::new(Compression::new(u32::from(level.get())), false)
    })
}

fn decompressor(pool: &CodecPool) -> Pooled<Decompress> {
    pool.take(Level::NONE, || Decompress::new(false))
}

/// `field` of the deflate compressors' counters and of the decompressors'.
fn deflate(s: &crate::pool::PoolStats, field: fn(&KindStats) -> u64) -> (u64, u64) {
    let compressors = s.kind(crate::pool::PoolKind::DeflateCompressors);
    let decompressors = s.kind(crate::pool::PoolKind::DeflateDecompressors);
    (field(&compressors), field(&decompressors))
}

fn balanced(s: KindStats) {
    assert_eq!(s.created + s.reused, s.returned + s.discarded, "{s:?}");
    assert_eq!(s.in_use(), 0);
}

/// Deterministic noise.
fn message(len: usize, seed: u32) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

/// Compressible JSON-like text.
fn json(len: usize) -> Vec<u8> {
    let mut s = String::from("[");
    let mut i = 0u64;
    while s.len() < len {
        s.push_str(&format!(
            "{{\"id\":{i},\"name\":\"user{}\",\"active\":{}}},",
            i * 7919 % 1000,
            i % 3 == 0
        ));
        i += 1;
    }
    s.truncate(len);
    s.into_bytes()
}

/// A whole raw deflate stream of `data` through a pooled compressor, then inflated by a
/// pooled decompressor: the pool still hands out working states.
fn round_trip(pool: &CodecPool, data: &[u8]) {
    let mut wire = Vec::with_capacity(data.len() + 64);
    compressor(pool, 6)
        .compress_vec(data, &mut wire, FlushCompress::Finish)
        .unwrap();
    let mut plain = Vec::with_capacity(data.len());
    let status = decompressor(pool)
        .decompress_vec(&wire, &mut plain, FlushDecompress::Finish)
        .unwrap();
    assert_eq!(status, flate2::Status::StreamEnd);
    assert_eq!(plain, data);
}

#[test]
fn guard_dropped_while_panicking_is_discarded_and_lock_survives() {
    let pool = CodecPool::builder().max_idle(4).build();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut c = compressor(&pool, 6);
        let mut out = [0u8; 64];
        c.compress(b"half", &mut out, FlushCompress::None).unwrap();
        let _d = decompressor(&pool);
        panic!("mid-stream");
    }));
    assert!(result.is_err());
    let s = pool.stats();
    assert_eq!(deflate(&s, |k| k.discarded), (1, 1));
    assert_eq!(deflate(&s, |k| k.idle as u64), (0, 0));

    // The pool still works: the shelves are not poisoned.
    round_trip(&pool, b"after the panic");
    let s = pool.stats();
    assert_eq!(s.kind(crate::pool::PoolKind::DeflateCompressors).idle, 1);
    assert_eq!(s.kind(crate::pool::PoolKind::DeflateDecompressors).idle, 1);
    balanced(s.kind(crate::pool::PoolKind::DeflateCompressors));
    balanced(s.kind(crate::pool::PoolKind::DeflateDecompressors));

    // A panic on another thread while its guards are out leaves the pool usable too.
    let other = pool.clone();
    let joined = std::thread::spawn(move || {
        let _c = compressor(&other, 9);
        panic!("thread dies holding a guard");
    })
    .join();
    assert!(joined.is_err());
    let _ = compressor(&pool, 9);
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DeflateCompressors)
            .discarded,
        2
    );
}

#[test]
fn a_poisoned_shelf_lock_is_recovered() {
    let pool = CodecPool::builder().max_idle(4).build();
    let shelf = pool.inner.shelf::<Compress>();
    let poisoner = catch_unwind(AssertUnwindSafe(|| {
        let _held = shelf.idle.lock().unwrap();
        panic!("poison the shelf");
    }));
    assert!(poisoner.is_err());
    assert!(shelf.idle.is_poisoned());
    round_trip(&pool, b"through a poisoned lock");
    let s = pool.stats().kind(crate::pool::PoolKind::DeflateCompressors);
    assert_eq!((s.created, s.returned, s.idle), (1, 1, 1));
    drop(compressor(&pool, 6));
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DeflateCompressors)
            .reused,
        1
    );
}

#[test]
fn discard_counts_and_does_not_return() {
    let pool = CodecPool::builder().max_idle(4).build();
    compressor(&pool, 6).discard();
    decompressor(&pool).discard();
    let s = pool.stats();
    assert_eq!(deflate(&s, |k| k.discarded), (1, 1));
    assert_eq!(deflate(&s, |k| k.returned), (0, 0));
    assert_eq!(deflate(&s, |k| k.idle as u64), (0, 0));
    balanced(s.kind(crate::pool::PoolKind::DeflateCompressors));
    balanced(s.kind(crate::pool::PoolKind::DeflateDecompressors));
    // A guard knows its pool.
    let c = compressor(&pool, 1);
    assert_eq!(c.pool.max_idle(), 4);
    assert_eq!(c.level, level(1));
    assert!(format!("{c:?}").contains("level"));
}

/// A state whose reset fails is dropped, not shelved.
struct Unresettable;

impl PooledState for Unresettable {
    // The last slot: no codec's kind.
    const KIND: Kind = Kind::new(Kind::SLOTS - 1);

    fn reset(&mut self) -> bool {
        false
    }
}

#[test]
fn a_state_that_cannot_be_reset_is_discarded() {
    let pool = CodecPool::builder().max_idle(4).build();
    let before = pool.kind_stats(Unresettable::KIND);
    drop(pool.take(Level::NONE, || Unresettable));
    let after = pool.kind_stats(Unresettable::KIND);
    assert_eq!(after.created - before.created, 1);
    assert_eq!(after.discarded - before.discarded, 1);
    assert_eq!(after.returned, before.returned);
    assert_eq!(after.idle, 0);
}

#[test]
fn reset_state_matches_a_fresh_state_byte_for_byte() {
    let data = json(20 * 1024);
    let dirt = message(5000, 7);
    for n in 0..=9 {
        let pool = CodecPool::builder().max_idle(1).build();
        // Dirty the state: a half-finished stream, dropped.
        {
            let mut c = compressor(&pool, n);
            let mut out = vec![0u8; 10_000];
            c.compress(&dirt, &mut out, FlushCompress::Sync).unwrap();
        }
        let mut fresh = Compress::new(Compression::new(n as u32), false);
        let mut expected = Vec::with_capacity(30_000);
        fresh
            .compress_vec(&data, &mut expected, FlushCompress::Finish)
            .unwrap();
        let mut c = compressor(&pool, n);
        assert_eq!(c.total_in(), 0);
        let mut got = Vec::with_capacity(30_000);
        c.compress_vec(&data, &mut got, FlushCompress::Finish)
            .unwrap();
        assert_eq!(got, expected, "level {n}");
        drop(c);
        assert_eq!(
            pool.stats()
                .kind(crate::pool::PoolKind::DeflateCompressors)
                .reused,
            1
        );
    }

    // A decompressor left mid-stream (and one left after an error) comes back fresh.
    let pool = CodecPool::builder().max_idle(1).build();
    let mut wire = Vec::with_capacity(30_000);
    Compress::new(Compression::default(), false)
        .compress_vec(&data, &mut wire, FlushCompress::Finish)
        .unwrap();
    for dirty_input in [&wire[..wire.len() / 2], &[0xff, 0xff][..]] {
        {
            let mut d = decompressor(&pool);
            let mut out = vec![0u8; 100];
            let _ = d.decompress(dirty_input, &mut out, FlushDecompress::None);
        }
        let mut d = decompressor(&pool);
        assert_eq!(d.total_out(), 0);
        let mut out = Vec::with_capacity(data.len());
        let status = d
            .decompress_vec(&wire, &mut out, FlushDecompress::Finish)
            .unwrap();
        assert_eq!(status, flate2::Status::StreamEnd);
        assert_eq!(out, data);
    }
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DeflateDecompressors)
            .reused,
        3
    );
}

/// A state that names itself, to tell which one a draw found.
struct Numbered(u32);

impl PooledState for Numbered {
    const KIND: Kind = Kind::new(Kind::SLOTS - 2);

    fn reset(&mut self) -> bool {
        true
    }
}

/// Draws a `Numbered`, made as `n` if the shelf gives none, and returns its number.
fn draw_numbered(pool: &CodecPool, n: u32) -> u32 {
    pool.take(Level::NONE, || Numbered(n)).0
}

#[test]
fn a_thread_draws_its_own_state_and_leaves_another_threads_lone_one() {
    let pool = CodecPool::builder().max_idle(3).build();
    let on_another_thread =
        |n| std::thread::scope(|s| s.spawn(|| draw_numbered(&pool, n)).join().unwrap());
    assert_eq!(draw_numbered(&pool, 1), 1);
    // Another thread finds only this thread's state, and the shelf has room: it makes its own.
    assert_eq!(on_another_thread(2), 2);
    // Each thread finds its own again, whichever was given back last.
    assert_eq!(draw_numbered(&pool, 3), 1);
    let s = pool.kind_stats(Numbered::KIND);
    assert_eq!((s.created, s.reused, s.idle), (2, 1, 2));
    // With two idle, a thread with none of its own takes the one given back last.
    assert_eq!(on_another_thread(4), 1);
    assert_eq!(pool.kind_stats(Numbered::KIND).created, 2);
}

#[test]
fn a_full_shelf_gives_another_threads_lone_state() {
    let pool = CodecPool::builder().max_idle(1).build();
    assert_eq!(draw_numbered(&pool, 1), 1);
    let drawn = std::thread::scope(|s| s.spawn(|| draw_numbered(&pool, 2)).join().unwrap());
    assert_eq!(drawn, 1);
}

#[test]
fn shelves_are_per_level_and_capped_across_levels() {
    let pool = CodecPool::builder().max_idle(2).build();
    let held: Vec<_> = [1, 6, 9].iter().map(|&n| compressor(&pool, n)).collect();
    drop(held);
    // Two of the three fit; the level-9 one, dropped last, is discarded.
    let s = pool.stats().kind(crate::pool::PoolKind::DeflateCompressors);
    assert_eq!((s.returned, s.discarded, s.idle), (2, 1, 2));
    // A level-9 checkout finds nothing at its level and builds one.
    drop(compressor(&pool, 9));
    let s = pool.stats().kind(crate::pool::PoolKind::DeflateCompressors);
    assert_eq!((s.created, s.reused), (4, 0));
    drop(compressor(&pool, 6));
    drop(compressor(&pool, 1));
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DeflateCompressors)
            .reused,
        2
    );
    balanced(pool.stats().kind(crate::pool::PoolKind::DeflateCompressors));
}

/// A stream whose park was refused and that finishes up while still holding its state (zstd
/// ends its frame) has ended no pause: its next pause must not count as a short one. (It
/// did, and every SSE stream with 5 s between events parked a ~1 MB zstd context.)
#[test]
fn a_refused_park_does_not_make_the_next_pause_short() {
    let pool = CodecPool::new();
    let mut hold: Hold<Compress> = Hold::default();
    hold.hold(compressor(&pool, 6));
    // The first pause never parks: its length is unknown.
    assert!(!hold.would_park());
    let state = hold.park().expect_err("a first pause releases");
    hold.hold(state);
    // Finishing up calls `resume` while the state is held: no pause ended.
    assert!(hold.resume().is_held());
    assert!(!hold.would_park(), "no pause was measured");
    hold.release_paused();
    // The next event comes at once: that pause was short, so the one after parks.
    assert!(!hold.resume().is_held());
    hold.hold(compressor(&pool, 6));
    assert!(hold.would_park());
    assert!(hold.park().is_ok());
}

/// A stream whose pauses are short: its first pause releases, the next event comes at
/// once, and it holds a state again.
fn short_paused(pool: &CodecPool) -> Hold<Compress> {
    let mut hold: Hold<Compress> = Hold::default();
    hold.hold(compressor(pool, 6));
    drop(hold.park().expect_err("a first pause releases"));
    assert!(!hold.resume().is_held());
    hold.hold(compressor(pool, 6));
    hold
}

/// `would_park` says no when every idle place holds a parked state, so a zstd stream ends
/// its frame at once instead of flushing for a park that would be refused (3 bytes a
/// pause at 256 SSE streams).
#[test]
fn would_park_needs_a_place() {
    let pool = CodecPool::builder().max_idle(1).build();
    let mut first = short_paused(&pool);
    let mut second = short_paused(&pool);
    assert!(first.would_park() && second.would_park());
    first.park().expect("the one place is free");
    assert!(!second.would_park(), "the one place holds a parked state");
    assert!(second.park().is_err());
}

/// A crowded pool (more states out than the hold limit) parks nothing: a stream with short
/// pauses is told it would not park, its park is refused, and the state it gives back goes
/// to the shelf clean for the next draw. Under the limit the same stream parks.
#[test]
fn a_crowded_pool_parks_nothing() {
    let pool = CodecPool::builder().max_idle(4).hold_limit(1).build();
    let mut first = short_paused(&pool);
    let mut second = short_paused(&pool);
    // Two states out, one allowed to stay: crowded.
    assert!(!first.would_park() && !second.would_park());
    let refused = first.park().expect_err("a crowded pool parks nothing");
    drop(refused);
    let stats = pool.stats().kind(crate::pool::PoolKind::DeflateCompressors);
    assert_eq!(
        (stats.parked, stats.idle, stats.in_use()),
        (0, 1, 1),
        "{stats:?}"
    );
    // One out now: under the limit, the other stream parks.
    assert!(second.would_park());
    second.park().expect("not crowded");
    let stats = pool.stats().kind(crate::pool::PoolKind::DeflateCompressors);
    assert_eq!((stats.parked, stats.idle_parked), (1, 1), "{stats:?}");
}

/// A park bound of zero makes every pause long: a stream never parks, and each event
/// draws (what 1,000 streams with events seconds apart do with the default bound).
#[test]
fn a_zero_park_bound_never_parks() {
    let pool = CodecPool::builder()
        .park_bound(std::time::Duration::ZERO)
        .build();
    assert_eq!(pool.inner.park_bound, std::time::Duration::ZERO);
    let mut hold: Hold<Compress> = Hold::default();
    for _ in 0..3 {
        assert!(!hold.resume().is_held());
        hold.hold(compressor(&pool, 6));
        assert!(!hold.would_park());
        drop(hold.park().expect_err("every pause is long"));
    }
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DeflateCompressors)
            .parked,
        0
    );
}

#[test]
fn defaults_scale_with_the_cores_within_their_bounds() {
    let pool = CodecPool::new();
    assert!((8..=256).contains(&pool.max_idle()));
    assert_eq!(CodecPool::builder().build().max_idle(), pool.max_idle());
    assert_eq!(CodecPool::builder().max_idle(0).build().max_idle(), 0);
}
