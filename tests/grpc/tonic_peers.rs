//! tonic on the other side of each layer, with its own compression off and on: every
//! message decoded equals the one sent, in unary, server-streaming and bidirectional calls.

use tonic::codec::CompressionEncoding;
use tower_gzip::ContentCoding;
use tower_gzip::grpc::{GrpcClientCompressionLayer, GrpcCompressionLayer};
use tower_gzip_support::grpc::{BulkClient, BulkServer, Payload, fetched};

use super::{channel, layered, serve, text};

/// tonic's encodings and ours: gzip, deflate, and zstd when its feature is on.
fn encodings() -> impl Iterator<Item = (CompressionEncoding, ContentCoding)> {
    [
        (CompressionEncoding::Gzip, ContentCoding::Gzip),
        (CompressionEncoding::Deflate, ContentCoding::Deflate),
        (CompressionEncoding::Zstd, ContentCoding::Zstd),
    ]
    .into_iter()
    .filter(|(_, coding)| coding.is_compiled())
}

/// Messages of many sizes: under the layers' 256-byte floor, around it, large.
fn messages() -> Vec<Vec<u8>> {
    [0, 1, 100, 255, 256, 1000, 70_000, 300_000]
        .into_iter()
        .map(text)
        .collect()
}

/// Runs the three calls through `client` and checks what comes back.
async fn check_calls<T>(client: &mut BulkClient<T>)
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<tower_gzip::BoxError>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<tower_gzip::BoxError> + Send,
{
    for message in messages() {
        let back = client.echo(message.clone()).await.unwrap();
        assert_eq!(back, message, "echo of {} bytes", message.len());
    }
    let fetched_back = client.fetch(64 * 1024, 5).await.unwrap();
    let expected: Vec<_> = (0..5).map(|i| fetched(64 * 1024, i)).collect();
    assert_eq!(fetched_back, expected);
    let chat = client.chat(messages()).await.unwrap();
    let chat: Vec<Vec<u8>> = chat.into_iter().map(|p| p.data).collect();
    assert_eq!(chat, messages());
}

#[tokio::test]
async fn tonic_clients_compressing_talk_to_the_server_layer() {
    let addr = serve(BulkServer::default(), Some(GrpcCompressionLayer::new())).await;
    for (encoding, _) in encodings() {
        let mut client = BulkClient::new(channel(addr).await)
            .send_compressed(encoding)
            .accept_compressed(encoding);
        check_calls(&mut client).await;
    }
}

#[tokio::test]
async fn tonic_clients_without_compression_talk_to_the_server_layer() {
    let addr = serve(BulkServer::default(), Some(GrpcCompressionLayer::new())).await;
    let mut client = BulkClient::new(channel(addr).await);
    check_calls(&mut client).await;
}

#[tokio::test]
async fn the_client_layer_talks_to_tonic_servers_compressing() {
    for (encoding, coding) in encodings() {
        let bulk = BulkServer::default()
            .accept_compressed(encoding)
            .send_compressed(encoding);
        let addr = serve(bulk, None).await;
        let layer = GrpcClientCompressionLayer::new().send(Some(coding));
        check_calls(&mut layered(channel(addr).await, layer)).await;
    }
}

#[tokio::test]
async fn the_client_layer_talks_to_tonic_servers_without_compression() {
    let addr = serve(BulkServer::default(), None).await;
    let layer = GrpcClientCompressionLayer::new().send(None);
    check_calls(&mut layered(channel(addr).await, layer)).await;
    // Compressed requests to a server that decodes none are refused, as gRPC says.
    let layer = GrpcClientCompressionLayer::new().send(Some(ContentCoding::Gzip));
    let mut client = layered(channel(addr).await, layer);
    let status = client.echo(text(4096)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented, "{status:?}");
}

#[tokio::test]
async fn both_layers_talk_to_each_other_in_every_coding() {
    for (_, coding) in encodings() {
        let server = GrpcCompressionLayer::new().prefer(&[coding]);
        let addr = serve(BulkServer::default(), Some(server)).await;
        let layer = GrpcClientCompressionLayer::new().send(Some(coding));
        check_calls(&mut layered(channel(addr).await, layer)).await;
    }
}

#[tokio::test]
async fn tonic_compressing_on_both_sides_passes_through_both_layers() {
    let bulk = BulkServer::default()
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip);
    let addr = serve(bulk, Some(GrpcCompressionLayer::new())).await;
    let layer = GrpcClientCompressionLayer::new();
    let mut client = layered(channel(addr).await, layer)
        .send_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Gzip);
    check_calls(&mut client).await;
}

#[tokio::test]
async fn bidirectional_calls_go_message_by_message_through_both_layers() {
    let addr = serve(BulkServer::default(), Some(GrpcCompressionLayer::new())).await;
    let layer = GrpcClientCompressionLayer::new().min_size(0);
    let mut client = layered(channel(addr).await, layer);
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    let outbound = tokio_stream::wrappers::ReceiverStream::new(receiver);
    let mut replies = client.chat_live(outbound).await.unwrap();
    // Each reply comes back before the next message is sent: neither layer holds a
    // message back waiting for more (the timeout only guards against a hang).
    for i in 0..5 {
        let data = text(1000 * i + 1);
        sender.send(Payload { data: data.clone() }).await.unwrap();
        let wait = std::time::Duration::from_secs(20);
        let reply = tokio::time::timeout(wait, replies.message()).await;
        let reply = reply.expect("the echo of one message before the next is sent");
        assert_eq!(reply.unwrap().unwrap().data, data);
    }
    drop(sender);
    assert_eq!(replies.message().await.unwrap(), None);
}
