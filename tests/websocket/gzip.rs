//! The seed's protocol: a client dials with `compression=gzip` and sends and expects each
//! binary message as a whole gzip member, over plain WebSocket (no RFC 7692).

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use tower_gzip_support::{gunzip, gzip};

use crate::{corpus_messages, serve};

#[tokio::test]
async fn an_openim_style_client_sends_and_gets_gzip_members() {
    let addr = serve().await;
    let url = format!("ws://{addr}/echo?sendID=1&platformID=5&compression=gzip");
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut client, response) = tokio_tungstenite::client_async(url, stream).await.unwrap();
    assert!(response.headers().get("sec-websocket-extensions").is_none());
    let before = tower_gzip::websocket::stats();
    for json in corpus_messages(20) {
        client
            .send(Message::binary(gzip(json.as_bytes())))
            .await
            .unwrap();
        let Message::Binary(member) = client.next().await.unwrap().unwrap() else {
            panic!("a binary message back");
        };
        assert_eq!(gunzip(&member), json.as_bytes());
    }
    // Text is the side channel: as it is.
    client
        .send(Message::text("{\"type\": \"ping\"}"))
        .await
        .unwrap();
    assert_eq!(
        client.next().await.unwrap().unwrap(),
        Message::text("{\"type\": \"ping\"}")
    );
    let after = tower_gzip::websocket::stats();
    assert!(after.gzip[0].messages >= before.gzip[0].messages + 20);
    assert!(after.gzip[1].messages >= before.gzip[1].messages + 20);
}

#[tokio::test]
async fn a_gzip_bomb_gets_1009() {
    let addr = serve().await;
    let url = format!("ws://{addr}/small?compression=gzip");
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut client, _) = tokio_tungstenite::client_async(url, stream).await.unwrap();
    client
        .send(Message::binary(gzip(&vec![0; 64 << 20])))
        .await
        .unwrap();
    let close = loop {
        match client.next().await {
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => continue,
            other => panic!("no close: {other:?}"),
        }
    };
    assert_eq!(u16::from(close.unwrap().code), 1009);
}
