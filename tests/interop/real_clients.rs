//! Real clients against `examples/server.rs`, run as a child process: curl uploads
//! (`tests/demo_server.rs` already checks `curl --compressed` on every route), a Python
//! stdlib client (`tests/python/client.py`) and headless Chromium loading the demo page
//! with `?autotest=1`, and with `?autotest=dict` for dictionary transport (`dcz`, `dcb`). A
//! test whose program is missing is skipped, or fails under `REQUIRE_INTEROP=1` (`.ci/run`
//! installs curl, gzip, python3 and chromium, and sets it): see `tests/common/tools.rs`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::tools;
use crate::demo::Server;
use serde_json::Value;

/// A fresh directory under cargo's per-target temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "real_clients-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `program` (checked for with [`tools::available`] first).
fn run(program: &str, args: &[&str]) -> Output {
    match Command::new(program).args(args).output() {
        Ok(out) => out,
        Err(e) => {
            panic!("cannot run `{program}` ({e}): check for it with `tools::available` first")
        }
    }
}

/// 32-bit FNV-1a, as the demo page's autotest computes it in JavaScript.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    u64::from(h)
}

// ---------------------------------------------------------------------------------------
// curl

/// `curl -sS` with `args`; returns (HTTP status, response headers, body).
fn curl(dir: &TempDir, args: &[&str]) -> (u16, String, Vec<u8>) {
    let (head, body) = (dir.path("head.txt"), dir.path("body.out"));
    let mut all = vec![
        "-sS",
        "-D",
        head.to_str().unwrap(),
        "-o",
        body.to_str().unwrap(),
        "-w",
        "%{http_code}",
    ];
    all.extend_from_slice(args);
    let out = run("curl", &all);
    assert!(
        out.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = String::from_utf8(out.stdout).unwrap().parse().unwrap();
    let head = std::fs::read_to_string(head).unwrap().to_ascii_lowercase();
    (status, head, std::fs::read(body).unwrap())
}

#[test]
fn curl_uploads_gzip_and_deflate_files() {
    if !tools::available(&["curl", "gzip"], &[]) {
        return;
    }
    let server = Server::start(&[]);
    let dir = TempDir::new("curl");
    let echo = server.url("/api/echo");
    let plain = server.identity("/api/items?n=400");
    let txt = dir.path("body.json");
    std::fs::write(&txt, &plain).unwrap();

    // body.json.gz by the gzip CLI; body.json.zz (zlib, HTTP's "deflate") by flate2.
    let out = run("gzip", &["-k", "-9", "-f", txt.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gz = dir.path("body.json.gz");
    let mut zz = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    zz.write_all(&plain).unwrap();
    let zz_bytes = zz.finish().unwrap();
    std::fs::write(dir.path("body.json.zz"), &zz_bytes).unwrap();
    let gz_bytes = std::fs::read(&gz).unwrap();
    assert!(gz_bytes.len() < plain.len() / 3 && zz_bytes.len() < plain.len() / 3);

    let gz_arg = format!("@{}", gz.display());
    let zz_arg = format!("@{}", dir.path("body.json.zz").display());
    let json = "content-type: application/json";
    for (coding, file) in [("gzip", &gz_arg), ("x-gzip", &gz_arg), ("deflate", &zz_arg)] {
        let ce = format!("content-encoding: {coding}");
        // Identity reply, then a compressed reply decoded by curl itself.
        let (status, head, body) =
            curl(&dir, &["--data-binary", file, "-H", &ce, "-H", json, &echo]);
        assert_eq!(status, 200, "{coding}: {head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(body == plain, "{coding}: the echo differs from the file");
        let (status, head, body) = curl(
            &dir,
            &[
                "--compressed",
                "--data-binary",
                file,
                "-H",
                &ce,
                "-H",
                json,
                &echo,
            ],
        );
        assert_eq!(status, 200, "{coding}: {head}");
        // curl asks for gzip and deflate, and br and zstd when built with them: the demo
        // server answers with the best coding both sides have (zstd with the default
        // features and a curl built with libzstd; gzip before zstd and br existed).
        let encoded = tower_gzip::ContentCoding::ALL
            .iter()
            .any(|f| head.contains(&format!("content-encoding: {}\r\n", f.as_str())));
        assert!(encoded, "{coding}: {head}");
        assert!(body == plain, "{coding} --compressed: the echo differs");
        // Streamed: chunked transfer, no Content-Length.
        let (status, head, body) = curl(
            &dir,
            &[
                "--data-binary",
                file,
                "-H",
                &ce,
                "-H",
                "transfer-encoding: chunked",
                &echo,
            ],
        );
        assert_eq!(status, 200, "{coding} chunked: {head}");
        assert!(body == plain, "{coding} chunked: the echo differs");
    }

    // Refused uploads: corrupt bodies are 400, unknown codings 415.
    let truncated = dir.path("truncated.gz");
    std::fs::write(&truncated, &gz_bytes[..gz_bytes.len() - 12]).unwrap();
    let mut bad_crc = gz_bytes.clone();
    let at = bad_crc.len() - 8;
    bad_crc[at] ^= 0xff;
    std::fs::write(dir.path("bad_crc.gz"), &bad_crc).unwrap();
    let cases = [
        ("gzip", truncated.clone(), 400),
        ("gzip", dir.path("bad_crc.gz"), 400),
        ("deflate", gz.clone(), 400), // gzip bytes labelled deflate
        ("gzip", txt.clone(), 400),   // not compressed at all
        // A coding no build decodes (br, here before, is decoded with its feature).
        ("compress", gz.clone(), 415),
    ];
    for (coding, file, want) in cases {
        let ce = format!("content-encoding: {coding}");
        let data = format!("@{}", file.display());
        let (status, head, body) = curl(&dir, &["--data-binary", &data, "-H", &ce, &echo]);
        assert_eq!(
            status,
            want,
            "{coding} {}: {head}{}",
            file.display(),
            String::from_utf8_lossy(&body)
        );
        if want == 415 {
            assert!(head.contains("accept-encoding:"), "{head}");
        }
    }

    // A bomb: 21 MiB of zeros (limit: 20 MiB), 21 KiB on the wire.
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    bomb.write_all(&vec![0; 21 << 20]).unwrap();
    std::fs::write(dir.path("bomb.gz"), bomb.finish().unwrap()).unwrap();
    let data = format!("@{}", dir.path("bomb.gz").display());
    let (status, head, body) = curl(
        &dir,
        &[
            "--data-binary",
            &data,
            "-H",
            "content-encoding: gzip",
            &echo,
        ],
    );
    let body = String::from_utf8_lossy(&body);
    // The decompression limit surfaces through axum's `Bytes` extractor as 413.
    assert_eq!(status, 413, "bomb: {head}{body}");
}

// ---------------------------------------------------------------------------------------
// Python

#[test]
fn python_stdlib_client_decodes_and_uploads() {
    if !tools::available(&["python3"], &[]) {
        return;
    }
    let server = Server::start(&[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/client.py");
    let out = run("python3", &[script.to_str().unwrap(), &server.base]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tests/python/client.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    // 4 routes × 4 Accept-Encoding values; 4 uploads × 3 reply codings; 8 refusals.
    assert_eq!(summary["get"], 16, "{summary}");
    assert_eq!(summary["upload"], 12, "{summary}");
    assert_eq!(summary["rejected"], 8, "{summary}");
}

// ---------------------------------------------------------------------------------------
// Headless Chromium

/// Chromium: `$CHROMIUM` (which must run), else the first of `chromium`, `chromium-browser`
/// and `google-chrome` whose `--version` runs; `None` when there is none.
fn find_chromium() -> Option<&'static str> {
    static FOUND: OnceLock<Option<String>> = OnceLock::new();
    let runs = |name: &str| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    FOUND
        .get_or_init(|| {
            if let Ok(path) = std::env::var("CHROMIUM") {
                assert!(
                    runs(&path),
                    "CHROMIUM={path}: `{path} --version` does not run"
                );
                return Some(path);
            }
            ["chromium", "chromium-browser", "google-chrome"]
                .into_iter()
                .find(|name| runs(name))
                .map(str::to_owned)
        })
        .as_deref()
}

/// Whether Chromium is installed; when not, the test is skipped (or fails under
/// `REQUIRE_INTEROP=1`: `apt-get install -y chromium`, or CHROMIUM=/path).
fn have_chromium() -> bool {
    let found = find_chromium().is_some();
    if !found {
        tools::missing("chromium");
    }
    found
}

fn chromium() -> &'static str {
    find_chromium().expect("checked with have_chromium() first")
}

/// Loads `url` in headless Chromium and returns the serialized DOM (`--dump-dom`), which
/// Chromium prints when the page has used `budget_ms` of virtual time. Virtual time stands
/// still while requests are in flight, so real fetches and the SSE stream complete first.
fn dump_dom(url: &str, budget_ms: u32) -> String {
    dump_dom_within(url, budget_ms, Duration::from_secs(90))
}

/// [`dump_dom`], with Chromium killed after `limit` of real time.
fn dump_dom_within(url: &str, budget_ms: u32, limit: Duration) -> String {
    let profile = TempDir::new("chromium-profile");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--disable-extensions",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.0.display()))
        .arg(format!("--virtual-time-budget={budget_ms}"))
        .args(["--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (dom, err) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(s) if s.success() => dom,
        Some(s) => {
            eprintln!("chromium exited with {s}; stderr:\n{err}");
            dom
        }
        None => {
            eprintln!("chromium did not finish within {limit:?}; stderr:\n{err}");
            dom
        }
    }
}

/// The JSON the page wrote into `<pre id="autotest">`, if it finished.
fn autotest_result(dom: &str) -> Option<Value> {
    let start = dom.find("<pre id=\"autotest\"")?;
    let text = &dom[start..];
    let text = &text[text.find('>')? + 1..];
    let text = &text[..text.find("</pre>")?];
    // A text node's serialization escapes only these.
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&text).ok()?;
    (v["done"] == true).then_some(v)
}

#[test]
fn headless_chromium_decodes_the_demo_page() {
    if !have_chromium() {
        return;
    }
    let server = Server::start(&[]);
    let url = server.url("/?autotest=1");
    // Retried once: a slow start on a loaded machine can use up the budget.
    let result = autotest_result(&dump_dom(&url, 20_000))
        .or_else(|| {
            eprintln!("no autotest result on the first try; retrying once");
            autotest_result(&dump_dom(&url, 40_000))
        })
        .expect("the demo page wrote no finished result into <pre id=\"autotest\">");
    eprintln!("chromium autotest result: {result}");
    assert!(result.get("error").is_none(), "the page failed: {result}");

    // JSON: Chromium decoded the gzip body (it offers gzip and deflate over plain HTTP),
    // and the bytes it parsed are the identity bytes.
    let items = &result["items"];
    let plain = server.identity("/api/items?n=1000");
    assert_eq!(items["status"], 200, "{result}");
    assert_eq!(items["encoding"], CHROMIUM_GETS, "{result}");
    assert_eq!(items["length"], plain.len(), "{result}");
    assert_eq!(items["fnv1a"], fnv1a(&plain), "{result}");
    assert_eq!(items["count"], 1000, "{result}");
    assert_eq!(items["last_name"], "item-000999", "{result}");
    assert_eq!(items["id_sum"], 999 * 1000 / 2, "{result}");
    // Resource timing: what crossed the wire vs what the page got.
    assert_eq!(items["decoded"], plain.len(), "{result}");
    assert!(
        items["wire"].as_u64().unwrap() < plain.len() as u64 / 3,
        "{result}"
    );

    // The streamed big text.
    let big = &result["big"];
    let plain = server.identity("/big.txt?size=1000000");
    assert_eq!(plain.len(), 1_000_000);
    assert_eq!(big["status"], 200, "{result}");
    assert_eq!(big["encoding"], CHROMIUM_GETS, "{result}");
    assert_eq!(big["length"], 1_000_000, "{result}");
    assert_eq!(big["fnv1a"], fnv1a(&plain), "{result}");
    assert_eq!(big["decoded"], 1_000_000, "{result}");
    assert!(big["wire"].as_u64().unwrap() < 1_000_000 / 3, "{result}");

    // Server-sent events through EventSource, and the same stream read by fetch().
    let events: Vec<String> = (0..5).map(|i| format!("{{\"tick\":{i}}}")).collect();
    assert_eq!(
        result["sse"]["events"],
        serde_json::json!(events),
        "{result}"
    );
    assert!(result["sse"].get("error").is_none(), "{result}");
    assert_eq!(result["sse_fetch"]["encoding"], CHROMIUM_GETS, "{result}");
    assert_eq!(
        result["sse_fetch"]["text"],
        "data: {\"tick\":0}\n\ndata: {\"tick\":1}\n\ndata: {\"tick\":2}\n\n",
        "{result}"
    );

    // Uploads compressed by the browser's CompressionStream.
    let upload = &result["upload"];
    for coding in ["gzip", "deflate"] {
        assert_eq!(upload[coding]["status"], 200, "{coding}: {result}");
        assert_eq!(upload[coding]["matches"], true, "{coding}: {result}");
    }
    assert_eq!(upload["truncated"]["status"], 400, "{result}");
}

/// What headless Chromium (`gzip, deflate, br, zstd`) is served: tower-http's order of
/// preference, zstd > br > gzip, over the codings compiled in.
const CHROMIUM_GETS: &str = if cfg!(feature = "zstd") {
    "zstd"
} else if cfg!(feature = "br") {
    "br"
} else {
    "gzip"
};

/// Dictionary transport (RFC 9842) in headless Chromium: the page announces the API
/// dictionary (`Link` header and `<link>`); `?autotest=dict` waits until Chromium has stored
/// it (it fetches it when idle; the page fetches it itself after 2 s), then fetches
/// `/api/items?n=5&start=S` (S unseen by the training) and `/assets/app-v2.js` after
/// `/assets/app-v1.js`. With `args` the server prefers `want`; Chromium offers both.
#[cfg(feature = "zstd")] // the demo trains its dictionary with zstd's trainer
fn chromium_decodes_dictionary_codings(args: &[&str], want: &str) {
    if !have_chromium() {
        return;
    }
    let server = Server::start(args);
    const START: u64 = 987_654_321;
    let url = server.url(&format!("/?autotest=dict&start={START}"));
    // About 4 s when all goes well; two tries of at most 40 s each keep the test bounded.
    let limit = Duration::from_secs(40);
    let result = autotest_result(&dump_dom_within(&url, 30_000, limit))
        .or_else(|| {
            eprintln!("no autotest result on the first try; retrying once");
            autotest_result(&dump_dom_within(&url, 30_000, limit))
        })
        .expect("the demo page wrote no finished result into <pre id=\"autotest\">");
    eprintln!("chromium dictionary autotest ({want}): {result}");
    assert!(result.get("error").is_none(), "the page failed: {result}");
    // `link`: Chromium fetched the dictionary the page's `Link` announced, by itself (seen
    // with Chromium 156); otherwise the page fetched it (`dictionary` in the result).
    if result["link"] != true {
        eprintln!("Chromium had not fetched the Link dictionary after 2 s; the page did");
    }
    assert_eq!(
        result["ready"], true,
        "Chromium never used the API dictionary: {result}"
    );

    // The API response: decoded against the trained dictionary, identical to identity.
    let path = format!("/api/items?n=5&start={START}");
    let plain = server.identity(&path);
    let items = &result["items"];
    assert_eq!(items["status"], 200, "{result}");
    assert_eq!(items["encoding"], want, "{result}");
    assert_eq!(items["length"], plain.len(), "{result}");
    assert_eq!(items["fnv1a"], fnv1a(&plain), "{result}");
    assert_eq!(items["decoded"], plain.len(), "{result}");
    let wire = items["wire"].as_u64().unwrap();
    assert!(
        wire < plain.len() as u64 / 2,
        "{want}: {wire} bytes for {}",
        plain.len()
    );

    // v1 plainly compressed, then v2 as a delta against it.
    let v1 = server.identity("/assets/app-v1.js");
    assert_eq!(result["v1"]["fnv1a"], fnv1a(&v1), "{result}");
    assert_eq!(result["v1"]["encoding"], CHROMIUM_GETS, "{result}");
    let v2 = server.identity("/assets/app-v2.js");
    assert_ne!(v1, v2);
    let got = &result["v2"];
    assert_eq!(got["status"], 200, "{result}");
    assert_eq!(got["encoding"], want, "{result}");
    assert_eq!(got["length"], v2.len(), "{result}");
    assert_eq!(got["fnv1a"], fnv1a(&v2), "{result}");
    // The delta against v1 (not v2 against itself): what the server sends to a request
    // naming v1, byte for byte as long.
    assert!(
        result["v1_again"]["encoding"] == want,
        "Chromium never held v1 as a dictionary: {result}"
    );
    let v1_dictionary = tower_gzip::dictionary::Dictionary::new(
        v1.clone(),
        tower_gzip::headers::UseAsDictionary::new("/assets/app-v*.js"),
    )
    .unwrap();
    let (head, delta) = server.raw(
        "/assets/app-v2.js",
        &[
            ("Accept-Encoding", "gzip, deflate, br, zstd, dcb, dcz"),
            (
                "Available-Dictionary",
                v1_dictionary.available_dictionary().to_str().unwrap(),
            ),
            ("Sec-Fetch-Site", "same-origin"),
        ],
    );
    assert!(
        head.contains(&format!("content-encoding: {want}\r\n")),
        "{head}"
    );
    let wire = got["wire"].as_u64().unwrap();
    assert_eq!(
        wire,
        delta.len() as u64,
        "{want} delta against v1: {result}"
    );
    assert!(
        wire < v2.len() as u64 / 50,
        "{want} delta: {wire} bytes for {}",
        v2.len()
    );

    // The page's Dictionaries card, its buttons pressed: API and v2 by dictionary.
    let api = result["button_api"].as_str().unwrap_or_default();
    assert!(api.contains(&format!("{want}: ")), "{result}");
    let assets = result["button_assets"].as_str().unwrap_or_default();
    assert!(assets.contains("/assets/app-v2.js"), "{result}");
    assert!(
        assets.trim_end().ends_with(")") && assets.contains(&format!("{want}: ")),
        "{result}"
    );

    // The server's view: hits for both, no request refused by the gate.
    let server_side = &result["server"];
    assert!(server_side["hits"].as_u64().unwrap() >= 2, "{result}");
    assert_eq!(server_side["refused"], 0, "{result}");
}

#[cfg(feature = "zstd")]
#[test]
fn headless_chromium_decodes_dcz() {
    chromium_decodes_dictionary_codings(&[], "dcz");
}

#[cfg(all(feature = "dcz", feature = "dcb"))]
#[test]
fn headless_chromium_decodes_dcb() {
    chromium_decodes_dictionary_codings(&["--prefer", "dcb"], "dcb");
}
