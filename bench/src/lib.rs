//! What tower-gzip's measuring programs (`src/bin/`) share. Each program measures one thing
//! and prints it; BENCHMARKS.md quotes them with their commands:
//! `cargo run --release -p tower-gzip-bench --bin <name>`.

pub mod cpu_time;
pub mod dict_samples;
pub mod gzip;
pub mod websocket;
