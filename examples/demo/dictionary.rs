//! The API's dictionary (RFC 9842), `match="/api/items*"`: learned from the responses
//! `/api/items` sends (`--learn`, the default without `--dictionary FILE`: sampled, built
//! with `DictionaryBuilder` off the request path, published under
//! `/.well-known/dictionaries/<sha-256>`, rebuilt when the schema changes), or loaded from a
//! file built at deploy time (`--dictionary FILE`, served at `/dictionary`). `GET /`
//! announces the current one with a `Link` header.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use axum::extract::ConnectInfo;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::dictionary::learn::{ClientId, DirStorage, LearnedRoute, Learner};
use tower_gzip::dictionary::{Dictionary, DictionaryStore};
use tracing::info;

/// Where a dictionary file is served, and what it serves.
pub const URL: &str = "/dictionary";
pub const API_MATCH: &str = "/api/items*";
/// `dcz`'s CPU budget per response, a multiple of plain zstd 3's: the API's responses are
/// ~1 KiB, where a denser level costs microseconds and saves a tenth of the bytes.
/// (Level 12 on a 64 KiB dictionary: 0.66x plain zstd's bytes on unseen 5-item responses,
/// against 0.72x at the default budget's level 6.)
const BUDGET: f64 = 4.0;

/// The dictionary in `path` (`--dictionary FILE`).
pub fn load(path: &Path) -> Result<Dictionary, Box<dyn std::error::Error>> {
    let d = Dictionary::load(path, UseAsDictionary::new(API_MATCH))
        .map_err(|e| format!("--dictionary {}: {e}", path.display()))?;
    info!(path = %path.display(), len = d.bytes().len(), "API dictionary loaded");
    Ok(d)
}

/// Learning for `/api/items`, into `store`; shared through `dir` (`--dictionary-dir`),
/// listed every `poll` (`--dictionary-poll SECS`, default 10 s). A client is a peer IP
/// address (axum's `ConnectInfo`, which `main` serves with): a dictionary holds only what
/// responses to 3 distinct addresses or more had in common, so one browser on localhost
/// alone never gets one (`/stats` says so; the tests send from 127.0.0.2 to .8).
pub fn learner(
    store: &DictionaryStore,
    dir: Option<&Path>,
    poll: Option<Duration>,
) -> Result<Learner, Box<dyn std::error::Error>> {
    let mut builder = Learner::builder()
        .route(LearnedRoute::new(API_MATCH).cpu_budget(BUDGET, 1.3))
        .client(|parts| {
            let ConnectInfo(peer) = parts.extensions.get::<ConnectInfo<SocketAddr>>()?;
            Some(ClientId::from(*peer))
        })
        .store(store.clone());
    if let Some(dir) = dir {
        let storage =
            DirStorage::new(dir).map_err(|e| format!("--dictionary-dir {}: {e}", dir.display()))?;
        builder = builder.storage(storage);
    }
    if let Some(poll) = poll {
        builder = builder.poll_interval(poll);
    }
    info!(route = API_MATCH, shared = ?dir, "learning the API dictionary from its responses");
    Ok(builder.build()?)
}
