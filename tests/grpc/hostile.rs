//! What goes on the wire, and hostile messages: raw HTTP/2 requests to a tonic server under
//! the server layer, and crafted responses to the client layer. Bombs stop at the limits
//! with `RESOURCE_EXHAUSTED` (allocating no more than the limit), corrupt or truncated
//! messages get `INTERNAL`, an unknown `grpc-encoding` gets `UNIMPLEMENTED` with our
//! `grpc-accept-encoding`, and a compressed flag under identity is a protocol error.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use prost::Message;
use tower::{Service, ServiceExt};
use tower_gzip::grpc::{GrpcBody, GrpcClientCompressionLayer, GrpcCompressionLayer};
use tower_gzip::{CodecPool, ContentCoding};
use tower_gzip_support::collected::Collected;
use tower_gzip_support::grpc::{BulkClient, BulkServer, Payload};
use tower_gzip_support::server::{http2_client, send};
use tower_gzip_support::{alloc, gunzip, gzip, inflate, zlib};

use super::{serve, text};

/// A message with its 5-byte prefix.
fn frame(compressed: bool, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![u8::from(compressed)];
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The messages of a body: (flag, payload).
fn messages(mut body: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while body.len() >= 5 {
        let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
        out.push((body[0], body[5..5 + len].to_vec()));
        body = &body[5 + len..];
    }
    assert!(body.is_empty(), "a message cut short");
    out
}

/// An `Echo` request's body: `data` as a `Payload` message.
fn echo_payload(data: &[u8]) -> Vec<u8> {
    Payload {
        data: data.to_vec(),
    }
    .encode_to_vec()
}

/// POSTs `body` to `Echo` with `headers`.
async fn echo_raw(addr: SocketAddr, headers: &[(&str, &str)], body: Vec<u8>) -> Collected {
    let mut request = Request::post(format!("http://{addr}/tower_gzip.test.Bulk/Echo"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body))).unwrap();
    send(&http2_client(), request).await
}

/// `grpc-status` and `grpc-message`, from the trailers or a trailers-only response.
fn status(reply: &Collected) -> (String, String) {
    let map = match &reply.trailers {
        Some(trailers) if trailers.contains_key("grpc-status") => trailers,
        _ => &reply.headers,
    };
    let get = |name| map.get(name).map_or("", |v| v.to_str().unwrap()).to_owned();
    (get("grpc-status"), get("grpc-message"))
}

async fn server() -> SocketAddr {
    serve(BulkServer::default(), Some(GrpcCompressionLayer::new())).await
}

#[tokio::test]
async fn responses_are_compressed_in_the_best_coding_the_client_accepts() {
    let addr = server().await;
    let data = text(8000);
    let mut cases = vec![("gzip", "gzip"), ("deflate", "deflate")];
    if cfg!(feature = "zstd") {
        cases.push(("gzip,zstd", "zstd"));
    }
    for (accept, chosen) in cases {
        let headers = [("grpc-accept-encoding", accept)];
        let reply = echo_raw(addr, &headers, frame(false, &echo_payload(&data))).await;
        assert_eq!(status(&reply).0, "0");
        assert_eq!(reply.headers["grpc-encoding"], chosen);
        assert!(
            reply.headers["grpc-accept-encoding"]
                .to_str()
                .unwrap()
                .contains("gzip")
        );
        let [(flag, wire)] = &messages(&reply.body)[..] else {
            panic!("one message")
        };
        assert_eq!(*flag, 1);
        let decoded = match chosen {
            "gzip" => gunzip(wire),
            "deflate" => inflate(wire),
            #[cfg(feature = "zstd")]
            "zstd" => tower_gzip_support::unzstd(wire),
            _ => unreachable!("{chosen}"),
        };
        assert_eq!(decoded, echo_payload(&data), "{accept}");
    }
    // Under the size floor the message goes as it is, flag clear.
    let reply = echo_raw(
        addr,
        &[("grpc-accept-encoding", "gzip")],
        frame(false, &echo_payload(b"hi")),
    )
    .await;
    assert_eq!(messages(&reply.body), [(0, echo_payload(b"hi"))]);
    // Without grpc-accept-encoding nothing is compressed.
    let reply = echo_raw(addr, &[], frame(false, &echo_payload(&data))).await;
    assert!(!reply.headers.contains_key("grpc-encoding"));
    assert_eq!(messages(&reply.body), [(0, echo_payload(&data))]);
}

#[tokio::test]
async fn compressed_requests_are_decoded() {
    let addr = server().await;
    let data = text(20_000);
    let payload = echo_payload(&data);
    for (encoding, wire) in [("gzip", gzip(&payload)), ("deflate", zlib(&payload))] {
        let reply = echo_raw(addr, &[("grpc-encoding", encoding)], frame(true, &wire)).await;
        assert_eq!(status(&reply).0, "0", "{encoding}: {:?}", status(&reply));
        assert_eq!(messages(&reply.body), [(0, payload.clone())]);
    }
}

#[tokio::test]
async fn a_bomb_stops_at_the_size_limit_with_resource_exhausted() {
    let addr = server().await;
    let bomb = gzip(&vec![0; 64 << 20]);
    let reply = echo_raw(addr, &[("grpc-encoding", "gzip")], frame(true, &bomb)).await;
    let (code, message) = status(&reply);
    assert_eq!(code, "8", "{message}");
    assert!(message.contains("limit of 4194304 bytes"), "{message}");
}

#[tokio::test]
async fn a_bomb_under_the_size_limit_stops_at_the_ratio_limit() {
    let layer = GrpcCompressionLayer::new().max_message_size(64 << 20);
    let addr = serve(BulkServer::default(), Some(layer)).await;
    let bomb = gzip(&vec![0; 16 << 20]);
    let reply = echo_raw(addr, &[("grpc-encoding", "gzip")], frame(true, &bomb)).await;
    let (code, message) = status(&reply);
    assert_eq!(code, "8", "{message}");
    assert!(message.contains("200:1"), "{message}");
}

#[tokio::test]
async fn corrupt_and_truncated_messages_get_internal() {
    let addr = server().await;
    let wire = gzip(&echo_payload(&text(20_000)));
    let mut corrupt = wire.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle..middle + 8].copy_from_slice(b"garbage!");
    let truncated = wire[..wire.len() - 10].to_vec();
    let mut cut_body = frame(true, &wire);
    cut_body.truncate(cut_body.len() / 2);
    for body in [frame(true, &corrupt), frame(true, &truncated), cut_body] {
        let reply = echo_raw(addr, &[("grpc-encoding", "gzip")], body).await;
        let (code, message) = status(&reply);
        assert_eq!(code, "13", "{message}");
        assert!(!message.is_empty());
    }
}

#[tokio::test]
async fn an_unknown_encoding_gets_unimplemented_with_what_we_accept() {
    let addr = server().await;
    let body = frame(true, b"whatever");
    let reply = echo_raw(addr, &[("grpc-encoding", "snappy")], body).await;
    let (code, message) = status(&reply);
    assert_eq!(code, "12");
    assert!(message.contains("snappy"), "{message}");
    let accepted = reply.headers["grpc-accept-encoding"].to_str().unwrap();
    assert!(
        accepted.contains("gzip") && accepted.contains("deflate"),
        "{accepted}"
    );
}

#[tokio::test]
async fn a_compressed_flag_under_identity_is_a_protocol_error() {
    let addr = server().await;
    let wire = gzip(&echo_payload(b"hello"));
    for headers in [&[("grpc-encoding", "identity")][..], &[]] {
        let reply = echo_raw(addr, headers, frame(true, &wire)).await;
        let (code, message) = status(&reply);
        assert_eq!(code, "13", "{message}");
        assert!(message.contains("protocol error"), "{message}");
    }
}

/// A service that reads the whole request body, as a gRPC server does, and answers with it.
async fn read_all(
    request: Request<GrpcBody<Full<Bytes>>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    Ok(Response::new(Full::new(body)))
}

#[test]
fn a_bomb_allocates_no_more_than_the_limit() {
    const LIMIT: usize = 1 << 20;
    let pool = CodecPool::new();
    let layer = GrpcCompressionLayer::new()
        .max_message_size(LIMIT)
        .pool(pool.clone());
    let mut service = tower::Layer::layer(&layer, tower::service_fn(read_all));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut call = |body: Vec<u8>| {
        let request = Request::post("/x")
            .header("content-type", "application/grpc")
            .header("grpc-encoding", "gzip")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        runtime.block_on(async {
            let response = service.ready().await.unwrap().call(request).await.unwrap();
            response
                .into_body()
                .collect()
                .await
                .unwrap()
                .trailers()
                .cloned()
        })
    };
    // Warm the pool: the decoder's state is not the message's.
    assert!(call(frame(true, &gzip(b"warm"))).is_none());
    let bomb = frame(true, &gzip(&vec![0; 256 << 20]));
    let (counts, trailers) = alloc::on_this_thread(|| call(bomb.clone()));
    let trailers = trailers.expect("the verdict in trailers");
    assert_eq!(trailers["grpc-status"], "8");
    let peak = counts.peak as usize;
    assert!(
        peak < 2 * LIMIT,
        "peak {peak} bytes for a {LIMIT}-byte limit"
    );
}

#[tokio::test]
async fn the_client_layer_holds_responses_to_the_same_limits() {
    let cases = [
        (gzip(&vec![0; 64 << 20]), tonic::Code::ResourceExhausted),
        (gzip(&text(1000))[..100].to_vec(), tonic::Code::Internal),
    ];
    for (wire, expected) in cases {
        let transport = tower::service_fn(move |_: Request<_>| {
            let body = Full::new(Bytes::from(frame(true, &wire)));
            let response = Response::builder()
                .header("content-type", "application/grpc")
                .header("grpc-encoding", "gzip")
                .body(body.map_err(|e| match e {}))
                .unwrap();
            async move { Ok::<_, Infallible>(response) }
        });
        let layer = GrpcClientCompressionLayer::new().send(Some(ContentCoding::Gzip));
        let service = tower::ServiceBuilder::new().layer(layer).service(transport);
        let mut client = BulkClient::new(service);
        let status = client.echo(text(10)).await.unwrap_err();
        assert_eq!(status.code(), expected, "{status:?}");
    }
}
