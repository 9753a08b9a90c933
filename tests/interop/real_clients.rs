//! Real clients against `examples/server.rs`, run as a child process: curl uploads
//! (`tests/demo_server.rs` already checks `curl --compressed` on every route), a Python
//! stdlib client (`tests/python/client.py`) and headless Chromium loading the demo page
//! with `?autotest=1` (dictionary transport is in `dictionaries.rs`). A
//! test whose program is missing is skipped, or fails under `REQUIRE_INTEROP=1` (`.ci/run`
//! installs curl, gzip, python3 and chromium, and sets it): see `support/src/tools.rs`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::chromium::{CHROMIUM_GETS, TempDir, autotest_result, dump_dom, fnv1a, have_chromium};
use crate::common::tools;
use crate::demo::Server;

/// Runs `program` (checked for with [`tools::available`] first).
fn run(program: &str, args: &[&str]) -> Output {
    match Command::new(program).args(args).output() {
        Ok(out) => out,
        Err(e) => {
            panic!("cannot run `{program}` ({e}): check for it with `tools::available` first")
        }
    }
}

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
