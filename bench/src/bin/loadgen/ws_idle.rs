//! `ws-idle`: many open WebSocket connections to the demo's `/ws/echo`, idle after one
//! message each. Opens CONNS connections (at most CONNECT_PARALLEL handshakes at a time),
//! offering `permessage-deflate` (`--offer deflate`), nothing (`--offer none`) or asking
//! OpenIM-style gzip (`--offer gzip`); on each, sends one 2 KiB JSON text message (deflated
//! when agreed, so both the server's inflate and deflate run once) and reads the echo.
//! Then holds them all idle for HOLD seconds; with `--pid`, the server's VmRSS is read
//! CHECKPOINT seconds into the hold and at its end, and its VmHWM at the end. Fails when
//! no connection echoed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tower_gzip_support::procfs;

use super::args::{Args, Server, nofile_limit, round};

struct Plan {
    server: Server,
    offer: String,
    message: Vec<u8>,
    handshakes: Semaphore,
    opened: Semaphore,
    echoed: AtomicUsize,
    compressed: AtomicUsize,
}

/// Runs the subcommand; `Ok((summary, success))`.
pub async fn run(args: &Args) -> Result<(Value, bool), String> {
    let conns: usize = args.within("conns", 10_000, 1..=50_000)?;
    let hold: f64 = args.within("hold", 10.0, 0.001..=600.0)?;
    let checkpoint = args.get("checkpoint", 5.0f64)?.min(hold);
    let pid: Option<u32> = args.get("pid", 0).map(|p| (p > 0).then_some(p))?;
    let setup_timeout: f64 = args.get("setup-timeout", 60.0)?;
    let offer: String = args.get("offer", "deflate".to_owned())?;
    let json: String = (0..40)
        .map(|i| format!("{{\"id\":{i},\"kind\":\"t3\",\"title\":\"idle\"}},"))
        .collect();
    let plan = Arc::new(Plan {
        server: args.server()?,
        offer,
        message: json.into_bytes(),
        handshakes: Semaphore::new(args.within("connect-parallel", 64, 1..=4096)?),
        opened: Semaphore::new(0),
        echoed: AtomicUsize::new(0),
        compressed: AtomicUsize::new(0),
    });
    let rss_before = pid.and_then(|p| procfs::status_kib(p, "VmRSS"));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..conns {
        let plan = plan.clone();
        tasks.spawn(async move {
            let stream = open(&plan).await;
            plan.opened.add_permits(1);
            // Held open, idle, until the task is cancelled.
            if let Ok(mut stream) = stream {
                let mut buf = [0u8; 1024];
                while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
            }
        });
    }
    let all = plan.opened.acquire_many(conns as u32);
    let _ = tokio::time::timeout(Duration::from_secs_f64(setup_timeout), all).await;
    let setup = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs_f64(checkpoint)).await;
    let rss_checkpoint = pid.and_then(|p| procfs::status_kib(p, "VmRSS"));
    tokio::time::sleep(Duration::from_secs_f64(hold - checkpoint)).await;
    let rss_end = pid.and_then(|p| procfs::status_kib(p, "VmRSS"));
    let hwm_end = pid.and_then(|p| procfs::status_kib(p, "VmHWM"));
    tasks.shutdown().await;
    let echoed = plan.echoed.load(Ordering::Relaxed);
    let summary = json!({
        "connections": conns,
        "offer": plan.offer,
        "echoed": echoed,
        "echoed_compressed": plan.compressed.load(Ordering::Relaxed),
        "setup_s": round(setup, 3),
        "hold_s": hold,
        "rss_before_kib": rss_before,
        "rss_checkpoint_kib": rss_checkpoint,
        "rss_end_kib": rss_end,
        "hwm_end_kib": hwm_end,
        "rlimit_nofile": nofile_limit(),
    });
    Ok((summary, echoed > 0))
}

/// Upgrades, sends the message and reads its echo; returns the idle stream.
async fn open(plan: &Plan) -> std::io::Result<TcpStream> {
    let _permit = plan.handshakes.acquire().await.expect("never closed");
    let mut stream = TcpStream::connect(plan.server.addr()).await?;
    let (path, extensions) = match plan.offer.as_str() {
        "deflate" => (
            "/ws/echo",
            "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n",
        ),
        "gzip" => ("/ws/echo?compression=gzip", ""),
        _ => ("/ws/echo", ""),
    };
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extensions}\r\n",
        plan.server.host()
    );
    stream.write_all(request.as_bytes()).await?;
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let agreed = String::from_utf8_lossy(&buf[..head_end])
        .to_ascii_lowercase()
        .contains("permessage-deflate");
    let (rsv1, payload) = if agreed {
        (true, deflate(&plan.message))
    } else {
        (false, plan.message.clone())
    };
    stream.write_all(&frame(rsv1, &payload)).await?;
    // The echo: one frame's header is enough to know it came back (and how).
    while buf.len() < head_end + 2 {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    plan.echoed.fetch_add(1, Ordering::Relaxed);
    if buf[head_end] & 0x40 != 0 {
        plan.compressed.fetch_add(1, Ordering::Relaxed);
    }
    Ok(stream)
}

/// A masked text frame (the key is fixed: this is a load generator, not a browser).
fn frame(rsv1: bool, payload: &[u8]) -> Vec<u8> {
    let key = [0x11, 0x22, 0x33, 0x44];
    let mut out = vec![0x81 | u8::from(rsv1) << 6];
    if payload.len() < 126 {
        out.push(0x80 | payload.len() as u8);
    } else {
        out.push(0x80 | 126);
        out.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    }
    out.extend_from_slice(&key);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    out
}

/// Raw deflate with a sync flush, its trailing `00 00 ff ff` stripped (RFC 7692).
fn deflate(data: &[u8]) -> Vec<u8> {
    let mut compress = flate2::Compress::new(flate2::Compression::new(6), false);
    let mut out = Vec::with_capacity(data.len() + 64);
    compress
        .compress_vec(data, &mut out, flate2::FlushCompress::Sync)
        .expect("deflate");
    out.truncate(out.len() - 4);
    out
}
