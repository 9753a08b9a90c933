//! Frames a peer should not send, from a raw socket: each gets the close code RFC 7692
//! and RFC 6455 name, written by the adapter under tungstenite.

use crate::raw::{RawClient, deflate, deflate_zeros};
use crate::serve;

const OFFER: &str = "permessage-deflate; client_max_window_bits";

#[tokio::test]
async fn a_bomb_gets_1009_and_is_never_inflated_whole() {
    let addr = serve().await;
    let bomb = deflate_zeros(1 << 30); // 1 GiB of zeros in about a megabyte
    let (mut client, head) = RawClient::connect(addr, "/small", OFFER).await;
    assert!(head.contains("permessage-deflate"), "{head}");
    let before = tower_gzip_support::alloc::reset_peak();
    client.send(true, true, 2, &bomb).await;
    assert_eq!(client.close_code().await, Some(1009));
    let peak = tower_gzip_support::alloc::total().since(before).peak;
    // The route's limit is 1 MiB: what the process held at its peak is the bomb's
    // compressed megabyte, buffers and the limit, nowhere near the gigabyte.
    assert!(peak < 64 << 20, "peak {peak} bytes");
    assert!(tower_gzip::websocket::stats().failures[2] >= 1);
}

#[tokio::test]
async fn rsv1_on_a_control_frame_gets_1002() {
    let addr = serve().await;
    let (mut client, _) = RawClient::connect(addr, "/echo", OFFER).await;
    client.send(true, true, 9, b"ping").await;
    assert_eq!(client.close_code().await, Some(1002));
}

#[tokio::test]
async fn rsv1_on_a_continuation_gets_1002() {
    let addr = serve().await;
    let (mut client, _) = RawClient::connect(addr, "/echo", OFFER).await;
    let body = deflate(&b"first part of a message ".repeat(20));
    client.send(false, true, 1, &body[..5]).await;
    client.send(true, true, 0, &body[5..]).await;
    assert_eq!(client.close_code().await, Some(1002));
}

#[tokio::test]
async fn corrupt_deflate_gets_1007() {
    let addr = serve().await;
    let (mut client, _) = RawClient::connect(addr, "/echo", OFFER).await;
    client.send(true, true, 2, &[0xff; 64]).await;
    assert_eq!(client.close_code().await, Some(1007));
}

#[tokio::test]
async fn an_unmasked_frame_from_a_client_gets_1002() {
    let addr = serve().await;
    let (client, _) = RawClient::connect(addr, "/echo", OFFER).await;
    let mut client = client;
    // Unmasked: write the frame by hand.
    let mut stream_frame = vec![0x82u8, 5];
    stream_frame.extend_from_slice(b"hello");
    client.send_raw(&stream_frame).await;
    assert_eq!(client.close_code().await, Some(1002));
}

#[tokio::test]
async fn a_compressed_message_between_pings_is_echoed_compressed() {
    let addr = serve().await;
    let (mut client, _) = RawClient::connect(addr, "/echo", OFFER).await;
    let text = b"{\"id\": 1, \"text\": \"echo me, echo me, echo me\"} ".repeat(40);
    let body = deflate(&text);
    client.send(false, true, 1, &body[..body.len() / 2]).await;
    client.send(true, false, 9, b"between").await;
    client.send(true, false, 0, &body[body.len() / 2..]).await;
    let (rsv1, opcode, _) = client.frame().await.unwrap();
    assert_eq!((rsv1, opcode), (false, 10), "the pong comes first");
    let (rsv1, opcode, payload) = client.frame().await.unwrap();
    assert_eq!((rsv1, opcode), (true, 1));
    assert!(payload.len() < text.len() / 4);
    let mut inflate = flate2::Decompress::new(false);
    let mut input = payload;
    input.extend_from_slice(&[0, 0, 0xff, 0xff]);
    let mut out = Vec::with_capacity(text.len() + 64);
    inflate
        .decompress_vec(&input, &mut out, flate2::FlushDecompress::Sync)
        .unwrap();
    assert_eq!(out, text);
}
