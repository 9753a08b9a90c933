//! What the WebSocket codecs tell: process-wide counters ([`stats`]), `tracing` events under
//! the target `tower_gzip::websocket`, and with the `metrics` feature the same counts
//! through the `metrics` facade:
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `tower_gzip_websocket_messages_total` | counter | `coding` (`deflate`, `gzip`, `identity`), `direction` (`in`, `out`) |
//! | `tower_gzip_websocket_plain_bytes_total` | counter | `coding`, `direction`: bytes before compression / after inflating |
//! | `tower_gzip_websocket_wire_bytes_total` | counter | `coding`, `direction`: payload bytes on the wire |
//! | `tower_gzip_websocket_connections_total` | counter | `takeover` (`yes`, `no`) |
//! | `tower_gzip_websocket_refusals_total` | counter | none: takeover refused for want of budget |
//! | `tower_gzip_websocket_failures_total` | counter | `code` (`1002`, `1007`, `1009`) |
//! | `tower_gzip_websocket_parked_window_bytes` | gauge | none |
//! | `tower_gzip_websocket_kept_compressors` | gauge | none: compressors connections keep between messages |

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// The `tracing` target of the module's events.
pub(crate) const TARGET: &str = "tower_gzip::websocket";

/// How a message travelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coding {
    /// permessage-deflate (RSV1 set).
    Deflate,
    /// A whole gzip member per binary message (OpenIM-style).
    Gzip,
    /// As it was: below the threshold, incompressible, or not negotiated.
    Identity,
}

impl Coding {
    fn name(self) -> &'static str {
        match self {
            Coding::Deflate => "deflate",
            Coding::Gzip => "gzip",
            Coding::Identity => "identity",
        }
    }
}

/// Which way a message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    In,
    Out,
}

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::In => "in",
            Way::Out => "out",
        }
    }
}

/// Counts of one coding and direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MessageCounts {
    /// Messages.
    pub messages: u64,
    /// Bytes of their payloads uncompressed.
    pub plain_bytes: u64,
    /// Bytes of their payloads on the wire.
    pub wire_bytes: u64,
}

#[derive(Default)]
struct Slot {
    messages: AtomicU64,
    plain: AtomicU64,
    wire: AtomicU64,
}

struct Counters {
    // [coding][way]
    slots: [[Slot; 2]; 3],
    with_takeover: AtomicU64,
    without_takeover: AtomicU64,
    refusals: AtomicU64,
    failures: [AtomicU64; 3],
    parked: AtomicI64,
    kept: AtomicI64,
}

static COUNTERS: Counters = Counters {
    slots: [const { [const { Slot::new() }, const { Slot::new() }] }; 3],
    with_takeover: AtomicU64::new(0),
    without_takeover: AtomicU64::new(0),
    refusals: AtomicU64::new(0),
    failures: [const { AtomicU64::new(0) }; 3],
    parked: AtomicI64::new(0),
    kept: AtomicI64::new(0),
};

impl Slot {
    const fn new() -> Self {
        Slot {
            messages: AtomicU64::new(0),
            plain: AtomicU64::new(0),
            wire: AtomicU64::new(0),
        }
    }
}

/// A snapshot of the process-wide WebSocket counters, from [`stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebSocketStats {
    /// permessage-deflate messages received and sent: `[in, out]`.
    pub deflate: [MessageCounts; 2],
    /// OpenIM-style gzip messages received and sent: `[in, out]`.
    pub gzip: [MessageCounts; 2],
    /// Messages that crossed a compressing connection as they were: `[in, out]`.
    pub identity: [MessageCounts; 2],
    /// Connections that agreed permessage-deflate with context takeover in some direction.
    pub connections_with_takeover: u64,
    /// Connections that agreed permessage-deflate without context takeover.
    pub connections_without_takeover: u64,
    /// Offers of context takeover answered without it because the window budget was spent.
    pub refusals: u64,
    /// Connections failed by the adapter: `[1002 protocol error, 1007 invalid data, 1009
    /// message too big]`.
    pub failures: [u64; 3],
    /// Bytes held now by parked windows (the last `2^w` bytes of history per direction of
    /// connections with context takeover).
    pub parked_window_bytes: u64,
    /// Compressors kept now by busy connections with context takeover
    /// ([`KeptCompressors`](super::KeptCompressors)).
    pub kept_compressors: u64,
}

/// The process-wide counters now.
pub fn stats() -> WebSocketStats {
    let counts = |coding: Coding| {
        let slots = &COUNTERS.slots[coding as usize];
        [0, 1].map(|w| MessageCounts {
            messages: slots[w].messages.load(Relaxed),
            plain_bytes: slots[w].plain.load(Relaxed),
            wire_bytes: slots[w].wire.load(Relaxed),
        })
    };
    WebSocketStats {
        deflate: counts(Coding::Deflate),
        gzip: counts(Coding::Gzip),
        identity: counts(Coding::Identity),
        connections_with_takeover: COUNTERS.with_takeover.load(Relaxed),
        connections_without_takeover: COUNTERS.without_takeover.load(Relaxed),
        refusals: COUNTERS.refusals.load(Relaxed),
        failures: [0, 1, 2].map(|i| COUNTERS.failures[i].load(Relaxed)),
        parked_window_bytes: COUNTERS.parked.load(Relaxed).max(0) as u64,
        kept_compressors: COUNTERS.kept.load(Relaxed).max(0) as u64,
    }
}

/// Counts a message.
pub(crate) fn note_message(coding: Coding, way: Way, plain: usize, wire: usize) {
    let slot = &COUNTERS.slots[coding as usize][way as usize];
    slot.messages.fetch_add(1, Relaxed);
    slot.plain.fetch_add(plain as u64, Relaxed);
    slot.wire.fetch_add(wire as u64, Relaxed);
    tracing::trace!(target: TARGET, coding = coding.name(), direction = way.name(), plain, wire, "message");
    #[cfg(feature = "metrics")]
    publish_message(coding, way, plain as u64, wire as u64);
}

/// The message counters, each with literal labels: a key of literals is built without
/// allocating, where labels from variables would allocate on every message.
#[cfg(feature = "metrics")]
fn publish_message(coding: Coding, way: Way, plain: u64, wire: u64) {
    macro_rules! counters {
        ($coding:literal, $way:literal) => {{
            metrics::counter!("tower_gzip_websocket_messages_total", "coding" => $coding, "direction" => $way)
                .increment(1);
            metrics::counter!("tower_gzip_websocket_plain_bytes_total", "coding" => $coding, "direction" => $way)
                .increment(plain);
            metrics::counter!("tower_gzip_websocket_wire_bytes_total", "coding" => $coding, "direction" => $way)
                .increment(wire);
        }};
    }
    match (coding, way) {
        (Coding::Deflate, Way::In) => counters!("deflate", "in"),
        (Coding::Deflate, Way::Out) => counters!("deflate", "out"),
        (Coding::Gzip, Way::In) => counters!("gzip", "in"),
        (Coding::Gzip, Way::Out) => counters!("gzip", "out"),
        (Coding::Identity, Way::In) => counters!("identity", "in"),
        (Coding::Identity, Way::Out) => counters!("identity", "out"),
    }
}

/// Counts a connection that agreed permessage-deflate.
pub(crate) fn note_connection(takeover: bool, header: &str) {
    let counter = if takeover {
        &COUNTERS.with_takeover
    } else {
        &COUNTERS.without_takeover
    };
    counter.fetch_add(1, Relaxed);
    tracing::debug!(target: TARGET, takeover, extensions = header, "permessage-deflate agreed");
    #[cfg(feature = "metrics")]
    metrics::counter!("tower_gzip_websocket_connections_total", "takeover" => if takeover { "yes" } else { "no" })
        .increment(1);
}

/// Counts takeover refused for want of budget.
pub(crate) fn note_refusal() {
    COUNTERS.refusals.fetch_add(1, Relaxed);
    tracing::debug!(target: TARGET, "context takeover refused: window budget spent");
    #[cfg(feature = "metrics")]
    metrics::counter!("tower_gzip_websocket_refusals_total").increment(1);
}

/// Counts a connection the adapter failed with `code` (1002, 1007 or 1009).
pub(crate) fn note_failure(code: u16, why: &str) {
    let slot = match code {
        1002 => 0,
        1007 => 1,
        _ => 2,
    };
    COUNTERS.failures[slot].fetch_add(1, Relaxed);
    tracing::debug!(target: TARGET, code, why, "connection failed");
    #[cfg(feature = "metrics")]
    metrics::counter!("tower_gzip_websocket_failures_total", "code" => code.to_string())
        .increment(1);
}

/// Moves the parked-window total by `delta` bytes.
pub(crate) fn note_parked(delta: i64) {
    let now = COUNTERS.parked.fetch_add(delta, Relaxed) + delta;
    #[cfg(feature = "metrics")]
    metrics::gauge!("tower_gzip_websocket_parked_window_bytes").set(now as f64);
    let _ = now;
}

/// Moves the kept-compressor count by `delta`.
pub(crate) fn note_kept(delta: i64) {
    let now = COUNTERS.kept.fetch_add(delta, Relaxed) + delta;
    #[cfg(feature = "metrics")]
    metrics::gauge!("tower_gzip_websocket_kept_compressors").set(now as f64);
    let _ = now;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_their_slot() {
        let before = stats();
        note_message(Coding::Gzip, Way::Out, 100, 40);
        let after = stats();
        assert!(after.gzip[1].messages > before.gzip[1].messages);
        assert!(after.gzip[1].wire_bytes >= before.gzip[1].wire_bytes + 40);
    }
}
