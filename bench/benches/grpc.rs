//! Unary gRPC calls over loopback HTTP/2 in one process: tonic's own compression on both
//! sides (`tonic`), the grpc layers on both sides at the same level (`tower_gzip`), and no
//! compression (`identity`). The request and the response both carry the payload (`Echo`).
//!
//! ```sh
//! cargo bench -p tower-gzip-bench --bench grpc -- grpc_unary/
//! ```
//!
//! Before the timings, the bytes allocated per call (client and server, through the counting
//! allocator) and the CPU time per call are printed for each case. libzstd's own `malloc`s
//! are not seen there, so only the gzip lines compare allocations like with like.
//!
//! `GRPC_CALLS=<size>/<coding>/<side>:<calls>` runs that case alone, that many calls (ten
//! more first), and prints their mean wall time: runs of two cases taken in turn compare
//! them under the same load, and under callgrind the instructions, which other work on the
//! machine does not disturb, count. Two counts of calls, subtracted, give the cost of one
//! call. `GRPC_CLIENTS=<n>` makes those calls from `n` tasks at once over the connection and
//! prints the wall time per call and the heap's peak. `GRPC_PAYLOAD=json` sends JSON records
//! instead of the timed runs' text:
//!
//! ```sh
//! cargo bench -p tower-gzip-bench --bench grpc --no-run  # prints the binary's path
//! GRPC_CALLS=16KiB/gzip/tower_gzip:50 valgrind --tool=callgrind target/release/deps/grpc-<hash>
//! GRPC_CALLS=16KiB/gzip/tower_gzip:150 valgrind --tool=callgrind target/release/deps/grpc-<hash>
//! ```

use std::net::SocketAddr;

use criterion::{BenchmarkId, Criterion, criterion_group};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tonic::codec::CompressionEncoding;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Server};
use tower_gzip::ContentCoding;
use tower_gzip::grpc::{GrpcBody, GrpcClientCompressionLayer, GrpcCompressionLayer};
use tower_gzip_support::alloc;
use tower_gzip_support::grpc::{BulkClient, BulkServer};

tower_gzip_support::count_allocations!();

const SIZES: [(&str, usize); 3] = [("1KiB", 1024), ("16KiB", 16 * 1024), ("256KiB", 256 * 1024)];
const CODINGS: [(&str, CompressionEncoding, ContentCoding); 2] = [
    ("gzip", CompressionEncoding::Gzip, ContentCoding::Gzip),
    ("zstd", CompressionEncoding::Zstd, ContentCoding::Zstd),
];
const SIDES: [&str; 3] = ["tonic", "tower_gzip", "identity"];

type Layered = tower::util::BoxCloneService<
    http::Request<tonic::body::Body>,
    http::Response<GrpcBody<tonic::body::Body>>,
    tonic::transport::Error,
>;

/// A client of one case.
#[derive(Clone)]
enum Client {
    Tonic(BulkClient<Channel>),
    Layered(BulkClient<Layered>),
}

impl Client {
    async fn echo(&mut self, data: Vec<u8>) -> Vec<u8> {
        let reply = match self {
            Client::Tonic(client) => client.echo(data).await,
            Client::Layered(client) => client.echo(data).await,
        };
        reply.expect("echo")
    }
}

async fn serve(bulk: BulkServer, layer: Option<GrpcCompressionLayer>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Without TCP_NODELAY a response's last segment waits for the peer's delayed ACK.
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    tokio::spawn(async move {
        let mut server = Server::builder();
        let result = match layer {
            Some(layer) => {
                let mut server = server.layer(layer);
                server.add_service(bulk).serve_with_incoming(incoming).await
            }
            None => server.add_service(bulk).serve_with_incoming(incoming).await,
        };
        result.unwrap();
    });
    addr
}

async fn channel(addr: SocketAddr) -> Channel {
    let endpoint = Channel::from_shared(format!("http://{addr}")).unwrap();
    endpoint.connect().await.unwrap()
}

/// The server and client of `side` for `coding`.
async fn setup(side: &str, coding: (CompressionEncoding, ContentCoding)) -> Client {
    let (encoding, ours) = coding;
    match side {
        "tonic" => {
            let bulk = BulkServer::default()
                .accept_compressed(encoding)
                .send_compressed(encoding);
            let client = BulkClient::new(channel(serve(bulk, None).await).await);
            Client::Tonic(client.send_compressed(encoding).accept_compressed(encoding))
        }
        "tower_gzip" => {
            let layer = GrpcCompressionLayer::new().prefer(&[ours]);
            let addr = serve(BulkServer::default(), Some(layer)).await;
            let service = tower::ServiceBuilder::new()
                .layer(GrpcClientCompressionLayer::new().send(Some(ours)))
                .map_request(|request: http::Request<_>| request.map(tonic::body::Body::new))
                .service(channel(addr).await);
            Client::Layered(BulkClient::new(tower::util::BoxCloneService::new(service)))
        }
        _ => Client::Tonic(BulkClient::new(
            channel(serve(BulkServer::default(), None).await).await,
        )),
    }
}

/// The process's CPU time (user and system) so far, in clock ticks (`/proc/self/stat`, Linux;
/// 0 elsewhere).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let fields = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let mut fields = fields.split_whitespace().skip(11);
    let mut next = || {
        fields
            .next()
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    next() + next()
}

/// Bytes allocated per call, whole process, over 200 calls after a warm-up; and CPU time
/// per call in µs (client and server together) over `cpu_calls` calls, which depends less
/// on what else the machine runs than wall time does.
fn per_call(runtime: &Runtime, client: &mut Client, data: &[u8], cpu_calls: u64) -> (u64, u64) {
    for _ in 0..10 {
        runtime.block_on(client.echo(data.to_vec()));
    }
    let before = alloc::total();
    for _ in 0..200 {
        runtime.block_on(client.echo(data.to_vec()));
    }
    let bytes = alloc::total().since(before).bytes / 200;
    let ticks = cpu_ticks();
    for _ in 0..cpu_calls {
        runtime.block_on(client.echo(data.to_vec()));
    }
    // Clock ticks are 10 ms on Linux (USER_HZ = 100).
    let cpu_us = (cpu_ticks() - ticks) * 10_000 / cpu_calls;
    (bytes, cpu_us)
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// `GRPC_CALLS`'s case and count: `16KiB/gzip/tower_gzip:300`.
fn calls_case(spec: &str) -> Option<(usize, (CompressionEncoding, ContentCoding), &str, u32)> {
    let (case, calls) = spec.split_once(':')?;
    let mut parts = case.split('/');
    let (size, coding, side) = (parts.next()?, parts.next()?, parts.next()?);
    let size = SIZES.iter().find(|(name, _)| *name == size)?.1;
    let (_, encoding, ours) = CODINGS.iter().find(|(name, ..)| *name == coding)?;
    let side = SIDES.iter().find(|name| **name == side)?;
    Some((size, (*encoding, *ours), side, calls.parse().ok()?))
}

/// Makes the calls `spec` names (see the module's documentation).
fn calls_only(spec: &str) {
    let Some((size, coding, side, calls)) = calls_case(spec) else {
        panic!("GRPC_CALLS={spec}: want <size>/<coding>/<side>:<calls>, e.g. 16KiB/gzip/tonic:300");
    };
    let runtime = runtime();
    let mut client = runtime.block_on(setup(side, coding));
    // The criterion runs' text, or JSON records less alike (`GRPC_PAYLOAD=json`).
    let data = match std::env::var("GRPC_PAYLOAD").as_deref() {
        Ok("json") => tower_gzip_support::bench::json(size).to_vec(),
        _ => tower_gzip_support::text(size),
    };
    let clients = std::env::var("GRPC_CLIENTS").map_or(1, |n| n.parse().expect("GRPC_CLIENTS"));
    if clients > 1 {
        return at_once(&runtime, &client, &data, clients, calls, spec);
    }
    for _ in 0..10 {
        runtime.block_on(client.echo(data.clone()));
    }
    let start = std::time::Instant::now();
    for _ in 0..calls {
        runtime.block_on(client.echo(data.clone()));
    }
    let per_call = start.elapsed() / calls.max(1);
    println!("{spec}: {:.1} us per call", per_call.as_secs_f64() * 1e6);
}

/// `calls` calls made by `clients` tasks at once over the one connection, after a warm-up
/// round of as many: the wall time per call (the inverse of the throughput), and the most
/// heap the process held above what it held before its first call (codec state the pool
/// keeps included).
fn at_once(runtime: &Runtime, client: &Client, data: &[u8], clients: u32, calls: u32, spec: &str) {
    let before = alloc::reset_peak();
    calls_at_once(runtime, client, data, clients, clients);
    let start = std::time::Instant::now();
    calls_at_once(runtime, client, data, clients, calls);
    let per_call = start.elapsed() / (calls / clients * clients).max(1);
    let peak = alloc::total().since(before).peak;
    println!(
        "{spec}: {:.1} us per call, {clients} clients at once, heap peak {} KiB",
        per_call.as_secs_f64() * 1e6,
        peak / 1024
    );
}

/// `calls` calls, made by `clients` tasks at once.
fn calls_at_once(runtime: &Runtime, client: &Client, data: &[u8], clients: u32, calls: u32) {
    runtime.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|_| {
                let (mut client, data) = (client.clone(), data.to_vec());
                tokio::spawn(async move {
                    for _ in 0..calls / clients {
                        client.echo(data.clone()).await;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("caller");
        }
    });
}

fn grpc_unary(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("grpc_unary");
    for (coding_name, encoding, ours) in CODINGS {
        for side in SIDES {
            let mut client = runtime.block_on(setup(side, (encoding, ours)));
            for (size_name, size) in SIZES {
                let data = tower_gzip_support::text(size);
                let cpu_calls = if size > 64 * 1024 { 200 } else { 3000 };
                let (bytes, cpu_us) = per_call(&runtime, &mut client, &data, cpu_calls);
                let name = format!("grpc_unary/{size_name}/{coding_name}/{side}");
                println!("per call {name}: {bytes} bytes allocated, {cpu_us} us of CPU");
                let id = BenchmarkId::new(size_name, format!("{coding_name}/{side}"));
                group.bench_with_input(id, &data, |b, data| {
                    b.iter(|| runtime.block_on(client.echo(data.clone())));
                });
            }
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = grpc_unary
}

fn main() {
    if let Ok(spec) = std::env::var("GRPC_CALLS") {
        return calls_only(&spec);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
