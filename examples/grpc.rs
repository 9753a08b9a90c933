//! A tonic server behind [`GrpcCompressionLayer`]: the standard health service
//! (`grpc.health.v1.Health`, `tonic-health`), server reflection (`tonic-reflection`) and
//! `tower_gzip.test.Bulk` (the support crate's: `Echo`, `Fetch` returning sizeable messages,
//! `Chat`). tonic's own compression stays off: the layer compresses responses in the best
//! of zstd, gzip and deflate the client accepts, and decodes gzip, deflate and zstd requests.
//!
//! ```sh
//! cargo run --example grpc            # ADDR=127.0.0.1:50051 by default
//! grpcurl -plaintext 127.0.0.1:50051 list
//! grpcurl -plaintext -d '{"size": 65536, "count": 3}' 127.0.0.1:50051 tower_gzip.test.Bulk/Fetch
//! ```
//!
//! The first line on stdout is `listening on http://IP:PORT`.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tower_gzip::grpc::GrpcCompressionLayer;
use tower_gzip::{CompressionLevel, ContentCoding};
use tower_gzip_support::grpc::{BulkServer, file_descriptor_set};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let addr: SocketAddr = std::env::var("ADDR")
        .unwrap_or_else(|_| "127.0.0.1:50051".to_owned())
        .parse()?;
    let listener = TcpListener::bind(addr).await?;
    println!("listening on http://{}", listener.local_addr()?);

    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter.set_serving::<BulkServer>().await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(Box::leak(file_descriptor_set().into_boxed_slice()))
        .build_v1()?;

    let layer = GrpcCompressionLayer::new()
        .prefer(&[
            ContentCoding::Zstd,
            ContentCoding::Gzip,
            ContentCoding::Deflate,
        ])
        .level(ContentCoding::Gzip, CompressionLevel::Precise(4))
        .min_size(512);
    Server::builder()
        .layer(layer)
        .add_service(health)
        .add_service(reflection)
        .add_service(BulkServer::default())
        .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
        .await?;
    Ok(())
}
