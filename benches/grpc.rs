//! Unary gRPC calls over loopback HTTP/2 in one process: tonic's own compression on both
//! sides (`tonic`), the grpc layers on both sides at the same level (`tower_gzip`), and no
//! compression (`identity`). The request and the response both carry the payload (`Echo`).
//!
//! ```sh
//! cargo bench --bench grpc -- grpc_unary/
//! ```
//!
//! Before the timings, the bytes allocated per call (client and server, through the counting
//! allocator) are printed for each case. libzstd's own `malloc`s are not seen there, so only
//! the gzip lines compare like with like.

use std::net::SocketAddr;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
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

/// Bytes allocated per call, whole process, over `calls` calls after a warm-up.
fn allocated_per_call(runtime: &Runtime, client: &mut Client, data: &[u8], calls: u64) -> u64 {
    for _ in 0..10 {
        runtime.block_on(client.echo(data.to_vec()));
    }
    let before = alloc::total();
    for _ in 0..calls {
        runtime.block_on(client.echo(data.to_vec()));
    }
    alloc::total().since(before).bytes / calls
}

fn grpc_unary(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("grpc_unary");
    for (coding_name, encoding, ours) in CODINGS {
        for side in SIDES {
            let mut client = runtime.block_on(setup(side, (encoding, ours)));
            for (size_name, size) in SIZES {
                let data = tower_gzip_support::text(size);
                let bytes = allocated_per_call(&runtime, &mut client, &data, 200);
                println!(
                    "alloc grpc_unary/{size_name}/{coding_name}/{side}: {bytes} bytes per call"
                );
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

criterion_main!(benches);
