//! `aborted`: downloads a client gives up on. Each request: connect, `GET
//! /big.txt?size=SIZE` with `Accept-Encoding: ENCODING`, read until READ body bytes have
//! arrived (head excluded), then close with SO_LINGER 0 (a reset, as a browser tab closing
//! mid-download does). PARALLEL at once, COUNT in all, the run bounded by TIMEOUT seconds.
//!
//! Prints the wall time, the server's CPU time during the run, its VmRSS after a 1 s
//! settle and its VmHWM, and how many requests got a 200 with the coding asked for.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tower_gzip_support::{http1, procfs};

use super::args::{Args, Server, round};

struct Plan {
    server: Server,
    pid: u32,
    encoding: String,
    count: u64,
    request: Vec<u8>,
    read: u64,
    parallel: u64,
    deadline: Instant,
}

/// Tallies shared by the workers.
#[derive(Default)]
struct Tally {
    next: AtomicU64,
    ok: AtomicU64,
    errors: AtomicU64,
}

/// Runs the subcommand; `Ok((summary, success))`.
pub async fn run(args: &Args) -> Result<(Value, bool), String> {
    let timeout: f64 = args.within("timeout", 300.0, 1.0..=3600.0)?;
    let size: u64 = args.get("size", 8 << 20)?;
    let server = args.server()?;
    let encoding: String = args.get("encoding", "br".to_owned())?;
    let plan = Arc::new(Plan {
        server,
        pid: args.required("pid")?,
        count: args.within("count", 1500, 1..=100_000)?,
        request: http1::get(
            &server.host(),
            &format!("/big.txt?size={size}"),
            &encoding,
            true,
            "loadgen",
        ),
        encoding,
        read: args.get("read", 4096)?,
        parallel: args.within("parallel", 8, 1..=256)?,
        deadline: Instant::now() + Duration::from_secs_f64(timeout),
    });
    let cpu0 = procfs::cpu_seconds(plan.pid).unwrap_or(0.0);
    let start = Instant::now();
    let tally = Arc::new(Tally::default());
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..plan.parallel {
        workers.spawn(worker(plan.clone(), tally.clone()));
    }
    workers.join_all().await;
    let wall = start.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let cpu = procfs::cpu_seconds(plan.pid).unwrap_or(0.0) - cpu0;
    let summary = json!({
        "encoding": plan.encoding,
        "requests": tally.next.load(Ordering::Relaxed),
        "ok": tally.ok.load(Ordering::Relaxed),
        "errors": tally.errors.load(Ordering::Relaxed),
        "wall_s": round(wall, 2),
        "server_cpu_s": round(cpu, 2),
        "rss_after_kb": procfs::status_kib(plan.pid, "VmRSS").unwrap_or(0),
        "hwm_kb": procfs::status_kib(plan.pid, "VmHWM").unwrap_or(0),
        "timed_out": Instant::now() > plan.deadline,
    });
    Ok((summary, true))
}

async fn worker(plan: Arc<Plan>, tally: Arc<Tally>) {
    while Instant::now() < plan.deadline {
        if tally.next.fetch_add(1, Ordering::Relaxed) >= plan.count {
            tally.next.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let left = plan.deadline.saturating_duration_since(Instant::now());
        let good = match tokio::time::timeout(left, one(&plan)).await {
            Ok(Ok(head)) => head.status == 200 && head.coding() == plan.encoding,
            _ => false,
        };
        let counter = if good { &tally.ok } else { &tally.errors };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// One aborted download: the response head, once READ body bytes are in.
async fn one(plan: &Plan) -> std::io::Result<http1::Head> {
    let stream = TcpStream::connect(plan.server.addr()).await?;
    // Closed with a reset whatever happens next.
    stream.set_zero_linger()?;
    let mut reader = BufReader::new(stream);
    reader.get_mut().write_all(&plan.request).await?;
    let head = http1::read_head(&mut reader).await?;
    let mut got = 0;
    while got < plan.read {
        let n = reader.fill_buf().await?.len();
        if n == 0 {
            break;
        }
        reader.consume(n);
        got += n as u64;
    }
    Ok(head)
}
