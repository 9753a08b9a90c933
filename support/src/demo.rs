//! The demo server (`examples/server.rs`) as a child process, for the suites that test it
//! over real HTTP: `tests/demo_server.rs` and `tests/interop/real_clients.rs`.

use crate::example;

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

/// Plain HTTP/1.0 against the demo (no client library between us and the bytes: HTTP/1.0
/// means no chunking, the body ends at EOF), and what the tests of its learned dictionary
/// need.
impl Server {
    /// The identity body of `GET path`.
    pub fn identity(&self, path: &str) -> Vec<u8> {
        let (head, body) = self.raw(path, &[("Accept-Encoding", "identity")]);
        assert!(!head.contains("content-encoding"), "{path}: {head}");
        body
    }

    /// `GET path` with these request headers: the head (lowercased) and the body as sent;
    /// fails unless the status is 200.
    pub fn raw(&self, path: &str, headers: &[(&str, &str)]) -> (String, Vec<u8>) {
        let (head, body) = self.request("GET", path, headers);
        assert!(head.starts_with("http/1.0 200"), "{path}: {head}");
        (head, body)
    }

    /// `method path` with these request headers and no body: the head (lowercased) and
    /// the body.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> (String, Vec<u8>) {
        self.request_from(None, method, path, headers)
    }

    /// [`request`](Self::request) from the local address `source` (any 127.0.0.x reaches
    /// the demo on Linux): another client, as the learner counts them.
    pub fn request_from(
        &self,
        source: Option<std::net::Ipv4Addr>,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (String, Vec<u8>) {
        use std::io::{Read, Write};
        let addr = self.base.strip_prefix("http://").unwrap();
        let mut stream = connect(addr, source);
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut request =
            format!("{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Length: 0\r\n");
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("no end of headers")
            + 4;
        let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
        (head, raw.split_off(split))
    }

    /// `/stats`, parsed.
    pub fn stats(&self) -> serde_json::Value {
        serde_json::from_slice(&self.identity("/stats")).expect("/stats is JSON")
    }

    /// `count` API requests of 1 to 6 items, as visitors make them, from `first`.
    /// API requests from seven clients in turn, at 127.0.0.2 to 127.0.0.8: the learner
    /// publishes only what 3 distinct clients or more were sent (seven, not eight: it
    /// samples one response in four, which would leave two).
    pub fn visit_api(&self, first: u64, count: u64) {
        for k in first..first + count {
            let path = format!("/api/items?n={}&start={}", 1 + k % 6, (k * 7919) % 100_000);
            let source = std::net::Ipv4Addr::new(127, 0, 0, 2 + (k % 7) as u8);
            let identity = [("Accept-Encoding", "identity")];
            let (head, _) = self.request_from(Some(source), "GET", &path, &identity);
            assert!(head.starts_with("http/1.0 200"), "{path}: {head}");
        }
    }

    /// API requests from `first`, 200 at a time, until the learner has a dictionary of at
    /// least `version` (it takes at most 100 samples a second after its first burst, so it
    /// learns from traffic over time); then that dictionary, as [`learned`](Self::learned).
    pub fn visit_until_learned(&self, first: u64, version: u64) -> serde_json::Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(90);
        for batch in 0.. {
            let current = self.stats()["dictionaries"]["learned"]["current"].clone();
            if current["version"].as_u64().is_some_and(|v| v >= version) {
                return current;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no learned v{version}"
            );
            self.visit_api(first + 200 * batch, 200);
        }
        unreachable!()
    }

    /// Waits (at most a minute) for the learner's dictionary of at least `version`, and
    /// returns it as `/stats` describes it (`url`, `sha256`, `version`, ...).
    pub fn learned(&self, version: u64) -> serde_json::Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let stats = self.stats();
            let current = &stats["dictionaries"]["learned"]["current"];
            if current["version"].as_u64().is_some_and(|v| v >= version) {
                return current.clone();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no learned v{version}: {stats}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A connection to `addr`, from `source` when given.
fn connect(addr: &str, source: Option<std::net::Ipv4Addr>) -> std::net::TcpStream {
    let Some(source) = source else {
        return std::net::TcpStream::connect(addr).unwrap();
    };
    let peer: std::net::SocketAddr = addr.parse().unwrap();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local = std::net::SocketAddr::from((source, 0));
    socket.bind(&local.into()).unwrap();
    socket.connect(&peer.into()).unwrap();
    socket.into()
}
