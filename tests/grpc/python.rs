//! Python's `grpcio` (its C core) calls `examples/grpc.rs`: gzip and deflate requests,
//! gzip and deflate responses, the health service and reflection (v1 and v1alpha) behind
//! the layer.
//! Skipped without python3 and grpcio; required under `REQUIRE_INTEROP=1`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use tower_gzip_support::{REPO, example, tools};

/// The example, running; killed when dropped.
struct Example(Child);

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the example on a free port; returns it and its `HOST:PORT`.
fn start_example() -> (Example, String) {
    let binary = example::build("grpc", &["grpc"]);
    let child = Command::new(binary)
        .env("ADDR", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start examples/grpc");
    let mut example = Example(child);
    let stdout = example.0.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("no `listening on` line: {line:?}"))
        .to_owned();
    (example, addr)
}

#[test]
fn grpcio_calls_the_example_with_gzip_and_deflate() {
    if !tools::available(&["python3"], &["grpc"]) {
        return;
    }
    let (_example, addr) = start_example();
    let output = Command::new("python3")
        .arg(format!("{REPO}/tests/python/grpc_client.py"))
        .arg(&addr)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "grpc_client.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let checked: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary");
    // 2 accepted codings x 2 request codings x 4 sizes.
    assert_eq!(checked["echo"], 16, "{checked}");
    assert_eq!(checked["list"], 2, "{checked}");
    assert_eq!(checked["health"], 2);
    assert_eq!(checked["reflection"], 4);
}
