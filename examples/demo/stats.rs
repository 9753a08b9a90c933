//! `GET /stats`: pool, compression, per-coding and wire counters as JSON.

use axum::Json;
use axum::extract::{ConnectInfo, State};
use serde_json::{Map, Value, json};
use tower_gzip::ContentCoding;
use tower_gzip::compression::{CompressionStats, Governor, SkipReason};
use tower_gzip::{
    CodecPool,
    pool::{KindStats, PoolStats},
};

use crate::alloc;
use crate::bodies::load;
use tower_gzip::dictionary::learn::Learner;

use crate::{AppState, Dictionaries, Mode, routes};

fn kind(k: KindStats) -> Value {
    json!({
        "created": k.created, "reused": k.reused, "returned": k.returned,
        "discarded": k.discarded, "idle": k.idle, "in_use": k.in_use(),
        "parked": k.parked, "reclaimed": k.reclaimed, "primed_bytes": k.primed_bytes,
    })
}

/// Every kind of pooled state by name (kinds whose feature is off stay at zero).
fn pool(stats: PoolStats) -> Value {
    let pool: Map<String, Value> = stats
        .kinds()
        .map(|(name, k)| (name.to_string(), kind(k)))
        .collect();
    Value::Object(pool)
}

/// Responses skipped, by reason (the reasons that happened).
fn skipped_for(ours: &CompressionStats) -> Value {
    let reasons = SkipReason::ALL
        .into_iter()
        .map(|r| (r, ours.skipped_for(r)));
    let seen = reasons.filter(|&(_, n)| n > 0);
    Value::Object(seen.map(|(r, n)| (r.to_string(), n.into())).collect())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Requests that named a dictionary and what became of them, the dictionaries kept, and the
/// API dictionary.
fn dictionaries(d: &Dictionaries, ours: &CompressionStats) -> Value {
    let x = ours.dictionaries();
    json!({
        "hits": x.hits, "unknown": x.unknown, "refused": x.refused, "not_offered": x.not_offered,
        "store": { "dictionaries": d.store.len(), "bytes": d.store.bytes() },
        "api": api(d),
        "learned": d.learner.as_ref().map(learned),
        "schema": routes::SCHEMA.load(std::sync::atomic::Ordering::Relaxed),
        "codings": d.codings.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
    })
}

/// The API dictionary announced now: the learned one, else the file's.
fn api(d: &Dictionaries) -> Value {
    let Some((api, url)) = d.announced() else {
        return Value::Null;
    };
    json!({
        "url": url, "match": api.metadata().map(|m| m.match_pattern()), "len": api.bytes().len(),
        "id": api.metadata().and_then(|m| m.id()),
        "sha256": hex(&api.hash()),
        "available_dictionary": api.available_dictionary().to_str().unwrap_or_default(),
    })
}

/// What the learner did for `/api/items`: samples, builds, the dictionaries it holds, and
/// what the current one saves against plain zstd 3.
fn learned(learner: &Learner) -> Value {
    let Some(r) = learner.stats().into_iter().next() else {
        return Value::Null;
    };
    let refused = r
        .refusals()
        .filter(|&(_, count)| count > 0)
        .map(|(why, count)| (why.to_string(), json!(count)));
    json!({
        "match": r.pattern, "phase": format!("{:?}", r.phase).to_lowercase(),
        "taken": r.taken, "refused": refused.collect::<Map<_, _>>(),
        "samples": r.samples, "sample_bytes": r.sample_bytes,
        "builds": r.builds, "failed_builds": r.failed_builds, "published": r.published,
        "loaded": r.loaded, "retired": r.retired, "held": r.held,
        "clients": r.clients, "clients_needed": r.clients_needed, "pending": r.pending,
        "current": r.current.map(|c| json!({
            "version": c.version, "sha256": hex(&c.hash), "len": c.len, "url": c.url,
            "dcz_level": c.dcz_level, "built_savings": c.built_savings, "savings": c.savings,
        })),
    })
}

/// The load governor's step, the share of the cores compression took, and the level each
/// coding used last.
fn governor(governor: &Governor) -> Value {
    let stats = governor.stats();
    let levels = stats.levels.iter().filter_map(|(coding, level)| {
        level.map(|level| (coding.as_str().to_owned(), json!(level)))
    });
    json!({
        "step": stats.step, "busy_share": stats.busy_share,
        "steps_down": stats.steps_down, "steps_up": stats.steps_up, "shed": stats.shed,
        "levels": levels.collect::<Map<_, _>>(),
    })
}

/// The pool, compression and per-coding objects: our layer's counters, or for tower-http
/// (no pool, no counters) zeros for the pool and the wire counters (responses with and
/// without Content-Encoding, and their body bytes) for the rest.
fn counters(state: &AppState) -> (Value, Value, Map<String, Value>) {
    let wire = &state.wire;
    let Some(ours) = &state.compression else {
        let codings = wire.codings.iter().map(|(format, responses, bytes)| {
            let value = json!({
                "compressed": load(responses), "bytes_in": null, "bytes_out": load(bytes),
            });
            (format.as_str().to_owned(), value)
        });
        let compression = json!({
            "compressed": load(&wire.encoded),
            "skipped": load(&wire.responses) - load(&wire.encoded),
            "bytes_in": null, "bytes_out": null,
        });
        return (pool(PoolStats::default()), compression, codings.collect());
    };
    let global = CodecPool::global();
    let c = ours.total();
    let skipped: u64 = SkipReason::ALL.iter().map(|&r| ours.skipped_for(r)).sum();
    let all = ContentCoding::ALL
        .iter()
        .map(|&f| (f.as_str(), ours.coding(f)));
    let codings = all.map(|(name, c)| {
        let value = json!({
            "compressed": c.compressed, "bytes_in": c.bytes_in, "bytes_out": c.bytes_out,
        });
        (name.to_owned(), value)
    });
    let compression = json!({
        "compressed": c.compressed, "skipped": skipped,
        "bytes_in": c.bytes_in, "bytes_out": c.bytes_out,
        "skipped_for": skipped_for(ours),
    });
    (pool(global.stats()), compression, codings.collect())
}

pub async fn stats(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
) -> Json<Value> {
    let exact = peer.ip().to_canonical().is_loopback();
    let wire = &state.wire;
    let (pool, compression, codings) = counters(&state);
    let alloc::Counts {
        allocations, bytes, ..
    } = alloc::total();
    // Ours: dictionary transport, and the codings most preferred first (dictionary codings
    // win when a request can have one). tower-http: no dictionaries, its fixed order.
    let (dict, prefer) = match (&state.dictionaries, &state.compression) {
        (Some(d), Some(ours)) => {
            let order = d.codings.iter().map(|c| c.as_str());
            let order = order.chain(d.prefer.iter().map(|f| f.as_str()));
            (dictionaries(d, ours), json!(order.collect::<Vec<_>>()))
        }
        _ => {
            let order = ContentCoding::PLAIN.iter().map(|f| f.as_str());
            (Value::Null, json!(order.collect::<Vec<_>>()))
        }
    };
    #[cfg(feature = "websocket")]
    let websocket = crate::websocket::stats();
    #[cfg(not(feature = "websocket"))]
    let websocket = Value::Null;
    Json(json!({
        "allocator": { "allocations": allocations, "bytes": bytes },
        "websocket": websocket,
        "governor": state.governor.as_ref().map(governor),
        "cache": state.cache.as_ref().map(|(cache, budget)| crate::cache::stats(cache, *budget, exact)),
        "mode": match state.mode { Mode::TowerGzip => "tower-gzip", Mode::TowerHttp => "tower-http" },
        "prefer": prefer,
        "dictionaries": dict,
        "pool": pool,
        "compression": compression,
        "codings": codings,
        "wire": {
            "responses": load(&wire.responses), "encoded": load(&wire.encoded),
            "bytes_in": load(&wire.bytes_in), "bytes_out": load(&wire.bytes_out),
        },
    }))
}
