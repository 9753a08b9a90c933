//! Tools nobody here wrote (curl, the gzip CLI, Python's urllib), against
//! RequestDecompressionLayer. A test whose tool is missing is skipped, or fails under
//! `REQUIRE_INTEROP=1` (see `support/src/tools.rs`).

use crate::common::tools::available;
use crate::json_document;
use crate::loopback::serve;

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir =
        std::env::temp_dir().join(format!("tower-gzip-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn curl_uploads_a_gzip_cli_file() {
    if !available(&["curl", "gzip"], &[]) {
        return;
    }
    let (server, arrived) = serve().await;
    let addr = server.addr;
    let dir = scratch_dir("curl");
    let doc = json_document(500);
    let path = dir.join("body.json");
    std::fs::write(&path, &doc).unwrap();
    let status = tokio::process::Command::new("gzip")
        .arg("-9")
        .arg("-f")
        .arg(&path)
        .status()
        .await
        .unwrap();
    assert!(status.success(), "gzip failed");
    let gz = dir.join("body.json.gz");
    assert!(std::fs::metadata(&gz).unwrap().len() < doc.len() as u64 / 3);
    let output = tokio::process::Command::new("curl")
        .args(["-sS", "--fail-with-body", "--compressed"])
        .arg("--data-binary")
        .arg(format!("@{}", gz.display()))
        .args([
            "-H",
            "Content-Encoding: gzip",
            "-H",
            "Content-Type: application/json",
        ])
        .arg(format!("http://{addr}/api/echo"))
        .output()
        .await
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        output.status.success(),
        "curl failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap(), doc);
    assert_eq!(
        arrived.content_encoding.lock().unwrap()[0].as_deref(),
        Some("gzip")
    );
}

#[tokio::test]
async fn curl_gets_415_for_unknown_coding() {
    if !available(&["curl"], &[]) {
        return;
    }
    let (server, _) = serve().await;
    let addr = server.addr;
    let output = tokio::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-D", "-", "--data-binary", "abc"])
        // Unknown to every build (br, used here before, is decoded with its feature).
        .args(["-H", "Content-Encoding: compress"])
        .arg(format!("http://{addr}/api/echo"))
        .output()
        .await
        .unwrap();
    let head = String::from_utf8(output.stdout)
        .unwrap()
        .to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 415"), "{head}");
    let listed = format!("accept-encoding: {}", crate::accepted_codings(&[]));
    assert!(head.contains(&listed), "{head}");
}

const PYTHON_CLIENT: &str = r#"
import gzip, json, sys, urllib.request, zlib

url = sys.argv[1]
doc = json.dumps({"items": [{"id": i, "name": "item %d" % i} for i in range(400)]}).encode()
raw = zlib.compressobj(6, zlib.DEFLATED, -15)
bodies = [
    ("gzip", gzip.compress(doc)),
    ("x-gzip", gzip.compress(doc)),
    ("deflate", zlib.compress(doc)),
    ("deflate", raw.compress(doc) + raw.flush()),
]
for coding, body in bodies:
    assert len(body) < len(doc) // 3, coding
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Encoding": coding, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as response:
        echoed = response.read()
        if response.headers.get("Content-Encoding") == "gzip":
            echoed = gzip.decompress(echoed)
    assert echoed == doc, (coding, len(echoed), len(doc))
print("ok", len(bodies))
"#;

#[tokio::test]
async fn python_urllib_sends_gzip_and_deflate() {
    if !available(&["python3"], &[]) {
        return;
    }
    let (server, arrived) = serve().await;
    let addr = server.addr;
    let output = tokio::process::Command::new("python3")
        .arg("-c")
        .arg(PYTHON_CLIENT)
        .arg(format!("http://{addr}/api/echo"))
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "python client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap().trim(), "ok 4");
    let codings = arrived.content_encoding.lock().unwrap().clone();
    let codings: Vec<_> = codings.iter().map(|c| c.as_deref().unwrap()).collect();
    assert_eq!(codings, ["gzip", "x-gzip", "deflate", "deflate"]);
}
