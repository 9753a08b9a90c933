//! The demo's handlers, except `/stats` (see `stats.rs`).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::BytesMut;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::AppState;

const MAX_ITEMS: u64 = 100_000;
/// The largest `start` of `/api/items`: ids up to 10^9 + 10^5.
pub const MAX_START: u64 = 1_000_000_000;
const MAX_EVENTS: u64 = 10_000;
const MAX_BIG: u64 = 256 << 20;
const BIG_CHUNK: u64 = 64 << 10;

type Params = Query<HashMap<String, String>>;

/// The integer query parameter `key`, or `default`; 400 if malformed or outside `range`.
fn param(
    q: &HashMap<String, String>,
    key: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, (StatusCode, String)> {
    let bad = |why: &str| {
        let (lo, hi) = (range.start(), range.end());
        (
            StatusCode::BAD_REQUEST,
            format!("{key}: {why} (allowed: {lo}..={hi})\n"),
        )
    };
    let value = match q.get(key) {
        None => default,
        Some(v) => v.parse().map_err(|_| bad("not an integer"))?,
    };
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(bad("out of range"))
    }
}

/// A small, stable hash, so that every value below derives from the index alone.
pub fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "alpha", "bridge", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo",
    "juniper", "kestrel", "lantern", "meadow", "nimbus", "orchid", "prairie", "quartz", "raven",
    "saffron", "timber", "umber", "velvet", "willow", "xenon", "yarrow", "zephyr", "the", "of",
    "and", "a", "to", "in", "is", "it", "with", "for", "on", "over", "under", "compressed",
    "stream", "window", "block", "frame", "pool", "layer", "tower", "gzip",
];
#[rustfmt::skip]
const TAGS: &[&str] = &[
    "new", "sale", "eco", "bulk", "gift", "outdoor", "kitchen", "garden", "tools", "toys",
];

fn item(i: u64) -> Value {
    let h = mix(i);
    let words: Vec<&str> = (0..6)
        .map(|k| WORDS[(mix(i * 8 + k) % WORDS.len() as u64) as usize])
        .collect();
    json!({
        "id": i,
        "name": format!("item-{i:06}"),
        "sku": format!("SKU-{:08X}", h as u32),
        "price": (h % 100_000) as f64 / 100.0,
        "in_stock": h % 7 != 0,
        "tags": [TAGS[(h >> 20) as usize % TAGS.len()], TAGS[(h >> 40) as usize % TAGS.len()]],
        "description": format!("A {} {} made for {} {}, {} {}.",
            words[0], words[1], words[2], words[3], words[4], words[5]),
    })
}

/// The items' second shape (`POST /api/schema?v=1`): the same facts under other names,
/// nested, as an API's next version might send them. A dictionary learned on the first
/// shape saves little on it.
fn item_v1(i: u64) -> Value {
    let h = mix(i);
    json!({
        "itemId": format!("itm_{i:x}"),
        "attributes": {
            "title": format!("Item number {i}"),
            "stockKeepingUnit": format!("{:08x}", h as u32),
            "availability": if h % 7 != 0 { "IN_STOCK" } else { "BACKORDERED" },
        },
        "pricing": { "amountMinor": h % 100_000, "currencyCode": "EUR" },
        "labels": [TAGS[(h >> 20) as usize % TAGS.len()]],
        "links": { "self": format!("https://shop.example.com/v1/items/{i}") },
    })
}

/// The shape `/api/items` answers in: 0 (the first) or 1, switched at run time.
pub static SCHEMA: AtomicU8 = AtomicU8::new(0);

/// The body of `/api/items?n=N&start=S`: items S..S+N as a JSON array, in the current shape.
pub fn items_json(start: u64, n: u64) -> Vec<u8> {
    let item = match SCHEMA.load(Ordering::Relaxed) {
        0 => item,
        _ => item_v1,
    };
    serde_json::to_vec(&(start..start + n).map(item).collect::<Vec<_>>()).expect("plain JSON")
}

/// `POST /api/schema?v=0|1`: switches the shape of `/api/items` (a deploy that changes an
/// API's schema: the learned dictionary's savings fall and the next one is learned).
pub async fn set_schema(Query(q): Params) -> Result<String, (StatusCode, String)> {
    let v = param(&q, "v", 0, 0..=1)?;
    SCHEMA.store(v as u8, Ordering::Relaxed);
    Ok(format!("schema {v}\n"))
}

/// `GET /api/items?n=N&start=S`: a deterministic JSON array of the N records from index S
/// (default 0, at most 10^9), ~180 bytes each.
/// A request naming a dictionary's `id` (`Dictionary-ID`, sent by a browser holding a learned
/// one) sees it echoed in `X-Dictionary-Id`, so the page can show which one it used.
pub async fn items(Query(q): Params, headers: HeaderMap) -> Result<Response, (StatusCode, String)> {
    let n = param(&q, "n", 10, 0..=MAX_ITEMS)?;
    let start = param(&q, "start", 0, 0..=MAX_START)?;
    let body = items_json(start, n);
    let mut res = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(id) = headers.get("dictionary-id") {
        res.headers_mut().insert("x-dictionary-id", id.clone());
    }
    Ok(res)
}

/// `GET /events?n=N&interval_ms=M`: N server-sent events, one frame each, M ms apart.
pub async fn events(
    State(state): State<AppState>,
    Query(q): Params,
) -> Result<Response, (StatusCode, String)> {
    let n = param(&q, "n", 5, 0..=MAX_EVENTS)?;
    let interval = param(&q, "interval_ms", 100, 1..=60_000)?;
    let mut ticker = tokio::time::interval(Duration::from_millis(interval));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stream = futures_util::stream::unfold(
        (0, ticker, state.shutdown),
        move |(i, mut ticker, mut stop)| async move {
            if i >= n {
                return None;
            }
            tokio::select! {
                _ = ticker.tick() => {}
                _ = stop.wait_for(|&stop| stop) => return None,
            }
            let event = Bytes::from(format!("data: {{\"tick\":{i}}}\n\n"));
            Some((Ok::<_, Infallible>(event), (i + 1, ticker, stop)))
        },
    );
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
    ];
    // Fused: tower-http's compression polls a body again after its end.
    Ok((headers, Body::from_stream(stream.fuse())).into_response())
}

/// Lines of words, generated as they are needed.
struct Text {
    seed: u64,
    line: u64,
    column: usize,
    carry: Vec<u8>,
}

impl Text {
    fn new() -> Self {
        Text {
            seed: 1,
            line: 0,
            column: 0,
            carry: Vec::new(),
        }
    }

    /// The next `len` bytes of text.
    fn chunk(&mut self, len: usize) -> Bytes {
        let mut buf = BytesMut::with_capacity(len + 64);
        buf.extend_from_slice(&self.carry);
        while buf.len() < len {
            if self.column == 0 {
                self.line += 1;
                buf.extend_from_slice(format!("{:>7}  ", self.line).as_bytes());
            }
            self.seed = mix(self.seed);
            let word = WORDS[(self.seed % WORDS.len() as u64) as usize];
            buf.extend_from_slice(word.as_bytes());
            self.column += word.len() + 1;
            let end = if self.column > 70 { b'\n' } else { b' ' };
            buf.extend_from_slice(&[end]);
            if end == b'\n' {
                self.column = 0;
            }
        }
        self.carry = buf.split_off(len).to_vec();
        buf.freeze()
    }
}

/// `GET /big.txt?size=BYTES`: exactly BYTES bytes of text, streamed in 64 KiB chunks.
pub async fn big_txt(Query(q): Params) -> Result<Response, (StatusCode, String)> {
    let size = param(&q, "size", 4 << 20, 0..=MAX_BIG)?;
    let stream = futures_util::stream::unfold((size, Text::new()), |(left, mut text)| async move {
        let len = left.min(BIG_CHUNK);
        (len > 0).then(|| {
            (
                Ok::<_, Infallible>(text.chunk(len as usize)),
                (left - len, text),
            )
        })
    });
    let content_type = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    // Fused: tower-http's compression polls a body again after its end.
    Ok((content_type, Body::from_stream(stream.fuse())).into_response())
}

/// `GET /image.png`: never compressed (the default predicate skips `image/*`).
pub async fn image_png(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "image/png")], state.png)
}

/// `POST /api/echo`: the (decompressed) request body, with the request's Content-Type.
/// axum's `Bytes` extractor answers for us when the body cannot be read: 413 when a
/// decompression limit (or `DefaultBodyLimit`) is hit, 400 for a corrupt or truncated body.
pub async fn echo(headers: HeaderMap, body: Bytes) -> Response {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .cloned()
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}
