//! With the `websocket` feature: what a compressed WebSocket connection tells, as `tracing`
//! events and (with `metrics`) rendered by `metrics-exporter-prometheus` and read back by a
//! strict parser.

use futures_util::{SinkExt, StreamExt};
use tokio::io::DuplexStream;
use tokio_tungstenite::WebSocketStream;
use tower_gzip::websocket::{DeflateConfig, DeflateIo, Message, accept_async, client_async};

use crate::capture::capture_target;

type Socket = WebSocketStream<DeflateIo<DuplexStream>>;

/// A server and a client over a pipe, permessage-deflate agreed by `config` on both.
async fn pair(config: &DeflateConfig) -> (Socket, Socket) {
    let (a, b) = tokio::io::duplex(1 << 16);
    let (server, client) = tokio::join!(
        accept_async(a, config, None),
        client_async("ws://test/", b, config, None)
    );
    (server.unwrap(), client.unwrap().0)
}

fn json() -> String {
    r#"{"kind":"t3","data":{"title":"counted on the wire"}} "#.repeat(40)
}

// One thread: the subscriber is this thread's, and both ends run on it.
#[tokio::test(flavor = "current_thread")]
async fn agreements_and_messages_are_events_with_their_sizes() {
    let (events, _guard) = capture_target("tower_gzip::websocket");
    let (mut server, mut client) = pair(&DeflateConfig::new()).await;
    let agreed: Vec<_> = events.take();
    assert_eq!(agreed.len(), 2, "{agreed:#?}");
    for event in &agreed {
        assert_eq!(event.message(), "permessage-deflate agreed");
        assert_eq!(event.bool("takeover"), Some(false));
        let extensions = event.str("extensions").unwrap();
        assert!(extensions.starts_with("permessage-deflate"), "{extensions}");
    }
    client.send(Message::text(json())).await.unwrap();
    server.next().await.unwrap().unwrap();
    let messages = events.take();
    let [out, inb] = &messages[..] else {
        panic!("two message events: {messages:#?}");
    };
    assert_eq!(out.str("direction"), Some("out"));
    assert_eq!(inb.str("direction"), Some("in"));
    for event in [out, inb] {
        assert_eq!(event.message(), "message");
        assert_eq!(event.str("coding"), Some("deflate"));
        assert_eq!(event.u64("plain"), Some(json().len() as u64));
    }
    let wire = out.u64("wire").unwrap();
    assert!(wire < json().len() as u64 / 4, "{wire}");
    assert_eq!(inb.u64("wire"), Some(wire));
}

#[cfg(feature = "metrics")]
const MESSAGES: &str = "tower_gzip_websocket_messages_total";
#[cfg(feature = "metrics")]
const PLAIN: &str = "tower_gzip_websocket_plain_bytes_total";
#[cfg(feature = "metrics")]
const WIRE: &str = "tower_gzip_websocket_wire_bytes_total";
#[cfg(feature = "metrics")]
const CONNECTIONS: &str = "tower_gzip_websocket_connections_total";

// One thread: the recorder is this thread's, and both ends run on it.
#[cfg(feature = "metrics")]
#[tokio::test(flavor = "current_thread")]
async fn a_deflated_message_is_counted_both_ways_with_its_bytes() {
    use crate::prometheus::{Kind, parse};
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let _local = metrics::set_default_local_recorder(&recorder);

    let (mut server, mut client) = pair(&DeflateConfig::new()).await;
    let json = json();
    client.send(Message::text(json.clone())).await.unwrap();
    let got = server.next().await.unwrap().unwrap();
    assert_eq!(got.to_text().unwrap(), json);
    client.send(Message::text("tiny")).await.unwrap();
    server.next().await.unwrap().unwrap();

    let text = handle.render();
    let m = parse(&text).unwrap_or_else(|why| panic!("{why}\n{text}"));
    assert_eq!(m.kind(MESSAGES), Some(Kind::Counter));
    let deflate = |direction| [("coding", "deflate"), ("direction", direction)];
    for direction in ["out", "in"] {
        let labels = deflate(direction);
        assert_eq!(m.value(MESSAGES, &labels), Some(1.0), "{direction}\n{text}");
        assert_eq!(
            m.value(PLAIN, &labels),
            Some(json.len() as f64),
            "{direction}"
        );
        let wire = m.value(WIRE, &labels).unwrap();
        assert!(
            wire > 0.0 && wire < json.len() as f64 / 4.0,
            "{direction}: {wire}"
        );
    }
    // The client's deflate and the server's inflate saw the same message.
    assert_eq!(
        m.value(WIRE, &deflate("out")),
        m.value(WIRE, &deflate("in"))
    );
    // "tiny" is under the threshold: it crossed as it was, counted as identity.
    let identity = [("coding", "identity"), ("direction", "out")];
    assert_eq!(m.value(MESSAGES, &identity), Some(1.0));
    assert_eq!(m.value(WIRE, &identity), Some(4.0));
    // Both ends agreed, without takeover (the default answer).
    assert_eq!(m.value(CONNECTIONS, &[("takeover", "no")]), Some(2.0));
    assert_eq!(m.value(CONNECTIONS, &[("takeover", "yes")]), None);
}
