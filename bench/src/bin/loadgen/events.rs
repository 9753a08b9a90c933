//! `events`: busy event streams. Opens CONNS connections (at most CONNECT_PARALLEL
//! handshakes at a time), sends one `GET PATH` with `Accept-Encoding: ENCODING` (none for
//! `identity`) on each and reads every response to its end (chunked framing parsed, so the
//! bytes counted are the body's). The server's CPU time is read right before the requests
//! go out and after the last response ends; over the events served (`n` per stream, from
//! the path) it is the server CPU per event. Fails when no stream completed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tower_gzip_support::{http1, procfs};

use super::args::{Args, Errors, kind, round};

/// How one stream went: its coding and body length once complete.
struct Done {
    coding: String,
    bytes: u64,
}

/// Runs the subcommand; `Ok((summary, success))`.
pub async fn run(args: &Args) -> Result<(Value, bool), String> {
    let server = args.server()?;
    let pid: u32 = args.required("pid")?;
    let path: String = args.get("path", "/events?n=2000&interval_ms=1".to_owned())?;
    let conns: usize = args.within("conns", 8, 1..=10_000)?;
    let encoding: String = args.get("encoding", "gzip".to_owned())?;
    let timeout: f64 = args.within("timeout", 120.0, 1.0..=3600.0)?;
    let handshakes = Arc::new(Semaphore::new(args.within(
        "connect-parallel",
        64,
        1..=4096,
    )?));
    let request = Arc::new(http1::get(
        &server.host(),
        &path,
        &encoding,
        true,
        "loadgen",
    ));
    let n = events_per_stream(&path);

    let (cpu0, t0) = (procfs::cpu_seconds(pid).unwrap_or(0.0), Instant::now());
    let mut streams = tokio::task::JoinSet::new();
    for _ in 0..conns {
        let (request, handshakes) = (request.clone(), handshakes.clone());
        streams.spawn(async move {
            let permit = handshakes.acquire_owned().await.expect("never closed");
            let stream = TcpStream::connect(server.addr()).await?;
            drop(permit);
            read_stream(stream, &request).await
        });
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(timeout);
    let mut done = Vec::new();
    let mut errors = Errors::default();
    while let Ok(Some(joined)) = tokio::time::timeout_at(deadline, streams.join_next()).await {
        match joined.expect("a stream task does not panic") {
            Ok(d) => done.push(d),
            Err(e) => errors.add(kind(&e)),
        }
    }
    if !streams.is_empty() {
        errors.add("timeout");
    }
    streams.abort_all();
    let (cpu, secs) = (
        procfs::cpu_seconds(pid).unwrap_or(0.0) - cpu0,
        t0.elapsed().as_secs_f64(),
    );
    Ok(summary(conns, n, &done, &encoding, cpu, secs, &errors))
}

fn summary(
    conns: usize,
    n: u64,
    done: &[Done],
    encoding: &str,
    cpu: f64,
    secs: f64,
    errors: &Errors,
) -> (Value, bool) {
    let events = n * done.len() as u64;
    let bytes: u64 = done.iter().map(|d| d.bytes).sum();
    let value = json!({
        "conns": conns,
        "events_per_stream": n,
        "complete": done.len(),
        "encoded": done.iter().filter(|d| d.coding == encoding).count(),
        "seconds": round(secs, 2),
        "server_cpu_s": round(cpu, 4),
        "cpu_us_per_event": (events > 0).then(|| round(cpu * 1e6 / events as f64, 2)),
        "bytes_per_stream": (!done.is_empty()).then(|| round(bytes as f64 / done.len() as f64, 1)),
        "errors": errors.json(),
    });
    (value, !done.is_empty())
}

/// Sends the request and reads the response to its end.
async fn read_stream(stream: TcpStream, request: &[u8]) -> std::io::Result<Done> {
    let mut reader = BufReader::new(stream);
    reader.get_mut().write_all(request).await?;
    let head = http1::read_head(&mut reader).await?;
    let bytes = http1::read_body(&mut reader, head.framing()).await?;
    Ok(Done {
        coding: head.coding(),
        bytes,
    })
}

/// The `n` of the path's query (events per stream), 5 without one as the demo has it.
fn events_per_stream(path: &str) -> u64 {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("n="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5)
}
