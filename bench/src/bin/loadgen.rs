//! The load generator of the load scripts: raw HTTP/1.1 sockets against a server on
//! loopback, one subcommand per load, one JSON object on stdout per run.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin loadgen -- aborted --port PORT --pid PID [--encoding br]
//!     [--count 1500] [--size 8388608] [--read 4096] [--parallel 8] [--timeout 300]
//! cargo run --release -p tower-gzip-bench --bin loadgen -- events http://127.0.0.1:PORT --pid PID
//!     [--path '/events?n=2000&interval_ms=1'] [--conns 8] [--encoding gzip]
//!     [--timeout 120] [--connect-parallel 64]
//! cargo run --release -p tower-gzip-bench --bin loadgen -- idle http://127.0.0.1:PORT [--pid PID]
//!     [--path '/events?n=1000&interval_ms=5000'] [--conns 1000] [--hold 15]
//!     [--checkpoint 5] [--encoding gzip] [--setup-timeout 30] [--connect-parallel 64]
//! cargo run --release -p tower-gzip-bench --bin loadgen -- slow http://127.0.0.1:PORT
//!     [--path /big.txt?size=1000000] [--conns 256] [--rate 16384] [--seconds 10]
//!     [--rcvbuf 16384] [--encoding gzip] [--setup-timeout 20]
//! cargo run --release -p tower-gzip-bench --bin loadgen -- ws-idle http://127.0.0.1:PORT [--pid PID]
//!     [--conns 10000] [--hold 10] [--checkpoint 5] [--offer deflate|none|gzip]
//!     [--setup-timeout 60] [--connect-parallel 64]
//! ```
//!
//! Each subcommand's module says what it does and prints. Raw sockets, so a load can hold
//! its connections in states a client library hides (a capped read rate, a reset
//! mid-body); the HTTP/1.1 framing and the `/proc` readings are shared
//! (`tower_gzip_support::{http1, procfs}`). One thread: the load's own CPU stays off the
//! server's core when the scripts pin them apart. The open-file limit is the caller's
//! (`ulimit -n`). Exits 1 when the run saw nothing (no stream opened or completed), 2 on
//! a bad command line.

use std::process::ExitCode;

mod loadgen {
    pub mod aborted;
    pub mod args;
    pub mod events;
    pub mod idle;
    pub mod slow;
    pub mod ws_idle;
}

use loadgen::args::Args;

const USAGE: &str = "usage: loadgen aborted|events|idle|slow [BASE] [--name value ...]";

fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let command = argv.next().unwrap_or_default();
    let result = Args::parse(argv).and_then(|args| run(&command, &args));
    match result {
        Ok((summary, success)) => {
            println!("{summary}");
            if success {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("loadgen {command}: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Runs `command` on a one-thread runtime.
fn run(command: &str, args: &Args) -> Result<(serde_json::Value, bool), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    runtime.block_on(async {
        match command {
            "aborted" => loadgen::aborted::run(args).await,
            "events" => loadgen::events::run(args).await,
            "idle" => loadgen::idle::run(args).await,
            "slow" => loadgen::slow::run(args).await,
            "ws-idle" => loadgen::ws_idle::run(args).await,
            _ => Err(format!("unknown subcommand {command:?}")),
        }
    })
}
