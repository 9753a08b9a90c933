//! `GET /stats`: pool, compression, per-coding and wire counters as JSON.

use axum::Json;
use axum::extract::State;
use serde_json::{Map, Value, json};
use tower_gzip::codec::Format;
use tower_gzip::{CodecPool, KindStats, PoolStats};

use crate::alloc;
use crate::bodies::load;
use crate::{AppState, Mode};

fn kind(k: KindStats) -> Value {
    json!({
        "created": k.created, "reused": k.reused, "returned": k.returned,
        "discarded": k.discarded, "idle": k.idle, "in_use": k.in_use(),
    })
}

/// Every kind of pooled state by name (kinds whose feature is off stay at zero), and
/// `max_idle`.
fn pool(stats: PoolStats, max_idle: Value) -> Value {
    let mut pool: Map<String, Value> = stats
        .kinds()
        .into_iter()
        .map(|(name, k)| (name.to_owned(), kind(k)))
        .collect();
    pool.insert("max_idle".to_owned(), max_idle);
    Value::Object(pool)
}

pub async fn stats(State(state): State<AppState>) -> Json<Value> {
    let wire = &state.wire;
    let (pool, compression, codings) = match &state.compression {
        Some(ours) => {
            let global = CodecPool::global();
            let c = ours.snapshot();
            let codings = Format::ALL.iter().map(|&format| {
                let c = ours.coding(format);
                let value = json!({
                    "compressed": c.compressed, "bytes_in": c.bytes_in, "bytes_out": c.bytes_out,
                });
                (format.as_str().to_owned(), value)
            });
            (
                pool(global.stats(), global.max_idle().into()),
                json!({
                    "compressed": c.compressed, "skipped": c.skipped,
                    "bytes_in": c.bytes_in, "bytes_out": c.bytes_out,
                }),
                codings.collect::<Map<_, _>>(),
            )
        }
        // tower-http has no pool and no counters: zeros for the pool, and the wire counters
        // (responses with and without Content-Encoding, and their body bytes) for the rest.
        None => {
            let codings = wire.codings.iter().map(|(format, responses, bytes)| {
                let value = json!({
                    "compressed": load(responses), "bytes_in": null, "bytes_out": load(bytes),
                });
                (format.as_str().to_owned(), value)
            });
            (
                pool(PoolStats::default(), Value::Null),
                json!({
                    "compressed": load(&wire.encoded),
                    "skipped": load(&wire.responses) - load(&wire.encoded),
                    "bytes_in": null, "bytes_out": null,
                }),
                codings.collect::<Map<_, _>>(),
            )
        }
    };
    let alloc::Counts {
        allocations, bytes, ..
    } = alloc::total();
    Json(json!({
        "allocator": { "allocations": allocations, "bytes": bytes },
        "mode": match state.mode { Mode::TowerGzip => "tower-gzip", Mode::TowerHttp => "tower-http" },
        "pool": pool,
        "compression": compression,
        "codings": codings,
        "wire": {
            "responses": load(&wire.responses), "encoded": load(&wire.encoded),
            "bytes_in": load(&wire.bytes_in), "bytes_out": load(&wire.bytes_out),
        },
    }))
}
