//! A tonic server behind [`GrpcCompressionLayer`]: the standard health service
//! (`grpc.health.v1.Health`), server reflection (v1 and v1alpha, so both `grpcurl` and
//! Python's `grpcio-reflection` list it) and `example.Notes`: `Echo` sends a note back,
//! `List` sends `count` notes of text. tonic's own compression stays off: the layer
//! compresses replies in the best of zstd, gzip and deflate the client accepts, and decodes
//! gzip, deflate and zstd requests.
//!
//! ```sh
//! cargo run --example grpc            # ADDR=127.0.0.1:50051 by default
//! grpcurl -plaintext 127.0.0.1:50051 list
//! grpcurl -plaintext -d '{"count": 200}' 127.0.0.1:50051 example.Notes/List
//! ```
//!
//! The first line on stdout is `listening on http://IP:PORT`. The service is written out by
//! hand (prost messages, tonic's `Grpc` handler) so the example needs no `protoc`; an
//! application's generated services go behind the layer the same way.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use tokio::net::TcpListener;
use tonic::server::NamedService;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use tower_gzip::grpc::GrpcCompressionLayer;
use tower_gzip::{BoxError, CompressionLevel, ContentCoding};

/// `example.Note`: a line of text.
#[derive(Clone, PartialEq, prost::Message)]
struct Note {
    #[prost(string, tag = "1")]
    text: String,
}

/// `example.ListRequest`: how many notes to list.
#[derive(Clone, Copy, PartialEq, prost::Message)]
struct ListRequest {
    #[prost(uint32, tag = "1")]
    count: u32,
}

/// `example.NoteList`: the notes.
#[derive(Clone, PartialEq, prost::Message)]
struct NoteList {
    #[prost(string, repeated, tag = "1")]
    notes: Vec<String>,
}

/// `example.Notes`: `Echo` and `List`, both unary.
#[derive(Clone, Copy, Debug, Default)]
struct Notes;

impl NamedService for Notes {
    const NAME: &'static str = "example.Notes";
}

type BoxFuture<T> = std::pin::Pin<Box<dyn Future<Output = T> + Send>>;

impl<B> tower::Service<http::Request<B>> for Notes
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        Box::pin(async move {
            let response = match request.uri().path() {
                "/example.Notes/Echo" => unary(echo, request).await,
                "/example.Notes/List" => unary(list, request).await,
                _ => Status::unimplemented("no such method").into_http(),
            };
            Ok(response)
        })
    }
}

/// A unary method: `handler` between prost's decoding and encoding.
async fn unary<Req, Res, F, B>(
    handler: fn(Request<Req>) -> F,
    request: http::Request<B>,
) -> http::Response<tonic::body::Body>
where
    Req: prost::Message + Default + Send + 'static,
    Res: prost::Message + Send + 'static,
    F: Future<Output = Result<Response<Res>, Status>> + Send + 'static,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError> + Send + 'static,
{
    let codec = tonic_prost::ProstCodec::<Res, Req>::default();
    let mut grpc = tonic::server::Grpc::new(codec);
    grpc.unary(tower::service_fn(handler), request).await
}

async fn echo(request: Request<Note>) -> Result<Response<Note>, Status> {
    Ok(Response::new(request.into_inner()))
}

async fn list(request: Request<ListRequest>) -> Result<Response<NoteList>, Status> {
    let count = request.into_inner().count.min(100_000);
    let notes = (0..count)
        .map(|i| format!("note {i}: a durable product for the kitchen and the garden"))
        .collect();
    Ok(Response::new(NoteList { notes }))
}

/// The `FileDescriptorSet` of `example.proto`, for reflection (built here: no `protoc`).
fn descriptors() -> Vec<u8> {
    use prost::Message;
    use prost_types::field_descriptor_proto::{Label, Type};
    use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto};
    use prost_types::{FileDescriptorSet, MethodDescriptorProto, ServiceDescriptorProto};

    let field = |name: &str, label: Label, kind: Type| FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(1),
        label: Some(label as i32),
        r#type: Some(kind as i32),
        json_name: Some(name.into()),
        ..Default::default()
    };
    let message = |name: &str, field| DescriptorProto {
        name: Some(name.into()),
        field: vec![field],
        ..Default::default()
    };
    let method = |name: &str, input: &str, output: &str| MethodDescriptorProto {
        name: Some(name.into()),
        input_type: Some(format!(".example.{input}")),
        output_type: Some(format!(".example.{output}")),
        ..Default::default()
    };
    let file = FileDescriptorProto {
        name: Some("example.proto".into()),
        package: Some("example".into()),
        syntax: Some("proto3".into()),
        message_type: vec![
            message("Note", field("text", Label::Optional, Type::String)),
            message("ListRequest", field("count", Label::Optional, Type::Uint32)),
            message("NoteList", field("notes", Label::Repeated, Type::String)),
        ],
        service: vec![ServiceDescriptorProto {
            name: Some("Notes".into()),
            method: vec![
                method("Echo", "Note", "Note"),
                method("List", "ListRequest", "NoteList"),
            ],
            ..Default::default()
        }],
        ..Default::default()
    };
    FileDescriptorSet { file: vec![file] }.encode_to_vec()
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let addr: SocketAddr = std::env::var("ADDR")
        .unwrap_or_else(|_| "127.0.0.1:50051".to_owned())
        .parse()?;
    let listener = TcpListener::bind(addr).await?;
    println!("listening on http://{}", listener.local_addr()?);

    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter.set_serving::<Notes>().await;
    let descriptors: &'static [u8] = Box::leak(descriptors().into_boxed_slice());
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(descriptors)
    };

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
        .add_service(reflection().build_v1()?)
        .add_service(reflection().build_v1alpha()?)
        .add_service(Notes)
        .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
        .await?;
    Ok(())
}
