//! The client store on its own: matching precedence (a property), bounds under churn,
//! replacement and freshness.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Uri};
use proptest::prelude::*;

use super::{ClientDictionaryStore, ClientDictionaryStoreBuilder};
use crate::headers::UseAsDictionary;

fn headers(metadata: &UseAsDictionary, cache_control: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("use-as-dictionary", metadata.to_header_value().unwrap());
    headers.insert(
        "cache-control",
        HeaderValue::from_str(cache_control).unwrap(),
    );
    headers
}

/// Learns `body` as if fetched from `url` with `metadata`. Returns whether it was kept.
fn learn(
    store: &ClientDictionaryStore,
    url: &str,
    metadata: &UseAsDictionary,
    body: Bytes,
) -> bool {
    let uri: Uri = url.parse().unwrap();
    match store.candidate(&uri, &headers(metadata, "max-age=3600")) {
        Some(candidate) => store.learn(candidate, body),
        None => false,
    }
}

fn offered_hash(store: &ClientDictionaryStore, url: &str, dest: &str) -> Option<[u8; 32]> {
    store
        .offer(&url.parse().unwrap(), dest)
        .map(|offer| offer.dictionary.hash())
}

/// A body that is distinct per `n`.
fn body(n: usize, len: usize) -> Bytes {
    let mut bytes = format!("dictionary {n} ").into_bytes();
    bytes.resize(len.max(bytes.len()), b'x');
    Bytes::from(bytes)
}

const PATTERNS: [&str; 6] = ["/a/*", "/a/b/*", "/a/b/c", "/*", "/a/*/c", "/x/*"];
const DESTS: [&[&str]; 4] = [&[], &["script"], &["document"], &["script", "style"]];
const PATHS: [&str; 5] = ["/a/b/c", "/a/q/c", "/x/1", "/a/b/z", "/q"];
const REQUEST_DESTS: [&str; 3] = ["", "script", "document"];

/// A glob where `*` matches any run of characters, as URL Pattern's pathname wildcard does
/// for these patterns: the oracle the store's matcher is checked against.
fn glob(pattern: &str, path: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == path,
        Some((head, tail)) => {
            path.starts_with(head)
                && (0..=path.len() - head.len()).any(|skip| glob(tail, &path[head.len() + skip..]))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Of the dictionaries that match, the store offers one whose `match-dest` lists the
    /// destination, then the longest `match`, then the most recently stored; a dictionary
    /// with the same `match` and `match-dest` replaces the earlier one.
    #[test]
    fn offers_the_best_match(
        learned in proptest::collection::vec((0..PATTERNS.len(), 0..DESTS.len()), 1..10),
        path in 0..PATHS.len(),
        dest in 0..REQUEST_DESTS.len(),
    ) {
        let store = ClientDictionaryStore::new();
        // The oracle's view: (pattern, dests, order, hash), later ones replacing earlier.
        let mut expected: Vec<(&str, &[&str], usize, [u8; 32])> = Vec::new();
        for (order, (p, d)) in learned.iter().enumerate() {
            let metadata = UseAsDictionary::new(PATTERNS[*p])
                .with_match_dest(DESTS[*d].iter().copied());
            let bytes = body(order, 64);
            prop_assert!(learn(&store, "http://h.test/dict", &metadata, bytes.clone()));
            expected.retain(|(pattern, dests, _, _)| !(*pattern == PATTERNS[*p] && *dests == DESTS[*d]));
            let hash = crate::dictionary::Dictionary::new(bytes, metadata).unwrap().hash();
            expected.push((PATTERNS[*p], DESTS[*d], order, hash));
        }
        prop_assert_eq!(store.stats().entries, expected.len());
        let (path, dest) = (PATHS[path], REQUEST_DESTS[dest]);
        let best = expected
            .iter()
            .filter(|(pattern, dests, _, _)| {
                glob(pattern, path) && (dests.is_empty() || dests.contains(&dest))
            })
            .max_by_key(|(pattern, dests, order, _)| (!dests.is_empty(), pattern.len(), *order))
            .map(|(_, _, _, hash)| *hash);
        let url = format!("http://h.test{path}");
        prop_assert_eq!(offered_hash(&store, &url, dest), best);
        // Another origin never gets them.
        prop_assert_eq!(offered_hash(&store, &format!("http://h.test:81{path}"), dest), None);
    }
}

#[test]
fn bounds_hold_under_churn() {
    let store = ClientDictionaryStore::builder()
        .max_bytes(64 << 10)
        .max_entries(40)
        .max_entries_per_origin(6)
        .max_entry_bytes(8 << 10)
        .build();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for n in 0..800 {
        let origin = format!("http://o{}.test", next() % 12);
        let pattern = format!("/p{}/*", next() % 10);
        let len = 1 + (next() % (10 << 10)) as usize;
        let kept = learn(
            &store,
            &format!("{origin}/d"),
            &UseAsDictionary::new(&pattern),
            body(n, len),
        );
        assert_eq!(kept, len <= 8 << 10, "{len}");
        assert!(store.stats().bytes <= 64 << 10);
        assert!(store.stats().entries <= 40);
        store.check_invariants(6);
        if kept {
            // What was just stored is there, and offered for its pattern.
            let hash = offered_hash(
                &store,
                &format!("{origin}{}", pattern.replace('*', "x")),
                "",
            );
            assert!(hash.is_some());
        }
    }
    let stats = store.stats();
    assert!(
        stats.evicted > 0 && stats.not_stored > 0 && stats.offered > 0,
        "{stats:?}"
    );
}

#[test]
fn the_least_recently_used_goes_first() {
    let store = ClientDictionaryStore::builder().max_entries(2).build();
    let meta = |p: &str| UseAsDictionary::new(p);
    assert!(learn(
        &store,
        "http://h.test/d",
        &meta("/a/*"),
        body(1, 100)
    ));
    assert!(learn(
        &store,
        "http://h.test/d",
        &meta("/b/*"),
        body(2, 100)
    ));
    // Using /a/* makes /b/* the least recently used.
    assert!(offered_hash(&store, "http://h.test/a/1", "").is_some());
    assert!(learn(
        &store,
        "http://h.test/d",
        &meta("/c/*"),
        body(3, 100)
    ));
    assert!(offered_hash(&store, "http://h.test/a/1", "").is_some());
    assert!(offered_hash(&store, "http://h.test/b/1", "").is_none());
    assert!(offered_hash(&store, "http://h.test/c/1", "").is_some());
}

#[test]
fn responses_that_are_not_dictionaries() {
    let store = ClientDictionaryStore::new();
    let uri: Uri = "https://h.test/d".parse().unwrap();
    let meta = UseAsDictionary::new("/api/*");
    assert!(
        store
            .candidate(&uri, &headers(&meta, "max-age=60"))
            .is_some()
    );
    for cache_control in ["no-store", "max-age=0", "no-cache, max-age=60"] {
        assert!(
            store
                .candidate(&uri, &headers(&meta, cache_control))
                .is_none()
        );
    }
    let cross = UseAsDictionary::new("https://other.test/api/*");
    assert!(
        store
            .candidate(&uri, &headers(&cross, "max-age=60"))
            .is_none()
    );
    // A relative request URI has no origin.
    let relative: Uri = "/d".parse().unwrap();
    assert!(
        store
            .candidate(&relative, &headers(&meta, "max-age=60"))
            .is_none()
    );
    // Two Use-As-Dictionary lines are not one dictionary.
    let mut twice = headers(&meta, "max-age=60");
    twice.append("use-as-dictionary", meta.to_header_value().unwrap());
    assert!(store.candidate(&uri, &twice).is_none());
    // An empty body is no dictionary.
    let candidate = store
        .candidate(&uri, &headers(&meta, "max-age=60"))
        .unwrap();
    assert!(!store.learn(candidate, Bytes::new()));
    assert_eq!(store.stats().not_stored, 1);
}

#[test]
fn a_dictionary_is_offered_only_while_fresh_and_never_past_max_age() {
    let now = Arc::new(Mutex::new(Instant::now()));
    let clock = now.clone();
    let builder: ClientDictionaryStoreBuilder = ClientDictionaryStore::builder()
        .max_age(Duration::from_secs(100))
        .clock(move || *clock.lock().unwrap());
    let store = builder.build();
    let uri: Uri = "http://h.test/d".parse().unwrap();
    let short = UseAsDictionary::new("/short/*");
    let long = UseAsDictionary::new("/long/*");
    let c = store
        .candidate(&uri, &headers(&short, "max-age=1"))
        .unwrap();
    assert!(store.learn(c, body(1, 10)));
    let c = store
        .candidate(&uri, &headers(&long, "max-age=31536000"))
        .unwrap();
    assert!(store.learn(c, body(2, 10)));
    assert!(offered_hash(&store, "http://h.test/short/x", "").is_some());
    *now.lock().unwrap() += Duration::from_secs(2);
    assert!(offered_hash(&store, "http://h.test/short/x", "").is_none());
    assert!(offered_hash(&store, "http://h.test/long/x", "").is_some());
    assert_eq!(store.stats().expired, 1);
    // A year's max-age is capped at the store's 100 s.
    *now.lock().unwrap() += Duration::from_secs(99);
    assert!(offered_hash(&store, "http://h.test/long/x", "").is_none());
    assert_eq!(store.stats().entries, 0);
}

#[test]
fn dictionary_id_is_sent_as_a_structured_string() {
    let store = ClientDictionaryStore::new();
    let meta = UseAsDictionary::new("/a/*").with_id("v\"1");
    assert!(learn(&store, "http://h.test/d", &meta, body(1, 10)));
    let offer = store
        .offer(&"http://h.test/a/b".parse().unwrap(), "")
        .unwrap();
    assert_eq!(offer.id.unwrap(), r#""v\"1""#);
}
