//! With the `metrics` and `websocket` features: what a compressed WebSocket connection
//! publishes, rendered by `metrics-exporter-prometheus` and read back by a strict parser.

use futures_util::{SinkExt, StreamExt};
use metrics_exporter_prometheus::PrometheusBuilder;
use tower_gzip::websocket::{DeflateConfig, Message, accept_async, client_async};

use crate::prometheus::{Kind, parse};

const MESSAGES: &str = "tower_gzip_websocket_messages_total";
const PLAIN: &str = "tower_gzip_websocket_plain_bytes_total";
const WIRE: &str = "tower_gzip_websocket_wire_bytes_total";
const CONNECTIONS: &str = "tower_gzip_websocket_connections_total";

// One thread: the recorder is this thread's, and both ends run on it.
#[tokio::test(flavor = "current_thread")]
async fn a_deflated_message_is_counted_both_ways_with_its_bytes() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let _local = metrics::set_default_local_recorder(&recorder);

    let (a, b) = tokio::io::duplex(1 << 16);
    let config = DeflateConfig::new();
    let (server, client) = tokio::join!(
        accept_async(a, &config, None),
        client_async("ws://test/", b, &config, None)
    );
    let (mut server, mut client) = (server.unwrap(), client.unwrap().0);
    let json = r#"{"kind":"t3","data":{"title":"counted on the wire"}} "#.repeat(40);
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
