//! `DictionaryBuilder` on the API-JSON corpus (`support/src/corpus`): determinism, the size
//! bound, the choice against its own report, the held-out samples' independence, budgets,
//! bad input.

use tower_gzip_support::corpus;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::dictionary::{
    BuiltDictionary, CandidateReport, Dictionary, DictionaryBuilder, DictionaryError,
};
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};

/// Small dictionaries and sample sets keep the debug build's trainer and brotli quick.
const BOUND: usize = 24 << 10;
const SAMPLES: usize = 160;

fn build(samples: &[Vec<u8>]) -> BuiltDictionary {
    DictionaryBuilder::new(samples)
        .max_size(BOUND)
        .build()
        .unwrap()
}

/// One build on the corpus, shared by the tests that only read it.
fn shared() -> &'static (Vec<Vec<u8>>, BuiltDictionary) {
    static BUILT: OnceLock<(Vec<Vec<u8>>, BuiltDictionary)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let samples = corpus::bodies(SAMPLES, 21);
        let built = build(&samples);
        (samples, built)
    })
}

/// A row's deterministic part (all but the measured time).
fn fixed(row: &CandidateReport) -> String {
    let r = row;
    format!(
        "{:?} {} {:?} {:?} {} {} {} {} {}",
        r.kind,
        r.dictionary_len,
        r.hash,
        r.coding,
        r.level,
        r.bytes,
        r.cost.to_bits(),
        r.within_budget,
        r.chosen
    )
}

/// The candidates tried: (kind, length, hash) of each, once.
fn candidates(built: &BuiltDictionary) -> BTreeSet<String> {
    let rows = built.report.iter().filter(|r| r.kind.is_some());
    rows.map(|r| format!("{:?} {} {:?}", r.kind, r.dictionary_len, r.hash))
        .collect()
}

#[test]
fn the_same_samples_give_the_same_dictionary_and_levels() {
    let (samples, a) = shared();
    let b = build(samples);
    assert_eq!(a.bytes, b.bytes);
    assert_eq!(
        (a.kind, a.dcz_level, a.dcb_quality),
        (b.kind, b.dcz_level, b.dcb_quality)
    );
    let rows = |built: &BuiltDictionary| built.report.iter().map(fixed).collect::<Vec<_>>();
    assert_eq!(rows(a), rows(&b));
    assert_ne!(a.bytes, build(&corpus::bodies(SAMPLES, 22)).bytes);
}

#[test]
fn no_dictionary_tried_is_over_the_bound() {
    let (_, built) = shared();
    assert!(!built.bytes.is_empty() && built.bytes.len() <= BOUND);
    assert!(built.report.iter().all(|r| r.dictionary_len <= BOUND));
    assert!(candidates(built).len() >= 3, "{:?}", candidates(built));
    let small = DictionaryBuilder::new(&corpus::bodies(SAMPLES, 23))
        .max_size(3000)
        .build()
        .unwrap();
    assert!(small.bytes.len() <= 3000);
    assert!(small.report.iter().all(|r| r.dictionary_len <= 3000));
}

/// The row the report's own rule picks for `coding` among `rows`.
fn pick<'a>(rows: &[&'a CandidateReport], coding: ContentCoding) -> Option<&'a CandidateReport> {
    let of = rows.iter().copied().filter(|r| r.coding == coding);
    of.clone()
        .filter(|r| r.within_budget)
        .min_by_key(|r| (r.bytes, r.level))
        .or_else(|| of.min_by(|a, b| a.cost.total_cmp(&b.cost).then(a.level.cmp(&b.level))))
}

/// Whether `row` sends fewer bytes than its plain coding in the report.
fn saves(built: &BuiltDictionary, row: &CandidateReport) -> bool {
    let plain = match row.coding {
        ContentCoding::Dcz => (ContentCoding::Zstd, 3),
        _ => (ContentCoding::Br, row.level),
    };
    let mut baselines = built.report.iter().filter(|b| b.kind.is_none());
    row.bytes
        < baselines
            .find(|b| (b.coding, b.level) == plain)
            .unwrap()
            .bytes
}

#[test]
fn the_choice_is_the_best_candidate_of_the_report() {
    let (_, built) = shared();
    let hash = Dictionary::new(built.bytes.clone(), UseAsDictionary::new("/*"))
        .unwrap()
        .hash();
    let chosen: Vec<&CandidateReport> = built.report.iter().filter(|r| r.chosen).collect();
    assert_eq!(chosen.len(), 2, "one dcz and one dcb row");
    assert!(
        chosen
            .iter()
            .all(|r| r.hash == hash && Some(built.kind) == r.kind)
    );
    let mut best = None;
    for candidate in candidates(built) {
        let rows: Vec<&CandidateReport> = built
            .report
            .iter()
            .filter(|r| {
                r.kind.is_some()
                    && format!("{:?} {} {:?}", r.kind, r.dictionary_len, r.hash) == candidate
            })
            .collect();
        let used: Vec<&CandidateReport> = [ContentCoding::Dcz, ContentCoding::Dcb]
            .iter()
            .filter_map(|&c| pick(&rows, c))
            .collect();
        let over = used.iter().filter(|r| !r.within_budget).count();
        // Bytes per client (scaled by the held-out count to stay exact): the served
        // dictionary and the expected responses, for each coding.
        let per_client = |r: &CandidateReport| {
            r.served_len as u128 * built.held_out as u128
                + u128::from(built.responses_per_client) * r.bytes as u128
        };
        let key = (
            over,
            used.iter().map(|r| per_client(r)).sum::<u128>(),
            rows[0].dictionary_len,
        );
        let saves = used.iter().all(|r| saves(built, r));
        if rows[0].hash == hash {
            assert!(saves, "the chosen dictionary saves bytes on both codings");
            assert!(
                used.iter().all(|r| r.chosen),
                "the chosen levels are the rule's"
            );
            assert_eq!(Some(built.dcz_level), used.first().map(|r| r.level));
            assert_eq!(built.dcb_quality, used.get(1).map(|r| r.level));
        }
        if saves && best.is_none_or(|(k, _)| key < k) {
            best = Some((key, rows[0].hash));
        }
    }
    assert_eq!(
        best.unwrap().1,
        hash,
        "a candidate ranks better than the chosen one"
    );
}

#[test]
fn held_out_samples_never_shape_the_candidates() {
    let (samples, built) = shared();
    // Every fourth of 64 runs of distinct samples is held out: replace those with other
    // responses.
    let others = corpus::bodies(SAMPLES, 99);
    let mut changed = samples.clone();
    let run = SAMPLES / 64;
    for i in (0..SAMPLES).filter(|i| (i / run) % 4 == 3) {
        changed[i] = others[i].clone();
    }
    let rebuilt = build(&changed);
    assert_eq!(candidates(built), candidates(&rebuilt));
    assert_ne!(
        built.report[0].bytes, rebuilt.report[0].bytes,
        "other held-out bytes"
    );
    assert_eq!(built.held_out, SAMPLES / 4);
}

#[test]
fn the_dictionary_and_levels_serve_responses_it_never_saw() {
    let (_, built) = shared();
    let dictionary = Dictionary::new(built.bytes.clone(), UseAsDictionary::new("/*")).unwrap();
    let pool = CodecPool::new();
    for body in corpus::bodies(20, 24) {
        let mut wire = bytes::BytesMut::new();
        let level = CompressionLevel::Precise(built.dcz_level);
        OneShot::new(ContentCoding::Dcz)
            .dictionary(&dictionary)
            .level(level)
            .pool(&pool)
            .encode(&body, &mut wire)
            .unwrap();
        assert_eq!(
            &OneShot::new(ContentCoding::Dcz)
                .dictionary(&dictionary)
                .pool(&pool)
                .decode(&wire, 1 << 20)
                .unwrap()[..],
            &body[..]
        );
        wire.clear();
        let quality = CompressionLevel::Precise(built.dcb_quality.unwrap());
        OneShot::new(ContentCoding::Dcb)
            .dictionary(&dictionary)
            .level(quality)
            .pool(&pool)
            .encode(&body, &mut wire)
            .unwrap();
        assert_eq!(
            &OneShot::new(ContentCoding::Dcb)
                .dictionary(&dictionary)
                .decode(&wire, 1 << 20)
                .unwrap()[..],
            &body[..]
        );
    }
}

#[test]
fn the_budget_decides_the_levels() {
    let samples = corpus::bodies(SAMPLES, 25);
    let lavish = DictionaryBuilder::new(&samples)
        .max_size(BOUND)
        .cpu_budget(1e9, 1e9)
        .build()
        .unwrap();
    assert!(lavish.report.iter().all(|r| r.within_budget));
    let chosen_dcz = lavish
        .report
        .iter()
        .find(|r| r.chosen && r.coding == ContentCoding::Dcz)
        .unwrap();
    let fewest = lavish
        .report
        .iter()
        .filter(|r| r.hash == chosen_dcz.hash && r.coding == ContentCoding::Dcz);
    assert_eq!(chosen_dcz.bytes, fewest.map(|r| r.bytes).min().unwrap());
    let stingy = DictionaryBuilder::new(&samples)
        .max_size(BOUND)
        .cpu_budget(0.0, 0.0)
        .build()
        .unwrap();
    let with_dictionary = stingy.report.iter().filter(|r| r.kind.is_some());
    assert!(with_dictionary.clone().all(|r| !r.within_budget));
    let chosen_dcz = stingy
        .report
        .iter()
        .find(|r| r.chosen && r.coding == ContentCoding::Dcz)
        .unwrap();
    let cheapest =
        with_dictionary.filter(|r| r.hash == chosen_dcz.hash && r.coding == ContentCoding::Dcz);
    assert_eq!(
        chosen_dcz.cost,
        cheapest.map(|r| r.cost).fold(f64::MAX, f64::min)
    );
}

#[test]
fn the_report_counts_the_dictionary_download() {
    let (_, built) = shared();
    let plain = |coding, level| {
        let (coding, level) = match coding {
            ContentCoding::Dcz => (ContentCoding::Zstd, 3),
            _ => (ContentCoding::Br, level),
        };
        let mut rows = built.report.iter().filter(|r| r.kind.is_none());
        rows.find(|r| r.coding == coding && r.level == level)
            .unwrap()
    };
    let n = built.responses_per_client as f64;
    for row in built.report.iter().filter(|r| r.kind.is_some()) {
        let base = plain(row.coding, row.level);
        assert!(row.served_len > 0 && row.served_len < row.dictionary_len);
        assert_eq!(row.ratio, row.bytes as f64 / base.bytes as f64);
        let mean = row.bytes as f64 / built.held_out as f64;
        assert!((row.per_client_bytes - (row.served_len as f64 + n * mean)).abs() < 1e-6);
        match row.break_even {
            Some(count) => {
                // The first count where what it saved covers its download.
                let saved = |k: u64| k as f64 * (base.bytes - row.bytes) as f64;
                let served = (row.served_len * built.held_out) as f64;
                assert!(saved(count) >= served && saved(count - 1) < served);
            }
            None => assert!(row.bytes >= base.bytes),
        }
        if row.chosen {
            assert_eq!(row.served_len, built.served_len);
        }
    }
}

#[test]
fn many_responses_per_client_favour_a_larger_download() {
    let samples = corpus::bodies(SAMPLES, 29);
    // The chosen dictionary's served size and its two codings' held-out bytes.
    let choice = |per_client| {
        let built = DictionaryBuilder::new(&samples)
            .max_size(BOUND)
            .responses_per_client(per_client)
            .build()
            .unwrap();
        assert_eq!(built.responses_per_client, per_client);
        let bytes: usize = built
            .report
            .iter()
            .filter(|r| r.chosen)
            .map(|r| r.bytes)
            .sum();
        (built.served_len, bytes)
    };
    // Minimising served + n * bytes: a larger n never picks a smaller download, nor more
    // bytes per response.
    let (few, many) = (choice(1), choice(1_000_000));
    assert!(few.0 <= many.0, "{few:?} {many:?}");
    assert!(many.1 <= few.1, "{few:?} {many:?}");
}

#[test]
fn bad_input_is_a_typed_error() {
    let training = |result: Result<BuiltDictionary, DictionaryError>| {
        assert!(
            matches!(result, Err(DictionaryError::Training(_))),
            "{result:?}"
        );
    };
    let none: [Vec<u8>; 0] = [];
    training(DictionaryBuilder::new(&none).build());
    training(DictionaryBuilder::new(&corpus::bodies(15, 26)).build());
    training(DictionaryBuilder::new(&vec![Vec::<u8>::new(); 40]).build());
    training(DictionaryBuilder::new(&vec![corpus::bodies(1, 26).remove(0); 40]).build());
    // Random bytes share nothing: no dictionary of them saves a byte.
    let mut x = 0x0123_4567_89ab_cdefu64;
    let noise: Vec<Vec<u8>> = (0..40)
        .map(|_| {
            (0..500)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect();
    training(DictionaryBuilder::new(&noise).build());
    // No sample fits in 100 bytes, and zstd's trainer makes nothing that small.
    training(
        DictionaryBuilder::new(&corpus::bodies(40, 27))
            .max_size(100)
            .build(),
    );
    let samples = corpus::bodies(40, 28);
    assert!(matches!(
        DictionaryBuilder::new(&samples).max_size(0).build(),
        Err(DictionaryError::Empty)
    ));
    assert!(matches!(
        DictionaryBuilder::new(&samples)
            .max_size((128 << 20) + 1) // past the largest dictionary the codecs take
            .build(),
        Err(DictionaryError::TooLarge { .. })
    ));
    assert!(matches!(
        DictionaryBuilder::new(&samples)
            .max_size((100 << 20) + 1) // past what Chromium stores
            .build(),
        Err(DictionaryError::TooLarge { .. })
    ));
}
