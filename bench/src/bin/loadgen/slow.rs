//! `slow`: slow readers. CONNS connections, each with a small SO_RCVBUF (set before
//! connecting, so the TCP window stays small too), send one `GET PATH` with
//! `Accept-Encoding: ENCODING` and then read at most RATE bytes a second (a token bucket
//! refilled every 100 ms, at most a second's worth banked) for SECONDS; then every socket
//! closes, finished or not. Counts raw bytes read (head included). Fails when no
//! connection opened.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tower_gzip_support::http1;

use super::args::{Args, Errors, Server, kind, nofile_limit, round};

const TICK: Duration = Duration::from_millis(100);

/// The reading side of the plan.
#[derive(Clone, Copy)]
struct Pace {
    rate: f64,
    rcvbuf: usize,
    end: tokio::time::Instant,
}

/// What one connection read.
#[derive(Default)]
struct Reader {
    head: Vec<u8>,
    status: Option<u16>,
    coding: String,
    read: u64,
    eof: bool,
    error: Option<String>,
}

/// Runs the subcommand; `Ok((summary, success))`.
pub async fn run(args: &Args) -> Result<(Value, bool), String> {
    let server = args.server()?;
    let path: String = args.get("path", "/big.txt?size=1000000".to_owned())?;
    let conns: usize = args.within("conns", 256, 1..=4096)?;
    let rate: u64 = args.within("rate", 16384, 1..=u64::MAX)?;
    let seconds: f64 = args.within("seconds", 10.0, 0.001..=600.0)?;
    let rcvbuf: u32 = args.within("rcvbuf", 16384, 1024..=1 << 24)?;
    let encoding: String = args.get("encoding", "gzip".to_owned())?;
    let setup_timeout = Duration::from_secs_f64(args.get("setup-timeout", 20.0)?);
    let request = http1::get(&server.host(), &path, &encoding, false, "loadgen");

    let started = Instant::now();
    let (sockets, mut errors) = connect_all(server, conns, rcvbuf, &request, setup_timeout).await;
    let setup = started.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let pace = Pace {
        rate: rate as f64,
        rcvbuf: rcvbuf as usize,
        end: tokio::time::Instant::now() + Duration::from_secs_f64(seconds),
    };
    let mut readers = tokio::task::JoinSet::new();
    for socket in sockets {
        readers.spawn(read_slowly(socket, pace));
    }
    let readers = readers.join_all().await;
    let elapsed = t0.elapsed().as_secs_f64();
    for e in readers.iter().filter_map(|r| r.error.as_ref()) {
        errors.add(format!("recv: {e}"));
    }
    let opened = readers.len();
    let mut summary = tally(&readers, &encoding);
    let extra = json!({
        "connections": conns,
        "opened": opened,
        "errors": errors.json(),
        "setup_s": round(setup, 3),
        "elapsed_s": round(elapsed, 3),
        "rlimit_nofile": nofile_limit(),
    });
    summary
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    Ok((summary, opened > 0))
}

/// Statuses, codings and bytes over the connections that read.
fn tally(readers: &[Reader], encoding: &str) -> Value {
    let read: Vec<u64> = readers.iter().map(|r| r.read).collect();
    let total: u64 = read.iter().sum();
    let ok = |r: &&Reader| r.status == Some(200);
    json!({
        "status_200": readers.iter().filter(ok).count(),
        "encoded": readers.iter().filter(ok).filter(|r| r.coding == encoding).count(),
        "complete": readers.iter().filter(|r| r.eof).count(),
        "responded": readers.iter().filter(|r| r.status.is_some() || r.read > 0 || r.eof).count(),
        "bytes_read": total,
        "bytes_per_conn_mean": if read.is_empty() { 0 } else { (total as f64 / read.len() as f64).round() as u64 },
        "bytes_per_conn_max": read.iter().max().copied().unwrap_or(0),
    })
}

/// Connects `conns` sockets with a small receive buffer and sends each the request.
async fn connect_all(
    server: Server,
    conns: usize,
    rcvbuf: u32,
    request: &[u8],
    timeout: Duration,
) -> (Vec<TcpStream>, Errors) {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..conns {
        let request = request.to_vec();
        set.spawn(async move {
            let socket = TcpSocket::new_v4().map_err(|e| format!("connect: {}", kind(&e)))?;
            socket
                .set_recv_buffer_size(rcvbuf)
                .map_err(|e| format!("connect: {}", kind(&e)))?;
            let mut stream = socket
                .connect(server.addr())
                .await
                .map_err(|e| format!("connect: {}", kind(&e)))?;
            stream
                .write_all(&request)
                .await
                .map_err(|e| format!("send: {}", kind(&e)))?;
            Ok::<_, String>(stream)
        });
    }
    let (mut sockets, mut errors) = (Vec::new(), Errors::default());
    let deadline = tokio::time::Instant::now() + timeout;
    while let Ok(Some(joined)) = tokio::time::timeout_at(deadline, set.join_next()).await {
        match joined.expect("a connect task does not panic") {
            Ok(stream) => sockets.push(stream),
            Err(e) => errors.add(e),
        }
    }
    for _ in 0..set.len() {
        errors.add("connect: setup timeout");
    }
    set.abort_all();
    (sockets, errors)
}

/// Reads at the paced rate until the end of the run or of the response.
async fn read_slowly(mut stream: TcpStream, pace: Pace) -> Reader {
    let mut r = Reader::default();
    let mut buf = vec![0; pace.rcvbuf];
    let (mut budget, mut last) = (0.0f64, tokio::time::Instant::now());
    while tokio::time::Instant::now() < pace.end {
        let now = tokio::time::Instant::now();
        budget = (budget + pace.rate * (now - last).as_secs_f64()).min(pace.rate);
        last = now;
        let tick_end = (now + TICK).min(pace.end);
        if budget < 1.0 {
            tokio::time::sleep_until(tick_end).await;
            continue;
        }
        let want = (budget as usize).min(pace.rcvbuf);
        match tokio::time::timeout_at(tick_end, stream.read(&mut buf[..want])).await {
            Err(_) => {}
            Ok(Ok(0)) => {
                r.eof = true;
                break;
            }
            Ok(Ok(n)) => {
                r.read += n as u64;
                budget -= n as f64;
                r.see(&buf[..n]);
            }
            Ok(Err(e)) => {
                r.error = Some(kind(&e));
                break;
            }
        }
    }
    r
}

impl Reader {
    /// Keeps the first bytes until the end of the response head, then parses it.
    fn see(&mut self, data: &[u8]) {
        if self.status.is_some() || self.head.len() > 16384 {
            return;
        }
        self.head.extend_from_slice(data);
        if let Some(end) = self.head.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = http1::Head::parse(&self.head[..end]);
            (self.status, self.coding) = (Some(head.status), head.coding());
            self.head = Vec::new();
        }
    }
}
