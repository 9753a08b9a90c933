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
