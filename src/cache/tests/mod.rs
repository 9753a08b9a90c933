use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

use crate::cache::store::{self, ENTRY_OVERHEAD, Store};
use crate::cache::*;

mod properties;
use crate::codec::OneShot;
use crate::{CompressionLevel, ContentCoding};

fn variant(coding: ContentCoding) -> Variant {
    Variant {
        coding,
        level: CompressionLevel::Default.native(coding),
        dictionary: None,
    }
}

fn compress(coding: ContentCoding, body: &[u8]) -> BytesMut {
    let mut out = BytesMut::new();
    OneShot::new(coding).encode(body, &mut out).unwrap();
    out
}

/// API-like JSON, distinct per `seed`.
fn json(seed: u64, items: usize) -> Bytes {
    let rows: Vec<String> = (0..items)
        .map(|i| {
            format!(
                r#"{{"id":{},"name":"item {seed}-{i}","price":{},"tags":["a","b{}"]}}"#,
                seed * 100_000 + i as u64,
                (i * 37) % 1000,
                i % 7
            )
        })
        .collect();
    Bytes::from(format!("[{}]", rows.join(",")))
}

/// Serves `body` through the cache as the layer does: a hit as it is, otherwise compressed
/// (and filed when seen before).
fn serve(cache: &VariantCache, body: &Bytes, coding: ContentCoding) -> (Bytes, bool) {
    match cache.lookup(body, variant(coding), None) {
        Lookup::Hit(bytes) => (bytes, true),
        Lookup::Miss(fill) => {
            let out = compress(coding, body);
            cache.record(fill).whole(&out);
            (out.freeze(), false)
        }
        Lookup::Unseen => (compress(coding, body).freeze(), false),
    }
}

fn decode(coding: ContentCoding, wire: &[u8]) -> Vec<u8> {
    OneShot::new(coding)
        .decode(wire, 64 << 20)
        .unwrap()
        .to_vec()
}

#[test]
fn a_body_is_filed_at_its_second_sight_and_served_at_its_third() {
    let cache = VariantCache::builder().recompress(None).build();
    let body = json(1, 100);
    let coding = ContentCoding::Gzip;
    assert!(!serve(&cache, &body, coding).1);
    assert_eq!(cache.stats().entries, 0, "seen once: nothing filed");
    assert!(!serve(&cache, &body, coding).1);
    let (wire, hit) = serve(&cache, &body, coding);
    assert!(hit);
    assert_eq!(decode(coding, &wire), body);
    let stats = cache.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.refused, stats.admitted),
        (1, 1, 1, 1)
    );
    assert_eq!(stats.bytes, wire.len() as u64 + ENTRY_OVERHEAD);
}

#[test]
fn another_coding_level_or_dictionary_is_another_entry() {
    let cache = VariantCache::builder().recompress(None).build();
    let body = json(2, 100);
    for _ in 0..2 {
        serve(&cache, &body, ContentCoding::Gzip);
    }
    let other = |variant| matches!(cache.lookup(&body, variant, None), Lookup::Miss(_));
    assert!(other(variant(ContentCoding::Deflate)));
    let mut denser = variant(ContentCoding::Gzip);
    denser.level = CompressionLevel::Best.native(ContentCoding::Gzip);
    assert!(other(denser));
    let mut with_dictionary = variant(ContentCoding::Gzip);
    with_dictionary.dictionary = Some([7; 32]);
    assert!(other(with_dictionary));
    assert!(matches!(
        cache.lookup(&body, variant(ContentCoding::Gzip), None),
        Lookup::Hit(_)
    ));
}

/// Two bodies alike in every byte the fingerprint samples share it, and still get their
/// own keys: the full hash alone decides what is served.
#[test]
fn bodies_sharing_a_fingerprint_never_share_an_entry() {
    let cache = VariantCache::builder().recompress(None).build();
    let body = json(3, 200);
    let mut twin = body.to_vec();
    let middle = twin.len() / 2 + 3;
    twin[middle] = if twin[middle] == b'x' { b'y' } else { b'x' };
    let twin = Bytes::from(twin);
    let coding = ContentCoding::Gzip;
    for _ in 0..3 {
        serve(&cache, &body, coding);
    }
    let (wire, hit) = serve(&cache, &twin, coding);
    assert!(!hit, "the twin must not get the body's entry");
    assert_eq!(decode(coding, &wire), twin);
    let (wire, hit) = serve(&cache, &body, coding);
    assert!(hit);
    assert_eq!(decode(coding, &wire), body);
}

#[test]
fn bodies_under_the_minimum_are_not_wanted() {
    let cache = VariantCache::builder().min_size(4096).build();
    assert!(!cache.wants(4095));
    assert!(cache.wants(4096));
    assert!(!cache.wants(DEFAULT_MAX_BODY as u64 + 1));
}

#[test]
fn an_entry_over_the_bound_is_refused() {
    let cache = VariantCache::builder()
        .budget(1 << 20)
        .max_entry(1024)
        .recompress(None)
        .build();
    let body = json(4, 2000);
    for _ in 0..3 {
        assert!(!serve(&cache, &body, ContentCoding::Gzip).1);
    }
    let stats = cache.stats();
    assert_eq!((stats.entries, stats.admitted), (0, 0));
    assert_eq!(stats.refused, 3, "1 unseen, then 2 too large");
}

/// 100,000 unique responses through a warm cache: the hot entries stay, and none of the
/// unique bodies is filed.
#[test]
fn a_flood_of_unique_responses_leaves_the_hot_entries_in_place() {
    let cache = VariantCache::builder()
        .budget(4 << 20)
        .min_size(0)
        .recompress(None)
        .build();
    let coding = ContentCoding::Gzip;
    let hot: Vec<Bytes> = (0..20).map(|seed| json(10 + seed, 100)).collect();
    for _ in 0..4 {
        for body in &hot {
            serve(&cache, body, coding);
        }
    }
    let warm = cache.stats();
    for i in 0..100_000u64 {
        let unique = Bytes::from(format!(r#"{{"request":{i},"pad":"{}"}}"#, "z".repeat(64)));
        assert!(matches!(
            cache.lookup(&unique, variant(coding), None),
            Lookup::Unseen
        ));
        if i % 5_000 == 0 {
            for body in &hot {
                assert!(serve(&cache, body, coding).1, "a hot entry left");
            }
        }
    }
    let after = cache.stats();
    assert_eq!(after.entries, warm.entries);
    assert_eq!(after.admitted, warm.admitted);
    assert_eq!(after.evicted, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Held bytes never pass the budget, whatever the sizes and the order of fills and hits.
    #[test]
    fn held_bytes_never_pass_the_budget(
        budget in 4_096u64..200_000,
        ops in prop::collection::vec((0u16..300, 0usize..20_000, any::<bool>()), 1..400),
    ) {
        let store = Store::new(budget, SHARDS);
        let secret = [9; 32];
        for (id, size, hit) in ops {
            let body = id.to_le_bytes();
            let key = Key::new(&secret, &body, variant(ContentCoding::Gzip));
            if hit {
                store.get(&key, false, None);
            } else if size as u64 + ENTRY_OVERHEAD <= store.shard_budget() {
                let bytes = Bytes::from(vec![0u8; size]);
                store.insert(key, (0, None), bytes, store::Stage::AsServed, |_| ());
            }
            let (_, held) = store.held();
            prop_assert!(held <= budget, "held {} of {}", held, budget);
        }
    }
}

#[cfg(all(feature = "br", feature = "zstd"))]
#[test]
fn hot_entries_are_recompressed_smaller_and_still_decode() {
    let cache = VariantCache::new(64 << 20);
    let body = json(5, 600);
    for coding in [ContentCoding::Br, ContentCoding::Zstd, ContentCoding::Gzip] {
        let first = serve(&cache, &body, coding).0;
        serve(&cache, &body, coding);
        assert!(serve(&cache, &body, coding).1, "{coding:?}: hit");
        let done = cache.stats().recompressed + 1;
        let stats = wait_for(&cache, |s| s.recompressed >= done);
        assert!(stats.recompressed >= done, "{coding:?}: {stats:?}");
        let (wire, hit) = serve(&cache, &body, coding);
        assert!(hit);
        assert_eq!(decode(coding, &wire), body, "{coding:?}");
        assert!(
            wire.len() <= first.len(),
            "{coding:?}: {} > {}",
            wire.len(),
            first.len()
        );
        if coding == ContentCoding::Br {
            assert!(wire.len() < first.len(), "br 11 beats br 4 on JSON");
        }
    }
    let stats = cache.stats();
    assert!(stats.recompress_saved > 0, "{stats:?}");
}

/// The same `Bytes` served again is found by its address once pinned, without a hash;
/// another `Bytes` is hashed, even at the same address with another length.
#[test]
fn a_body_served_again_as_the_same_bytes_is_found_without_a_hash() {
    let cache = VariantCache::builder().recompress(None).build();
    let coding = ContentCoding::Gzip;
    let body = json(11, 300);
    let hashed = || cache.stats().hashed;
    // Seen, filed, hit, hit again from the same address: pinned.
    for _ in 0..4 {
        serve(&cache, &body, coding);
    }
    let pinned = body.len() as u64 + crate::cache::pins::PIN_OVERHEAD;
    assert_eq!(cache.stats().pinned, pinned);
    let before = hashed();
    let (wire, hit) = serve(&cache, &body, coding);
    assert!(hit);
    assert_eq!(decode(coding, &wire), body);
    assert_eq!(hashed(), before, "a pinned body is not hashed");
    // The same bytes elsewhere: hashed, and the same entry.
    let copy = Bytes::copy_from_slice(&body);
    assert!(serve(&cache, &copy, coding).1);
    assert_eq!(hashed(), before + 1);
    // The same address, shorter: not the pinned body.
    let cut = body.slice(..body.len() - 1);
    let (wire, _) = serve(&cache, &cut, coding);
    assert_eq!(decode(coding, &wire), cut);
}

/// `dcz` and `dcb` entries are recompressed against their own dictionary, and still decode
/// with it (and only with it).
#[cfg(both_dictionary_codings)]
#[test]
fn dictionary_entries_are_recompressed_against_their_dictionary() {
    use crate::dictionary::Dictionary;
    let cache = VariantCache::new(64 << 20);
    let dictionary = Dictionary::new(json(7, 300), None).unwrap();
    let other = Dictionary::new(json(8, 300), None).unwrap();
    let body = json(9, 600);
    for coding in [ContentCoding::Dcz, ContentCoding::Dcb] {
        let mut variant = variant(coding);
        variant.dictionary = Some(dictionary.hash());
        let one_shot = OneShot::new(coding).against(Some(&dictionary));
        for _ in 0..2 {
            if let Lookup::Miss(fill) = cache.lookup(&body, variant, Some(&dictionary)) {
                let mut out = BytesMut::new();
                one_shot.encode(&body, &mut out).unwrap();
                cache.record(fill).whole(&out);
            }
        }
        let done = cache.stats().recompressed + 1;
        assert!(matches!(
            cache.lookup(&body, variant, Some(&dictionary)),
            Lookup::Hit(_)
        ));
        let stats = wait_for(&cache, |s| s.recompressed >= done);
        assert!(stats.recompressed >= done, "{coding:?}: {stats:?}");
        let Lookup::Hit(wire) = cache.lookup(&body, variant, Some(&dictionary)) else {
            panic!("{coding:?}: the recompressed entry is gone");
        };
        assert_eq!(one_shot.decode(&wire, 1 << 20).unwrap(), body, "{coding:?}");
        let with_other = OneShot::new(coding).against(Some(&other));
        assert!(with_other.decode(&wire, 1 << 20).is_err(), "{coding:?}");
    }
}

/// The worker rests after each job so that its busy time is at most its share of the time.
#[test]
fn the_worker_keeps_within_its_share_of_a_core() {
    let share = 0.2;
    let cache = VariantCache::builder().recompress(Some(share)).build();
    let bodies: Vec<Bytes> = (0..6).map(|seed| json(100 + seed, 400)).collect();
    for body in &bodies {
        for _ in 0..3 {
            serve(&cache, body, ContentCoding::Gzip);
        }
    }
    let stats = wait_for(&cache, |s| s.recompressed >= 6);
    assert_eq!(stats.recompressed, 6, "{stats:?}");
    let counts = &cache.inner.recompressor.as_ref().unwrap().counts;
    let busy = counts.busy_nanos.load(Ordering::Relaxed) as f64;
    let rest = counts.rest_nanos.load(Ordering::Relaxed) as f64;
    assert!(busy > 0.0);
    assert!(
        busy / (busy + rest) <= share + 1e-9,
        "busy {busy} rest {rest}"
    );
}

#[test]
fn recompression_pauses_under_pressure() {
    let pressed = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let signal = pressed.clone();
    let cache = VariantCache::builder()
        .pause_when(move || signal.load(Ordering::Relaxed))
        .build();
    let body = json(6, 400);
    let coding = ContentCoding::Gzip;
    for _ in 0..3 {
        serve(&cache, &body, coding);
    }
    let stats = wait_for(&cache, |s| s.recompress_dropped >= 1);
    assert_eq!((stats.recompress_dropped, stats.recompressed), (1, 0));
    // Given up, the entry is queued again by a later hit, and done once the pressure is off.
    pressed.store(false, Ordering::Relaxed);
    assert!(serve(&cache, &body, coding).1);
    let stats = wait_for(&cache, |s| s.recompressed >= 1);
    assert_eq!(stats.recompressed, 1, "{stats:?}");
}

/// Bodies whose fingerprints share a bucket, alternating, are still seen the second time.
#[test]
fn bodies_sharing_a_bucket_do_not_push_each_other_out() {
    let doorkeeper = crate::cache::doorkeeper::Doorkeeper::new(4); // one bucket
    let (a, b) = (json(7, 50), json(8, 50));
    assert!(!doorkeeper.check(&a).seen);
    assert!(!doorkeeper.check(&b).seen);
    assert!(doorkeeper.check(&a).seen);
    assert!(doorkeeper.check(&b).seen);
}

/// The cache's stats once `done` holds (the worker runs on its own thread).
fn wait_for(cache: &VariantCache, done: impl Fn(&CacheStats) -> bool) -> CacheStats {
    tower_gzip_support::settle(|| cache.stats(), done)
}
