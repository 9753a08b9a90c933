//! Every Rust block of README.md is a program a reader can paste: no hidden rustdoc lines,
//! and each builds as the `src/main.rs` of a fresh crate with the dependencies the README
//! names (`cargo check`, offline, against this checkout). The doc tests compile the same
//! blocks as rustdoc sees them; this is what a reader on a forge or crates.io gets.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The README's Rust blocks, as shown on the page: (first line number, text).
fn rust_blocks(readme: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in readme.lines().enumerate() {
        match &mut open {
            None if line.starts_with("```rust") => open = Some((i + 2, String::new())),
            None => {}
            Some(_) if line.starts_with("```") => blocks.extend(open.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    assert!(open.is_none(), "README.md ends inside a code block");
    blocks
}

/// A rustdoc hidden line: `#` alone or followed by a space (`#[...]` and `#!` are Rust).
fn hidden(line: &str) -> bool {
    let line = line.trim_start();
    line == "#" || line.starts_with("# ")
}

/// The dependencies the README names for its snippets, at the versions this crate tests.
fn manifest(crate_dir: &Path, blocks: usize) -> String {
    let mut toml = format!(
        r#"[package]
name = "readme-blocks"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
tower-gzip = {{ path = {root:?} }}
axum = "0.8"
tower = {{ version = "0.5", features = ["util"] }}
tokio = {{ version = "1", features = ["full"] }}
hyper-util = {{ version = "0.1", features = ["client-legacy", "http1", "tokio"] }}
http = "1"
http-body-util = "0.1"
bytes = "1"
"#,
        root = env!("CARGO_MANIFEST_DIR"),
    );
    for i in 0..blocks {
        toml.push_str(&format!(
            "\n[[bin]]\nname = \"block{i}\"\npath = \"{}\"\n",
            crate_dir.join(format!("block{i}.rs")).display()
        ));
    }
    toml
}

#[test]
fn readme_rust_blocks_have_no_hidden_lines() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let blocks = rust_blocks(&readme);
    assert!(blocks.len() >= 3, "{} Rust blocks", blocks.len());
    for (line, text) in &blocks {
        let found: Vec<&str> = text.lines().filter(|l| hidden(l)).collect();
        assert!(found.is_empty(), "README.md:{line}: hidden lines {found:?}");
        assert!(
            text.contains("fn main"),
            "README.md:{line}: not a whole program"
        );
    }
}

#[test]
fn readme_rust_blocks_build_in_a_fresh_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let blocks = rust_blocks(&readme);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme-blocks");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (_, text)) in blocks.iter().enumerate() {
        std::fs::write(dir.join(format!("block{i}.rs")), text).unwrap();
    }
    std::fs::write(dir.join("Cargo.toml"), manifest(&dir, blocks.len())).unwrap();
    // This crate's lock: the same versions, all in the local registry already.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["check", "--offline", "--bins", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "a README block does not build:\n{stderr}"
    );
    assert!(
        !stderr.contains("warning"),
        "a README block warns:\n{stderr}"
    );
}
