//! The API dictionary (RFC 9842): 16 KiB trained with zstd's trainer on `/api/items`
//! responses at start-up, or loaded from a file built at deploy time (`--dictionary FILE`;
//! `--save-dictionary FILE` writes the trained one). Served at `/dictionary` with
//! `match="/api/items*"`; `GET /` announces it with a `Link` header.

use std::path::Path;
use std::time::Instant;

use tower_gzip::dictionary::Dictionary;
use tower_gzip::headers::UseAsDictionary;
use tracing::info;

use crate::routes::{items_json, mix};

/// Where the dictionary is served, and what it serves.
pub const URL: &str = "/dictionary";
pub const API_MATCH: &str = "/api/items*";
/// The trained dictionary's size bound.
pub const SIZE: usize = 16 << 10;
/// Training: this many responses of 1 to 10 items, each from a start below
/// [`TRAINING_STARTS`]. The measurements (and tests) use starts from 10^8 up, which the
/// training never saw.
pub const SAMPLES: u64 = 1000;
pub const TRAINING_STARTS: u64 = 100_000;

/// The training corpus: deterministic, so every instance of a deploy trains the same
/// dictionary (same bytes, same hash).
pub fn samples() -> Vec<Vec<u8>> {
    (0..SAMPLES)
        .map(|k| items_json(mix(k) % TRAINING_STARTS, 1 + k % 10))
        .collect()
}

/// The API dictionary: loaded from `load` if given, else trained (`None` without the `zstd`
/// feature, which has the trainer); written to `save` if given.
pub fn api_dictionary(
    load: Option<&Path>,
    save: Option<&Path>,
) -> Result<Option<Dictionary>, Box<dyn std::error::Error>> {
    let metadata = UseAsDictionary::new(API_MATCH);
    let dictionary = match load {
        Some(path) => {
            let d = Dictionary::load(path, metadata)
                .map_err(|e| format!("--dictionary {}: {e}", path.display()))?;
            info!(path = %path.display(), len = d.bytes().len(), "API dictionary loaded");
            d
        }
        None => match train(metadata)? {
            Some(d) => d,
            None if save.is_some() => return Err("--save-dictionary: nothing to save".into()),
            None => return Ok(None),
        },
    };
    if let Some(path) = save {
        dictionary
            .save(path)
            .map_err(|e| format!("--save-dictionary {}: {e}", path.display()))?;
        info!(path = %path.display(), "API dictionary saved");
    }
    Ok(Some(dictionary))
}

#[cfg(feature = "zstd")]
fn train(metadata: UseAsDictionary) -> Result<Option<Dictionary>, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let samples = samples();
    let bytes = tower_gzip::dictionary::train(&samples, SIZE)?;
    let d = Dictionary::new(bytes, metadata)?;
    let total: usize = samples.iter().map(Vec::len).sum();
    let ms = started.elapsed().as_millis() as u64;
    info!(
        samples = samples.len(),
        sample_bytes = total,
        len = d.bytes().len(),
        ms,
        "API dictionary trained"
    );
    Ok(Some(d))
}

/// Without zstd there is no trainer: no API dictionary unless `--dictionary FILE`.
#[cfg(not(feature = "zstd"))]
fn train(_: UseAsDictionary) -> Result<Option<Dictionary>, Box<dyn std::error::Error>> {
    let _ = (Instant::now(), samples, SIZE);
    tracing::warn!(
        "no API dictionary: training needs the `zstd` feature (or pass --dictionary FILE)"
    );
    Ok(None)
}
