//! `idle`: many open event streams, held for a while, then closed. Opens CONNS connections
//! (at most CONNECT_PARALLEL handshakes at a time), sends one `GET PATH` with
//! `Accept-Encoding: ENCODING` on each and waits for the response head. Once all are open
//! (or SETUP_TIMEOUT has passed) the streams are held for HOLD seconds while every event is
//! read and counted (bytes after the head, chunk framing included); then all close. With
//! `--pid`, the server's VmRSS is read CHECKPOINT seconds into the hold and at its end,
//! just before the connections close. Fails when no stream opened.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tower_gzip_support::{http1, procfs};

use super::args::{Args, Errors, Server, kind, nofile_limit, round};

/// One stream, as its task sees it.
#[derive(Default)]
struct Stream {
    /// The head, once read.
    head: Mutex<Option<http1::Head>>,
    bytes: AtomicU64,
    error: Mutex<Option<String>>,
    /// The response ended or failed.
    ended: AtomicBool,
}

impl Stream {
    /// Opened, and still reading without an error.
    fn open(&self) -> bool {
        self.head.lock().unwrap().is_some()
            && self.error.lock().unwrap().is_none()
            && !self.ended.load(Ordering::Relaxed)
    }
}

struct Plan {
    server: Server,
    request: Vec<u8>,
    handshakes: Semaphore,
    opened: Semaphore,
}

/// Runs the subcommand; `Ok((summary, success))`.
pub async fn run(args: &Args) -> Result<(Value, bool), String> {
    let server = args.server()?;
    let path: String = args.get("path", "/events?n=1000&interval_ms=5000".to_owned())?;
    let conns: usize = args.within("conns", 1000, 1..=10_000)?;
    let hold: f64 = args.within("hold", 15.0, 0.001..=600.0)?;
    let checkpoint = args.get("checkpoint", 5.0f64)?.min(hold);
    let encoding: String = args.get("encoding", "gzip".to_owned())?;
    let pid: Option<u32> = args.get("pid", 0).map(|p| (p > 0).then_some(p))?;
    let setup_timeout: f64 = args.get("setup-timeout", 30.0)?;
    let plan = Arc::new(Plan {
        server,
        request: http1::get(&server.host(), &path, &encoding, false, "loadgen"),
        handshakes: Semaphore::new(args.within("connect-parallel", 64, 1..=4096)?),
        opened: Semaphore::new(0),
    });
    let streams: Vec<Arc<Stream>> = (0..conns).map(|_| Arc::default()).collect();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for stream in &streams {
        let (plan, stream) = (plan.clone(), stream.clone());
        tasks.spawn(async move {
            open_and_read(&plan, &stream).await;
            stream.ended.store(true, Ordering::Relaxed);
        });
    }
    let all = plan.opened.acquire_many(conns as u32);
    let _ = tokio::time::timeout(Duration::from_secs_f64(setup_timeout), all).await;
    let setup = started.elapsed().as_secs_f64();
    let open_now = streams
        .iter()
        .filter(|s| s.head.lock().unwrap().is_some())
        .count();

    tokio::time::sleep(Duration::from_secs_f64(checkpoint)).await;
    let rss_checkpoint = pid.and_then(|p| procfs::status_kib(p, "VmRSS"));
    tokio::time::sleep(Duration::from_secs_f64(hold - checkpoint)).await;
    let rss_end = pid.and_then(|p| procfs::status_kib(p, "VmRSS"));
    let open_at_end = streams.iter().filter(|s| s.open()).count();
    tasks.shutdown().await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut summary = tally(&streams, &encoding);
    let extra = json!({
        "connections": conns,
        "opened": open_now,
        "open_at_end": open_at_end,
        "setup_s": round(setup, 3),
        "hold_s": hold,
        "rss_checkpoint_kib": rss_checkpoint,
        "rss_end_kib": rss_end,
        "checkpoint_s": checkpoint,
        "rlimit_nofile": nofile_limit(),
    });
    summary
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    Ok((summary, open_now > 0))
}

/// What the streams saw: statuses, codings, bytes, errors.
fn tally(streams: &[Arc<Stream>], encoding: &str) -> Value {
    let mut errors = Errors::default();
    let (mut ok, mut encoded, mut got) = (0, 0, Vec::new());
    for s in streams {
        if let Some(e) = &*s.error.lock().unwrap() {
            errors.add(e.clone());
        }
        if let Some(head) = &*s.head.lock().unwrap() {
            got.push(s.bytes.load(Ordering::Relaxed));
            ok += usize::from(head.status == 200);
            encoded += usize::from(head.status == 200 && head.coding() == encoding);
        }
    }
    let mean = if got.is_empty() {
        0.0
    } else {
        got.iter().sum::<u64>() as f64 / got.len() as f64
    };
    json!({
        "status_200": ok,
        "encoded": encoded,
        "event_bytes_per_stream_mean": round(mean, 1),
        "errors": errors.json(),
    })
}

/// Opens the stream and reads (and counts) its bytes until cancelled or the end.
async fn open_and_read(plan: &Plan, stream: &Stream) {
    let opened = async {
        let _permit = plan.handshakes.acquire().await.expect("never closed");
        let mut reader = BufReader::new(TcpStream::connect(plan.server.addr()).await?);
        reader.get_mut().write_all(&plan.request).await?;
        let head = http1::read_head(&mut reader).await?;
        Ok::<_, std::io::Error>((reader, head))
    }
    .await;
    plan.opened.add_permits(1);
    let mut reader = match opened {
        Ok((reader, head)) => {
            *stream.head.lock().unwrap() = Some(head);
            reader
        }
        Err(e) => return *stream.error.lock().unwrap() = Some(kind(&e)),
    };
    let mut buf = vec![0; 65536];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) => return,
            Ok(n) => stream.bytes.fetch_add(n as u64, Ordering::Relaxed),
            Err(e) => return *stream.error.lock().unwrap() = Some(kind(&e)),
        };
    }
}
