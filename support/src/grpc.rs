//! A small gRPC service, `tower_gzip.test.Bulk`, written by hand over tonic and prost (no
//! protoc): `Echo` (unary, the message back), `Fetch` (server streaming: `count` messages of
//! `size` bytes of text) and `Chat` (bidirectional: each message back as it comes). Its
//! server and client can turn tonic's own compression on, to compare with and to talk to.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::uri::PathAndQuery;
use tokio_stream::{Stream, StreamExt};
use tonic::codec::{CompressionEncoding, EnabledCompressionEncodings, Streaming};
use tonic::server::NamedService;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

/// The service's name.
pub const SERVICE: &str = "tower_gzip.test.Bulk";

/// A message of bytes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Payload {
    /// The bytes.
    #[prost(bytes = "vec", tag = "1")]
    pub data: Vec<u8>,
}

/// What `Fetch` sends back: `count` messages of `size` bytes.
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub struct FetchRequest {
    /// Bytes per message.
    #[prost(uint32, tag = "1")]
    pub size: u32,
    /// Messages.
    #[prost(uint32, tag = "2")]
    pub count: u32,
}

/// The `i`th message `Fetch` sends for `size`: text (it compresses as JSON does), distinct
/// per message.
pub fn fetched(size: u32, i: u32) -> Payload {
    let mut data = crate::text(size as usize + 16);
    data.truncate(size as usize);
    if let Some(first) = data.first_mut() {
        *first = b'a' + (i % 26) as u8;
    }
    Payload { data }
}

/// A boxed stream of messages.
pub type PayloadStream = Pin<Box<dyn Stream<Item = Result<Payload, Status>> + Send>>;

/// The server of `tower_gzip.test.Bulk`.
#[derive(Clone, Debug, Default)]
pub struct BulkServer {
    accept: EnabledCompressionEncodings,
    send: EnabledCompressionEncodings,
}

impl BulkServer {
    /// tonic's own decompression of requests in `encoding`.
    pub fn accept_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.accept.enable(encoding);
        self
    }

    /// tonic's own compression of responses in `encoding`.
    pub fn send_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.send.enable(encoding);
        self
    }

    fn grpc(&self) -> tonic::server::Grpc<ProstCodec<Payload, Payload>> {
        tonic::server::Grpc::new(ProstCodec::default())
            .apply_compression_config(self.accept, self.send)
    }
}

impl NamedService for BulkServer {
    const NAME: &'static str = SERVICE;
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<B> tower::Service<http::Request<B>> for BulkServer
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<crate::BoxError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let server = self.clone();
        Box::pin(async move {
            let path = request.uri().path().rsplit('/').next().unwrap_or("");
            let response = match path {
                "Echo" => server.grpc().unary(tower::service_fn(echo), request).await,
                "Chat" => {
                    server
                        .grpc()
                        .streaming(tower::service_fn(chat), request)
                        .await
                }
                "Fetch" => {
                    let codec = ProstCodec::<Payload, FetchRequest>::default();
                    let mut grpc = tonic::server::Grpc::new(codec)
                        .apply_compression_config(server.accept, server.send);
                    grpc.server_streaming(tower::service_fn(fetch), request)
                        .await
                }
                _ => Status::unimplemented("no such method").into_http(),
            };
            Ok(response)
        })
    }
}

async fn echo(request: Request<Payload>) -> Result<Response<Payload>, Status> {
    Ok(Response::new(request.into_inner()))
}

async fn fetch(request: Request<FetchRequest>) -> Result<Response<PayloadStream>, Status> {
    let FetchRequest { size, count } = request.into_inner();
    let stream = tokio_stream::iter(0..count).map(move |i| Ok(fetched(size, i)));
    Ok(Response::new(Box::pin(stream) as PayloadStream))
}

async fn chat(request: Request<Streaming<Payload>>) -> Result<Response<PayloadStream>, Status> {
    let stream = request.into_inner();
    Ok(Response::new(Box::pin(stream) as PayloadStream))
}

/// A client of `tower_gzip.test.Bulk` over any tonic transport (a `Channel`, or a channel
/// under a layer).
#[derive(Clone, Debug)]
pub struct BulkClient<T> {
    grpc: tonic::client::Grpc<T>,
}

impl<T> BulkClient<T>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<crate::BoxError>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<crate::BoxError> + Send,
{
    /// A client over `transport`.
    pub fn new(transport: T) -> Self {
        BulkClient {
            grpc: tonic::client::Grpc::new(transport),
        }
    }

    /// tonic's own compression of requests in `encoding`.
    pub fn send_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.grpc = self.grpc.send_compressed(encoding);
        self
    }

    /// tonic's own decompression of responses in `encoding`.
    pub fn accept_compressed(mut self, encoding: CompressionEncoding) -> Self {
        self.grpc = self.grpc.accept_compressed(encoding);
        self
    }

    async fn ready(&mut self) -> Result<(), Status> {
        let ready = self.grpc.ready().await;
        ready.map_err(|e| Status::unavailable(e.into().to_string()))
    }

    /// `Echo`: `data` and back.
    pub async fn echo(&mut self, data: Vec<u8>) -> Result<Vec<u8>, Status> {
        self.ready().await?;
        let path = PathAndQuery::from_static("/tower_gzip.test.Bulk/Echo");
        let codec = ProstCodec::<Payload, Payload>::default();
        let response = self.grpc.unary(Request::new(Payload { data }), path, codec);
        Ok(response.await?.into_inner().data)
    }

    /// `Fetch`: `count` messages of `size` bytes.
    pub async fn fetch(&mut self, size: u32, count: u32) -> Result<Vec<Payload>, Status> {
        self.ready().await?;
        let path = PathAndQuery::from_static("/tower_gzip.test.Bulk/Fetch");
        let codec = ProstCodec::<FetchRequest, Payload>::default();
        let request = Request::new(FetchRequest { size, count });
        let response = self.grpc.server_streaming(request, path, codec).await?;
        collect(response.into_inner()).await
    }

    /// `Chat`: every message of `messages` back, in order.
    pub async fn chat(&mut self, messages: Vec<Vec<u8>>) -> Result<Vec<Payload>, Status> {
        self.ready().await?;
        let path = PathAndQuery::from_static("/tower_gzip.test.Bulk/Chat");
        let codec = ProstCodec::<Payload, Payload>::default();
        let outbound = tokio_stream::iter(messages.into_iter().map(|data| Payload { data }));
        let response = self
            .grpc
            .streaming(Request::new(outbound), path, codec)
            .await?;
        collect(response.into_inner()).await
    }

    /// `Chat` over `outbound`, its replies read as they come.
    pub async fn chat_live<S>(&mut self, outbound: S) -> Result<Streaming<Payload>, Status>
    where
        S: Stream<Item = Payload> + Send + 'static,
    {
        self.ready().await?;
        let path = PathAndQuery::from_static("/tower_gzip.test.Bulk/Chat");
        let codec = ProstCodec::<Payload, Payload>::default();
        let response = self
            .grpc
            .streaming(Request::new(outbound), path, codec)
            .await?;
        Ok(response.into_inner())
    }
}

async fn collect(mut stream: Streaming<Payload>) -> Result<Vec<Payload>, Status> {
    let mut out = Vec::new();
    while let Some(message) = stream.message().await? {
        out.push(message);
    }
    Ok(out)
}

/// The service's `FileDescriptorSet`, encoded, for server reflection (built by hand: no
/// protoc).
pub fn file_descriptor_set() -> Vec<u8> {
    use prost::Message;
    use prost_types::field_descriptor_proto::{Label, Type};
    use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto};
    use prost_types::{FileDescriptorSet, MethodDescriptorProto, ServiceDescriptorProto};

    let field = |name: &str, number, kind: Type| FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(number),
        label: Some(Label::Optional as i32),
        r#type: Some(kind as i32),
        json_name: Some(name.into()),
        ..Default::default()
    };
    let message = |name: &str, fields| DescriptorProto {
        name: Some(name.into()),
        field: fields,
        ..Default::default()
    };
    let method = |name: &str, input: &str, client: bool, server: bool| MethodDescriptorProto {
        name: Some(name.into()),
        input_type: Some(format!(".tower_gzip.test.{input}")),
        output_type: Some(".tower_gzip.test.Payload".into()),
        client_streaming: Some(client),
        server_streaming: Some(server),
        ..Default::default()
    };
    let file = FileDescriptorProto {
        name: Some("tower_gzip/test/bulk.proto".into()),
        package: Some("tower_gzip.test".into()),
        syntax: Some("proto3".into()),
        message_type: vec![
            message("Payload", vec![field("data", 1, Type::Bytes)]),
            message(
                "FetchRequest",
                vec![
                    field("size", 1, Type::Uint32),
                    field("count", 2, Type::Uint32),
                ],
            ),
        ],
        service: vec![ServiceDescriptorProto {
            name: Some("Bulk".into()),
            method: vec![
                method("Echo", "Payload", false, false),
                method("Fetch", "FetchRequest", false, true),
                method("Chat", "Payload", true, true),
            ],
            ..Default::default()
        }],
        ..Default::default()
    };
    FileDescriptorSet { file: vec![file] }.encode_to_vec()
}
