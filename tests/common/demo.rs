//! The demo server (`examples/server.rs`) as a child process, for the suites that test it
//! over real HTTP: `tests/demo_server.rs` and `tests/interop/real_clients.rs`.
#![allow(dead_code)]

#[path = "example.rs"]
mod example;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The demo, built as this test was, with `metrics` (its `/metrics` is tested).
pub fn server_binary() -> &'static PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| example::build("server", &["metrics"]))
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
