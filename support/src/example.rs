//! Builds one of the crate's examples for a test that runs it as a child process.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The crate's cargo features this test was built with (they reach this crate as its own), to build the example with the same
/// ones (`cargo test --no-default-features --features ...` must not rebuild the crate with
/// the defaults for the example), and `extra`.
fn features(extra: &[&str]) -> String {
    let features = [
        ("libdeflate", cfg!(feature = "libdeflate")),
        ("zstd", cfg!(feature = "zstd")),
        ("br", cfg!(feature = "br")),
        ("dcz", cfg!(feature = "dcz")),
        ("dcb", cfg!(feature = "dcb")),
        ("learn", cfg!(feature = "learn")),
        ("dictionary-client", cfg!(feature = "dictionary-client")),
    ];
    let on = features.iter().filter(|(_, on)| *on).map(|(name, _)| *name);
    on.chain(extra.iter().copied())
        .collect::<Vec<_>>()
        .join(",")
}

/// Builds example `name` (a no-op when fresh) in the profile and with the features this test
/// was built with, plus `extra`, and returns its path. `cargo test` builds examples too, but
/// `cargo test --test <one>` does not, and a stale binary would test old code.
pub fn build(name: &str, extra: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile dir>/deps/<test>-<hash>
    let profile_dir = exe
        .parent()
        .and_then(|p| p.parent())
        .and_then(|p| p.file_name());
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(crate::REPO).args([
        "build",
        "-p",
        "tower-gzip",
        "--example",
        name,
        "--message-format=json",
        "--no-default-features",
        "--features",
        &features(extra),
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
    assert!(out.status.success(), "cargo build --example {name} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["target"]["name"] == name && m["target"]["kind"][0] == "example")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo reported no executable for the {name} example"))
}
