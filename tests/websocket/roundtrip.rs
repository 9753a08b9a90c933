//! The crate's client against the crate's server (and each against plain tungstenite).

use futures_util::{SinkExt, StreamExt};
use tower_gzip::websocket::{DeflateConfig, Message, connect_async, stats};

use crate::{corpus_messages, serve};

type Client =
    tokio_tungstenite::WebSocketStream<tower_gzip::websocket::DeflateIo<tokio::net::TcpStream>>;

async fn echo_all(client: &mut Client, messages: &[Message]) {
    for message in messages {
        client.send(message.clone()).await.unwrap();
        let got = client.next().await.unwrap().unwrap();
        assert_eq!(&got, message);
    }
}

fn messages() -> Vec<Message> {
    let mut list: Vec<Message> = corpus_messages(50).into_iter().map(Message::text).collect();
    list.push(Message::text("tiny"));
    list.push(Message::binary(vec![7u8; 3 << 20]));
    list.push(Message::binary(
        (0..200_000u32)
            .flat_map(|i| i.to_le_bytes())
            .collect::<Vec<u8>>(),
    ));
    list.push(Message::text(""));
    list
}

#[tokio::test]
async fn default_server_and_client_agree_no_takeover_and_echo_everything() {
    let addr = serve().await;
    let before = stats();
    let (mut client, response) =
        connect_async(format!("ws://{addr}/echo"), &DeflateConfig::new(), None)
            .await
            .unwrap();
    let answer = response.headers()["sec-websocket-extensions"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        answer,
        "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
    );
    let (out, inb) = client.get_ref().agreed().unwrap();
    assert!(!out.takeover && !inb.takeover);
    echo_all(&mut client, &messages()).await;
    let after = stats();
    assert!(after.deflate[1].messages >= before.deflate[1].messages + 50);
    assert!(
        after.deflate[0].wire_bytes - before.deflate[0].wire_bytes
            < after.deflate[0].plain_bytes - before.deflate[0].plain_bytes
    );
    client.close(None).await.unwrap();
}

#[tokio::test]
async fn takeover_and_small_windows_round_trip() {
    let addr = serve().await;
    for (path, bits) in [
        ("/takeover", 15),
        ("/w10", 10),
        ("/takeover", 9),
        ("/takeover", 12),
    ] {
        let config = DeflateConfig::new()
            .context_takeover(true)
            .max_window_bits(bits);
        let (mut client, _) = connect_async(format!("ws://{addr}{path}"), &config, None)
            .await
            .unwrap();
        let (out, inb) = client.get_ref().agreed().unwrap();
        assert!(out.takeover && inb.takeover, "{path} {bits}");
        assert_eq!(
            out.window_bits,
            bits.min(if path == "/w10" { 10 } else { 15 })
        );
        let mut list = messages();
        list.extend(messages()); // again: the history now holds them
        echo_all(&mut client, &list).await;
        assert!(stats().parked_window_bytes > 0);
        client.close(None).await.unwrap();
    }
}

#[tokio::test]
async fn plain_tungstenite_peers_get_plain_websocket() {
    let addr = serve().await;
    let (mut plain, response) = tokio_tungstenite::client_async(
        format!("ws://{addr}/echo"),
        tokio::net::TcpStream::connect(addr).await.unwrap(),
    )
    .await
    .unwrap();
    assert!(response.headers().get("sec-websocket-extensions").is_none());
    for message in messages() {
        plain.send(message.clone()).await.unwrap();
        assert_eq!(plain.next().await.unwrap().unwrap(), message);
    }

    // The crate's tokio-tungstenite server entry point, and the crate's client against a
    // server that answers no extension.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
        echo_until_close(&mut ws).await;
    });
    let (mut client, _) = connect_async(format!("ws://{addr}/"), &DeflateConfig::new(), None)
        .await
        .unwrap();
    assert!(client.get_ref().agreed().is_none());
    echo_all(&mut client, &messages()[..5]).await;
}

#[tokio::test]
async fn the_tokio_tungstenite_server_entry_point_compresses() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let config = DeflateConfig::new();
        let mut ws = tower_gzip::websocket::accept_async(stream, &config, None)
            .await
            .unwrap();
        assert!(ws.get_ref().agreed().is_some());
        echo_until_close(&mut ws).await;
    });
    let (mut client, _) = connect_async(format!("ws://{addr}/"), &DeflateConfig::new(), None)
        .await
        .unwrap();
    assert!(client.get_ref().agreed().is_some());
    echo_all(&mut client, &messages()).await;
}

#[tokio::test]
async fn the_close_handshake_completes_with_and_without_deflate() {
    let addr = serve().await;
    for offer in [false, true] {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let url = format!("ws://{addr}/echo");
        let (mut client, _) = if offer {
            let (c, r) =
                tower_gzip::websocket::client_async(url, stream, &DeflateConfig::new(), None)
                    .await
                    .unwrap();
            (futures_util::future::Either::Left(c), r)
        } else {
            let (c, r) = tokio_tungstenite::client_async(url, stream).await.unwrap();
            (futures_util::future::Either::Right(c), r)
        };
        client.send(Message::text("bye")).await.unwrap();
        assert_eq!(client.next().await.unwrap().unwrap(), Message::text("bye"));
        client.send(Message::Close(None)).await.unwrap();
        let reply = client.next().await.unwrap().unwrap();
        assert!(reply.is_close(), "{reply:?}");
    }
}

/// RFC 8441: a WebSocket over an HTTP/2 stream (extended CONNECT); the extractor answers 200 with the extension, and the stream carries
/// compressed messages both ways.
#[cfg(feature = "http2")]
#[tokio::test]
async fn http2_extended_connect_carries_compressed_messages() {
    use http_body_util::Empty;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use tokio_tungstenite::tungstenite::protocol::Role;

    let addr = crate::serve_h2().await;
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
    tokio::spawn(conn);
    let config = DeflateConfig::new();
    let mut request = http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("http://{addr}/echo"))
        .header("sec-websocket-version", "13")
        .header(
            "sec-websocket-extensions",
            tower_gzip::websocket::offer(&config),
        )
        .body(Empty::<bytes::Bytes>::new())
        .unwrap();
    request
        .extensions_mut()
        .insert(hyper::ext::Protocol::from_static("websocket"));
    let mut response = send.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert!(
        headers["sec-websocket-extensions"]
            .to_str()
            .unwrap()
            .starts_with("permessage-deflate")
    );
    let upgraded = hyper::upgrade::on(&mut response).await.unwrap();
    let io =
        tower_gzip::websocket::DeflateIo::client_after(TokioIo::new(upgraded), &headers, &config)
            .unwrap();
    assert!(io.agreed().is_some());
    let mut client =
        tokio_tungstenite::WebSocketStream::from_raw_socket(io, Role::Client, None).await;
    for message in messages() {
        client.send(message.clone()).await.unwrap();
        assert_eq!(client.next().await.unwrap().unwrap(), message);
    }
}

/// Without takeover every message draws its states from the pool and returns them: an
/// open, idle connection holds none.
#[tokio::test]
async fn an_idle_connection_holds_no_codec_state() {
    use tower_gzip::pool::PoolKind;

    let addr = serve().await;
    let config = DeflateConfig::new();
    let (mut client, _) = connect_async(format!("ws://{addr}/pooled"), &config, None)
        .await
        .unwrap();
    echo_all(&mut client, &messages()).await;
    let stats = crate::pool().stats();
    for kind in [PoolKind::DeflateCompressors, PoolKind::DeflateDecompressors] {
        assert!(stats.kind(kind).created >= 1, "{kind} was used");
        assert_eq!(
            stats.kind(kind).in_use(),
            0,
            "{kind} held by an idle connection"
        );
    }
    assert!(stats.kind(PoolKind::DeflateCompressors).reused >= 50);
    client.close(None).await.unwrap();
}

/// Takeover is granted while the window budget has room; the next connection is answered
/// without it (and counted), and the room comes back when the first closes.
#[tokio::test]
async fn a_spent_budget_answers_without_takeover() {
    let addr = serve().await;
    let config = DeflateConfig::new().context_takeover(true);
    let url = format!("ws://{addr}/budget");
    let before = stats().refusals;
    let (mut first, _) = connect_async(&url, &config, None).await.unwrap();
    let (out, inb) = first.get_ref().agreed().unwrap();
    assert!(out.takeover && inb.takeover);
    let (mut second, response) = connect_async(&url, &config, None).await.unwrap();
    let answer = response.headers()["sec-websocket-extensions"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        answer.contains("server_no_context_takeover")
            && answer.contains("client_no_context_takeover")
    );
    assert!(!second.get_ref().agreed().unwrap().1.takeover);
    assert!(stats().refusals > before);
    echo_all(&mut second, &messages()[..3]).await;
    echo_all(&mut first, &messages()[..3]).await;
    first.close(None).await.unwrap();
    // The server drops the first connection (and its reservation) after the close.
    while first.next().await.is_some() {}
    let mut granted = false;
    for _ in 0..100 {
        let (mut third, _) = connect_async(&url, &config, None).await.unwrap();
        granted = third.get_ref().agreed().unwrap().1.takeover;
        third.close(None).await.unwrap();
        while third.next().await.is_some() {}
        if granted {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(granted, "the budget came back");
}

/// Plain hyper: `upgrade` answers the request and hands over the socket.
#[tokio::test]
async fn plain_hyper_upgrade_negotiates_and_wraps() {
    use http_body_util::Empty;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let service = service_fn(
            |mut request: http::Request<hyper::body::Incoming>| async move {
                let (response, socket) = tower_gzip::websocket::upgrade::<_, Empty<bytes::Bytes>>(
                    &mut request,
                    DeflateConfig::new(),
                    None,
                )
                .unwrap();
                tokio::spawn(async move {
                    let mut socket = socket.await.unwrap();
                    while let Some(Ok(message)) = socket.recv().await {
                        if message.is_text() || message.is_binary() {
                            socket.send(message).await.unwrap();
                        }
                    }
                });
                Ok::<_, std::convert::Infallible>(response)
            },
        );
        hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades()
            .await
            .unwrap();
    });
    let (mut client, _) = connect_async(format!("ws://{addr}/"), &DeflateConfig::new(), None)
        .await
        .unwrap();
    assert!(client.get_ref().agreed().is_some());
    echo_all(&mut client, &messages()).await;
}

/// Echoes every message of `ws` back until the peer closes or a send fails.
async fn echo_until_close<S, E>(ws: &mut S)
where
    S: futures_util::Stream<Item = Result<Message, E>> + futures_util::Sink<Message> + Unpin,
{
    while let Some(Ok(m)) = ws.next().await {
        if m.is_close() || ws.send(m).await.is_err() {
            break;
        }
    }
}
