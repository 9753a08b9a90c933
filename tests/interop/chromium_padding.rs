//! Padded responses (`breach_jitter`) in headless Chromium: gzip, deflate, br and zstd,
//! then `dcz` and `dcb` once Chromium holds the dictionary. The page checks every body
//! against the text it expects and reports what came over the wire (`encodedBodySize`),
//! which varies from response to response with the padding.

use std::time::Duration;

use axum::Router;
use axum::routing::get;
use serde_json::Value;
use tower_gzip::ContentCoding;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::dictionary::{Dictionary, DictionaryService, DictionaryStore, UseAsDictionary};

use crate::chromium::{autotest_result, dump_dom_within, have_chromium};

/// The body every route answers, which the page rebuilds to compare.
fn body() -> String {
    (0..80)
        .map(|i| format!("line {i}: padded response body for the length hiding test\n"))
        .collect()
}

/// The page: fetches each coding's route six times and writes what it saw.
const PAGE: &str = r#"<!doctype html><html><body><pre id="autotest"></pre><script>
let expected = "";
for (let i = 0; i < 80; i++) expected += `line ${i}: padded response body for the length hiding test\n`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function get(path) {
  const res = await fetch(path, { cache: "no-store" });
  const text = await res.text();
  const timing = performance.getEntriesByName(new URL(path, location.href).href).pop();
  return { status: res.status, encoding: res.headers.get("content-encoding"),
    ok: text === expected, wire: timing ? timing.encodedBodySize : -1 };
}
async function run() {
  const out = {};
  for (const c of ["gzip", "deflate", "br", "zstd"]) {
    out[c] = [];
    for (let i = 0; i < 6; i++) out[c].push(await get(`/p/${c}?i=${i}`));
  }
  const d = await fetch("/dictionary");
  await d.arrayBuffer();
  for (const c of ["dcz", "dcb"]) {
    out[c] = [];
    // Until Chromium has stored the dictionary, responses come as plain codings: on a loaded
    // machine that has taken more than 10 s, so up to 60 s (it costs nothing once stored).
    for (let t = 0; t < 240 && out[c].length < 6; t++) {
      const got = await get(`/d/${c}?t=${t}`);
      if (got.encoding === c) out[c].push(got); else await sleep(250);
    }
  }
  return out;
}
run().then((out) => { out.done = true; return out; },
           (e) => ({ done: true, error: String(e && e.stack || e) }))
  .then((out) => { document.getElementById("autotest").textContent = JSON.stringify(out); });
</script></body></html>"#;

/// The app: the page, the dictionary, one route per plain coding (the layer prefers it)
/// and one per dictionary coding, every layer with 200 bytes of jitter.
fn app() -> Router {
    let template = body().replace("padded", "sample");
    let dictionary = Dictionary::new(template.into_bytes(), UseAsDictionary::new("/d/*")).unwrap();
    let store = DictionaryStore::new(1 << 20);
    assert!(store.insert(dictionary.clone()));
    let answer = || get(|| async { ([("content-type", "text/plain")], body()) });
    let mut app = Router::new()
        .route("/", get(|| async { axum::response::Html(PAGE) }))
        .route_service("/dictionary", DictionaryService::new(dictionary));
    let plain = [
        ContentCoding::Gzip,
        ContentCoding::Deflate,
        ContentCoding::Br,
        ContentCoding::Zstd,
    ];
    for coding in plain {
        let layer = CompressionLayer::new().prefer(&[coding]).breach_jitter(200);
        app = app.route(&format!("/p/{}", coding.as_str()), answer().layer(layer));
    }
    for coding in [ContentCoding::Dcz, ContentCoding::Dcb] {
        let layer = CompressionLayer::new()
            .dictionaries(store.clone())
            .dictionary_codings(&[coding])
            .breach_jitter(200);
        app = app.route(&format!("/d/{}", coding.as_str()), answer().layer(layer));
    }
    app
}

/// Runs the app on loopback for as long as `visit` takes.
fn with_server<T>(visit: impl FnOnce(String) -> T) -> T {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, app()).await.unwrap() });
    let result = visit(url);
    runtime.shutdown_background();
    result
}

/// Each coding's six responses: decoded to the expected text, in that coding, and not all
/// of one length (six equal paddings out of 200 have a chance of 1 in 3.2e11).
fn check(result: &Value, coding: &str) {
    let got = result[coding].as_array().expect("a list per coding");
    assert_eq!(got.len(), 6, "{coding}: {result}");
    for response in got {
        assert_eq!(response["status"], 200, "{coding}: {result}");
        assert_eq!(response["encoding"], coding, "{coding}: {result}");
        assert_eq!(
            response["ok"], true,
            "{coding}: decoded as expected: {result}"
        );
    }
    let mut wire: Vec<u64> = got.iter().map(|r| r["wire"].as_u64().unwrap()).collect();
    wire.sort_unstable();
    wire.dedup();
    assert!(
        wire.len() > 1,
        "{coding}: lengths vary with the padding: {result}"
    );
}

#[test]
fn chromium_decodes_padded_responses_in_every_coding() {
    if !have_chromium() {
        return;
    }
    let result = with_server(|url| {
        let limit = Duration::from_secs(120);
        autotest_result(&dump_dom_within(&url, 90_000, limit))
            .or_else(|| {
                eprintln!("no autotest result on the first try; retrying once");
                autotest_result(&dump_dom_within(&url, 90_000, limit))
            })
            .expect("the page wrote no finished result into <pre id=\"autotest\">")
    });
    eprintln!("chromium, padded responses: {result}");
    assert!(result.get("error").is_none(), "the page failed: {result}");
    for coding in ["gzip", "deflate", "br", "zstd", "dcz", "dcb"] {
        check(&result, coding);
    }
}
