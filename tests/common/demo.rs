//! The demo server (`examples/server.rs`) as a child process, for the suites that test it
//! over real HTTP: `tests/demo_server.rs` and `tests/interop/real_clients.rs`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

/// The crate's cargo features this test was built with, to build the example with the same
/// ones (`cargo test --no-default-features --features ...` must not rebuild the crate with
/// the defaults for the example), and `metrics`, which the demo always needs.
fn features() -> String {
    let features = [
        ("libdeflate", cfg!(feature = "libdeflate")),
        ("zstd", cfg!(feature = "zstd")),
        ("br", cfg!(feature = "br")),
        ("dcz", cfg!(feature = "dcz")),
        ("dcb", cfg!(feature = "dcb")),
        ("dictionary-client", cfg!(feature = "dictionary-client")),
    ];
    let on: Vec<&str> = features
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .chain(["metrics"])
        .collect();
    on.join(",")
}

/// Builds the example (a no-op when fresh) in the profile and with the features this test
/// was built with, and returns its path. `cargo test` builds examples too, but `cargo test
/// --test demo_server` (or `--test interop`) does not, and a stale binary would test
/// old code.
pub fn server_binary() -> &'static PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        // target/<profile dir>/deps/demo_server-<hash>
        let profile_dir = exe
            .parent()
            .and_then(|p| p.parent())
            .and_then(|p| p.file_name());
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args([
            "build",
            "--example",
            "server",
            "--message-format=json",
            "--no-default-features",
            "--features",
            &features(),
        ]);
        match profile_dir.and_then(|p| p.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cmd.arg("--release");
            }
            Some(other) => {
                cmd.args(["--profile", other]);
            }
        }
        let out = cmd
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo build");
        assert!(out.status.success(), "cargo build --example server failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|m| m["target"]["name"] == "server" && m["target"]["kind"][0] == "example")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo reported no executable for the server example")
    })
}

/// A running demo server on a free loopback port; killed when dropped, also when a test
/// panics.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl Server {
    /// Starts the example with these command-line arguments and waits for its
    /// `listening on` line.
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(server_binary())
            .args(args)
            .env("ADDR", "127.0.0.1:0")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the server example");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = Server {
            child,
            base: String::new(),
        };
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("no `listening on` line");
        let base = line.trim().strip_prefix("listening on ");
        server.base = base
            .unwrap_or_else(|| panic!("bad first line: {line:?}"))
            .to_owned();
        assert!(
            server.base.starts_with("http://127.0.0.1:"),
            "{}",
            server.base
        );
        server
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
