//! The gRPC layers against real peers: tonic clients and servers with their own compression
//! off and on (tonic_peers.rs), hostile messages (hostile.rs), Python's `grpcio` calling the
//! example (python.rs, skipped without it; see the support crate's `tools`).

mod framing;
mod hostile;
mod python;
mod tonic_peers;

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Server};
use tower_gzip::grpc::{GrpcBody, GrpcClientCompressionLayer, GrpcCompressionLayer};
use tower_gzip_support::grpc::{BulkClient, BulkServer};

tower_gzip_support::count_allocations!();

/// Serves `bulk` on a loopback port, under `layer` when given; returns the address.
async fn serve(bulk: BulkServer, layer: Option<GrpcCompressionLayer>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Without TCP_NODELAY a response's last segment waits for the peer's delayed ACK.
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    tokio::spawn(async move {
        let result = match layer {
            Some(layer) => {
                let mut server = Server::builder().layer(layer);
                server.add_service(bulk).serve_with_incoming(incoming).await
            }
            None => {
                let mut server = Server::builder();
                server.add_service(bulk).serve_with_incoming(incoming).await
            }
        };
        result.unwrap();
    });
    addr
}

/// A channel to `addr`.
async fn channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap()
}

/// A channel under the client layer, boxed.
type LayeredChannel = tower::util::BoxCloneService<
    http::Request<tonic::body::Body>,
    http::Response<GrpcBody<tonic::body::Body>>,
    tonic::transport::Error,
>;

/// A client over `channel` under `layer` (tonic's `Channel` takes its own body type).
fn layered(channel: Channel, layer: GrpcClientCompressionLayer) -> BulkClient<LayeredChannel> {
    let service = tower::ServiceBuilder::new()
        .layer(layer)
        .map_request(|request: http::Request<_>| request.map(tonic::body::Body::new))
        .service(channel);
    BulkClient::new(tower::util::BoxCloneService::new(service))
}

/// Text of `len` bytes (compresses as JSON does).
fn text(len: usize) -> Vec<u8> {
    tower_gzip_support::text(len)
}
