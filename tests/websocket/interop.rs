//! Python `websockets` and Node `ws` against the crate, in both roles: takeover on and
//! off, windows of 9 to 15 bits, fragmented and whole, text and binary. Skipped without
//! the tools unless REQUIRE_INTEROP=1 (`.ci/run` installs them: pip `websockets`, npm
//! `ws` into tests/websocket/peers).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use futures_util::{SinkExt, StreamExt};
use tower_gzip::websocket::{DeflateConfig, Message, connect_async};
use tower_gzip_support::tools;

use crate::serve;

fn peers() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/websocket/peers"
    ))
}

fn node_ws() -> bool {
    if !tools::available(&["node"], &[]) {
        return false;
    }
    if peers().join("node_modules/ws").is_dir() {
        return true;
    }
    tools::missing("node module `ws` (npm install --prefix tests/websocket/peers)");
    false
}

/// Runs a peer client to completion; it prints the agreed extension and `ok`.
fn run_client(program: &str, script: &str, args: &[String]) -> String {
    let output = Command::new(program)
        .arg(peers().join(script))
        .args(args)
        .env("NODE_PATH", peers().join("node_modules"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success() && stdout.trim_end().ends_with("ok"),
        "{script} {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A peer server, killed when dropped (also when a test fails).
struct Peer(std::process::Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a peer server; returns it and its port.
fn start_server(program: &str, script: &str, args: &[String]) -> (Peer, u16) {
    let mut child = Command::new(program)
        .arg(peers().join(script))
        .args(args)
        .env("NODE_PATH", peers().join("node_modules"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    (
        Peer(child),
        line.trim().parse().expect("the peer prints its port"),
    )
}

/// The crate's client against a peer server: echoes, and the agreement matches.
async fn against_server(port: u16, takeover: bool, bits: u8) {
    let config = DeflateConfig::new()
        .context_takeover(takeover)
        .max_window_bits(bits)
        .threshold(0);
    let (mut client, _) = connect_async(format!("ws://127.0.0.1:{port}/"), &config, None)
        .await
        .unwrap();
    let (out, inb) = client
        .get_ref()
        .agreed()
        .expect("permessage-deflate agreed");
    assert_eq!((out.takeover, inb.takeover), (takeover, takeover));
    let greeting = client.next().await.unwrap().unwrap();
    assert!(
        greeting.to_text().unwrap().contains("permessage"),
        "{greeting}"
    );
    let big = "{\"kind\": \"t3\", \"score\": 1} ".repeat(5000);
    let messages = [
        Message::text("hi"),
        Message::text(big.clone()),
        Message::text(big),
        Message::binary(vec![3u8; 100_000]),
        Message::text("hello ".repeat(300)),
    ];
    for message in messages {
        client.send(message.clone()).await.unwrap();
        assert_eq!(
            client.next().await.unwrap().unwrap(),
            message,
            "takeover {takeover} bits {bits}"
        );
    }
    client.close(None).await.unwrap();
}

/// (takeover, window bits): both ways, every window from 9 to 15 once or more.
const CASES: [(bool, u8); 9] = [
    (false, 15),
    (true, 15),
    (true, 9),
    (false, 9),
    (true, 10),
    (false, 11),
    (true, 12),
    (false, 13),
    (true, 14),
];

/// Runs `script` (a peer's client) against the server for every case: what each printed.
async fn clients_against_the_server(
    program: &'static str,
    script: &'static str,
) -> Vec<(bool, String)> {
    let addr = serve().await;
    let mut outs = Vec::new();
    for (takeover, bits) in CASES {
        let path = if takeover { "takeover" } else { "echo" };
        let args = [
            format!("ws://{addr}/{path}"),
            u8::from(takeover).to_string(),
            bits.to_string(),
        ];
        let out = tokio::task::spawn_blocking(move || run_client(program, script, &args))
            .await
            .unwrap();
        outs.push((takeover, out));
    }
    outs
}

#[tokio::test]
async fn python_websockets_client_against_the_server() {
    if !tools::available(&[], &["websockets"]) {
        return;
    }
    for (takeover, out) in clients_against_the_server("python3", "py_client.py").await {
        assert!(out.contains("permessage-deflate"), "{out}");
        assert_eq!(
            out.contains("server_no_context_takeover"),
            !takeover,
            "{out}"
        );
    }
}

#[tokio::test]
async fn the_client_against_a_python_websockets_server() {
    if !tools::available(&[], &["websockets"]) {
        return;
    }
    for (takeover, bits) in CASES {
        let args = [u8::from(takeover).to_string(), bits.to_string()];
        let (_peer, port) = start_server("python3", "py_server.py", &args);
        against_server(port, takeover, bits).await;
    }
}

#[tokio::test]
async fn node_ws_client_against_the_server() {
    if !node_ws() {
        return;
    }
    for (_, out) in clients_against_the_server("node", "node_client.js").await {
        assert!(out.contains("permessage-deflate"), "{out}");
    }
}

#[tokio::test]
async fn the_client_against_a_node_ws_server() {
    if !node_ws() {
        return;
    }
    for (takeover, bits) in CASES {
        let args = [u8::from(takeover).to_string(), bits.to_string()];
        let (_peer, port) = start_server("node", "node_server.js", &args);
        against_server(port, takeover, bits).await;
    }
}
