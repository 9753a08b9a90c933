//! The builder's parts: the split, the raw-sample selection, the cost model, the choice.

use super::cost::{SIZES, cost};
use super::samples::{MIN_SAMPLES, split};
use super::select::{Grams, assemble};
use super::*;

/// `n` distinct JSON-ish samples sharing structure.
fn samples(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            format!(
                "{{\n  \"id\": {},\n  \"login\": \"user-{}\",\n  \"url\": \"https://api.example.com/users/{}\"\n}}",
                i * 7919 % 100_000,
                i * 31 % 997,
                i
            )
            .into_bytes()
        })
        .collect()
}

#[test]
fn split_drops_empty_and_repeated_samples_and_holds_out_every_fourth() {
    let mut given = samples(40);
    given.insert(5, Vec::new());
    given.insert(9, given[2].clone());
    let split = split(&given).unwrap();
    assert_eq!(split.training.len() + split.held_out.len(), 40);
    assert_eq!(split.held_out.len(), 10);
    let distinct: Vec<&[u8]> = given
        .iter()
        .enumerate()
        .filter(|&(i, s)| !s.is_empty() && i != 9)
        .map(|(_, s)| s.as_slice())
        .collect();
    for (i, sample) in distinct.iter().enumerate() {
        assert_eq!(split.held_out.contains(sample), i % 4 == 3, "sample {i}");
        assert_ne!(split.training.contains(sample), i % 4 == 3, "sample {i}");
    }
}

#[test]
fn split_holds_out_at_most_400() {
    let given = samples(2400);
    let split = split(&given).unwrap();
    assert_eq!(split.held_out.len(), 400);
    assert_eq!(split.training.len(), 2000);
}

#[test]
fn split_holds_out_runs_of_neighbours() {
    let given = samples(640);
    let split = split(&given).unwrap();
    // 64 runs of 10: runs 3, 7, 11, ... are held out, whole.
    assert_eq!(split.held_out.len(), 160);
    for (i, sample) in given.iter().enumerate() {
        let held = (i / 10) % 4 == 3;
        assert_eq!(
            split.held_out.contains(&sample.as_slice()),
            held,
            "sample {i}"
        );
    }
}

#[test]
fn split_needs_enough_distinct_samples() {
    let mut given = samples(MIN_SAMPLES - 1);
    given.extend([Vec::new(), Vec::new(), given[0].clone()]);
    assert!(matches!(split(&given), Err(DictionaryError::Training(_))));
    assert!(split(&samples(MIN_SAMPLES)).is_ok());
}

#[test]
fn selection_keeps_the_bound_and_skips_samples_that_share_nothing() {
    let mut training = samples(60);
    // Random bytes: no 8-byte substring in common with anything.
    let mut x = 0x1234_5678_9abc_def0u64;
    let noise: Vec<u8> = (0..300)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    training.insert(0, noise.clone());
    let training: Vec<&[u8]> = training.iter().map(Vec::as_slice).collect();
    let grams = Grams::count(&training);
    for bound in [100, 500, 2000, 1 << 20] {
        let picked = grams.pick(&training, bound);
        let dictionary = assemble(&training, &picked);
        assert!(dictionary.len() <= bound, "{} > {bound}", dictionary.len());
        assert!(!picked.contains(&0), "the noise was picked");
        let mut unique = picked.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), picked.len(), "a sample picked twice");
    }
    assert!(!grams.pick(&training, 2000).is_empty());
}

#[test]
fn the_first_pick_goes_last_in_the_dictionary() {
    let training = samples(30);
    let training: Vec<&[u8]> = training.iter().map(Vec::as_slice).collect();
    let picked = Grams::count(&training).pick(&training, 400);
    assert!(picked.len() >= 2);
    let dictionary = assemble(&training, &picked);
    assert!(dictionary.ends_with(training[picked[0]]));
    assert!(dictionary.starts_with(training[*picked.last().unwrap()]));
}

#[test]
fn plain_codings_cost_one_and_dictionary_codings_grow_with_the_level() {
    let sizes = [900, 1500, 4000];
    assert_eq!(cost(ContentCoding::Zstd, 3, 0, &sizes), 1.0);
    assert_eq!(cost(ContentCoding::Br, 5, 0, &sizes), 1.0);
    for kib in [16, 32, 64, 128] {
        let at = |level| cost(ContentCoding::Dcz, level, kib << 10, &sizes);
        assert!(
            at(3) < at(6) && at(6) < at(9) && at(9) < at(12),
            "{kib} KiB"
        );
    }
    assert!(cost(ContentCoding::Dcz, 7, 1 << 10, &sizes).is_infinite());
}

#[test]
fn a_dictionary_takes_the_smallest_class_that_holds_it() {
    let sizes = [SIZES[2] as usize];
    let at = |len| cost(ContentCoding::Dcb, 5, len, &sizes);
    assert_eq!(at(1000), at(16 << 10));
    assert_eq!(at((16 << 10) + 1), at(32 << 10));
    assert_eq!(at(1 << 20), at(128 << 10), "past the largest class");
    // The classes are measured apart (with a prepared dictionary, a larger one need not
    // cost more).
    assert_ne!(at(16 << 10), at(128 << 10));
}

fn row(
    coding: ContentCoding,
    level: i32,
    bytes: usize,
    cost: f64,
    within: bool,
) -> CandidateReport {
    CandidateReport {
        kind: Some(DictionaryKind::Samples { count: 1 }),
        dictionary_len: 1,
        hash: [0; 32],
        coding,
        level,
        bytes,
        ratio: 1.0,
        served_len: 0,
        per_client_bytes: 0.0,
        break_even: None,
        cost,
        micros: 0.0,
        within_budget: within,
        chosen: false,
    }
}

#[test]
fn choose_takes_the_fewest_bytes_within_budget_else_the_cheapest() {
    let rows = [
        row(ContentCoding::Dcz, 3, 100, 1.0, true),
        row(ContentCoding::Dcz, 6, 90, 1.9, true),
        row(ContentCoding::Dcz, 9, 80, 3.0, false),
        row(ContentCoding::Dcb, 4, 70, 2.0, false),
        row(ContentCoding::Dcb, 5, 60, 1.5, false),
    ];
    assert_eq!(choose(&rows, ContentCoding::Dcz), Some(1));
    assert_eq!(choose(&rows, ContentCoding::Dcb), Some(4));
    assert_eq!(choose(&rows, ContentCoding::Br), None);
    let tie = [
        row(ContentCoding::Dcz, 5, 100, 1.5, true),
        row(ContentCoding::Dcz, 3, 100, 1.0, true),
    ];
    assert_eq!(
        choose(&tie, ContentCoding::Dcz),
        Some(1),
        "the lower level on a tie"
    );
}

#[test]
fn a_candidate_within_both_budgets_ranks_first() {
    let report = [
        row(ContentCoding::Dcz, 3, 100, 1.0, true),
        row(ContentCoding::Dcb, 5, 100, 2.0, false),
        row(ContentCoding::Dcz, 3, 150, 1.0, true),
        row(ContentCoding::Dcb, 5, 150, 1.0, true),
    ];
    let over = rank(&report, [Some(0), Some(1)], 10, 100);
    let within = rank(&report, [Some(2), Some(3)], 10, 100);
    assert!(within < over);
}

#[test]
fn the_dictionary_download_counts_against_its_responses() {
    // A small dictionary (1 KB served) sending 150 B a response against a large one (20 KB
    // served) sending 100 B: over 10 held-out samples, 100 B against 1500 B per response.
    let mut small = row(ContentCoding::Dcz, 3, 1500, 1.0, true);
    small.served_len = 1000;
    small.dictionary_len = 4000;
    let mut large = row(ContentCoding::Dcz, 3, 1000, 1.0, true);
    large.served_len = 20_000;
    large.dictionary_len = 80_000;
    let report = [small, large];
    let key = |row, per_client| rank(&report, [Some(row), None], 10, per_client);
    // 100 responses: 1000 + 15,000 against 20,000 + 10,000 bytes.
    assert!(key(0, 100) < key(1, 100));
    // 1000 responses: 1000 + 150,000 against 20,000 + 100,000 bytes.
    assert!(key(1, 1000) < key(0, 1000));
}

#[test]
fn break_even_is_the_first_count_that_repays_the_download() {
    use super::objective::{break_even, per_client_bytes};
    // 10 samples, 2000 B plain and 1500 B with it: 50 B saved a response, 1000 B served.
    assert_eq!(break_even(1000, 10, 1500, 2000), Some(20));
    assert_eq!(break_even(1001, 10, 1500, 2000), Some(21));
    assert_eq!(break_even(1000, 10, 2000, 2000), None, "no saving");
    assert_eq!(break_even(1000, 10, 2100, 2000), None, "worse than plain");
    let at = |n| per_client_bytes(1000, 10, n, 1500) < per_client_bytes(0, 10, n, 2000);
    assert!(!at(20) && at(21), "it pays past its break-even count");
}
