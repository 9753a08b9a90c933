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
