//! The codec pool through the public codecs: cap, accounting, level separation, panics,
//! clean reuse, and the allocation count of pooled codecs. The guard itself (discard, drop
//! while panicking, reset byte for byte against a fresh flate2 state) is unit-tested in
//! codecs/src/pool/tests.rs.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Barrier;

use bytes::BytesMut;
use tower_gzip_codecs::ContentCoding;
use tower_gzip_codecs::{CodecPool, CompressionLevel, pool::KindStats};
use tower_gzip_codecs::{DecodeErrorKind, Decoder, Encoder};

use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();
use tower_gzip_support as common;

use common::{noise, text};

/// Allocations made on this thread while running `f`.
fn allocations<R>(f: impl FnOnce() -> R) -> (u64, R) {
    let (counts, result) = alloc::on_this_thread(f);
    (counts.allocations, result)
}

fn gzip(pool: &CodecPool, level: CompressionLevel, data: &[u8], out: &mut BytesMut) {
    let mut encoder = Encoder::for_coding(ContentCoding::Gzip, level, None, pool).unwrap();
    encoder.encode(data, out).unwrap();
    encoder.finish(out).unwrap();
}

fn gunzip(pool: &CodecPool, wire: &[u8], out: &mut BytesMut) {
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, pool).unwrap();
    let consumed = decoder.decode(wire, out, 1 << 20).unwrap();
    assert_eq!(consumed, wire.len());
    decoder.finish().unwrap();
}

fn balanced(s: KindStats) {
    assert_eq!(s.created + s.reused, s.returned + s.discarded, "{s:?}");
    assert_eq!(s.in_use(), 0);
}

#[test]
fn cap_holds_under_a_thousand_concurrent_checkouts() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 250;
    let pool = CodecPool::builder().max_idle(16).build();
    let barrier = Barrier::new(THREADS + 1);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (pool, barrier) = (&pool, &barrier);
            s.spawn(move || {
                let levels = [1, 6, 9];
                // A decoder draws its state when it is built, an encoder at its first
                // input; each holds it until dropped.
                let compressors: Vec<_> = (0..PER_THREAD)
                    .map(|i| {
                        let level = CompressionLevel::Precise(levels[(i + t) % 3]);
                        let mut encoder =
                            Encoder::for_coding(ContentCoding::Gzip, level, None, pool).unwrap();
                        encoder.encode(b"x", &mut BytesMut::new()).unwrap();
                        encoder
                    })
                    .collect();
                let decompressors: Vec<_> = (0..PER_THREAD)
                    .map(|_| Decoder::for_coding(ContentCoding::Gzip, None, pool).unwrap())
                    .collect();
                barrier.wait(); // all 1,000 of each kind are out
                barrier.wait(); // the main thread has checked the stats
                drop(compressors);
                drop(decompressors);
            });
        }
        barrier.wait();
        let stats = pool.stats();
        for kind in [
            stats.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors),
            stats.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors),
        ] {
            assert_eq!(kind.in_use(), 1000, "{kind:?}");
            assert_eq!(kind.created, 1000);
            assert_eq!(kind.idle, 0);
        }
        barrier.wait();
    });
    let stats = pool.stats();
    for kind in [
        stats.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors),
        stats.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors),
    ] {
        assert_eq!(kind.idle, 16, "{kind:?}");
        assert_eq!(kind.returned, 16);
        assert_eq!(kind.discarded, 1000 - 16);
        balanced(kind);
    }

    // A second wave reuses the idle states first, all but the last: a thread leaves another
    // thread's lone idle state to it while the shelf has room.
    let held: Vec<_> = (0..20)
        .map(|_| Decoder::for_coding(ContentCoding::Deflate, None, &pool).unwrap())
        .collect();
    drop(held);
    let d = pool
        .stats()
        .kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors);
    assert_eq!((d.created, d.reused, d.idle), (1000 + 5, 15, 16));
    balanced(d);
}

#[test]
fn levels_are_kept_apart() {
    let data = text(8 * 1024);
    let pool = CodecPool::new();
    let mut fast = BytesMut::new();
    gzip(&pool, CompressionLevel::Fastest, &data, &mut fast);
    assert_eq!(
        pool.stats()
            .kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
            .idle,
        1
    );

    // The idle state is level 1: a level-9 checkout must not get it.
    let mut best = BytesMut::new();
    gzip(&pool, CompressionLevel::Best, &data, &mut best);
    let c = pool
        .stats()
        .kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors);
    assert_eq!((c.created, c.reused, c.idle), (2, 0, 2));

    let mut fresh_best = BytesMut::new();
    gzip(
        &CodecPool::new(),
        CompressionLevel::Best,
        &data,
        &mut fresh_best,
    );
    assert_eq!(best, fresh_best);
    assert_ne!(fast, best, "levels 1 and 9 differ on this input");

    // Each level now reuses its own state, with the same bytes as before.
    let mut again = BytesMut::new();
    gzip(&pool, CompressionLevel::Best, &data, &mut again);
    assert_eq!(again, best);
    let mut again = BytesMut::new();
    gzip(&pool, CompressionLevel::Precise(1), &data, &mut again);
    assert_eq!(again, fast);
    let c = pool
        .stats()
        .kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors);
    assert_eq!((c.created, c.reused), (2, 2));
}

#[test]
fn codecs_dropped_while_panicking_are_discarded_and_the_pool_survives() {
    // The guard itself is tested in codecs/src/pool/tests.rs; here, through the public codecs.
    let pool = CodecPool::builder().max_idle(4).build();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut encoder =
            Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Default, None, &pool)
                .unwrap();
        encoder.encode(b"half", &mut BytesMut::new()).unwrap();
        let _decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
        panic!("mid-stream");
    }));
    assert!(result.is_err());
    let s = pool.stats();
    assert_eq!(
        (
            s.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
                .discarded,
            s.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
                .idle
        ),
        (1, 0)
    );
    assert_eq!(
        (
            s.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors)
                .discarded,
            s.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors)
                .idle
        ),
        (1, 0)
    );

    let mut wire = BytesMut::new();
    gzip(
        &pool,
        CompressionLevel::Default,
        b"after the panic",
        &mut wire,
    );
    let mut out = BytesMut::new();
    gunzip(&pool, &wire, &mut out);
    assert_eq!(&out[..], b"after the panic");
    let s = pool.stats();
    assert_eq!(
        s.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
            .idle,
        1
    );
    assert_eq!(
        s.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors)
            .idle,
        1
    );
    balanced(s.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors));
    balanced(s.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors));

    // A thread that dies holding an encoder leaves the pool usable too.
    let other = pool.clone();
    let joined = std::thread::spawn(move || {
        // A state is drawn at the first input.
        let mut encoder =
            Encoder::for_coding(ContentCoding::Deflate, CompressionLevel::Best, None, &other)
                .unwrap();
        encoder.encode(b"x", &mut BytesMut::new()).unwrap();
        panic!("thread dies holding an encoder");
    })
    .join();
    assert!(joined.is_err());
    drop(Encoder::for_coding(ContentCoding::Deflate, CompressionLevel::Best, None, &pool).unwrap());
    let s = pool.stats();
    assert_eq!(
        s.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
            .discarded,
        2
    );
    assert_eq!(s.in_use(), 0);
}

#[test]
fn max_idle_zero_disables_pooling() {
    let pool = CodecPool::builder().max_idle(0).build();
    for _ in 0..5 {
        let mut wire = BytesMut::new();
        gzip(&pool, CompressionLevel::Default, b"no pooling", &mut wire);
        let mut out = BytesMut::new();
        gunzip(&pool, &wire, &mut out);
    }
    let s = pool.stats();
    for kind in [
        s.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors),
        s.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors),
    ] {
        assert_eq!(
            (kind.created, kind.reused, kind.returned),
            (5, 0, 0),
            "{kind:?}"
        );
        assert_eq!((kind.discarded, kind.idle), (5, 0));
    }
}

#[test]
fn clones_share_one_pool_and_global_is_shared() {
    let pool = CodecPool::new();
    let clone = pool.clone();
    drop(Decoder::for_coding(ContentCoding::Gzip, None, &clone).unwrap());
    assert_eq!(
        pool.stats()
            .kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors)
            .idle,
        1
    );
    assert!(std::ptr::eq(CodecPool::global(), CodecPool::global()));
    assert!(format!("{pool:?}").contains("max_idle"));
}

#[test]
fn pooled_codecs_allocate_only_the_output_buffer() {
    let pool = CodecPool::builder().max_idle(4).build();
    let msg = noise(50, 0x5eed);
    let page = text(1024);
    // Warm the pool (states and shelf capacity).
    for data in [&msg, &page] {
        let mut wire = BytesMut::new();
        gzip(&pool, CompressionLevel::Default, data, &mut wire);
        gunzip(&pool, &wire, &mut BytesMut::new());
    }
    for format in [ContentCoding::Gzip, ContentCoding::Deflate] {
        for data in [&msg, &page] {
            // Compress into a new buffer: one allocation, the buffer itself.
            let (allocs, wire) = allocations(|| {
                let mut wire = BytesMut::new();
                let mut encoder =
                    Encoder::for_coding(format, CompressionLevel::Default, None, &pool).unwrap();
                encoder.encode(data, &mut wire).unwrap();
                encoder.finish(&mut wire).unwrap();
                wire
            });
            assert!(
                allocs <= 1,
                "{format:?} compress of {}: {allocs}",
                data.len()
            );
            // Into a buffer with room: none at all.
            let mut presized = BytesMut::with_capacity(4096);
            let (allocs, ()) = allocations(|| {
                let mut encoder =
                    Encoder::for_coding(format, CompressionLevel::Default, None, &pool).unwrap();
                encoder.encode(data, &mut presized).unwrap();
                encoder.finish(&mut presized).unwrap();
            });
            assert_eq!(allocs, 0, "{format:?} presized compress");
            assert_eq!(presized, wire);

            let (allocs, plain) = allocations(|| {
                let mut out = BytesMut::new();
                let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
                assert_eq!(
                    decoder.decode(&wire, &mut out, 1 << 20).unwrap(),
                    wire.len()
                );
                decoder.finish().unwrap();
                out
            });
            assert!(
                allocs <= 1,
                "{format:?} decompress of {}: {allocs}",
                data.len()
            );
            assert_eq!(&plain[..], &data[..]);
            let mut presized = BytesMut::with_capacity(4096);
            let (allocs, ()) = allocations(|| {
                let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
                decoder.decode(&wire, &mut presized, 1 << 20).unwrap();
                decoder.finish().unwrap();
            });
            assert_eq!(allocs, 0, "{format:?} presized decompress");
            assert_eq!(&presized[..], &data[..]);
        }
    }
    let s = pool.stats();
    assert_eq!(
        (
            s.kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
                .created,
            s.kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors)
                .created
        ),
        (1, 1)
    );

    // The counter is live: without a pool, the states themselves are allocated.
    let fresh = CodecPool::builder().max_idle(0).build();
    let (allocs, ()) = allocations(|| {
        gzip(
            &fresh,
            CompressionLevel::Default,
            &msg,
            &mut BytesMut::new(),
        );
    });
    assert!(allocs >= 2, "fresh compress made {allocs} allocations");
}

#[test]
fn decoder_state_after_an_error_or_abandoned_stream_is_clean() {
    let pool = CodecPool::builder().max_idle(1).build();
    let data = text(20_000);
    let mut good = BytesMut::new();
    gzip(
        &CodecPool::new(),
        CompressionLevel::Default,
        &data,
        &mut good,
    );
    let mut corrupt = good.to_vec();
    corrupt[30] ^= 0xff;
    corrupt[31] ^= 0x0f;
    for _ in 0..3 {
        let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
        let mut out = BytesMut::new();
        let err = decoder
            .decode(&corrupt, &mut out, 1 << 20)
            .and_then(|_| decoder.finish())
            .unwrap_err();
        assert!(
            matches!(
                err.kind(),
                DecodeErrorKind::CorruptData | DecodeErrorKind::Checksum
            ),
            "{err}"
        );
        drop(decoder);
        // Stopped mid-stream: a half-used state must come back clean too.
        let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
        decoder
            .decode(&good[..good.len() / 2], &mut out, 1 << 20)
            .unwrap();
        drop(decoder);

        let mut out = BytesMut::new();
        gunzip(&pool, &good, &mut out);
        assert_eq!(&out[..], &data[..]);
    }
    // One state served all nine decoders: reused, never left dirty.
    let stats = pool
        .stats()
        .kind(tower_gzip_codecs::pool::PoolKind::DeflateDecompressors);
    assert_eq!(
        (stats.created, stats.reused, stats.returned),
        (1, 8, 9),
        "{stats:?}"
    );
    balanced(stats);
}

#[test]
fn encoder_state_after_an_abandoned_stream_is_clean() {
    let pool = CodecPool::builder().max_idle(1).build();
    let data = text(30_000);
    let mut expected = BytesMut::new();
    gzip(
        &CodecPool::new(),
        CompressionLevel::Default,
        &data,
        &mut expected,
    );
    {
        let mut encoder =
            Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Default, None, &pool)
                .unwrap();
        encoder
            .encode(&data[..10_000], &mut BytesMut::new())
            .unwrap();
        encoder.flush(&mut BytesMut::new()).unwrap();
        // Dropped mid-stream.
    }
    let mut wire = BytesMut::new();
    gzip(&pool, CompressionLevel::Default, &data, &mut wire);
    assert_eq!(wire, expected);
    assert_eq!(
        pool.stats()
            .kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
            .reused,
        1
    );
}

#[test]
fn every_coding_returns_its_state_and_idle_releases_it() {
    let pool = CodecPool::builder().max_idle(4).build();
    let data = text(50_000);
    for format in ContentCoding::PLAIN {
        let mut wire = BytesMut::new();
        let mut encoder =
            Encoder::for_coding(*format, CompressionLevel::Default, None, &pool).unwrap();
        encoder.encode(&data[..20_000], &mut wire).unwrap();
        assert!(pool.stats().in_use() >= 1, "{format:?}");
        encoder.idle(&mut wire).unwrap();
        // gzip, deflate and zstd give their state back while idle; br cannot restart a
        // stream and keeps it.
        let keeps = format.as_str() == "br";
        assert_eq!(pool.stats().in_use(), u64::from(keeps), "{format:?}");
        encoder.encode(&data[20_000..], &mut wire).unwrap();
        encoder.finish(&mut wire).unwrap();
        drop(encoder);
        assert_eq!(
            pool.stats().in_use(),
            0,
            "{format:?}: back after the finish"
        );

        let mut decoder = Decoder::for_coding(*format, None, &pool).unwrap();
        let mut plain = BytesMut::new();
        let mut input = &wire[..];
        while !input.is_empty() || decoder.has_pending_output() {
            let n = decoder.decode(input, &mut plain, 1 << 20).unwrap();
            input = &input[n..];
        }
        decoder.finish().unwrap();
        assert!(plain[..] == data[..], "{format:?}");
        let held = pool.stats().in_use();
        assert!(
            held == 1 || (keeps && held == 0),
            "{format:?}: the decoder's state"
        );
        drop(decoder);
        assert_eq!(pool.stats().in_use(), 0, "{format:?}");
    }
    // Every kind's counters balance, and kinds() names each once.
    let stats = pool.stats();
    let names: Vec<String> = stats.kinds().map(|(kind, _)| kind.to_string()).collect();
    assert_eq!(names.len(), 11);
    for (name, kind) in stats.kinds() {
        assert_eq!(
            kind.created + kind.reused,
            kind.returned + kind.discarded,
            "{name:?}: {kind:?}"
        );
    }
    #[cfg(feature = "zstd")]
    {
        let z = stats.kind(tower_gzip_codecs::pool::PoolKind::ZstdCompressors);
        assert!(
            z.created >= 1 && z.reused >= 1,
            "re-drawn after idle: {z:?}"
        );
        assert_eq!(
            stats
                .kind(tower_gzip_codecs::pool::PoolKind::ZstdDecompressors)
                .created,
            1
        );
    }
    // gzip and deflate share the deflate shelves: one state served both, re-drawn after idle.
    assert_eq!(
        stats
            .kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
            .created,
        1,
        "{stats:?}"
    );
    assert!(
        stats
            .kind(tower_gzip_codecs::pool::PoolKind::DeflateCompressors)
            .reused
            >= 3,
        "{stats:?}"
    );
}
