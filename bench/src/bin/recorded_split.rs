//! Writes the recorded corpus's split (`tower_gzip_support::corpus::recorded_split`) as one
//! file per body, for the dictionary command line: the training side's bodies in
//! `DIR/train/`, the 300 measured held-out bodies in `DIR/held/` (BENCHMARKS.md,
//! "Dictionaries on recorded API traffic").
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin recorded_split -- DIR
//! ```
//!
//! Exits with 1 when the corpus (`../shared/corpus/reddit-api.jsonl`, or the file
//! `TOWER_GZIP_CORPUS` names) is absent.

use std::path::Path;
use std::process::ExitCode;

use tower_gzip_support::corpus::{Recorded, recorded, recorded_split};

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: recorded_split DIR");
        return ExitCode::from(2);
    };
    let Some(responses) = recorded() else {
        return ExitCode::from(1);
    };
    let split = recorded_split(&responses);
    for (side, bodies) in [("train", &split.training), ("held", &split.held_out)] {
        if let Err(e) = write(&Path::new(&dir).join(side), bodies) {
            eprintln!("recorded_split: {side}: {e}");
            return ExitCode::from(1);
        }
    }
    let recordings = |bodies: &[&Recorded]| {
        let mut names: Vec<&str> = bodies.iter().map(|r| r.recording.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    };
    let bytes = |bodies: &[&Recorded]| bodies.iter().map(|r| r.body.len()).sum::<usize>();
    println!(
        "train: {} bodies ({} B) of {} recordings; held: {} bodies ({} B) of {} recordings",
        split.training.len(),
        bytes(&split.training),
        recordings(&split.training),
        split.held_out.len(),
        bytes(&split.held_out),
        recordings(&split.held_out),
    );
    ExitCode::SUCCESS
}

/// `bodies` as `dir/0000.json`, `dir/0001.json`, ...
fn write(dir: &Path, bodies: &[&Recorded]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (i, r) in bodies.iter().enumerate() {
        std::fs::write(dir.join(format!("{i:04}.json")), &r.body)?;
    }
    Ok(())
}
