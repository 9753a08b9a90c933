//! Recorded API traffic: `reddit-api.jsonl` from the shared reference folder beside the
//! repository (`../shared/corpus/`, or the file `TOWER_GZIP_CORPUS` names). It is not part
//! of the repository: tests that measure on it skip when it is absent.

use std::path::PathBuf;

/// The environment variable naming the recorded corpus file, instead of the default path.
pub const CORPUS_ENV: &str = "TOWER_GZIP_CORPUS";

/// One recorded response: its recording (the split unit), request path and body.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub recording: String,
    pub path: String,
    pub body: Vec<u8>,
}

/// Where the recorded corpus is looked for.
pub fn recorded_path() -> PathBuf {
    match std::env::var_os(CORPUS_ENV) {
        Some(path) => PathBuf::from(path),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/reddit-api.jsonl")
        }
    }
}

/// Every recorded response, in file order; `None` (after one `skipped:` line on stderr)
/// when the file is absent.
pub fn recorded() -> Option<Vec<Recorded>> {
    let path = recorded_path();
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: the recorded corpus {} is absent", path.display());
        return None;
    };
    let field =
        |line: &serde_json::Value, name: &str| line[name].as_str().unwrap_or_default().to_owned();
    let responses = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .map(|line| Recorded {
            recording: field(&line, "recording"),
            path: field(&line, "path"),
            body: field(&line, "body").into_bytes(),
        })
        .collect();
    Some(responses)
}

/// How many held-out bodies recorded-traffic figures are measured on.
pub const HELD_OUT_BODIES: usize = 300;

/// The recorded corpus split by recording: no recording has bodies on both sides.
#[derive(Clone, Debug)]
pub struct RecordedSplit<'a> {
    /// Every body of the recordings not held out, in file order: what dictionaries are
    /// built from.
    pub training: Vec<&'a Recorded>,
    /// [`HELD_OUT_BODIES`] bodies of the held-out recordings: what figures are measured on.
    pub held_out: Vec<&'a Recorded>,
}

/// Splits `responses` by recording, the same way every time: recordings are taken in the
/// order of the FNV-1a hash of their names, whole, into the held-out side until it holds
/// at least [`HELD_OUT_BODIES`] bodies; the rest train. The measured bodies are then taken
/// from the held-out recordings in turn, one body of each per round (in file order within
/// a recording), so that no one recording (the corpus's largest holds 224 bodies) makes
/// most of the figure.
pub fn recorded_split(responses: &[Recorded]) -> RecordedSplit<'_> {
    let mut names: Vec<&str> = Vec::new();
    for r in responses {
        if !names.contains(&r.recording.as_str()) {
            names.push(&r.recording);
        }
    }
    names.sort_by_key(|name| (fnv1a(name), *name));
    let mut held: Vec<Vec<&Recorded>> = Vec::new();
    for name in names {
        if held.iter().map(Vec::len).sum::<usize>() >= HELD_OUT_BODIES {
            break;
        }
        held.push(responses.iter().filter(|r| r.recording == name).collect());
    }
    let is_held = |r: &Recorded| held.iter().any(|h| h[0].recording == r.recording);
    let training = responses.iter().filter(|r| !is_held(r)).collect();
    let mut held_out = Vec::with_capacity(HELD_OUT_BODIES);
    for round in 0.. {
        let before = held_out.len();
        for r in held.iter().filter_map(|bodies| bodies.get(round)) {
            if held_out.len() < HELD_OUT_BODIES {
                held_out.push(*r);
            }
        }
        if held_out.len() == before {
            break;
        }
    }
    RecordedSplit { training, held_out }
}

/// The 64-bit FNV-1a hash: a fixed, documented order of recordings.
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
