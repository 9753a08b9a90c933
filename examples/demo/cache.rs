//! The demo's cache of compressed representations (`--cache BYTES`, on by default;
//! `--no-cache`), and the static folder `/static/` serves through tower-http's `ServeDir`,
//! whose strong `ETag`s let the cache keep its files by validator.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tower_gzip::cache::VariantCache;
use tower_gzip::compression::Governor;

/// The cache's budget unless `--cache` says otherwise.
pub const DEFAULT_BUDGET: u64 = 64 << 20;

/// `--cache`'s value: bytes, with an optional `KiB`/`MiB`/`GiB` (or `K`/`M`/`G`) suffix.
pub fn parse_bytes(value: &str) -> Result<u64, String> {
    let value = value.trim();
    let digits = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => {
            return Err(format!(
                "--cache: unknown unit in {value:?} (KiB, MiB, GiB)"
            ));
        }
    };
    let number: u64 = number
        .parse()
        .map_err(|_| format!("--cache: {value:?} is not a size"))?;
    number
        .checked_shl(shift)
        .filter(|bytes| bytes >> shift == number)
        .ok_or_else(|| format!("--cache: {value:?} is too large"))
}

/// The cache: `budget` bytes, streamed files kept by their `ETag`, the background
/// recompression paused while the governor (with `--adaptive`) reports pressure.
pub fn build(budget: u64, governor: Option<&Governor>) -> VariantCache {
    let builder = VariantCache::builder().budget(budget).by_etag(true);
    match governor {
        Some(governor) => {
            let governor = governor.clone();
            builder
                .pause_when(move || governor.under_pressure())
                .build()
        }
        None => builder.build(),
    }
}

/// The folder `/static/` serves: `--static DIR`, or a folder of the demo's own made at start
/// (the page's script and a catalogue of items, as a site's build step would leave them).
pub fn static_dir(dir: Option<PathBuf>) -> std::io::Result<PathBuf> {
    if let Some(dir) = dir {
        return Ok(dir);
    }
    let dir = std::env::temp_dir().join(format!("tower-gzip-demo-static-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    write(&dir, "app.js", crate::assets::APP_V1.as_bytes())?;
    write(&dir, "catalogue.json", &crate::routes::items_json(0, 2_000))?;
    Ok(dir)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(dir.join(name), bytes)
}

/// `/stats`' `cache` object: what the cache did and holds, for a loopback client (`exact`:
/// the person running the demo). Its counts would tell anyone else whether a body was
/// compressed for another client before (a hit), so a remote client sees the budget alone.
pub fn stats(cache: &VariantCache, budget: u64, exact: bool) -> Value {
    if !exact {
        let why = "the cache's counts are shown to loopback clients only: \
                   a hit would tell you a body was compressed for someone else";
        return json!({ "budget": budget, "hidden": why });
    }
    let s = cache.stats();
    json!({
        "hits": s.hits, "misses": s.misses, "refused": s.refused, "admitted": s.admitted,
        "evicted": s.evicted, "entries": s.entries, "bytes": s.bytes, "budget": budget,
        "recompressed": s.recompressed, "recompress_saved": s.recompress_saved,
        "recompress_dropped": s.recompress_dropped, "pinned": s.pinned,
    })
}
