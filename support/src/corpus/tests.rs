//! The corpus's own checks: run where a test crate includes it.

use super::*;

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    assert_eq!(bodies(50, 7), bodies(50, 7));
    assert_ne!(bodies(50, 7), bodies(50, 8));
    // Response i does not depend on how many are asked for.
    assert_eq!(bodies(10, 7)[..], bodies(50, 7)[..10]);
}

#[test]
fn every_response_is_valid_pretty_json_in_the_size_range() {
    let all = responses(600, 3);
    for response in &all {
        let value: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
        // serde_json's pretty printer writes the same bytes where keys are sorted; here
        // check the layout instead: two-space indents, "key": value.
        let text = std::str::from_utf8(&response.body).unwrap();
        assert!(
            text.starts_with("[\n  {\n") || text.starts_with("{\n  \""),
            "{text:.40}"
        );
        assert!(
            text.lines()
                .all(|l| (l.len() - l.trim_start().len()) % 2 == 0)
        );
        assert!(value.is_object() || value.is_array());
        assert!(
            (250..=64 * 1024).contains(&response.body.len()),
            "{}",
            response.body.len()
        );
    }
    for &(shape, _) in Shape::MIX {
        assert!(
            all.iter().any(|r| r.shape == shape),
            "{shape:?} never drawn"
        );
    }
}

#[test]
fn sizes_are_mostly_one_to_four_kib() {
    let mut sizes: Vec<usize> = bodies(2000, 1).iter().map(Vec::len).collect();
    sizes.sort_unstable();
    let share = |lo: usize, hi: usize| {
        sizes.iter().filter(|&&n| n >= lo && n < hi).count() as f64 / sizes.len() as f64
    };
    let median = sizes[sizes.len() / 2];
    println!(
        "median {median} B, min {}, max {}; <1 KiB {:.0}%, 1-4 KiB {:.0}%, 4-16 KiB {:.0}%, \
         16-64 KiB {:.0}%",
        sizes[0],
        sizes[sizes.len() - 1],
        100.0 * share(0, 1024),
        100.0 * share(1024, 4096),
        100.0 * share(4096, 16_384),
        100.0 * share(16_384, 65_537),
    );
    assert!((1536..=3072).contains(&median), "{median}");
    let all = responses(2000, 1);
    for &(shape, _) in Shape::MIX {
        let mut of: Vec<usize> = all
            .iter()
            .filter(|r| r.shape == shape)
            .map(|r| r.body.len())
            .collect();
        of.sort_unstable();
        println!(
            "{shape:?}: {} responses, {}-{} B, median {}",
            of.len(),
            of[0],
            of[of.len() - 1],
            of[of.len() / 2]
        );
    }
    assert!(share(1024, 4096) >= 0.5);
    assert!(share(16_384, 65_537) > 0.01);
}

#[test]
fn the_split_never_shares_a_response() {
    let split = split(400, 5);
    assert_eq!(split.training.len(), 300);
    assert_eq!(split.held_out.len(), 100);
    for body in &split.held_out {
        assert!(!split.training.contains(body));
    }
}

/// `n` recordings of `sizes[i]` bodies each, named `r<i>`, bodies `r<i>/<j>`.
fn recordings(sizes: &[usize]) -> Vec<Recorded> {
    let mut all = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        for j in 0..n {
            all.push(Recorded {
                recording: format!("r{i}"),
                path: format!("/r{i}/{j}"),
                body: format!("r{i}/{j}").into_bytes(),
            });
        }
    }
    all
}

#[test]
fn the_recorded_split_keeps_recordings_whole_and_spreads_the_measured_bodies() {
    // One large recording among many small ones, as in the recorded corpus.
    let mut sizes = vec![224];
    sizes.extend((0..200).map(|i| 1 + i % 5));
    let all = recordings(&sizes);
    let split = recorded_split(&all);
    assert_eq!(split.held_out.len(), HELD_OUT_BODIES);
    let names = |side: &[&Recorded]| {
        let mut names: Vec<String> = side.iter().map(|r| r.recording.clone()).collect();
        names.sort_unstable();
        names.dedup();
        names
    };
    let (training, held) = (names(&split.training), names(&split.held_out));
    assert!(
        training.iter().all(|n| !held.contains(n)),
        "a recording on both sides"
    );
    // Every body of a training recording trains; none is measured twice.
    let held_bodies: std::collections::HashSet<&[u8]> =
        split.held_out.iter().map(|r| r.body.as_slice()).collect();
    assert_eq!(held_bodies.len(), HELD_OUT_BODIES);
    let trained = all
        .iter()
        .filter(|r| training.contains(&r.recording))
        .count();
    assert_eq!(split.training.len(), trained);
    // One body per held-out recording per round: every held-out recording is measured,
    // and no recording gives more than one body more than another that still had bodies.
    let count = |name: &str| {
        split
            .held_out
            .iter()
            .filter(|r| r.recording == name)
            .count()
    };
    let size = |name: &str| all.iter().filter(|r| r.recording == name).count();
    for a in &held {
        assert!(count(a) >= 1, "{a} is held out but never measured");
        for b in &held {
            let exhausted = count(b) == size(b);
            assert!(exhausted || count(a) <= count(b) + 1, "{a} {b}");
        }
    }
    // The same input splits the same way.
    let again = recorded_split(&all);
    let bodies = |s: &RecordedSplit<'_>| {
        s.held_out
            .iter()
            .map(|r| r.body.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(bodies(&split), bodies(&again));
}
